//===- ShapeInference.h - Result types of ops -------------------*- C++ -*-===//
//
// A shape function computes the types of an op's results (dtype, sizes,
// strides, storage offset, device) from its arguments, with symbolic sizes
// as SymExpr. Views get torch's strides; other results are contiguous. Each
// family of ops registers its functions in one table
// (lib/Ops/Shape/<Family>.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef GC_OPS_SHAPEINFERENCE_H
#define GC_OPS_SHAPEINFERENCE_H

#include "gc/IR/ArgReader.h"
#include "gc/IR/Module.h"
#include "gc/IR/OpRegistry.h"
#include "gc/IR/TypePromotion.h"

#include <algorithm>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace gc {

/// What a shape function throws when the arguments are invalid or the case
/// is unsupported; inferResultTypes turns it into an Error naming the op.
struct ShapeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
[[noreturn]] void shapeFail(const std::string &message);

/// The arguments of one op call, by schema name, seen as types.
class ShapeContext : public ArgReader {
public:
  ShapeContext(OpId op, const std::vector<NamedArg> &args, SymContext &syms,
               const Module *module = nullptr)
      : ArgReader(args), op_(op), syms_(syms), module_(module) {}

  OpId op() const { return op_; }
  SymContext &syms() const { return syms_; }
  /// The argument itself, or null.
  const Arg *arg(std::string_view name) const {
    const NamedArg *a = find(name);
    return a ? &a->value : nullptr;
  }

  const TensorType &tensor(std::string_view name) const;
  std::vector<const TensorType *> tensors(std::string_view name) const;
  /// Tensor?[]: null entries for None.
  std::vector<const TensorType *> optTensors(std::string_view name) const;
  /// int[] / SymInt[] as expressions (constants for plain ints).
  std::vector<const SymExpr *> sizes(std::string_view name) const;
  /// A tensor or a number argument as an operand of type promotion.
  PromotionOperand operand(std::string_view name) const;
  /// The graph of the module that a Graph argument names (cond's branches,
  /// while_loop's body): the op's results are that graph's outputs.
  const Graph &callee(std::string_view name) const;

private:
  OpId op_;
  SymContext &syms_;
  const Module *module_;
};

using ShapeFn = std::vector<Type> (*)(const ShapeContext &ctx);

struct ShapeEntry {
  OpId op;
  ShapeFn fn;
};

using ShapeRegistry = OpRegistry<ShapeEntry>;

/// Every shape function gc has.
const ShapeRegistry &shapeFunctions();
void registerPointwiseShapes(ShapeRegistry &r);
void registerReductionShapes(ShapeRegistry &r);
void registerViewShapes(ShapeRegistry &r);
void registerIndexingShapes(ShapeRegistry &r);
void registerNNShapes(ShapeRegistry &r);
void registerProductShapes(ShapeRegistry &r);
void registerRecurrentShapes(ShapeRegistry &r);
void registerControlFlowShapes(ShapeRegistry &r);
void registerLinalgShapes(ShapeRegistry &r);

/// The result types of calling `op` with `args`. Errors name the op. An op
/// that calls graphs (callsGraphs) needs the module that holds them.
Expected<std::vector<Type>> inferResultTypes(OpId op,
                                             const std::vector<NamedArg> &args,
                                             SymContext &syms, const Module *module = nullptr);

// Helpers for shape functions.

/// The expression of a symbolic int value, read from the node that computes
/// it: sym_size and its kin read a tensor's type, Python's integer operators
/// combine other values. Other sources are an error (thrown; inferResultTypes and lowering
/// report it against the node).
const SymExpr *symIntOf(SymContext &syms, const Value &v);

/// A contiguous tensor type of `dtype` and `sizes` on `device`.
TensorType contiguousType(SymContext &syms, DType dtype, std::vector<const SymExpr *> sizes,
                          Device device = {});
/// torch's broadcasting of symbolic shapes: equal sizes, or one side is 1.
/// Two different symbolic sizes are assumed equal (torch.export guards that
/// they are); two different constants other than 1 are an error.
std::vector<const SymExpr *> broadcastSizes(SymContext &syms,
                                            const std::vector<const SymExpr *> &a,
                                            const std::vector<const SymExpr *> &b);
/// `dim` wrapped into [0, rank) (a 0-dim tensor takes 0 and -1).
int64_t wrapDimension(int64_t dim, int64_t rank);

} // namespace gc

#endif // GC_OPS_SHAPEINFERENCE_H
