//===- Tensor.h - Strided tensors on the host -------------------*- C++ -*-===//
//
// A tensor is a strided view of a shared storage, as in PyTorch: views share
// the storage of their base, so writes through one are seen through the
// other. The reference interpreter, the tools' .npy inputs and outputs and
// result comparison all use it; it values clarity over speed: elements are
// read and written as double (floating types) or int64 (integer types and
// bool).
//
//===----------------------------------------------------------------------===//
#ifndef GC_TENSOR_TENSOR_H
#define GC_TENSOR_TENSOR_H

#include "gc/IR/DType.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace gc {

/// Plain bytes, zero-initialized, owned.
class Storage {
public:
  explicit Storage(size_t bytes) : bytes_(bytes, 0) {}
  uint8_t *data() { return bytes_.data(); }
  const uint8_t *data() const { return bytes_.data(); }
  size_t size() const { return bytes_.size(); }

private:
  std::vector<uint8_t> bytes_;
};

using Shape = std::vector<int64_t>;

/// What a tensor operation throws when asked for something its storage
/// cannot give (a view outside it, a copy between shapes that do not
/// broadcast). The reference kernels throw a subclass (KernelError); the
/// interpreter reports both against the node that ran.
struct TensorError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Row-major strides of `sizes`, computed as torch does.
Shape contiguousStrides(const Shape &sizes);
/// Number of elements.
int64_t numel(const Shape &sizes);
/// "[2, 3]"
std::string shapeString(const Shape &sizes);

class Tensor {
public:
  Tensor() = default;
  /// A new contiguous tensor of zeros.
  static Tensor zeros(DType dtype, Shape sizes);
  /// A 0-dim tensor holding `v`.
  static Tensor scalar(DType dtype, double v);

  bool defined() const { return storage_ != nullptr; }
  DType dtype() const { return dtype_; }
  const Shape &sizes() const { return sizes_; }
  const Shape &strides() const { return strides_; }
  int64_t size(int64_t dim) const { return sizes_[dim]; }
  int64_t dim() const { return static_cast<int64_t>(sizes_.size()); }
  int64_t offset() const { return offset_; }
  int64_t numel() const { return gc::numel(sizes_); }
  bool isContiguous() const;
  const std::shared_ptr<Storage> &storage() const { return storage_; }
  /// True if both views share one storage.
  bool sharesStorage(const Tensor &o) const { return storage_ == o.storage_; }

  /// A view of the same storage with other sizes, strides and offset. The
  /// caller keeps it inside the storage; `view` checks and throws otherwise.
  Tensor asStrided(Shape sizes, Shape strides, int64_t offset) const;
  /// A contiguous copy (always a new storage).
  Tensor clone() const;
  /// A contiguous copy converted to `dtype`, with torch's conversion rules
  /// (float to int truncates toward zero, to bool tests != 0).
  Tensor to(DType dtype) const;
  /// Copies `src` (broadcast to this shape, converted to this dtype) into
  /// this tensor's elements, in place.
  void copyFrom(const Tensor &src);

  /// Storage element index of a multi-index.
  int64_t storageIndex(const Shape &index) const;
  /// Element access by multi-index.
  double getDouble(const Shape &index) const { return loadDouble(storageIndex(index)); }
  int64_t getInt(const Shape &index) const { return loadInt(storageIndex(index)); }
  void setDouble(const Shape &index, double v) { storeDouble(storageIndex(index), v); }
  void setInt(const Shape &index, int64_t v) { storeInt(storageIndex(index), v); }
  /// Element access by storage element index.
  double loadDouble(int64_t storageIndex) const;
  int64_t loadInt(int64_t storageIndex) const;
  void storeDouble(int64_t storageIndex, double v);
  void storeInt(int64_t storageIndex, int64_t v);

  /// Elements in row-major order as doubles / int64s (tests, comparison).
  std::vector<double> toDoubles() const;
  std::vector<int64_t> toInts() const;

private:
  std::shared_ptr<Storage> storage_;
  DType dtype_ = DType::Float32;
  Shape sizes_, strides_;
  int64_t offset_ = 0;
};

/// Calls `fn` with every multi-index of `sizes`, in row-major order. Nothing
/// is called for a zero-size shape; a 0-dim shape gets one empty index.
void forEachIndex(const Shape &sizes, const std::function<void(const Shape &)> &fn);

/// torch's float16 and bfloat16 conversions (round to nearest even).
uint16_t floatToHalf(float f);
float halfToFloat(uint16_t h);
uint16_t floatToBFloat16(float f);
float bfloat16ToFloat(uint16_t b);

} // namespace gc

#endif // GC_TENSOR_TENSOR_H
