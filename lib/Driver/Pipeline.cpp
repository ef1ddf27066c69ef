//===- Pipeline.cpp - gc's pipeline, phase by phase -----------------------===//
//
// Read top to bottom, this file is the pipeline: the phase table, then the
// passes of each phase in order.
//
//===----------------------------------------------------------------------===//
#include "gc/Driver/Pipeline.h"

#include "gc/Transforms/Passes.h"

namespace gc {

namespace {

constexpr PhaseInfo kPhases[] = {
    {Phase::Import, "import", "gc-import", Level::Aten, false,
     "read the torch.export archive: graph, signature, symbols, weights by reference"},
    {Phase::Opt, "opt", "gc-opt", Level::Core, false,
     "functionalize and decompose into core ops; canonicalize, CSE, DCE; for inference, "
     "freezing and constant folds"},
    {Phase::Joint, "joint", "gc-opt --joint", Level::Joint, true,
     "forward and backward in one graph, by reverse-mode autodiff"},
    {Phase::Partition, "partition", "gc-partition", Level::Partitioned, true,
     "split the joint graph into forward and backward graphs; min-cut chooses what to save"},
    {Phase::Lower, "lower", "gc-lower", Level::Loops, false,
     "post-grad clean-up, then loop IR: buffers, loops, extern calls"},
    {Phase::Codegen, "codegen", "gc-codegen", Level::Kernels, false,
     "fuse loops into kernels, plan memory, compile the kernels with LLVM (for the CPU, or "
     "through NVPTX and ptxas for CUDA GPUs)"},
    {Phase::Package, "package", "gc-package", std::nullopt, false,
     "one zip: the plan, the kernels' shared library, the weights"},
};

} // namespace

std::span<const PhaseInfo> phaseInfos() { return kPhases; }
const PhaseInfo &phaseInfo(Phase p) { return kPhases[static_cast<size_t>(p)]; }

std::string corePassList(const CorePipelineOptions &options, WeightsMode weights) {
  // Retargeting comes before everything, so that no pass sees a cuda tensor.
  // Functional next: the decompositions and every later pass assume no op
  // writes in place. Freezing must see the functional graph (a mutated
  // buffer is not a constant) and comes before the folds it enables.
  std::string p = options.retargetCPU ? "retarget-cpu,functionalize" : "functionalize";
  // With external weights, what the folds derive from weights is computed
  // when the package is loaded (a constant program), not stored in it.
  if (options.freeze)
    p += weights == WeightsMode::External ? ",freeze,load-time-constants,fold-conv-bn,fuse-int8"
                                                  : ",freeze,fold-conv-bn,fuse-int8";
  // Attention calls read grouped key heads instead of their repeat before
  // decompose-keep-whole decides which calls stay whole.
  p += options.keepWholeCalls ? ",grouped-attention,decompose-keep-whole,canonicalize"
                              : ",decompose,canonicalize";
  // On core ops, before the folds that turn frozen weights' casts into
  // bfloat16 constants; it does nothing unless --precision=bf16.
  p += ",lower-precision";
  if (options.freeze)
    p += ",constant-fold,fold-linear-bias";
  // Aliases are read off the final graph: earlier passes may still remove
  // or add views.
  p += ",cse,dce,record-aliases";
  return p;
}

Expected<std::vector<std::unique_ptr<Pass>>> phasePasses(Phase phase,
                                                         const PipelineOptions &options) {
  std::vector<std::unique_ptr<Pass>> passes;
  auto append = [&passes](Expected<std::vector<std::unique_ptr<Pass>>> more) -> Error {
    if (!more)
      return more.error();
    for (auto &p : *more)
      passes.push_back(std::move(p));
    return Error::success();
  };
  switch (phase) {
  case Phase::Import:
  case Phase::Package:
    break;
  case Phase::Opt: {
    // The one place the target is chosen: first, so that every pass after
    // it reads it. A model moved to the CPU is compiled for the CPU. A
    // --passes list runs as written unless target flags are given.
    TargetFlags target = options.target;
    if (options.core.retargetCPU && !target.device)
      target.device = TargetDevice::CPU;
    if (!options.passes || target.any())
      passes.push_back(createAssignTargetPass(target, /*decide=*/true));
    GC_RETURN_IF_ERROR(append(parsePassPipeline(
        options.passes ? *options.passes
                       : corePassList(options.core,
                                      options.target.weights.value_or(WeightsMode::Embed)))));
    break;
  }
  case Phase::Joint:
    // The backward recomputes what the forward has (a transpose of the same
    // weight, the same mask): CSE merges those across the two halves, and
    // canonicalization removes the no-op views and casts the rules leave.
    passes.push_back(createJointPass(options.joint));
    GC_RETURN_IF_ERROR(append(parsePassPipeline("cse,canonicalize,dce")));
    break;
  case Phase::Partition:
    passes.push_back(createPartitionPass(options.partition));
    break;
  case Phase::Lower:
    // Post-grad clean-up first: a partitioned graph (or a core graph an
    // earlier tool left as it was) may hold no-op copies, casts and views
    // and duplicate work again. Reinplacing and mm + bias fusion need no
    // graph pass here: the memory planner writes outputs over dead inputs,
    // and the scheduler folds bias and activations into oneDNN's post-ops.
    // Convolutions for a GPU become products or window sums here.
    passes.push_back(createAssignTargetPass(options.target, /*decide=*/false));
    GC_RETURN_IF_ERROR(append(parsePassPipeline("canonicalize,cse,dce")));
    passes.push_back(createConvAsProductPass(options.lower.layout));
    passes.push_back(createLowerPass(options.lower));
    break;
  case Phase::Codegen:
    passes.push_back(createAssignTargetPass(options.target, /*decide=*/false));
    passes.push_back(createSchedulePass(options.codegen));
    passes.push_back(createPlanMemoryPass());
    passes.push_back(createEmitKernelsPass(options.codegen.emit, options.codegen.useCache));
    break;
  }
  return passes;
}

std::vector<Phase> pipelinePhases(Phase last, bool train) {
  std::vector<Phase> phases;
  for (const PhaseInfo &p : kPhases) {
    if (p.training && !train)
      continue;
    phases.push_back(p.phase);
    if (p.phase == last)
      break;
  }
  return phases;
}

std::optional<Phase> phaseProducing(std::string_view name) {
  for (const PhaseInfo &p : kPhases)
    if (p.level ? levelName(*p.level) == name : p.name == name)
      return p.phase;
  return std::nullopt;
}

void registerAllPasses() {
  registerTransformPasses();
  registerAutodiffPasses();
  registerPartitionPasses();
  registerBackendPasses();
}

} // namespace gc
