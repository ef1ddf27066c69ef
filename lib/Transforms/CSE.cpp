//===- CSE.cpp - Common subexpression elimination -------------------------===//
//
// Two nodes that call the same op with the same arguments (the same values,
// equal constants, floats compared bit for bit so that -0.0 and 0.0, or two
// NaNs of different payloads, stay apart) and have the same result types
// compute the same thing; the later one is replaced by the earlier one.
// Nodes that write in place or draw random numbers are never merged, and
// neither are ops gc has no schema for, since nothing says they are pure.
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"

#include "gc/IR/OpSchema.h"
#include "gc/IR/Printer.h"
#include "gc/Ops/GraphBuilder.h"
#include "gc/Transforms/Passes.h"

#include <cstring>
#include <unordered_map>

namespace gc {

namespace {

bool mergeable(const Node &n) {
  return !writesInPlace(n.op()) && !hasTraits(n.op(), kRandom) &&
         !n.results().empty();
}

/// A string that two nodes share exactly when they compute the same thing:
/// the op, each argument (values by identity in the new graph), and the
/// result types.
std::string nodeKey(const Node &n, const RewriteContext &ctx) {
  std::string key(opName(n.op()));
  auto addInt = [&](int64_t v) { key.append(reinterpret_cast<const char *>(&v), sizeof v); };
  for (const NamedArg &a : n.args()) {
    key += '\0' + a.name + '=' + std::to_string(static_cast<int>(a.value.kind));
    for (const Value *v : a.value.values)
      addInt(v ? static_cast<int64_t>(reinterpret_cast<uintptr_t>(ctx.map(v))) : 0);
    key += ';';
    for (int64_t i : a.value.ints)
      addInt(i);
    key += ';';
    for (double f : a.value.floats) {
      int64_t bits;
      std::memcpy(&bits, &f, sizeof bits);
      addInt(bits);
    }
    for (const std::string &s : a.value.strings)
      key += ';' + std::to_string(s.size()) + ':' + s;
    key += ';' + deviceName(a.value.device);
  }
  for (const Value *r : n.results())
    key += '\0' + printType(r->type());
  return key;
}

class CSEPass : public Pass {
public:
  std::string_view name() const override { return "cse"; }

  Error run(Module &m) override {
    GC_RETURN_IF_ERROR(requireFunctional(m, name()));
    for (const auto &g : m.graphs()) {
      std::unordered_map<std::string, std::vector<Value *>> seen;
      GC_RETURN_IF_ERROR(rewriteGraph(m, *g, [&](RewriteContext &ctx) {
        const Node &n = ctx.node();
        if (!mergeable(n))
          return std::optional<std::vector<Value *>>();
        std::string key = nodeKey(n, ctx);
        if (auto it = seen.find(key); it != seen.end()) {
          ++statistics()["nodes merged"];
          return std::optional(it->second);
        }
        // Kept: copied here rather than by rewriteGraph, to know its results.
        std::vector<NamedArg> args = n.args();
        for (NamedArg &a : args)
          for (Value *&v : a.value.values)
            if (v)
              v = ctx.map(v);
        std::vector<std::pair<std::string, Type>> types;
        for (const Value *r : n.results())
          types.emplace_back(r->name(), r->type());
        Node *copy = ctx.builder().createWithTypes(n.op(), std::move(args), std::move(types),
                                                   n.resultForm());
        seen.emplace(std::move(key), copy->results());
        return std::optional(copy->results());
      }));
    }
    return Error::success();
  }
};

} // namespace

std::unique_ptr<Pass> createCSEPass() { return std::make_unique<CSEPass>(); }

} // namespace gc
