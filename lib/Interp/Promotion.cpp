//===- Promotion.cpp - torch's type promotion -----------------------------===//
#include "gc/Interp/Promotion.h"

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

PromotionOperand operandOf(const Tensor &t) {
  return {t.dtype(), t.dim() == 0 ? PromotionOperand::Rank::ZeroDim
                                  : PromotionOperand::Rank::Tensor};
}

PromotionOperand operandOf(const Scalar &s) {
  // A Python number takes the default type of its category.
  DType t = s.kind == Scalar::Kind::Bool  ? DType::Bool
            : s.kind == Scalar::Kind::Int ? DType::Int64
                                          : DType::Float32;
  return {t, PromotionOperand::Rank::Scalar};
}

Shape broadcastShapes(const Shape &a, const Shape &b) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (x != y && x != 1 && y != 1)
      kernelFail("shapes " + shapeString(a) + " and " + shapeString(b) + " do not broadcast");
    out[i] = x == 1 ? y : x;
  }
  return out;
}

Tensor broadcastTo(const Tensor &t, const Shape &sizes) {
  if (t.sizes() == sizes)
    return t;
  if (t.dim() > static_cast<int64_t>(sizes.size()))
    kernelFail("cannot broadcast " + shapeString(t.sizes()) + " to " + shapeString(sizes));
  size_t lead = sizes.size() - t.sizes().size();
  Shape strides(sizes.size(), 0);
  for (size_t i = 0; i < t.sizes().size(); ++i) {
    if (t.sizes()[i] == sizes[lead + i])
      strides[lead + i] = t.strides()[i];
    else if (t.sizes()[i] != 1)
      kernelFail("cannot broadcast " + shapeString(t.sizes()) + " to " + shapeString(sizes));
  }
  return t.asStrided(sizes, strides, t.offset());
}

} // namespace gc
