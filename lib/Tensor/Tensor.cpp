//===- Tensor.cpp - Strided tensors on the host ---------------------------===//
#include "gc/Tensor/Tensor.h"

#include <bit>
#include <cmath>
#include <cstring>

namespace gc {

namespace {
[[noreturn]] void tensorFail(const std::string &message) { throw TensorError(message); }
} // namespace

Shape contiguousStrides(const Shape &sizes) {
  Shape strides(sizes.size());
  int64_t running = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = running;
    running *= std::max<int64_t>(sizes[i], 1);
  }
  return strides;
}

int64_t numel(const Shape &sizes) {
  int64_t n = 1;
  for (int64_t s : sizes)
    n *= s;
  return n;
}

std::string shapeString(const Shape &sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i)
    s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}

void forEachIndex(const Shape &sizes, const std::function<void(const Shape &)> &fn) {
  if (numel(sizes) == 0)
    return;
  Shape index(sizes.size(), 0);
  while (true) {
    fn(index);
    size_t d = sizes.size();
    while (d > 0) {
      --d;
      if (++index[d] < sizes[d])
        break;
      index[d] = 0;
      if (d == 0)
        return;
    }
    if (sizes.empty())
      return;
  }
}

Tensor Tensor::zeros(DType dtype, Shape sizes) {
  Tensor t;
  t.dtype_ = dtype;
  t.strides_ = contiguousStrides(sizes);
  t.storage_ = std::make_shared<Storage>(static_cast<size_t>(gc::numel(sizes)) * dtypeSize(dtype));
  t.sizes_ = std::move(sizes);
  return t;
}

Tensor Tensor::scalar(DType dtype, double v) {
  Tensor t = zeros(dtype, {});
  t.storeDouble(0, v);
  return t;
}

bool Tensor::isContiguous() const {
  // torch calls every empty tensor contiguous: it has no element to misplace.
  if (numel() == 0)
    return true;
  int64_t expected = 1;
  for (size_t i = sizes_.size(); i-- > 0;) {
    if (sizes_[i] != 1 && strides_[i] != expected)
      return false;
    expected *= sizes_[i];
  }
  return true;
}

Tensor Tensor::asStrided(Shape sizes, Shape strides, int64_t offset) const {
  if (sizes.size() != strides.size())
    tensorFail("view with " + std::to_string(sizes.size()) + " sizes and " +
               std::to_string(strides.size()) + " strides");
  int64_t lo = offset, hi = offset;
  bool empty = false;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 0)
      tensorFail("view with a negative size " + shapeString(sizes));
    if (sizes[i] == 0)
      empty = true;
    else if (strides[i] >= 0)
      hi += (sizes[i] - 1) * strides[i];
    else
      lo += (sizes[i] - 1) * strides[i];
  }
  int64_t capacity = static_cast<int64_t>(storage_->size() / dtypeSize(dtype_));
  if (!empty && (lo < 0 || hi >= capacity))
    tensorFail("view " + shapeString(sizes) + " runs outside its storage");
  Tensor t = *this;
  t.sizes_ = std::move(sizes);
  t.strides_ = std::move(strides);
  t.offset_ = offset;
  return t;
}

int64_t Tensor::storageIndex(const Shape &index) const {
  int64_t s = offset_;
  for (size_t i = 0; i < index.size(); ++i)
    s += index[i] * strides_[i];
  return s;
}

namespace {
template <typename T> T loadAs(const uint8_t *p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <typename T> void storeAs(uint8_t *p, T v) { std::memcpy(p, &v, sizeof(T)); }

/// Integer stores wrap to the dtype's width, as torch's integer math does.
template <typename T> T wrapInt(int64_t v) { return static_cast<T>(static_cast<uint64_t>(v)); }

/// Float to integer conversion truncates toward zero; out-of-range values
/// are undefined in C++, so clamp them to int64's range first.
int64_t truncToInt(double v) {
  if (std::isnan(v))
    return 0;
  if (v >= 9.2233720368547758e18)
    return INT64_MAX;
  if (v <= -9.2233720368547758e18)
    return INT64_MIN;
  return static_cast<int64_t>(v);
}
} // namespace

double Tensor::loadDouble(int64_t i) const {
  if (!isFloatingPoint(dtype_))
    return static_cast<double>(loadInt(i));
  const uint8_t *p = storage_->data() + i * dtypeSize(dtype_);
  switch (dtype_) {
  case DType::Float16:
    return halfToFloat(loadAs<uint16_t>(p));
  case DType::BFloat16:
    return bfloat16ToFloat(loadAs<uint16_t>(p));
  case DType::Float32:
    return loadAs<float>(p);
  default:
    return loadAs<double>(p);
  }
}

int64_t Tensor::loadInt(int64_t i) const {
  if (isFloatingPoint(dtype_))
    return truncToInt(loadDouble(i));
  const uint8_t *p = storage_->data() + i * dtypeSize(dtype_);
  switch (dtype_) {
  case DType::Bool:
    return loadAs<uint8_t>(p) != 0;
  case DType::UInt8:
    return loadAs<uint8_t>(p);
  case DType::Int8:
    return loadAs<int8_t>(p);
  case DType::Int16:
    return loadAs<int16_t>(p);
  case DType::Int32:
    return loadAs<int32_t>(p);
  default:
    return loadAs<int64_t>(p);
  }
}

void Tensor::storeDouble(int64_t i, double v) {
  uint8_t *p = storage_->data() + i * dtypeSize(dtype_);
  switch (dtype_) {
  case DType::Bool:
    return storeAs<uint8_t>(p, v != 0);
  case DType::Float16:
    return storeAs<uint16_t>(p, floatToHalf(static_cast<float>(v)));
  case DType::BFloat16:
    return storeAs<uint16_t>(p, floatToBFloat16(static_cast<float>(v)));
  case DType::Float32:
    return storeAs<float>(p, static_cast<float>(v));
  case DType::Float64:
    return storeAs<double>(p, v);
  default:
    return storeInt(i, truncToInt(v));
  }
}

void Tensor::storeInt(int64_t i, int64_t v) {
  uint8_t *p = storage_->data() + i * dtypeSize(dtype_);
  switch (dtype_) {
  case DType::Bool:
    return storeAs<uint8_t>(p, v != 0);
  case DType::UInt8:
    return storeAs<uint8_t>(p, wrapInt<uint8_t>(v));
  case DType::Int8:
    return storeAs<int8_t>(p, wrapInt<int8_t>(v));
  case DType::Int16:
    return storeAs<int16_t>(p, wrapInt<int16_t>(v));
  case DType::Int32:
    return storeAs<int32_t>(p, wrapInt<int32_t>(v));
  case DType::Int64:
    return storeAs<int64_t>(p, v);
  default:
    return storeDouble(i, static_cast<double>(v));
  }
}

void Tensor::copyFrom(const Tensor &src) {
  // The common case, a whole contiguous tensor of the same dtype, is one
  // block (memmove: a snapshot copy even where the two overlap).
  if (src.dtype() == dtype_ && src.sizes() == sizes_ && isContiguous() && src.isContiguous()) {
    size_t elem = dtypeSize(dtype_);
    if (size_t bytes = static_cast<size_t>(numel()) * elem)
      std::memmove(storage_->data() + offset_ * elem, src.storage_->data() + src.offset_ * elem,
                   bytes);
    return;
  }
  Shape srcSizes = src.sizes();
  // Broadcast src to this shape: align trailing dimensions, stride 0 where
  // src has size 1 or lacks the dimension.
  if (srcSizes.size() > sizes_.size())
    tensorFail("cannot copy " + shapeString(srcSizes) + " into " + shapeString(sizes_));
  size_t lead = sizes_.size() - srcSizes.size();
  Shape strides(sizes_.size(), 0);
  for (size_t i = 0; i < srcSizes.size(); ++i) {
    if (srcSizes[i] == sizes_[lead + i])
      strides[lead + i] = src.strides()[i];
    else if (srcSizes[i] != 1)
      tensorFail("cannot copy " + shapeString(srcSizes) + " into " + shapeString(sizes_));
  }
  Tensor from = src;
  from.sizes_ = sizes_;
  from.strides_ = strides;
  // Read everything first, so that copying between overlapping views of one
  // storage behaves like a copy from a snapshot.
  bool integral = !isFloatingPoint(dtype_) && !isFloatingPoint(src.dtype());
  std::vector<double> doubles;
  std::vector<int64_t> ints;
  forEachIndex(sizes_, [&](const Shape &idx) {
    if (integral)
      ints.push_back(from.getInt(idx));
    else
      doubles.push_back(from.getDouble(idx));
  });
  size_t k = 0;
  forEachIndex(sizes_, [&](const Shape &idx) {
    if (integral)
      setInt(idx, ints[k++]);
    else
      setDouble(idx, doubles[k++]);
  });
}

Tensor Tensor::clone() const { return to(dtype_); }

Tensor Tensor::to(DType dtype) const {
  Tensor t = zeros(dtype, sizes_);
  t.copyFrom(*this);
  return t;
}

std::vector<double> Tensor::toDoubles() const {
  std::vector<double> out;
  out.reserve(numel());
  forEachIndex(sizes_, [&](const Shape &idx) { out.push_back(getDouble(idx)); });
  return out;
}

std::vector<int64_t> Tensor::toInts() const {
  std::vector<int64_t> out;
  out.reserve(numel());
  forEachIndex(sizes_, [&](const Shape &idx) { out.push_back(getInt(idx)); });
  return out;
}

// IEEE binary16 and bfloat16, rounding to nearest even.
uint16_t floatToHalf(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint32_t sign = (x >> 16) & 0x8000;
  uint32_t exp = (x >> 23) & 0xff;
  uint32_t mant = x & 0x7fffff;
  if (exp == 0xff)
    return static_cast<uint16_t>(sign | 0x7c00 | (mant ? 0x200 : 0));
  int32_t e = static_cast<int32_t>(exp) - 127 + 15;
  if (e >= 31)
    return static_cast<uint16_t>(sign | 0x7c00);
  if (e <= 0) {
    if (e < -10)
      return static_cast<uint16_t>(sign);
    mant |= 0x800000;
    uint32_t shift = static_cast<uint32_t>(14 - e);
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t midpoint = 1u << (shift - 1);
    if (rem > midpoint || (rem == midpoint && (half & 1)))
      ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (half & 1)))
    ++half; // may carry into the exponent, which is the right rounding
  return static_cast<uint16_t>(sign | half);
}

float halfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  if (exp == 0) {
    float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  if (exp == 31)
    return std::bit_cast<float>(sign | 0x7f800000 | (mant << 13));
  return std::bit_cast<float>(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

uint16_t floatToBFloat16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if (std::isnan(f))
    return static_cast<uint16_t>((x >> 16) | 0x40);
  uint32_t rounding = 0x7fff + ((x >> 16) & 1);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

float bfloat16ToFloat(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

} // namespace gc
