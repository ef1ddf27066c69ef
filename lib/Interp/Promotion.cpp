//===- Promotion.cpp - torch's type promotion -----------------------------===//
#include "gc/Interp/Promotion.h"

#include <optional>

namespace gc {

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

bool canCast(DType from, DType to) {
  if (isFloatingPoint(from) && !isFloatingPoint(to))
    return false;
  return from == DType::Bool || to != DType::Bool;
}

} // namespace gc
