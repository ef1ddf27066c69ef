//===- TypePromotion.h - torch's type promotion -----------------*- C++ -*-===//
#ifndef GC_IR_TYPEPROMOTION_H
#define GC_IR_TYPEPROMOTION_H

#include "gc/IR/DType.h"

#include <span>

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

} // namespace gc

#endif // GC_IR_TYPEPROMOTION_H
