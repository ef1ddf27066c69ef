//===- Npy.cpp - Reading and writing NumPy .npy files ---------------------===//
//
// Format: the magic "\x93NUMPY", a major and minor version byte, the header
// length (2 bytes in version 1, 4 bytes in versions 2 and 3, little-endian),
// then a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces to a multiple of 64 bytes, then the raw data.
//
//===----------------------------------------------------------------------===//
#include "gc/Tensor/Npy.h"

#include "gc/Support/FileSystem.h"

#include <cstring>
#include <regex>

namespace gc {

namespace {
struct NpyDType {
  const char *descr;
  DType dtype;
};
// numpy spells single-byte types with '|' and multi-byte ones with the byte
// order; gc reads little-endian data only.
constexpr NpyDType kNpyDTypes[] = {
    {"|b1", DType::Bool},    {"|u1", DType::UInt8},   {"|i1", DType::Int8},
    {"<i2", DType::Int16},   {"<i4", DType::Int32},   {"<i8", DType::Int64},
    {"<f2", DType::Float16}, {"|V2", DType::BFloat16}, {"<f4", DType::Float32},
    {"<f8", DType::Float64},
};

std::string descrOf(DType t) {
  for (const NpyDType &d : kNpyDTypes)
    if (d.dtype == t)
      return d.descr;
  return "";
}

Error bad(const std::string &path, const std::string &what) {
  return makeError() << "'" << path << "': not a valid .npy file: " << what;
}
} // namespace

Expected<Tensor> readNpy(const std::string &path) {
  Expected<std::shared_ptr<MappedFile>> file = MappedFile::open(path);
  if (!file)
    return file.error();
  std::string_view bytes = (*file)->text();
  if (bytes.size() < 10 || bytes.substr(0, 6) != "\x93NUMPY")
    return bad(path, "no NUMPY magic");
  uint8_t major = static_cast<uint8_t>(bytes[6]);
  size_t headerLen, headerStart;
  if (major == 1) {
    headerLen = static_cast<uint8_t>(bytes[8]) | (static_cast<uint8_t>(bytes[9]) << 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return bad(path, "truncated header");
    headerLen = 0;
    for (int i = 3; i >= 0; --i)
      headerLen = (headerLen << 8) | static_cast<uint8_t>(bytes[8 + i]);
    headerStart = 12;
  } else {
    return bad(path, "unknown format version " + std::to_string(major));
  }
  if (headerStart + headerLen > bytes.size())
    return bad(path, "truncated header");
  std::string header(bytes.substr(headerStart, headerLen));

  std::smatch m;
  if (!std::regex_search(header, m, std::regex("'descr'\\s*:\\s*'([^']*)'")))
    return bad(path, "no 'descr' in the header");
  std::string descr = m[1];
  if (descr.size() == 3 && descr[0] == '=')
    descr[0] = '<';
  if (descr == "<b1" || descr == "<u1" || descr == "<i1")
    descr[0] = '|';
  std::optional<DType> dtype;
  for (const NpyDType &d : kNpyDTypes)
    if (descr == d.descr)
      dtype = d.dtype;
  if (!dtype)
    return makeError() << "'" << path << "': unsupported .npy dtype '" << descr << "'";

  bool fortran = std::regex_search(header, std::regex("'fortran_order'\\s*:\\s*True"));
  if (!std::regex_search(header, m, std::regex("'shape'\\s*:\\s*\\(([^)]*)\\)")))
    return bad(path, "no 'shape' in the header");
  Shape sizes;
  std::string dims = m[1];
  std::regex number("\\d+");
  for (std::sregex_iterator it(dims.begin(), dims.end(), number), end; it != end; ++it)
    sizes.push_back(std::stoll(it->str()));

  size_t dataStart = headerStart + headerLen;
  size_t need = static_cast<size_t>(numel(sizes)) * dtypeSize(*dtype);
  if (bytes.size() - dataStart != need)
    return makeError() << "'" << path << "': .npy data has " << bytes.size() - dataStart
                       << " bytes, but shape " << shapeString(sizes) << " of " << dtypeName(*dtype)
                       << " needs " << need;
  Tensor t = Tensor::zeros(*dtype, fortran ? Shape(sizes.rbegin(), sizes.rend()) : sizes);
  if (need)
    std::memcpy(t.storage()->data(), bytes.data() + dataStart, need);
  if (!fortran)
    return t;
  // Fortran order is the transposed C layout: reverse the dims back as a
  // view, then make it contiguous.
  Shape rev(t.strides().rbegin(), t.strides().rend());
  return t.asStrided(sizes, rev, 0).clone();
}

std::string encodeNpy(const Tensor &t) {
  std::string shape = "(";
  for (int64_t s : t.sizes())
    shape += std::to_string(s) + ", ";
  if (t.dim() > 1)
    shape.resize(shape.size() - 2);
  else if (t.dim() == 1)
    shape.resize(shape.size() - 1);
  shape += ")";
  std::string header = "{'descr': '" + descrOf(t.dtype()) + "', 'fortran_order': False, 'shape': " +
                       shape + ", }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  Tensor c = t.isContiguous() && t.offset() == 0 ? t : t.clone();
  if (c.numel())
    out.append(reinterpret_cast<const char *>(c.storage()->data()),
               static_cast<size_t>(c.numel()) * dtypeSize(c.dtype()));
  return out;
}

} // namespace gc
