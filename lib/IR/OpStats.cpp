//===- OpStats.cpp - Counting ops -----------------------------------------===//
#include "gc/IR/OpStats.h"

#include <unordered_set>

namespace gc {

std::map<std::string, int64_t> countOps(const Module &m) {
  std::map<std::string, int64_t> counts;
  for (const auto &g : m.graphs()) {
    std::unordered_set<const Value *> used(g->outputs().begin(), g->outputs().end());
    for (const auto &n : g->nodes())
      for (const NamedArg &a : n->args())
        used.insert(a.value.values.begin(), a.value.values.end());
    for (const auto &n : g->nodes()) {
      ++counts[std::string(opName(n->op()))];
      if (n->resultForm() == ResultForm::Single)
        continue;
      for (const Value *r : n->results())
        if (used.count(r))
          ++counts[kGetItemStatName];
    }
  }
  return counts;
}

} // namespace gc
