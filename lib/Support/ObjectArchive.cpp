//===- ObjectArchive.cpp - Several kernel objects in one byte string ------===//
#include "gc/Support/ObjectArchive.h"

#include <charconv>
#include <cstdio>

namespace gc {

namespace {
constexpr std::string_view kMagic = "!<arch>\n";
/// name[16] date[12] uid[6] gid[6] mode[8] size[10] "`\n".
constexpr size_t kHeaderBytes = 60;
constexpr size_t kNameBytes = 16, kSizeOffset = 48, kSizeWidth = 10;
constexpr std::string_view kHeaderEnd = "`\n";
} // namespace

std::string archiveMembers(std::span<const ArchiveMember> members) {
  std::string out(kMagic);
  for (const ArchiveMember &m : members) {
    std::string name = m.name + "/";
    char header[kHeaderBytes + 1];
    std::snprintf(header, sizeof header, "%-16s%-12s%-6s%-6s%-8s%-10zu`\n", name.c_str(), "0", "0",
                  "0", "644", m.bytes.size());
    out.append(header, kHeaderBytes);
    out += m.bytes;
    // Members start at even offsets.
    if (m.bytes.size() % 2)
      out += '\n';
  }
  return out;
}

bool isArchive(std::string_view bytes) { return bytes.starts_with(kMagic); }

Expected<std::vector<ArchiveView>> archiveMembersOf(std::string_view bytes, std::string_view what) {
  if (!isArchive(bytes))
    return makeError() << what << " is not an archive";
  std::vector<ArchiveView> members;
  size_t at = kMagic.size();
  while (at < bytes.size()) {
    if (bytes.size() - at < kHeaderBytes ||
        bytes.substr(at + kHeaderBytes - kHeaderEnd.size(), kHeaderEnd.size()) != kHeaderEnd)
      return makeError() << what << ": member " << members.size()
                         << " has a truncated or malformed header";
    std::string_view name = bytes.substr(at, kNameBytes);
    std::string_view field = bytes.substr(at + kSizeOffset, kSizeWidth);
    size_t size = 0;
    auto parsed = std::from_chars(field.data(), field.data() + field.size(), size);
    at += kHeaderBytes;
    if (parsed.ec != std::errc() || size > bytes.size() - at || name.find('/') == name.npos)
      return makeError() << what << ": member " << members.size() << " has a bad size or name";
    members.push_back({name.substr(0, name.find('/')), bytes.substr(at, size)});
    at += size + size % 2;
  }
  return members;
}

std::string archiveObjects(std::span<const std::string> objects) {
  std::vector<ArchiveMember> members;
  for (size_t i = 0; i < objects.size(); ++i)
    members.push_back({"b" + std::to_string(i) + ".o", objects[i]});
  return archiveMembers(members);
}

Expected<std::vector<std::string_view>> archivedObjects(std::string_view bytes) {
  if (!isArchive(bytes))
    return std::vector<std::string_view>{bytes};
  Expected<std::vector<ArchiveView>> members = archiveMembersOf(bytes, "kernel object archive");
  if (!members)
    return members.error();
  std::vector<std::string_view> objects;
  for (const ArchiveView &m : *members)
    objects.push_back(m.bytes);
  return objects;
}

} // namespace gc
