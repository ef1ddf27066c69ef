//===- ObjectArchive.cpp - Several kernel objects in one byte string ------===//
#include "gc/Support/ObjectArchive.h"

#include <charconv>
#include <cstdio>

namespace gc {

namespace {
constexpr std::string_view kMagic = "!<arch>\n";
/// name[16] date[12] uid[6] gid[6] mode[8] size[10] "`\n".
constexpr size_t kHeaderBytes = 60;
constexpr size_t kSizeOffset = 48, kSizeWidth = 10;
constexpr std::string_view kHeaderEnd = "`\n";
} // namespace

std::string archiveObjects(std::span<const std::string> objects) {
  std::string out(kMagic);
  for (size_t i = 0; i < objects.size(); ++i) {
    std::string name = "b" + std::to_string(i) + ".o/";
    char header[kHeaderBytes + 1];
    std::snprintf(header, sizeof header, "%-16s%-12s%-6s%-6s%-8s%-10zu`\n", name.c_str(), "0", "0",
                  "0", "644", objects[i].size());
    out.append(header, kHeaderBytes);
    out += objects[i];
    // Members start at even offsets.
    if (objects[i].size() % 2)
      out += '\n';
  }
  return out;
}

Expected<std::vector<std::string_view>> archivedObjects(std::string_view bytes) {
  if (!bytes.starts_with(kMagic))
    return std::vector<std::string_view>{bytes};
  std::vector<std::string_view> members;
  size_t at = kMagic.size();
  while (at < bytes.size()) {
    if (bytes.size() - at < kHeaderBytes ||
        bytes.substr(at + kHeaderBytes - kHeaderEnd.size(), kHeaderEnd.size()) != kHeaderEnd)
      return makeError() << "kernel object archive: member " << members.size()
                         << " has a truncated or malformed header";
    std::string_view field = bytes.substr(at + kSizeOffset, kSizeWidth);
    size_t size = 0;
    auto parsed = std::from_chars(field.data(), field.data() + field.size(), size);
    at += kHeaderBytes;
    if (parsed.ec != std::errc() || size > bytes.size() - at)
      return makeError() << "kernel object archive: member " << members.size() << " has a bad size";
    members.push_back(bytes.substr(at, size));
    at += size + size % 2;
  }
  return members;
}

} // namespace gc
