//===- StridedLayout.cpp - Evaluated layouts and strided copies -----------===//
#include "StridedLayout.h"

#include <cstring>

namespace gc {

int64_t StridedLayout::numel() const {
  int64_t n = 1;
  for (int64_t s : sizes)
    n *= s;
  return n;
}

int64_t StridedLayout::extent() const {
  if (numel() == 0)
    return 0;
  int64_t last = offset;
  for (size_t d = 0; d < sizes.size(); ++d)
    last += (sizes[d] - 1) * strides[d];
  return last + 1;
}

bool StridedLayout::sameMemoryAs(const StridedLayout &o) const {
  if (sizes != o.sizes || offset != o.offset)
    return false;
  for (size_t d = 0; d < sizes.size(); ++d)
    if (sizes[d] > 1 && strides[d] != o.strides[d])
      return false;
  return true;
}

std::optional<std::vector<int64_t>> evaluateAll(const std::vector<const SymExpr *> &exprs,
                                                const SymbolValues &values) {
  std::vector<int64_t> out;
  out.reserve(exprs.size());
  for (const SymExpr *e : exprs) {
    std::optional<int64_t> v = evaluate(e, values);
    if (!v)
      return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

Expected<StridedLayout> evaluateLayout(const std::vector<const SymExpr *> &sizes,
                                       const std::vector<const SymExpr *> &strides,
                                       const SymbolValues &values) {
  std::optional<std::vector<int64_t>> sz = evaluateAll(sizes, values);
  std::optional<std::vector<int64_t>> st = evaluateAll(strides, values);
  if (!sz || !st || sz->size() != st->size())
    return makeError() << "cannot evaluate the layout " << typeText(DType::Float32, sizes);
  for (size_t d = 0; d < sz->size(); ++d)
    if ((*sz)[d] < 0 || (*st)[d] < 0)
      return makeError() << "negative size or stride in a layout";
  return StridedLayout{std::move(*sz), std::move(*st), 0};
}

Expected<StridedLayout> evaluateLayout(const TensorType &type, const SymbolValues &values) {
  Expected<StridedLayout> l = evaluateLayout(type.sizes, type.strides, values);
  if (!l)
    return l;
  if (type.storageOffset) {
    std::optional<int64_t> off = evaluate(type.storageOffset, values);
    if (!off || *off < 0)
      return makeError() << "cannot evaluate the storage offset " << type.storageOffset->str();
    l->offset = *off;
  }
  return l;
}

namespace {

void copyDim(char *dst, const int64_t *dstStrides, const char *src, const int64_t *srcStrides,
             const int64_t *sizes, size_t rank, unsigned elemBytes) {
  if (rank == 1) {
    if (dstStrides[0] == 1 && srcStrides[0] == 1) {
      std::memcpy(dst, src, sizes[0] * elemBytes);
      return;
    }
    for (int64_t i = 0; i < sizes[0]; ++i)
      std::memcpy(dst + i * dstStrides[0] * elemBytes, src + i * srcStrides[0] * elemBytes,
                  elemBytes);
    return;
  }
  for (int64_t i = 0; i < sizes[0]; ++i)
    copyDim(dst + i * dstStrides[0] * elemBytes, dstStrides + 1,
            src + i * srcStrides[0] * elemBytes, srcStrides + 1, sizes + 1, rank - 1, elemBytes);
}

} // namespace

void copyStrided(char *dst, const std::vector<int64_t> &dstStrides, const char *src,
                 const std::vector<int64_t> &srcStrides, const std::vector<int64_t> &sizes,
                 unsigned elemBytes) {
  for (int64_t s : sizes)
    if (s == 0)
      return;
  if (sizes.empty()) {
    std::memcpy(dst, src, elemBytes);
    return;
  }
  copyDim(dst, dstStrides.data(), src, srcStrides.data(), sizes.data(), sizes.size(), elemBytes);
}

std::string typeText(DType dtype, const std::vector<const SymExpr *> &sizes) {
  std::string s(dtypeName(dtype));
  s += '[';
  for (size_t d = 0; d < sizes.size(); ++d)
    s += (d ? ", " : "") + sizes[d]->str();
  return s + ']';
}

std::string typeText(DType dtype, const std::vector<int64_t> &sizes) {
  std::string s(dtypeName(dtype));
  s += '[';
  for (size_t d = 0; d < sizes.size(); ++d)
    s += (d ? ", " : "") + std::to_string(sizes[d]);
  return s + ']';
}

} // namespace gc
