//===- StridedLayout.cpp - Evaluated layouts and strided copies -----------===//
#include "gc/Runtime/StridedLayout.h"

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

std::string typeText(DType dtype, const std::vector<int64_t> &sizes) {
  std::string s(dtypeName(dtype));
  s += '[';
  for (size_t d = 0; d < sizes.size(); ++d)
    s += (d ? ", " : "") + std::to_string(sizes[d]);
  return s + ']';
}

} // namespace gc
