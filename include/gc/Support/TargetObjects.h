//===- TargetObjects.h - Object code for several CPU targets ----*- C++ -*-===//
//
// A plan compiled for several CPU levels (target "x86-64-v3,x86-64-v4")
// keeps one object per level in its object code, as an ar archive whose
// members are named by their targets, in the target list's order (so `ar t`
// lists them). A plan of one target keeps its object as it is.
//
//===----------------------------------------------------------------------===//
#ifndef GC_SUPPORT_TARGETOBJECTS_H
#define GC_SUPPORT_TARGETOBJECTS_H

#include "gc/Support/Error.h"

#include <string>
#include <string_view>
#include <vector>

namespace gc {

/// One target's object code.
struct TargetObject {
  std::string target;
  std::string object;
};

/// The object code of a plan of target joinTargets(targets of `objects`):
/// the one object, or the archive of several. Deterministic: no dates,
/// owners or modes beyond fixed ones.
std::string bundleTargetObjects(const std::vector<TargetObject> &objects);

/// The objects in a plan's object code, one per target of `target` (a CPU
/// target string, Target.h), in its order. Errors say what is malformed or
/// which target's member is missing.
Expected<std::vector<TargetObject>> targetObjects(std::string_view target,
                                                  std::string_view objectCode);

} // namespace gc

#endif // GC_SUPPORT_TARGETOBJECTS_H
