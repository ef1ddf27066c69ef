//===- TypePromotion.cpp - torch's type promotion -------------------------===//
#include "gc/IR/TypePromotion.h"

#include <optional>

namespace gc {

namespace {
enum class Category { Bool, Integral, Floating };
Category category(DType t) {
  if (t == DType::Bool)
    return Category::Bool;
  return isFloatingPoint(t) ? Category::Floating : Category::Integral;
}
unsigned rankWithin(DType t) { return dtypeSize(t); }

std::optional<DType> promoteOpt(std::optional<DType> a, std::optional<DType> b) {
  if (!a)
    return b;
  if (!b)
    return a;
  return promoteTypes(*a, *b);
}

/// torch's rule for combining the results of two rank groups, where
/// `higher` comes from the group that takes precedence.
std::optional<DType> combineCategories(std::optional<DType> higher, std::optional<DType> lower) {
  if (higher && isFloatingPoint(*higher))
    return higher;
  if ((higher && *higher == DType::Bool) || (lower && isFloatingPoint(*lower)))
    return promoteOpt(higher, lower);
  return higher ? higher : lower;
}
} // namespace

DType promoteTypes(DType a, DType b) {
  if (a == b)
    return a;
  Category ca = category(a), cb = category(b);
  if (ca != cb) {
    // The higher category wins; its type is kept.
    return ca > cb ? a : b;
  }
  if (ca == Category::Floating) {
    if ((a == DType::Float16 && b == DType::BFloat16) ||
        (a == DType::BFloat16 && b == DType::Float16))
      return DType::Float32;
    return rankWithin(a) >= rankWithin(b) ? a : b;
  }
  // Integral: an unsigned byte with a signed type needs a wider signed type.
  if (a == DType::UInt8 || b == DType::UInt8) {
    DType other = a == DType::UInt8 ? b : a;
    return other == DType::Int8 ? DType::Int16 : other;
  }
  return rankWithin(a) >= rankWithin(b) ? a : b;
}

DType resultType(std::span<const PromotionOperand> operands) {
  std::optional<DType> dims, zeroDims, scalars;
  for (const PromotionOperand &o : operands) {
    switch (o.rank) {
    case PromotionOperand::Rank::Tensor:
      dims = promoteOpt(dims, o.dtype);
      break;
    case PromotionOperand::Rank::ZeroDim:
      zeroDims = promoteOpt(zeroDims, o.dtype);
      break;
    case PromotionOperand::Rank::Scalar:
      scalars = promoteOpt(scalars, o.dtype);
      break;
    }
  }
  std::optional<DType> r = combineCategories(dims, combineCategories(zeroDims, scalars));
  return r ? *r : DType::Float32;
}

} // namespace gc
