//===- TargetObjects.cpp - Object code for several CPU targets ------------===//
//
// The archive is the common ar format: the magic line, then per member a
// 60-byte header (name ending in '/', date, owner, group, mode, size in
// decimal, and a closing "`\n") and the bytes, padded to an even length.
// Target names fit the 16-byte name field, so no name table is needed.
//
//===----------------------------------------------------------------------===//
#include "gc/Support/TargetObjects.h"

#include "gc/Support/Target.h"

#include <algorithm>
#include <charconv>

namespace gc {

namespace {
constexpr std::string_view kMagic = "!<arch>\n";
constexpr size_t kHeaderBytes = 60, kNameBytes = 16, kSizeOffset = 48, kSizeBytes = 10;

std::string padded(std::string_view text, size_t width) {
  std::string field(text);
  field.resize(width, ' ');
  return field;
}
} // namespace

std::string bundleTargetObjects(const std::vector<TargetObject> &objects) {
  if (objects.size() == 1)
    return objects.front().object;
  std::string out(kMagic);
  for (const TargetObject &o : objects) {
    out += padded(o.target + "/", kNameBytes) + padded("0", 12) + padded("0", 6) +
           padded("0", 6) + padded("644", 8) + padded(std::to_string(o.object.size()), kSizeBytes) +
           "`\n";
    out += o.object;
    if (o.object.size() % 2)
      out += '\n';
  }
  return out;
}

Expected<std::vector<TargetObject>> targetObjects(std::string_view target,
                                                  std::string_view objectCode) {
  Expected<std::vector<std::string>> targets = cpuTargetList(target);
  if (!targets)
    return targets.error();
  if (targets->size() == 1)
    return std::vector<TargetObject>{{targets->front(), std::string(objectCode)}};
  if (objectCode.substr(0, kMagic.size()) != kMagic)
    return makeError() << "the object code of target " << target
                       << " is not an archive of one object per target";
  std::vector<TargetObject> members;
  for (size_t at = kMagic.size(); at < objectCode.size();) {
    std::string_view header = objectCode.substr(at, kHeaderBytes);
    std::string_view name = header.substr(0, kNameBytes);
    std::string_view sizeField = header.substr(std::min(kSizeOffset, header.size()), kSizeBytes);
    uint64_t size = 0;
    auto [end, ec] = std::from_chars(sizeField.data(), sizeField.data() + sizeField.size(), size);
    size_t slash = name.find('/');
    if (header.size() < kHeaderBytes || header.substr(58) != "`\n" || ec != std::errc() ||
        end == sizeField.data() || slash == std::string_view::npos ||
        size > objectCode.size() - at - kHeaderBytes)
      return makeError() << "the object code of target " << target
                         << " has a malformed archive member at byte " << at;
    members.push_back({std::string(name.substr(0, slash)),
                       std::string(objectCode.substr(at + kHeaderBytes, size))});
    at += kHeaderBytes + size + size % 2;
  }
  std::vector<TargetObject> ordered;
  for (const std::string &t : *targets) {
    auto it = std::find_if(members.begin(), members.end(),
                           [&](const TargetObject &m) { return m.target == t; });
    if (it == members.end())
      return makeError() << "the object code of target " << target << " has no " << t
                         << " object";
    ordered.push_back(std::move(*it));
  }
  return ordered;
}

} // namespace gc
