//===- Package.cpp - What every package is ---------------------------------===//
#include "gc/Package/Package.h"

#include "gc/Package/PackageFormat.h"

namespace gc {

bool isPackage(std::span<const uint8_t> bytes) {
  // A local file header ("PK\3\4") whose name, at byte 30, is archive_format.
  std::string_view name = package::kFormatEntry;
  if (bytes.size() < 30 + name.size() || bytes[0] != 'P' || bytes[1] != 'K' || bytes[2] != 3 ||
      bytes[3] != 4)
    return false;
  size_t nameLength = bytes[26] | (bytes[27] << 8);
  return nameLength == name.size() &&
         std::string_view(reinterpret_cast<const char *>(bytes.data()) + 30, name.size()) == name;
}

} // namespace gc
