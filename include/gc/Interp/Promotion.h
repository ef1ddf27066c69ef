//===- Promotion.h - torch's type promotion ---------------------*- C++ -*-===//
#ifndef GC_INTERP_PROMOTION_H
#define GC_INTERP_PROMOTION_H

#include "gc/Interp/Kernel.h"

namespace gc {

/// torch.promote_types for two dtypes.
DType promoteTypes(DType a, DType b);

/// The result dtype of an op over tensors and scalars, as torch's
/// result_type computes it: dimensioned tensors win over 0-dim tensors, which
/// win over Python scalars, unless the lower group has a higher category
/// (bool < integer < floating).
struct PromotionOperand {
  DType dtype;
  enum class Rank { Tensor, ZeroDim, Scalar } rank;
};
DType resultType(std::span<const PromotionOperand> operands);

/// Operand helpers.
PromotionOperand operandOf(const Tensor &t);
PromotionOperand operandOf(const Scalar &s);

/// Broadcasts two shapes as torch does; throws KernelError if they do not
/// broadcast.
Shape broadcastShapes(const Shape &a, const Shape &b);
/// A view of `t` expanded to `sizes` (stride 0 on broadcast dimensions).
Tensor broadcastTo(const Tensor &t, const Shape &sizes);

} // namespace gc

#endif // GC_INTERP_PROMOTION_H
