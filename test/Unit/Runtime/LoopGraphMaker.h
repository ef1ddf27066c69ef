//===- LoopGraphMaker.h - Hand-built loop graphs for runtime tests -*- C++ -*-===//
#ifndef GC_TEST_UNIT_RUNTIME_LOOPGRAPHMAKER_H
#define GC_TEST_UNIT_RUNTIME_LOOPGRAPHMAKER_H

#include "gc/IR/LoopIR.h"
#include "gc/Plan/PlanBuilder.h"
#include "gc/Runtime/Runtime.h"

#include <map>
#include <random>
#include <string>
#include <vector>

namespace gc::test {

using Exprs = std::vector<const SymExpr *>;

/// A module with one loop graph, and shorthands to fill it.
class LoopGraphMaker {
public:
  LoopGraphMaker() : graph(module.addLoopGraph("g")) { module.setLevel(Level::Kernels); }

  /// The graph's runtime plan, as gc-package makes it.
  Expected<std::shared_ptr<const RuntimePlan>> runtimePlan() const {
    Expected<std::string> bytes = buildRuntimePlan(module);
    if (!bytes)
      return bytes.error();
    return RuntimePlan::read(bytes.take(), "plan");
  }
  /// An executor of that plan, with the fallback component linked in.
  Expected<std::unique_ptr<Executor>> executor(const KernelLibrary &lib,
                                               RuntimeOptions options = {}) const {
    Expected<std::shared_ptr<const RuntimePlan>> plan = runtimePlan();
    if (!plan)
      return plan.error();
    if (!options.fallback)
      options.fallback = []() -> Expected<const FallbackComponent *> {
        return &linkedFallbackComponent();
      };
    return Executor::create(plan.take(), 0, lib, options);
  }

  const SymExpr *k(int64_t v) { return module.syms().constant(v); }
  const SymExpr *sym(const std::string &name) { return module.syms().symbol(name); }
  Exprs ks(const std::vector<int64_t> &vs) {
    Exprs out;
    for (int64_t v : vs)
      out.push_back(k(v));
    return out;
  }

  TensorType view(DType dtype, Exprs sizes, Exprs strides, int64_t offset = 0) {
    TensorType t;
    t.dtype = dtype;
    t.sizes = std::move(sizes);
    t.strides = std::move(strides);
    t.storageOffset = k(offset);
    return t;
  }
  TensorType contiguous(DType dtype, const Exprs &sizes) {
    return view(dtype, sizes, contiguousStrides(module.syms(), sizes));
  }

  uint32_t buffer(const std::string &name, BufferKind kind, DType dtype, const Exprs &sizes) {
    graph.buffers.push_back(
        {name, kind, dtype, sizes, contiguousStrides(module.syms(), sizes), false});
    return static_cast<uint32_t>(graph.buffers.size() - 1);
  }
  /// A user input bound to its whole buffer.
  uint32_t input(const std::string &name, DType dtype, const Exprs &sizes) {
    uint32_t b = buffer(name, BufferKind::Input, dtype, sizes);
    graph.inputs.push_back({name, b, contiguous(dtype, sizes)});
    graph.inputSpecs.push_back({InputKind::UserInput, name, true});
    return b;
  }
  void output(const std::string &name, uint32_t buffer, TensorType type) {
    graph.outputs.push_back({name, buffer, std::move(type)});
    graph.outputSpecs.push_back({});
  }
  BufferView whole(uint32_t b) {
    const Buffer &buf = graph.buffers[b];
    return {b, view(buf.dtype, buf.sizes, buf.strides)};
  }

  /// An Extern or Fallback node over views, run as one step of its kind.
  LoopNode &callNode(LoopNode::Kind kind, OpId op, std::vector<BufferView> inputs,
                     std::vector<BufferView> outputs) {
    LoopNode n;
    n.kind = kind;
    n.name = "n" + std::to_string(graph.nodes.size());
    n.op = op;
    n.inputs = std::move(inputs);
    n.outputs = std::move(outputs);
    graph.nodes.push_back(std::move(n));
    PlanStep step;
    step.kind = kind == LoopNode::Kind::Extern ? PlanStep::Kind::Extern : PlanStep::Kind::Fallback;
    step.index = static_cast<uint32_t>(graph.nodes.size() - 1);
    graph.plan.steps.push_back(step);
    return graph.nodes.back();
  }

  Module module;
  LoopGraph &graph;
};

inline LoopArg tensorArg(const std::string &name, int64_t input) {
  LoopArg a{name, false, {}};
  a.value.kind = ArgKind::Tensor;
  a.value.ints = {input};
  return a;
}
inline LoopArg intsArg(const std::string &name, std::vector<int64_t> v) {
  return {name, false, Arg::integers(std::move(v))};
}
inline LoopArg intArg(const std::string &name, int64_t v) { return {name, false, Arg::integer(v)}; }
inline LoopArg boolArg(const std::string &name, bool v) { return {name, false, Arg::boolean(v)}; }

/// Kernels by name, as compiled object code would provide them.
class FakeLibrary : public KernelLibrary {
public:
  KernelEntryFn lookup(const std::string &name) const override {
    auto it = fns.find(name);
    return it == fns.end() ? nullptr : it->second;
  }
  std::map<std::string, KernelEntryFn> fns;
};

inline std::vector<float> randomFloats(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(gen);
  return v;
}

inline TensorRef ref(std::vector<float> &data, std::vector<int64_t> sizes,
                     std::vector<int64_t> strides = {}) {
  return {data.data(), DType::Float32, std::move(sizes), std::move(strides)};
}

} // namespace gc::test

#endif // GC_TEST_UNIT_RUNTIME_LOOPGRAPHMAKER_H
