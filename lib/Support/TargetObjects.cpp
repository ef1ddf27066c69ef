//===- TargetObjects.cpp - Object code for several CPU targets ------------===//
//
// The bundle is an ar archive (ObjectArchive.h) whose members are named by
// their targets; each member is that target's object code, itself an
// archive of kernel batches. Target names fit ar's name field.
//
//===----------------------------------------------------------------------===//
#include "gc/Support/TargetObjects.h"

#include "gc/Support/ObjectArchive.h"
#include "gc/Support/Target.h"

#include <algorithm>

namespace gc {

std::string bundleTargetObjects(const std::vector<TargetObject> &objects) {
  if (objects.size() == 1)
    return objects.front().object;
  std::vector<ArchiveMember> members;
  for (const TargetObject &o : objects)
    members.push_back({o.target, o.object});
  return archiveMembers(members);
}

Expected<std::vector<TargetObject>> targetObjects(std::string_view target,
                                                  std::string_view objectCode) {
  Expected<std::vector<std::string>> targets = cpuTargetList(target);
  if (!targets)
    return targets.error();
  if (targets->size() == 1)
    return std::vector<TargetObject>{{targets->front(), std::string(objectCode)}};
  Expected<std::vector<ArchiveView>> members =
      archiveMembersOf(objectCode, "the object code of target " + std::string(target));
  if (!members)
    return members.error();
  std::vector<TargetObject> ordered;
  for (const std::string &t : *targets) {
    auto it = std::find_if(members->begin(), members->end(),
                           [&](const ArchiveView &m) { return m.name == t; });
    if (it == members->end())
      return makeError() << "the object code of target " << target << " has no " << t
                         << " object";
    ordered.push_back({t, std::string(it->bytes)});
  }
  return ordered;
}

} // namespace gc
