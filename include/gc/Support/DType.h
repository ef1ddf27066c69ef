//===- DType.h - Element types, devices, layouts ----------------*- C++ -*-===//
//
// Dependency-free, so that the runtime (libgcrt) knows dtypes without the IR.
//
//===----------------------------------------------------------------------===//
#ifndef GC_SUPPORT_DTYPE_H
#define GC_SUPPORT_DTYPE_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gc {

/// Element types gc supports. The text form uses the short names (f32, i64).
enum class DType : uint8_t {
  Bool,
  UInt8,
  Int8,
  Int16,
  Int32,
  Int64,
  Float16,
  BFloat16,
  Float32,
  Float64,
};
inline constexpr int kNumDTypes = 10;

std::string_view dtypeName(DType t);
std::optional<DType> parseDType(std::string_view name);
/// Bytes per element.
unsigned dtypeSize(DType t);
bool isFloatingPoint(DType t);
/// Float16 and BFloat16: kernels hold them in float32 registers, compute in
/// float32 and round only where a value is stored or cast to them.
inline bool isHalfPrecision(DType t) { return t == DType::Float16 || t == DType::BFloat16; }

/// torch.export's ScalarType numbering (schema.py) to gc's, and back.
std::optional<DType> dtypeFromTorch(int64_t scalarType);
int64_t dtypeToTorch(DType t);

enum class DeviceKind : uint8_t { CPU, CUDA, Meta };

struct Device {
  DeviceKind kind = DeviceKind::CPU;
  /// -1 when the device has no index ("cuda" as opposed to "cuda:0").
  int32_t index = -1;
  bool operator==(const Device &) const = default;
};
/// "cpu", "cuda", "cuda:1".
std::string deviceName(const Device &d);
std::optional<Device> parseDevice(std::string_view text);

/// Tensor layouts and memory formats, numbered as torch.export numbers them,
/// so that an argument such as `layout=torch.strided` round-trips unchanged.
enum class Layout : uint8_t {
  Unknown = 0,
  SparseCoo = 1,
  SparseCsr = 2,
  SparseCsc = 3,
  SparseBsr = 4,
  SparseBsc = 5,
  Mkldnn = 6,
  Strided = 7,
};
inline constexpr int64_t kNumLayouts = 8;
enum class MemoryFormat : uint8_t {
  Unknown = 0,
  Contiguous = 1,
  ChannelsLast = 2,
  ChannelsLast3d = 3,
  Preserve = 4,
};
inline constexpr int64_t kNumMemoryFormats = 5;
std::string_view layoutName(Layout l);
std::optional<Layout> parseLayout(std::string_view name);
std::string_view memoryFormatName(MemoryFormat m);
std::optional<MemoryFormat> parseMemoryFormat(std::string_view name);

} // namespace gc

#endif // GC_SUPPORT_DTYPE_H
