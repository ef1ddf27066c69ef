//===- OpStats.h - Counting ops ---------------------------------*- C++ -*-===//
#ifndef GC_IR_OPSTATS_H
#define GC_IR_OPSTATS_H

#include "gc/IR/Module.h"

#include <map>
#include <string>

namespace gc {

/// The name op statistics use for torch's getitem projections.
inline constexpr const char *kGetItemStatName = "getitem";

/// Counts nodes by op over all graphs. Each used result of a node that
/// returns a tuple or list also counts once as "getitem", since torch's FX
/// graph holds one getitem node per used projection.
std::map<std::string, int64_t> countOps(const Module &m);

} // namespace gc

#endif // GC_IR_OPSTATS_H
