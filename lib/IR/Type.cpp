//===- Type.cpp - Types of graph values -----------------------------------===//
#include "gc/IR/Type.h"

namespace gc {

std::vector<const SymExpr *>
contiguousStrides(SymContext &ctx, const std::vector<const SymExpr *> &sizes) {
  std::vector<const SymExpr *> strides(sizes.size());
  const SymExpr *running = ctx.constant(1);
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = running;
    // torch treats size 0 and 1 like 1 when computing the strides of the
    // dimensions before them: max(size, 1).
    const SymExpr *size = sizes[i];
    if (size->isConst())
      running = ctx.mul(running, ctx.constant(size->constant() < 1 ? 1 : size->constant()));
    else
      running = ctx.mul(running, size);
  }
  return strides;
}

} // namespace gc
