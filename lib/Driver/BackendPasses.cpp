//===- BackendPasses.cpp - The backend's stages as passes -----------------===//
#include "gc/Driver/BackendPasses.h"

#include "gc/Codegen/GpuKernelEmitter.h"
#include "gc/Driver/AssignTarget.h"
#include "gc/Driver/ObjectCache.h"
#include "gc/IR/PluginRows.h"
#include "gc/IR/Printer.h"
#include "gc/IR/TargetOf.h"
#include "gc/Plan/PlanBuilder.h"
#include "gc/Support/Parallel.h"
#include "gc/Support/SHA256.h"
#include "gc/Support/Target.h"
#include "gc/Support/TargetObjects.h"

namespace gc {

namespace {

/// Bytes a buffer spans (its largest element offset, plus one element), or
/// nullopt when a size or stride is symbolic.
std::optional<int64_t> staticBytes(const Buffer &b) {
  int64_t last = 0;
  for (size_t d = 0; d < b.sizes.size(); ++d) {
    if (!b.sizes[d]->isConst() || !b.strides[d]->isConst())
      return std::nullopt;
    if (b.sizes[d]->constant() == 0)
      return 0;
    last += (b.sizes[d]->constant() - 1) * b.strides[d]->constant();
  }
  return (last + 1) * static_cast<int64_t>(dtypeSize(b.dtype));
}

Error expectLevel(const Module &m, Level want, std::string_view pass) {
  if (m.level() != want)
    return makeError() << pass << " reads level " << levelName(want) << ", not level "
                       << levelName(m.level());
  return Error::success();
}

class LowerPass final : public Pass {
public:
  explicit LowerPass(LowerOptions options) : options_(options) {}
  std::string_view name() const override { return "lower"; }
  Error run(Module &m) override {
    if (m.level() != Level::Core && m.level() != Level::Partitioned)
      return makeError() << "gc-lower reads core or partitioned graphs (from gc-opt or "
                            "gc-partition), not level "
                         << levelName(m.level());
    Expected<LowerReport> r = lowerModule(m, options_);
    if (!r)
      return r.error();
    statistics()["fallback nodes"] += static_cast<int64_t>(r->fallbacks.size());
    statistics()["channels-last buffers"] += r->channelsLastBuffers;
    for (const std::string &f : r->fallbacks)
      warnings().push_back(f + " has no lowering; it runs its reference kernel");
    for (const auto &g : m.loopGraphs()) {
      statistics()["loop nodes"] += static_cast<int64_t>(g->nodes.size());
      statistics()["buffers"] += static_cast<int64_t>(g->buffers.size());
    }
    return Error::success();
  }

private:
  LowerOptions options_;
};

class SchedulePass final : public Pass {
public:
  explicit SchedulePass(CodegenOptions options) : options_(std::move(options)) {}
  std::string_view name() const override { return "schedule"; }
  Error run(Module &m) override {
    GC_RETURN_IF_ERROR(expectLevel(m, Level::Loops, name()));
    Expected<std::string> target = codegenTarget(m);
    if (!target)
      return target.error();
    ScheduleOptions schedule = options_.schedule;
    schedule.device = targetDevice(*target);
    // A plan makes the module a kernels module, object code or not yet.
    m.setLevel(Level::Kernels);
    for (const auto &g : m.loopGraphs()) {
      if (Error e = scheduleGraph(m.syms(), *g, schedule))
        return e.withContext("graph @" + g->name);
      g->plan.target = *target;
      statistics()["kernels"] += static_cast<int64_t>(g->plan.kernels.size());
      for (const PlanStep &step : g->plan.steps) {
        if (step.kind == PlanStep::Kind::Extern)
          ++statistics()["extern calls"];
        if (step.kind == PlanStep::Kind::Fallback)
          ++statistics()[isPluginOp(g->nodes[step.index].op) ? "plugin calls" : "fallback calls"];
        if (step.kind == PlanStep::Kind::Call)
          ++statistics()["graph calls"];
      }
    }
    return Error::success();
  }

private:
  CodegenOptions options_;
};

class PlanMemoryPass final : public Pass {
public:
  std::string_view name() const override { return "plan-memory"; }
  Error run(Module &m) override {
    GC_RETURN_IF_ERROR(expectLevel(m, Level::Kernels, name()));
    for (const auto &g : m.loopGraphs()) {
      planGraphMemory(*g);
      statistics()["arena bytes"] += g->plan.arenaBytes;
      statistics()["intermediate bytes"] += g->plan.intermediateBytes;
    }
    return Error::success();
  }
};

class EmitKernelsPass final : public Pass {
public:
  EmitKernelsPass(EmitOptions options, bool useCache)
      : options_(std::move(options)),
        cache_(useCache ? ObjectCache::fromEnvironment() : ObjectCache::disabled()) {}
  std::string_view name() const override { return "emit-kernels"; }
  Error run(Module &m) override {
    GC_RETURN_IF_ERROR(expectLevel(m, Level::Kernels, name()));
    // The schedule pass recorded the target; a plan without one (scheduled
    // elsewhere) gets the module's.
    for (const auto &g : m.loopGraphs()) {
      if (!g->plan.target.empty())
        continue;
      Expected<std::string> target = codegenTarget(m);
      if (!target)
        return target.error();
      g->plan.target = target.take();
    }
    bool wantIR = options_.llvmIR || options_.optimizedLLVMIR || options_.ptx;
    // Keys and cache lookups one graph after another, then the graphs'
    // emissions at once (a training module's forward and backward graphs
    // overlap their LLVM and ptxas work), then the results in graph order.
    std::vector<GraphObjects> graphs(m.loopGraphs().size());
    for (size_t i = 0; i < graphs.size(); ++i)
      GC_RETURN_IF_ERROR(prepare(m, *m.loopGraphs()[i], wantIR, graphs[i]));
    forEachIndex(graphs.size(), wantIR ? 1 : 0, [&](size_t i) {
      if (!graphs[i].missing.empty())
        emit(m, *m.loopGraphs()[i], graphs[i]);
    });
    for (size_t i = 0; i < graphs.size(); ++i) {
      LoopGraph &g = *m.loopGraphs()[i];
      GraphObjects &go = graphs[i];
      if (go.error)
        return std::move(go.error).withContext("graph @" + g.name);
      if (options_.ptx)
        *options_.ptx += go.ptx;
      for (size_t k = 0; k < go.missing.size(); ++k) {
        cache_.store(go.keys[go.missing[k]], go.made[k]);
        statistics()["object bytes"] += static_cast<int64_t>(go.made[k].size());
        go.objects[go.missing[k]].object = std::move(go.made[k]);
      }
      statistics()["kernel batches"] +=
          static_cast<int64_t>(kernelBatches(g).size() * go.missing.size());
      g.plan.objectCode = bundleTargetObjects(go.objects);
    }
    return Error::success();
  }

private:
  /// One graph's object code: per target, its cache key and object (from
  /// the cache or made), which targets were missing (indices into
  /// objects), and what their emission made.
  struct GraphObjects {
    bool gpu = false;
    std::vector<std::string> keys;
    std::vector<TargetObject> objects;
    std::vector<size_t> missing;
    std::vector<std::string> made;
    std::string ptx;
    Error error;
  };

  /// Launches (GPU), keys and cache lookups of `g`.
  Error prepare(const Module &m, LoopGraph &g, bool wantIR, GraphObjects &go) {
    go.gpu = targetDevice(g.plan.target) == TargetDevice::CUDA;
    // The launches are part of the graph's text, hence of the key.
    if (go.gpu)
      chooseGpuLaunches(m, g);
    // The key covers everything the object code depends on: the scheduled
    // graph as text (buffers, bodies, kernels, placements; not where the
    // weights live), the target and gc itself. Printed before any object
    // code is attached.
    std::string graphText = printLoopGraph(m, g);
    auto keyFor = [&](const std::string &target) {
      return sha256Hex(std::string("gc " GC_VERSION "\n") + resolvedTargetName(target) + "\n" +
                       graphText);
    };
    g.plan.objectHash = keyFor(g.plan.target);
    // A CPU plan of several levels gets one object per level, each cached
    // on its own (a v3-only build reuses the v3 object).
    std::vector<std::string> targets = {g.plan.target};
    if (!go.gpu) {
      Expected<std::vector<std::string>> list = cpuTargetList(g.plan.target);
      if (!list)
        return list.error().withContext("graph @" + g.name);
      targets = list.take();
    }
    for (const std::string &target : targets) {
      go.keys.push_back(keyFor(target));
      std::optional<std::string> cached = wantIR ? std::nullopt : cache_.lookup(go.keys.back());
      if (cached)
        ++statistics()["cache hits"];
      else
        go.missing.push_back(go.objects.size());
      go.objects.push_back({target, cached ? std::move(*cached) : std::string()});
    }
    return Error::success();
  }

  /// Compiles the missing targets of `g` into go.made (or go.error).
  void emit(const Module &m, const LoopGraph &g, GraphObjects &go) const {
    std::vector<std::string> targets;
    for (size_t t : go.missing)
      targets.push_back(go.objects[t].target);
    // The LLVM IR shown is the first (lowest) CPU level's.
    EmitOptions emit = options_;
    emit.target = targets.front();
    emit.ptx = options_.ptx ? &go.ptx : nullptr;
    if (go.missing.front() != 0)
      emit.llvmIR = emit.optimizedLLVMIR = nullptr;
    if (go.gpu) {
      Expected<std::string> object = emitGpuKernels(m, g, emit);
      if (object)
        go.made.push_back(object.take());
      else
        go.error = object.error();
      return;
    }
    Expected<std::vector<std::string>> made = emitKernelsForTargets(m, g, targets, emit);
    if (made)
      go.made = made.take();
    else
      go.error = made.error();
  }

  EmitOptions options_;
  ObjectCache cache_;
};

} // namespace

void planGraphMemory(LoopGraph &graph) {
  bool allStatic = true;
  for (const Buffer &b : graph.buffers)
    if (b.kind == BufferKind::Intermediate)
      allStatic &= staticBytes(b).has_value();
  // Lifetimes do not depend on sizes: a symbolic graph still records its
  // frees, and the runtime places its buffers once the sizes are known.
  ArenaLayout layout = planArena(arenaProblem(graph), [&](uint32_t b) -> int64_t {
    return allStatic ? *staticBytes(graph.buffers[b]) : 1;
  });
  Plan &plan = graph.plan;
  for (size_t s = 0; s < plan.steps.size() && s < layout.frees.size(); ++s)
    plan.steps[s].frees = layout.frees[s];
  plan.placements.clear();
  plan.arenaBytes = 0;
  plan.intermediateBytes = 0;
  if (!allStatic)
    return;
  for (uint32_t b = 0; b < graph.buffers.size(); ++b)
    if (graph.buffers[b].kind == BufferKind::Intermediate && layout.offsets[b] >= 0)
      plan.placements.push_back({b, layout.offsets[b], *staticBytes(graph.buffers[b])});
  plan.arenaBytes = layout.arenaBytes;
  plan.intermediateBytes = layout.sumBytes;
}

std::unique_ptr<Pass> createLowerPass(const LowerOptions &options) {
  return std::make_unique<LowerPass>(options);
}
Expected<std::string> codegenTarget(const Module &m) {
  Target t = targetOf(m);
  if (t.device == TargetDevice::CUDA)
    return cudaTarget(t.gpuArchs);
  Expected<std::vector<std::string>> levels = cpuTargetList(t.cpuLevels);
  if (!levels)
    return levels.error();
  return joinTargets(*levels);
}

std::unique_ptr<Pass> createSchedulePass(const CodegenOptions &options) {
  return std::make_unique<SchedulePass>(options);
}
std::unique_ptr<Pass> createPlanMemoryPass() { return std::make_unique<PlanMemoryPass>(); }
std::unique_ptr<Pass> createEmitKernelsPass(const EmitOptions &options, bool useCache) {
  return std::make_unique<EmitKernelsPass>(options, useCache);
}

namespace {
std::unique_ptr<Pass> defaultAssignTargetPass() { return createAssignTargetPass({}, true); }
std::unique_ptr<Pass> defaultLowerPass() { return createLowerPass({}); }
std::unique_ptr<Pass> defaultSchedulePass() { return createSchedulePass({}); }
std::unique_ptr<Pass> defaultEmitKernelsPass() { return createEmitKernelsPass({}, true); }

constexpr PassInfo kBackendPasses[] = {
    {"assign-target", "Record what the module is compiled for (device, CPU levels, GPU "
                      "architectures, weights mode) from the flags, or check the flags against "
                      "the record (first pass of gc-opt, gc-lower and gc-codegen)",
     &defaultAssignTargetPass},
    {"lower", "Lower core graphs to loop IR: buffers, pointwise, reduction, extern, "
              "fallback and call nodes (gc-lower)",
     &defaultLowerPass},
    {"schedule", "Fuse loop nodes into kernels, choose loop orders, order the plan's steps "
                 "(gc-codegen)",
     &defaultSchedulePass},
    {"plan-memory", "Place intermediate buffers in one arena by their lifetimes (gc-codegen)",
     &createPlanMemoryPass},
    {"emit-kernels", "Compile the kernels with LLVM into object code, through the object "
                     "cache (gc-codegen)",
     &defaultEmitKernelsPass},
};
} // namespace

void registerBackendPasses() { registerPasses(kBackendPasses); }

} // namespace gc
