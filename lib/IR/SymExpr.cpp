//===- SymExpr.cpp - Symbolic integer expressions -------------------------===//
//
// Add and Mul are built through one polynomial form: a list of terms, each a
// coefficient times a sorted list of atom factors. Every builder turns its
// operands into terms, combines them, and interns the result, so canonical
// form is a property of construction rather than a later simplification.
//
//===----------------------------------------------------------------------===//

#include "gc/IR/SymExpr.h"

#include <algorithm>
#include <array>
#include <functional>
#include <numeric>
#include <unordered_map>

namespace gc {

namespace {

using Kind = SymExpr::Kind;

// Constant arithmetic wraps modulo 2^64 (see SymExpr.h): signed overflow
// would be undefined behaviour, and files are untrusted input.
int64_t wrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) +
                              static_cast<uint64_t>(b));
}
int64_t wrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) *
                              static_cast<uint64_t>(b));
}
int64_t wrapNeg(int64_t a) {
  return static_cast<int64_t>(0 - static_cast<uint64_t>(a));
}
uint64_t absValue(int64_t a) {
  return a < 0 ? 0 - static_cast<uint64_t>(a) : static_cast<uint64_t>(a);
}

// Python's // and %, for b != 0. INT64_MIN // -1 wraps like the rest.
int64_t floorDivConst(int64_t a, int64_t b) {
  if (b == -1)
    return wrapNeg(a);
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0)))
    --q;
  return q;
}
int64_t modConst(int64_t a, int64_t b) {
  if (b == -1)
    return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0)))
    r += b;
  return r;
}

/// A monomial: coefficient times atom factors sorted by SymExpr::compare.
/// No factors means a constant.
struct Term {
  int64_t coef;
  std::vector<const SymExpr *> factors;
};

/// Lexicographic order of two expression lists, a proper prefix first.
int compareSequences(std::span<const SymExpr *const> a,
                     std::span<const SymExpr *const> b) {
  size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i)
    if (int c = SymExpr::compare(a[i], b[i]))
      return c;
  if (a.size() != b.size())
    return a.size() < b.size() ? -1 : 1;
  return 0;
}

bool isConstValue(const SymExpr *e, int64_t v) {
  return e->isConst() && e->constant() == v;
}

/// The coefficient of a term of an Add (or of any expression seen as one
/// term): a Mul's leading constant, a constant itself, else 1.
int64_t termCoef(const SymExpr *e) {
  if (e->isConst())
    return e->constant();
  if (e->kind() == Kind::Mul && e->operands()[0]->isConst())
    return e->operands()[0]->constant();
  return 1;
}

} // namespace

//===----------------------------------------------------------------------===//
// SymExpr
//===----------------------------------------------------------------------===//

int SymExpr::compare(const SymExpr *a, const SymExpr *b) {
  if (a == b)
    return 0;
  if (a->kind_ != b->kind_)
    return a->kind_ < b->kind_ ? -1 : 1;
  switch (a->kind_) {
  case Kind::Const:
    return a->constant_ == b->constant_ ? 0
           : a->constant_ < b->constant_ ? -1
                                         : 1;
  case Kind::Symbol: {
    int c = a->name_.compare(b->name_);
    return c < 0 ? -1 : c > 0 ? 1 : 0;
  }
  default:
    return compareSequences(a->operands_, b->operands_);
  }
}

namespace {

void printExpr(const SymExpr *e, std::string &out);

/// Prints the factors of a Mul (the operands after its coefficient).
void printFactors(const SymExpr *mul, std::string &out) {
  auto ops = mul->operands();
  bool first = true;
  for (const SymExpr *f : ops.subspan(ops[0]->isConst() ? 1 : 0)) {
    if (!first)
      out += '*';
    first = false;
    printExpr(f, out);
  }
}

/// Prints a term of an Add with its coefficient's sign dropped; the caller
/// has printed " - ".
void printNegatedTerm(const SymExpr *e, std::string &out) {
  if (e->isConst()) {
    out += std::to_string(absValue(e->constant()));
    return;
  }
  uint64_t coef = absValue(termCoef(e));
  if (coef != 1) {
    out += std::to_string(coef);
    out += '*';
  }
  printFactors(e, out);
}

void printCall(const char *name, const SymExpr *e, std::string &out) {
  out += name;
  out += '(';
  bool first = true;
  for (const SymExpr *op : e->operands()) {
    if (!first)
      out += ", ";
    first = false;
    printExpr(op, out);
  }
  out += ')';
}

void printExpr(const SymExpr *e, std::string &out) {
  switch (e->kind()) {
  case Kind::Const:
    out += std::to_string(e->constant());
    return;
  case Kind::Symbol:
    out += e->symbolName();
    return;
  case Kind::Add: {
    bool first = true;
    for (const SymExpr *term : e->operands()) {
      if (first) {
        printExpr(term, out);
        first = false;
      } else if (termCoef(term) < 0) {
        out += " - ";
        printNegatedTerm(term, out);
      } else {
        out += " + ";
        printExpr(term, out);
      }
    }
    return;
  }
  case Kind::Mul: {
    // A Mul's factors are atoms (never an Add), so none needs parentheses.
    int64_t coef = termCoef(e);
    if (coef == -1) {
      out += '-';
    } else if (coef != 1) {
      out += std::to_string(coef);
      out += '*';
    }
    printFactors(e, out);
    return;
  }
  case Kind::FloorDiv:
    return printCall("floordiv", e, out);
  case Kind::Mod:
    return printCall("mod", e, out);
  case Kind::Min:
    return printCall("min", e, out);
  case Kind::Max:
    return printCall("max", e, out);
  }
}

} // namespace

std::string SymExpr::str() const {
  std::string out;
  printExpr(this, out);
  return out;
}

//===----------------------------------------------------------------------===//
// SymContext: uniquing and canonical builders
//===----------------------------------------------------------------------===//

struct SymContext::Impl {
  /// Owns every expression of the context.
  std::vector<std::unique_ptr<SymExpr>> nodes;

  /// An open-addressing hash set of `nodes` (linear probing, power-of-two
  /// capacity, at most half full). The hash is kept beside the pointer so
  /// that growing never recomputes it.
  struct Slot {
    uint64_t hash = 0;
    const SymExpr *expr = nullptr;
  };
  std::vector<Slot> slots = std::vector<Slot>(256);

  static uint64_t hashKey(Kind k, int64_t c, std::string_view name,
                          std::span<const SymExpr *const> ops) {
    uint64_t h = static_cast<uint64_t>(k) * 0x9e3779b97f4a7c15ull;
    auto mix = [&h](uint64_t v) {
      h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    };
    mix(static_cast<uint64_t>(c));
    if (!name.empty())
      mix(std::hash<std::string_view>()(name));
    for (const SymExpr *op : ops)
      mix(reinterpret_cast<uintptr_t>(op));
    return h;
  }

  static bool matches(const SymExpr *e, Kind k, int64_t c,
                      std::string_view name,
                      std::span<const SymExpr *const> ops) {
    if (e->kind() != k || e->constant() != c || e->symbolName() != name)
      return false;
    auto eOps = e->operands();
    return eOps.size() == ops.size() &&
           std::equal(eOps.begin(), eOps.end(), ops.begin());
  }

  void grow() {
    std::vector<Slot> old = std::move(slots);
    slots.assign(old.size() * 2, Slot());
    size_t mask = slots.size() - 1;
    for (const Slot &s : old) {
      if (!s.expr)
        continue;
      size_t i = s.hash & mask;
      while (slots[i].expr)
        i = (i + 1) & mask;
      slots[i] = s;
    }
  }

  /// The unique expression with these contents. Callers pass canonical
  /// contents; this only uniques.
  const SymExpr *intern(Kind k, int64_t c, std::string_view name,
                        std::span<const SymExpr *const> ops) {
    uint64_t h = hashKey(k, c, name, ops);
    size_t mask = slots.size() - 1;
    size_t i = h & mask;
    for (; slots[i].expr; i = (i + 1) & mask)
      if (slots[i].hash == h && matches(slots[i].expr, k, c, name, ops))
        return slots[i].expr;
    nodes.push_back(std::unique_ptr<SymExpr>(
        new SymExpr(k, c, std::string(name),
                    std::vector<const SymExpr *>(ops.begin(), ops.end()))));
    const SymExpr *e = nodes.back().get();
    slots[i] = {h, e};
    if (nodes.size() * 2 > slots.size())
      grow();
    return e;
  }

  const SymExpr *constant(int64_t v) { return intern(Kind::Const, v, {}, {}); }

  //===--- Polynomials ----------------------------------------------------===//

  /// Appends the terms of `e`, each multiplied by `scale`.
  static void appendTerms(const SymExpr *e, int64_t scale,
                          std::vector<Term> &out) {
    switch (e->kind()) {
    case Kind::Const:
      out.push_back({wrapMul(e->constant(), scale), {}});
      return;
    case Kind::Add:
      for (const SymExpr *op : e->operands())
        appendTerms(op, scale, out);
      return;
    case Kind::Mul: {
      auto ops = e->operands();
      size_t first = ops[0]->isConst() ? 1 : 0;
      out.push_back({wrapMul(termCoef(e), scale),
                     std::vector<const SymExpr *>(ops.begin() + first,
                                                  ops.end())});
      return;
    }
    default:
      out.push_back({scale, {e}});
      return;
    }
  }

  static std::vector<Term> termsOf(const SymExpr *e) {
    std::vector<Term> terms;
    appendTerms(e, 1, terms);
    return terms;
  }

  const SymExpr *monomial(int64_t coef,
                          const std::vector<const SymExpr *> &factors) {
    if (factors.empty() || coef == 0)
      return constant(coef);
    if (coef == 1 && factors.size() == 1)
      return factors[0];
    std::vector<const SymExpr *> ops;
    ops.reserve(factors.size() + 1);
    if (coef != 1)
      ops.push_back(constant(coef));
    ops.insert(ops.end(), factors.begin(), factors.end());
    return intern(Kind::Mul, 0, {}, ops);
  }

  /// The canonical sum of `terms` (whose factor lists are sorted).
  const SymExpr *sum(std::vector<Term> terms) {
    std::sort(terms.begin(), terms.end(), [](const Term &a, const Term &b) {
      return compareSequences(a.factors, b.factors) < 0;
    });
    // Combine like terms in place; equal factor lists are adjacent and
    // equal element by element (factors are uniqued).
    size_t n = 0;
    for (size_t i = 0; i < terms.size(); ++i) {
      if (n > 0 && terms[n - 1].factors == terms[i].factors) {
        terms[n - 1].coef = wrapAdd(terms[n - 1].coef, terms[i].coef);
        continue;
      }
      if (n != i)
        terms[n] = std::move(terms[i]);
      ++n;
    }
    terms.resize(n);
    std::erase_if(terms, [](const Term &t) { return t.coef == 0; });
    if (terms.empty())
      return constant(0);
    if (terms.size() == 1)
      return monomial(terms[0].coef, terms[0].factors);
    // The constant term has no factors, so it sorted first; it goes last.
    std::vector<const SymExpr *> ops;
    ops.reserve(terms.size());
    bool hasConst = terms[0].factors.empty();
    for (size_t i = hasConst ? 1 : 0; i < terms.size(); ++i)
      ops.push_back(monomial(terms[i].coef, terms[i].factors));
    if (hasConst)
      ops.push_back(constant(terms[0].coef));
    return intern(Kind::Add, 0, {}, ops);
  }

  const SymExpr *add(const SymExpr *a, const SymExpr *b, int64_t bScale) {
    if (a->isConst() && b->isConst())
      return constant(wrapAdd(a->constant(), wrapMul(b->constant(), bScale)));
    if (isConstValue(b, 0))
      return a;
    if (isConstValue(a, 0) && bScale == 1)
      return b;
    std::vector<Term> terms;
    appendTerms(a, 1, terms);
    appendTerms(b, bScale, terms);
    return sum(std::move(terms));
  }

  const SymExpr *mul(const SymExpr *a, const SymExpr *b) {
    if (a->isConst() && b->isConst())
      return constant(wrapMul(a->constant(), b->constant()));
    if (isConstValue(a, 0) || isConstValue(b, 0))
      return constant(0);
    if (isConstValue(a, 1))
      return b;
    if (isConstValue(b, 1))
      return a;
    std::vector<Term> as = termsOf(a), bs = termsOf(b), product;
    product.reserve(as.size() * bs.size());
    for (const Term &x : as) {
      for (const Term &y : bs) {
        Term t{wrapMul(x.coef, y.coef), {}};
        t.factors.resize(x.factors.size() + y.factors.size());
        std::merge(x.factors.begin(), x.factors.end(), y.factors.begin(),
                   y.factors.end(), t.factors.begin(),
                   [](const SymExpr *p, const SymExpr *q) {
                     return SymExpr::compare(p, q) < 0;
                   });
        product.push_back(std::move(t));
      }
    }
    return sum(std::move(product));
  }

  const SymExpr *neg(const SymExpr *a) { return mul(constant(-1), a); }

  //===--- FloorDiv and Mod -----------------------------------------------===//

  /// Splits `a`'s terms by a positive constant divisor `d`: the part that
  /// divides exactly (already divided) and the rest, whose constant lies in
  /// [0, d). a = d*quotient + rest.
  void splitByDivisor(const SymExpr *a, int64_t d, std::vector<Term> &quotient,
                      std::vector<Term> &rest) {
    for (Term &t : termsOf(a)) {
      if (t.factors.empty()) {
        if (int64_t q = floorDivConst(t.coef, d))
          quotient.push_back({q, {}});
        if (int64_t r = modConst(t.coef, d))
          rest.push_back({r, {}});
      } else if (t.coef % d == 0) {
        quotient.push_back({t.coef / d, std::move(t.factors)});
      } else {
        rest.push_back(std::move(t));
      }
    }
  }

  /// The greatest common divisor of `d` and every coefficient of `terms`.
  static int64_t commonFactor(const std::vector<Term> &terms, int64_t d) {
    uint64_t g = static_cast<uint64_t>(d);
    for (const Term &t : terms)
      g = std::gcd(g, absValue(t.coef));
    return static_cast<int64_t>(g);
  }

  static std::vector<Term> divideTerms(std::vector<Term> terms, int64_t g) {
    for (Term &t : terms)
      t.coef /= g;
    return terms;
  }

  static std::optional<int64_t> positiveConst(const SymExpr *e) {
    if (e->isConst() && e->constant() > 0)
      return e->constant();
    return std::nullopt;
  }

  const SymExpr *floorDiv(const SymExpr *a, const SymExpr *b) {
    if (!b->isConst() || b->constant() == 0)
      return intern(Kind::FloorDiv, 0, {}, std::array{a, b});
    int64_t d = b->constant();
    if (a->isConst())
      return constant(floorDivConst(a->constant(), d));
    if (d == 1)
      return a;
    // -INT64_MIN is no int64, so that divisor cannot be made positive.
    if (d == std::numeric_limits<int64_t>::min())
      return intern(Kind::FloorDiv, 0, {}, std::array{a, b});
    if (d < 0) // a // -d == (-a) // d
      return floorDiv(neg(a), constant(-d));

    std::vector<Term> quotient, rest;
    splitByDivisor(a, d, quotient, rest);
    if (!quotient.empty())
      return add(sum(std::move(quotient)), floorDiv(sum(std::move(rest)), b), 1);
    // (g*x) // (g*d) == x // d for g > 0.
    if (int64_t g = commonFactor(rest, d); g > 1)
      return floorDiv(sum(divideTerms(std::move(rest), g)), constant(d / g));
    // (x // d1) // d == x // (d1*d) for positive d1, d.
    if (a->kind() == Kind::FloorDiv) {
      int64_t product;
      if (auto d1 = positiveConst(a->operands()[1]);
          d1 && !__builtin_mul_overflow(*d1, d, &product))
        return floorDiv(a->operands()[0], constant(product));
    }
    return intern(Kind::FloorDiv, 0, {}, std::array{a, b});
  }

  const SymExpr *mod(const SymExpr *a, const SymExpr *b) {
    if (!b->isConst() || b->constant() == 0)
      return intern(Kind::Mod, 0, {}, std::array{a, b});
    int64_t d = b->constant();
    if (a->isConst())
      return constant(modConst(a->constant(), d));
    if (d == 1 || d == -1)
      return constant(0);
    if (d == std::numeric_limits<int64_t>::min())
      return intern(Kind::Mod, 0, {}, std::array{a, b});
    if (d < 0) // a % -d == -((-a) % d)
      return neg(mod(neg(a), constant(-d)));

    std::vector<Term> quotient, rest;
    splitByDivisor(a, d, quotient, rest);
    if (!quotient.empty())
      return mod(sum(std::move(rest)), b);
    // (g*x) % (g*d) == g*(x % d) for g > 0.
    if (int64_t g = commonFactor(rest, d); g > 1)
      return mul(constant(g), mod(sum(divideTerms(std::move(rest), g)),
                                  constant(d / g)));
    // (x % (k*d)) % d == x % d for positive k, d.
    if (a->kind() == Kind::Mod) {
      if (auto d1 = positiveConst(a->operands()[1]); d1 && *d1 % d == 0)
        return mod(a->operands()[0], b);
    }
    return intern(Kind::Mod, 0, {}, std::array{a, b});
  }

  //===--- Min and Max ----------------------------------------------------===//

  const SymExpr *minMax(Kind k, const SymExpr *a, const SymExpr *b) {
    std::vector<const SymExpr *> ops;
    std::optional<int64_t> folded;
    for (const SymExpr *e : {a, b}) {
      std::span<const SymExpr *const> parts(&e, 1);
      if (e->kind() == k)
        parts = e->operands();
      for (const SymExpr *p : parts) {
        if (!p->isConst()) {
          ops.push_back(p);
          continue;
        }
        int64_t v = p->constant();
        folded = !folded ? v
                 : k == Kind::Min ? std::min(*folded, v)
                                  : std::max(*folded, v);
      }
    }
    if (ops.empty())
      return constant(*folded);
    std::sort(ops.begin(), ops.end(), [](const SymExpr *p, const SymExpr *q) {
      return SymExpr::compare(p, q) < 0;
    });
    ops.erase(std::unique(ops.begin(), ops.end()), ops.end());
    if (folded)
      ops.push_back(constant(*folded));
    if (ops.size() == 1)
      return ops[0];
    return intern(k, 0, {}, ops);
  }
};

SymContext::SymContext() : impl_(std::make_unique<Impl>()) {}
SymContext::~SymContext() = default;

const SymExpr *SymContext::constant(int64_t v) { return impl_->constant(v); }
const SymExpr *SymContext::symbol(std::string_view name) {
  return impl_->intern(SymExpr::Kind::Symbol, 0, name, {});
}
const SymExpr *SymContext::add(const SymExpr *a, const SymExpr *b) {
  return impl_->add(a, b, 1);
}
const SymExpr *SymContext::sub(const SymExpr *a, const SymExpr *b) {
  return impl_->add(a, b, -1);
}
const SymExpr *SymContext::mul(const SymExpr *a, const SymExpr *b) {
  return impl_->mul(a, b);
}
const SymExpr *SymContext::floorDiv(const SymExpr *a, const SymExpr *b) {
  return impl_->floorDiv(a, b);
}
const SymExpr *SymContext::mod(const SymExpr *a, const SymExpr *b) {
  return impl_->mod(a, b);
}
const SymExpr *SymContext::min(const SymExpr *a, const SymExpr *b) {
  return impl_->minMax(SymExpr::Kind::Min, a, b);
}
const SymExpr *SymContext::max(const SymExpr *a, const SymExpr *b) {
  return impl_->minMax(SymExpr::Kind::Max, a, b);
}

const SymExpr *SymContext::copyOf(const SymExpr *e) {
  // Operands may be shared (min(x, y) and max(x, y) under one floordiv), so
  // each is copied once, or nesting would cost exponential time.
  std::unordered_map<const SymExpr *, const SymExpr *> copied;
  auto copy = [&](auto &self, const SymExpr *from) -> const SymExpr * {
    if (auto it = copied.find(from); it != copied.end())
      return it->second;
    std::vector<const SymExpr *> ops;
    ops.reserve(from->operands().size());
    for (const SymExpr *op : from->operands())
      ops.push_back(self(self, op));
    const SymExpr *to =
        impl_->intern(from->kind(), from->constant(), from->symbolName(), ops);
    copied.emplace(from, to);
    return to;
  };
  return copy(copy, e);
}

std::optional<SymRange> SymContext::range(const std::string &name) const {
  auto it = ranges_.find(name);
  if (it == ranges_.end())
    return std::nullopt;
  return it->second;
}

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

namespace {

/// A recursive-descent parser for the text SymExpr::str prints:
///   expr   := term (('+' | '-') term)*
///   term   := factor ('*' factor)*
///   factor := '-' factor | integer | symbol | call | '(' expr ')'
///   call   := ('floordiv' | 'mod' | 'min' | 'max') '(' expr (',' expr)* ')'
/// A minus is folded into an integer literal that follows it, so that
/// INT64_MIN, whose magnitude is no int64, reads back.
class ExprParser {
public:
  ExprParser(SymContext &ctx, std::string_view text) : ctx_(ctx), text_(text) {}

  Expected<const SymExpr *> parseAll() {
    const SymExpr *e = nullptr;
    if (Error err = parseExpr(e))
      return err;
    skipSpace();
    if (pos_ != text_.size())
      return expected("an operator or the end of the expression");
    return e;
  }

private:
  // Bound recursion and expansion, so that hostile input can exhaust
  // neither the stack nor memory.
  static constexpr unsigned kMaxDepth = 200;
  static constexpr size_t kMaxTerms = 1024;

  /// "at column N: expected X, got Y" for the current position.
  Error expected(std::string_view what) const {
    ErrorBuilder b;
    b << "at column " << pos_ + 1 << ": expected " << what;
    if (pos_ < text_.size())
      b << ", got '" << text_[pos_] << "'";
    else
      b << ", got the end of the expression";
    return b;
  }

  static Error failAt(size_t pos, std::string_view message) {
    return makeError() << "at column " << pos + 1 << ": " << message;
  }

  void skipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }

  bool consume(char c) {
    skipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  static bool isDigit(char c) { return c >= '0' && c <= '9'; }
  static bool isIdentStart(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  }

  Error parseExpr(const SymExpr *&out) {
    if (++depth_ > kMaxDepth)
      return failAt(pos_, "expression nested too deeply");
    skipSpace();
    size_t start = pos_;
    std::vector<const SymExpr *> terms(1);
    GC_RETURN_IF_ERROR(parseTerm(terms.back(), /*negate=*/false));
    while (true) {
      bool minus;
      if (consume('+'))
        minus = false;
      else if (consume('-'))
        minus = true;
      else
        break;
      terms.emplace_back();
      GC_RETURN_IF_ERROR(parseTerm(terms.back(), minus));
    }
    --depth_;
    return combine(std::move(terms), Kind::Add, start, out);
  }

  Error parseTerm(const SymExpr *&out, bool negate) {
    skipSpace();
    size_t start = pos_;
    std::vector<const SymExpr *> factors(1);
    GC_RETURN_IF_ERROR(parseFactor(factors.back(), negate));
    while (consume('*')) {
      factors.emplace_back();
      GC_RETURN_IF_ERROR(parseFactor(factors.back(), false));
    }
    return combine(std::move(factors), Kind::Mul, start, out);
  }

  static size_t termCount(const SymExpr *e) {
    return e->kind() == Kind::Add ? e->operands().size() : 1;
  }

  /// Combines the operands of an n-ary +, *, min or max pairwise, in rounds,
  /// so that n operands cost O(n log n) work rather than O(n^2). These are
  /// associative and commutative on the canonical form, so the grouping
  /// does not change the result. Products expand, so a product of sums is
  /// refused once it would pass kMaxTerms terms.
  Error combine(std::vector<const SymExpr *> ops, Kind kind, size_t start,
                const SymExpr *&out) {
    while (ops.size() > 1) {
      size_t n = 0;
      for (size_t i = 0; i + 1 < ops.size(); i += 2) {
        const SymExpr *a = ops[i], *b = ops[i + 1];
        switch (kind) {
        case Kind::Add:
          ops[n++] = ctx_.add(a, b);
          break;
        case Kind::Mul:
          if (termCount(a) * termCount(b) > kMaxTerms)
            return failAt(start, "expression too large to expand");
          ops[n++] = ctx_.mul(a, b);
          break;
        case Kind::Min:
          ops[n++] = ctx_.min(a, b);
          break;
        default:
          ops[n++] = ctx_.max(a, b);
          break;
        }
      }
      if (ops.size() % 2)
        ops[n++] = ops.back();
      ops.resize(n);
    }
    out = ops[0];
    return Error::success();
  }

  Error parseFactor(const SymExpr *&out, bool negate) {
    // Runs of unary minus only flip the sign; no recursion needed.
    while (consume('-'))
      negate = !negate;
    skipSpace();
    if (pos_ < text_.size() && isDigit(text_[pos_]))
      return parseInteger(out, negate);
    GC_RETURN_IF_ERROR(parsePrimary(out));
    if (negate)
      out = ctx_.mul(ctx_.constant(-1), out);
    return Error::success();
  }

  Error parseInteger(const SymExpr *&out, bool negate) {
    size_t start = pos_;
    // The magnitude may reach 2^63 when negated (INT64_MIN).
    uint64_t limit = negate ? uint64_t(1) << 63 : (uint64_t(1) << 63) - 1;
    uint64_t v = 0;
    for (; pos_ < text_.size() && isDigit(text_[pos_]); ++pos_) {
      uint64_t digit = text_[pos_] - '0';
      if (v > (limit - digit) / 10) {
        return failAt(start, "integer out of range");
      }
      v = v * 10 + digit;
    }
    out = ctx_.constant(negate ? static_cast<int64_t>(0 - v)
                               : static_cast<int64_t>(v));
    return Error::success();
  }

  Error parsePrimary(const SymExpr *&out) {
    skipSpace();
    if (consume('(')) {
      GC_RETURN_IF_ERROR(parseExpr(out));
      if (!consume(')'))
        return expected("')'");
      return Error::success();
    }
    if (pos_ >= text_.size() || !isIdentStart(text_[pos_]))
      return expected("an expression");
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (isIdentStart(text_[pos_]) || isDigit(text_[pos_])))
      ++pos_;
    std::string_view name = text_.substr(start, pos_ - start);
    Kind kind;
    if (name == "floordiv")
      kind = Kind::FloorDiv;
    else if (name == "mod")
      kind = Kind::Mod;
    else if (name == "min")
      kind = Kind::Min;
    else if (name == "max")
      kind = Kind::Max;
    else {
      skipSpace();
      if (pos_ < text_.size() && text_[pos_] == '(') {
        return failAt(start, "unknown function '" + std::string(name) + "'");
      }
      out = ctx_.symbol(name);
      return Error::success();
    }
    return parseCall(out, kind, name, start);
  }

  Error parseCall(const SymExpr *&out, Kind kind, std::string_view name,
                  size_t start) {
    if (!consume('('))
      return expected("'(' after '" + std::string(name) + "'");
    std::vector<const SymExpr *> args;
    do {
      const SymExpr *arg = nullptr;
      GC_RETURN_IF_ERROR(parseExpr(arg));
      args.push_back(arg);
    } while (consume(','));
    if (!consume(')'))
      return expected("',' or ')'");
    bool binary = kind == Kind::FloorDiv || kind == Kind::Mod;
    if (binary ? args.size() != 2 : args.size() < 2)
      return failAt(start, "'" + std::string(name) + "' takes " +
                               (binary ? "2" : "at least 2") +
                               " arguments, got " +
                               std::to_string(args.size()));
    if (kind == Kind::FloorDiv)
      out = ctx_.floorDiv(args[0], args[1]);
    else if (kind == Kind::Mod)
      out = ctx_.mod(args[0], args[1]);
    else
      return combine(std::move(args), kind, start, out);
    return Error::success();
  }

  SymContext &ctx_;
  std::string_view text_;
  size_t pos_ = 0;
  unsigned depth_ = 0;
};

} // namespace

Expected<const SymExpr *> SymContext::parse(std::string_view text) {
  return ExprParser(*this, text).parseAll();
}

//===----------------------------------------------------------------------===//
// Evaluation
//===----------------------------------------------------------------------===//

std::optional<int64_t> evaluate(const SymExpr *e,
                                const std::map<std::string, int64_t> &values) {
  using Kind = SymExpr::Kind;
  switch (e->kind()) {
  case Kind::Const:
    return e->constant();
  case Kind::Symbol: {
    auto it = values.find(e->symbolName());
    if (it == values.end())
      return std::nullopt;
    return it->second;
  }
  default:
    break;
  }
  auto ops = e->operands();
  std::optional<int64_t> acc = evaluate(ops[0], values);
  if (!acc)
    return std::nullopt;
  for (const SymExpr *op : ops.subspan(1)) {
    std::optional<int64_t> v = evaluate(op, values);
    if (!v)
      return std::nullopt;
    switch (e->kind()) {
    case Kind::Add:
      *acc = wrapAdd(*acc, *v);
      break;
    case Kind::Mul:
      *acc = wrapMul(*acc, *v);
      break;
    case Kind::FloorDiv:
      if (*v == 0)
        return std::nullopt;
      *acc = floorDivConst(*acc, *v);
      break;
    case Kind::Mod:
      if (*v == 0)
        return std::nullopt;
      *acc = modConst(*acc, *v);
      break;
    case Kind::Min:
      *acc = std::min(*acc, *v);
      break;
    case Kind::Max:
      *acc = std::max(*acc, *v);
      break;
    default:
      break;
    }
  }
  return acc;
}

bool mentions(const SymExpr *e, std::string_view name) {
  if (e->isSymbol())
    return e->symbolName() == name;
  for (const SymExpr *op : e->operands())
    if (mentions(op, name))
      return true;
  return false;
}

} // namespace gc
