//===- OpRegistry.h - Per-concern tables indexed by op ----------*- C++ -*-===//
//
// Each concern (reference kernels, shape functions, decompositions, ...)
// keeps one table with a slot per op of OpDefs.def. An entry is a struct
// whose first member is `OpId op`; families fill a registry from static
// arrays of entries.
//
//===----------------------------------------------------------------------===//
#ifndef GC_IR_OPREGISTRY_H
#define GC_IR_OPREGISTRY_H

#include "gc/IR/OpId.h"

#include <algorithm>
#include <cassert>
#include <optional>
#include <span>
#include <vector>

namespace gc {

template <typename Entry> class OpRegistry {
public:
  OpRegistry() : entries_(kNumOps) {}

  void add(std::span<const Entry> entries) {
    for (const Entry &e : entries) {
      std::optional<Entry> &slot = entries_[static_cast<size_t>(e.op)];
      assert(!slot && "an op registered twice for one concern");
      if (!slot)
        slot = e;
    }
  }
  /// The entry for `op`, or null. A derived variant (OpVariants.h) has none:
  /// each concern treats variants by one rule of its own.
  const Entry *find(OpId op) const {
    if (static_cast<size_t>(op) >= entries_.size())
      return nullptr;
    const std::optional<Entry> &slot = entries_[static_cast<size_t>(op)];
    return slot ? &*slot : nullptr;
  }
  /// Every op with an entry, sorted by name.
  std::vector<OpId> ops() const {
    std::vector<OpId> out;
    for (size_t i = 0; i < entries_.size(); ++i)
      if (entries_[i])
        out.push_back(static_cast<OpId>(i));
    std::sort(out.begin(), out.end(),
              [](OpId a, OpId b) { return opName(a) < opName(b); });
    return out;
  }

private:
  std::vector<std::optional<Entry>> entries_;
};

} // namespace gc

#endif // GC_IR_OPREGISTRY_H
