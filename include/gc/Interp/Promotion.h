//===- Promotion.h - torch's type promotion ---------------------*- C++ -*-===//
#ifndef GC_INTERP_PROMOTION_H
#define GC_INTERP_PROMOTION_H

#include "gc/IR/TypePromotion.h"
#include "gc/Interp/Kernel.h"

namespace gc {

/// Operand helpers.
PromotionOperand operandOf(const Tensor &t);
PromotionOperand operandOf(const Scalar &s);

/// torch's can_cast: no floating to integral or bool, no integral to bool.
bool canCast(DType from, DType to);

/// Broadcasts two shapes as torch does; throws KernelError if they do not
/// broadcast.
Shape broadcastShapes(const Shape &a, const Shape &b);
/// A view of `t` expanded to `sizes` (stride 0 on broadcast dimensions).
Tensor broadcastTo(const Tensor &t, const Shape &sizes);

} // namespace gc

#endif // GC_INTERP_PROMOTION_H
