//===- StridedLayout.h - Evaluated layouts and strided copies ---*- C++ -*-===//
#ifndef GC_RUNTIME_STRIDEDLAYOUT_H
#define GC_RUNTIME_STRIDEDLAYOUT_H

#include "gc/Support/DType.h"

#include <cstdint>
#include <string>
#include <vector>

namespace gc {

/// A tensor layout with every size, stride and offset evaluated (elements).
struct StridedLayout {
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  int64_t offset = 0;

  int64_t numel() const;
  /// Elements from the first to one past the last one reached, offset
  /// included; 0 when the layout holds no element.
  int64_t extent() const;
  /// Equal as places in memory: same sizes, offset, and strides wherever a
  /// dimension has more than one element.
  bool sameMemoryAs(const StridedLayout &o) const;
  bool operator==(const StridedLayout &) const = default;
};

/// Copies the elements of `sizes` from `src` (strides `srcStrides`) to `dst`
/// (strides `dstStrides`), `elemBytes` bytes each; strides in elements.
void copyStrided(char *dst, const std::vector<int64_t> &dstStrides, const char *src,
                 const std::vector<int64_t> &srcStrides, const std::vector<int64_t> &sizes,
                 unsigned elemBytes);

/// "f32[2, 64]"
std::string typeText(DType dtype, const std::vector<int64_t> &sizes);

} // namespace gc

#endif // GC_RUNTIME_STRIDEDLAYOUT_H
