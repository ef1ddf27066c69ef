//===- SymExpr.h - Symbolic integer expressions -----------------*- C++ -*-===//
//
// Sizes, strides and (later) index expressions are integer expressions over
// named symbols. Expressions are immutable, uniqued by a SymContext and built
// in canonical form, so two equal expressions are the same pointer.
//
// Canonical form:
//  - Add and Mul form polynomials over atoms (symbols and FloorDiv, Mod, Min,
//    Max nodes), fully expanded: products distribute over sums, so
//    (s0 + 1)*2 is 2*s0 + 2 and (s0 + 1)*(s1 + 1) is s0 + s0*s1 + s1 + 1.
//    This makes add and mul associative, commutative and distributive on
//    the canonical form, so equal polynomials are the same pointer whatever
//    order they were built in, and a Mul never has an Add operand.
//  - Add: flattened, like terms combined (2*s0 + 3*s0 -> 5*s0), zero terms
//    dropped, terms sorted by their factor lists (lexicographically, in the
//    structural order), one trailing constant (if not 0).
//  - Mul: flattened, constants folded into one leading coefficient, factors
//    sorted (a factor may repeat: s0*s0); a coefficient of 0 gives 0, of 1
//    disappears.
//  - FloorDiv, Mod: folded when both sides are constants (Python semantics:
//    floor toward -inf, a remainder takes the divisor's sign) or the answer
//    is plain (x // 1 = x, x % 1 = 0). With a constant divisor d they are also
//    normalized: d made positive, terms whose coefficient d divides taken out
//    ((2*s0 + s1) // 2 = s0 + s1 // 2, (2*s0 + s1) % 2 = s1 % 2), the
//    constant term brought into [0, d), a factor g common to d and all
//    coefficients divided out ((g*x) // (g*d) = x // d,
//    (g*x) % (g*d) = g*(x % d)), and nesting merged for positive constants
//    ((x // a) // b = x // (a*b), (x % (k*b)) % b = x % b).
//  - Min, Max: n-ary, flattened, constants folded into one trailing operand,
//    other operands sorted and deduplicated (min(x, x) = x).
// Symbol ranges do not take part in canonicalization, so an expression does
// not depend on when a range was set. Constant arithmetic wraps modulo 2^64,
// so that no input has undefined behaviour.
// The sort order is structural (kind, then contents), never by address, so
// printing is deterministic.
//
//===----------------------------------------------------------------------===//
#ifndef GC_IR_SYMEXPR_H
#define GC_IR_SYMEXPR_H

#include "gc/Support/Error.h"

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gc {

class SymContext;

class SymExpr {
public:
  enum class Kind : uint8_t { Const, Symbol, Add, Mul, FloorDiv, Mod, Min, Max };

  Kind kind() const { return kind_; }
  bool isConst() const { return kind_ == Kind::Const; }
  bool isSymbol() const { return kind_ == Kind::Symbol; }
  /// The value of a Const.
  int64_t constant() const { return constant_; }
  /// The name of a Symbol.
  const std::string &symbolName() const { return name_; }
  /// Operands of Add, Mul, FloorDiv (2), Mod (2), Min, Max.
  std::span<const SymExpr *const> operands() const { return operands_; }

  /// The canonical text: "s0", "2*s0 + 1", "floordiv(s0, 2)", "max(s0, 4)".
  std::string str() const;

  /// Total structural order used for canonical sorting: <0, 0, >0.
  static int compare(const SymExpr *a, const SymExpr *b);

private:
  friend class SymContext;
  SymExpr(Kind k, int64_t c, std::string name,
          std::vector<const SymExpr *> ops)
      : kind_(k), constant_(c), name_(std::move(name)),
        operands_(std::move(ops)) {}

  Kind kind_;
  int64_t constant_;
  std::string name_;
  std::vector<const SymExpr *> operands_;
};

/// The inclusive value range of a symbol. `max` is kUnbounded for "no upper
/// bound" (torch's int_oo).
struct SymRange {
  static constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max();
  int64_t min = 0;
  int64_t max = kUnbounded;
  bool operator==(const SymRange &) const = default;
};

/// Owns and uniques expressions; knows each symbol's range.
class SymContext {
public:
  SymContext();
  ~SymContext();
  SymContext(const SymContext &) = delete;
  SymContext &operator=(const SymContext &) = delete;

  const SymExpr *constant(int64_t v);
  const SymExpr *symbol(std::string_view name);
  const SymExpr *add(const SymExpr *a, const SymExpr *b);
  const SymExpr *sub(const SymExpr *a, const SymExpr *b);
  const SymExpr *mul(const SymExpr *a, const SymExpr *b);
  const SymExpr *floorDiv(const SymExpr *a, const SymExpr *b);
  const SymExpr *mod(const SymExpr *a, const SymExpr *b);
  const SymExpr *min(const SymExpr *a, const SymExpr *b);
  const SymExpr *max(const SymExpr *a, const SymExpr *b);

  /// This context's expression equal to `e`, which may belong to another
  /// context (Module::clone). `e` is canonical already, so it is copied node
  /// by node, not rebuilt through add and mul.
  const SymExpr *copyOf(const SymExpr *e);

  /// Ranges of symbols, in name order. A symbol used in an expression need
  /// not have a range; its range is then [0, kUnbounded].
  void setRange(const std::string &name, SymRange r) { ranges_[name] = r; }
  std::optional<SymRange> range(const std::string &name) const;
  const std::map<std::string, SymRange> &ranges() const { return ranges_; }

  /// Parses the canonical text form (what SymExpr::str prints): integers,
  /// symbol names, + - * and unary -, parentheses, floordiv/mod/min/max
  /// calls; parse(e->str()) is e. Errors read "at column N: expected ...".
  /// Nesting deeper than 200 and products that would expand to more than
  /// 1024 terms are refused, so hostile text stays cheap.
  Expected<const SymExpr *> parse(std::string_view text);

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::map<std::string, SymRange> ranges_;
};

/// Evaluates `e` with the given symbol values; nullopt if a symbol is unbound
/// or a division by zero happens.
std::optional<int64_t> evaluate(const SymExpr *e,
                                const std::map<std::string, int64_t> &values);

/// Whether `e` mentions the symbol `name` anywhere.
bool mentions(const SymExpr *e, std::string_view name);

} // namespace gc

#endif // GC_IR_SYMEXPR_H
