//===- OpRegistry.h - Per-concern tables keyed by op ------------*- C++ -*-===//
//
// Each concern (reference kernels, shape functions, decompositions, ...)
// keeps one table of entries keyed by qualified op name. An entry is a
// struct whose first member is `const char *op`; families fill a registry
// from static arrays of entries.
//
//===----------------------------------------------------------------------===//
#ifndef GC_IR_OPREGISTRY_H
#define GC_IR_OPREGISTRY_H

#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gc {

template <typename Entry> class OpRegistry {
public:
  void add(std::span<const Entry> entries) {
    for (const Entry &e : entries)
      entries_.emplace(e.op, e);
  }
  /// The entry for `op`, or null.
  const Entry *find(std::string_view op) const {
    auto it = entries_.find(op);
    return it == entries_.end() ? nullptr : &it->second;
  }
  /// Every op with an entry, sorted.
  std::vector<std::string> ops() const {
    std::vector<std::string> out;
    for (const auto &entry : entries_)
      out.push_back(entry.first);
    return out;
  }

private:
  std::map<std::string, Entry, std::less<>> entries_;
};

} // namespace gc

#endif // GC_IR_OPREGISTRY_H
