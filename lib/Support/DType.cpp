//===- DType.cpp - Element types, devices, layouts ------------------------===//
#include "gc/Support/DType.h"

#include "gc/Support/EnumNames.h"

#include <array>
#include <charconv>

namespace gc {

namespace {
struct DTypeRow {
  DType type;
  std::string_view name;
  unsigned size;
  bool floating;
  int64_t torchScalarType; // schema.py ScalarType
};
constexpr std::array<DTypeRow, kNumDTypes> kDTypes = {{
    {DType::Bool, "bool", 1, false, 12},
    {DType::UInt8, "u8", 1, false, 1},
    {DType::Int8, "i8", 1, false, 2},
    {DType::Int16, "i16", 2, false, 3},
    {DType::Int32, "i32", 4, false, 4},
    {DType::Int64, "i64", 8, false, 5},
    {DType::Float16, "f16", 2, true, 6},
    {DType::BFloat16, "bf16", 2, true, 13},
    {DType::Float32, "f32", 4, true, 7},
    {DType::Float64, "f64", 8, true, 8},
}};

const DTypeRow &row(DType t) { return kDTypes[static_cast<size_t>(t)]; }

constexpr std::array<std::string_view, kNumLayouts> kLayoutNames = {
    "unknown", "sparse_coo", "sparse_csr", "sparse_csc",
    "sparse_bsr", "sparse_bsc", "mkldnn", "strided"};
constexpr std::array<std::string_view, kNumMemoryFormats> kMemoryFormatNames = {
    "unknown", "contiguous", "channels_last", "channels_last_3d", "preserve"};

} // namespace

std::string_view dtypeName(DType t) { return row(t).name; }
unsigned dtypeSize(DType t) { return row(t).size; }
bool isFloatingPoint(DType t) { return row(t).floating; }
int64_t dtypeToTorch(DType t) { return row(t).torchScalarType; }

std::optional<DType> parseDType(std::string_view name) {
  for (const DTypeRow &r : kDTypes)
    if (r.name == name)
      return r.type;
  return std::nullopt;
}

std::optional<DType> dtypeFromTorch(int64_t scalarType) {
  for (const DTypeRow &r : kDTypes)
    if (r.torchScalarType == scalarType)
      return r.type;
  return std::nullopt;
}

std::string deviceName(const Device &d) {
  std::string s = d.kind == DeviceKind::CPU    ? "cpu"
                  : d.kind == DeviceKind::CUDA ? "cuda"
                                               : "meta";
  if (d.index >= 0)
    s += ":" + std::to_string(d.index);
  return s;
}

std::optional<Device> parseDevice(std::string_view text) {
  Device d;
  std::string_view kind = text.substr(0, text.find(':'));
  if (kind == "cpu")
    d.kind = DeviceKind::CPU;
  else if (kind == "cuda")
    d.kind = DeviceKind::CUDA;
  else if (kind == "meta")
    d.kind = DeviceKind::Meta;
  else
    return std::nullopt;
  if (kind.size() == text.size())
    return d;
  std::string_view index = text.substr(kind.size() + 1);
  auto [end, ec] = std::from_chars(index.data(), index.data() + index.size(), d.index);
  if (ec != std::errc() || end != index.data() + index.size() || d.index < 0)
    return std::nullopt;
  return d;
}

std::string_view layoutName(Layout l) {
  return kLayoutNames[static_cast<size_t>(l)];
}
std::optional<Layout> parseLayout(std::string_view name) {
  return findName<Layout>(kLayoutNames, name);
}
std::string_view memoryFormatName(MemoryFormat m) {
  return kMemoryFormatNames[static_cast<size_t>(m)];
}
std::optional<MemoryFormat> parseMemoryFormat(std::string_view name) {
  return findName<MemoryFormat>(kMemoryFormatNames, name);
}

} // namespace gc
