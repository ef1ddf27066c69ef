//===- Derivatives.h - Derivative rules of the core ops ---------*- C++ -*-===//
//
// A derivative rule builds the backward of one forward node: from the node
// (its arguments read by name, mapped into the joint graph), its results
// and the gradients flowing into them, it emits backward nodes through a
// GraphBuilder and returns a gradient per tensor operand. Rules may return
// gradients of a broadcast shape or another floating dtype: the joint
// builder sums them back to the operand's sizes and casts them. Each family
// registers its rules in one table (lib/Autodiff/<Family>.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef GC_AUTODIFF_DERIVATIVES_H
#define GC_AUTODIFF_DERIVATIVES_H

#include "gc/IR/OpRegistry.h"
#include "gc/Ops/GraphBuilder.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace gc {

/// A forward node as its derivative rule sees it.
class DerivativeContext : public RewriteContext {
public:
  DerivativeContext(const Node &forward, GraphBuilder &b, const ValueMap &map,
                    std::vector<Value *> resultGrads)
      : RewriteContext(forward, b, map), resultGrads_(std::move(resultGrads)) {}

  /// The joint graph's value of the node's result i.
  Value *result(size_t i = 0) const { return map(node().results().at(i)); }
  /// The gradient flowing into result i, or null when none does.
  Value *grad(size_t i = 0) const { return resultGrads_.at(i); }

private:
  std::vector<Value *> resultGrads_;
};

/// The gradients of a node's tensor operands, by argument name and, for
/// tensor lists, position. An operand without one gets no gradient.
class InputGrads {
public:
  InputGrads &set(std::string_view arg, Value *grad, size_t index = 0);
  /// The gradient set for the operand, or null.
  Value *get(std::string_view arg, size_t index = 0) const;

private:
  std::map<std::pair<std::string, size_t>, Value *> grads_;
};

using DerivativeFn = InputGrads (*)(DerivativeContext &ctx);

struct DerivativeEntry {
  OpId op;
  /// Null for ops through which no gradient flows: comparisons, integer and
  /// bool results, random numbers, and piecewise constant functions.
  DerivativeFn fn;
  /// The formula in one line, for docs/ops.md.
  const char *formula;
};

using DerivativeRegistry = OpRegistry<DerivativeEntry>;

/// Every derivative rule gc has.
const DerivativeRegistry &derivatives();
void registerPointwiseDerivatives(DerivativeRegistry &r);
void registerShapeDerivatives(DerivativeRegistry &r);
void registerNNDerivatives(DerivativeRegistry &r);
void registerReductionDerivatives(DerivativeRegistry &r);

} // namespace gc

#endif // GC_AUTODIFF_DERIVATIVES_H
