//===- ModelRunner.cpp - Running a graph of any level ---------------------===//
#include "gc/Tools/ModelRunner.h"

#include "gc/ModuleIO/ModuleIO.h"
#include "gc/Codegen/ObjectLoader.h"
#include "gc/Support/Target.h"
#include "gc/Support/TargetObjects.h"
#include "gc/IR/LoopIR.h"
#include "gc/IR/Random.h"
#include "gc/Interp/LoopInterpreter.h"
#include "gc/Package/PackageReader.h"
#include "gc/Plan/PlanBuilder.h"
#include "gc/Runtime/Runtime.h"

#include <algorithm>
#include <cstring>

namespace gc {

namespace {

/// Buffers a functional graph replaces, by the name of the buffer.
void collectMutatedBuffers(const std::vector<OutputSpec> &specs, RunResult &r) {
  for (size_t i = 0; i < specs.size(); ++i)
    if (specs[i].kind == OutputKind::BufferMutation)
      r.mutatedBuffers[specs[i].target] = r.outputs[i];
}

/// What a run leaves for the next one: each buffer it mutated becomes the
/// value the next run reads, and each user input a functional graph writes
/// (a user_input_mutation output) gets its new value copied into the
/// caller's tensor, as torch would have written it in place.
void carryState(const std::vector<InputSpec> &inputSpecs,
                const std::vector<OutputSpec> &outputSpecs, const std::vector<Tensor> &userInputs,
                const RunResult &r, std::map<std::string, Tensor> &weights) {
  for (const auto &[name, t] : r.mutatedBuffers)
    weights[name] = t;
  for (size_t j = 0; j < outputSpecs.size(); ++j) {
    if (outputSpecs[j].kind != OutputKind::UserInputMutation)
      continue;
    size_t user = 0;
    for (const InputSpec &in : inputSpecs) {
      if (in.kind != InputKind::UserInput)
        continue;
      if (in.target == outputSpecs[j].target && user < userInputs.size()) {
        // A handle on the caller's storage: the caller's tensor changes.
        Tensor into = userInputs[user];
        into.copyFrom(r.outputs[j]);
      }
      ++user;
    }
  }
}

/// Moves `rng`'s offset past the numbers a run of `g` drew.
template <typename G> Error advance(RandomState &rng, const G &g) {
  Expected<int64_t> draws = randomDraws(g);
  if (!draws)
    return draws.error();
  rng.offset += static_cast<uint64_t>(*draws);
  return Error::success();
}

class GraphRunner final : public ModelRunner {
public:
  GraphRunner(const Module &m, const Graph &g, std::map<std::string, Tensor> weights,
              uint64_t seed)
      : module_(m), graph_(g), weights_(std::move(weights)), rng_{seed, 0} {}
  const std::vector<InputSpec> &inputSpecs() const override { return graph_.inputSpecs(); }
  const std::vector<OutputSpec> &outputSpecs() const override { return graph_.outputSpecs(); }
  RandomState &randomState() override { return rng_; }
  Expected<RunResult> run(const std::vector<Tensor> &userInputs) override {
    Expected<RunResult> r = runGraph(module_, graph_, userInputs, weights_, rng_);
    if (r) {
      carryState(graph_.inputSpecs(), graph_.outputSpecs(), userInputs, *r, weights_);
      GC_RETURN_IF_ERROR(advance(rng_, graph_));
      rng_.offset += r->streamDraws;
    }
    return r;
  }

private:
  const Module &module_;
  const Graph &graph_;
  std::map<std::string, Tensor> weights_;
  RandomState rng_;
};

class LoopGraphRunner final : public ModelRunner {
public:
  LoopGraphRunner(const Module &m, const LoopGraph &g, std::map<std::string, Tensor> weights,
                  uint64_t seed)
      : module_(m), graph_(g), weights_(std::move(weights)), rng_{seed, 0} {}
  const std::vector<InputSpec> &inputSpecs() const override { return graph_.inputSpecs; }
  const std::vector<OutputSpec> &outputSpecs() const override { return graph_.outputSpecs; }
  RandomState &randomState() override { return rng_; }
  Expected<RunResult> run(const std::vector<Tensor> &userInputs) override {
    Expected<std::vector<Tensor>> outputs =
        runLoopGraph(module_, graph_, userInputs, weights_, rng_);
    if (!outputs)
      return outputs.error();
    GC_RETURN_IF_ERROR(advance(rng_, graph_));
    RunResult r;
    r.outputs = outputs.take();
    collectMutatedBuffers(graph_.outputSpecs, r);
    carryState(graph_.inputSpecs, graph_.outputSpecs, userInputs, r, weights_);
    return r;
  }

private:
  const Module &module_;
  const LoopGraph &graph_;
  std::map<std::string, Tensor> weights_;
  RandomState rng_;
};

TensorRef refOf(const Tensor &t) {
  // The runtime reads inputs and writes outputs in place; Tensor keeps its
  // storage shared, so the const is only about the handle.
  auto *base = const_cast<uint8_t *>(t.storage()->data());
  return TensorRef{base + t.offset() * dtypeSize(t.dtype()), t.dtype(), t.sizes(), t.strides()};
}

/// Runs `exec` (an Executor or a PackageExecutor) of plan graph `g` on
/// `inputs` into fresh output tensors of the sizes it asks for.
template <typename Exec>
Expected<RunResult> runOnRuntime(Exec &exec, const plan::Graph &g,
                                 const std::vector<OutputSpec> &outputSpecs,
                                 const std::vector<TensorRef> &inputs) {
  Expected<std::vector<std::vector<int64_t>>> sizes = exec.outputSizes(inputs);
  if (!sizes)
    return sizes.error();
  RunResult r;
  std::vector<TensorRef> outputs;
  for (size_t i = 0; i < sizes->size(); ++i) {
    r.outputs.push_back(Tensor::zeros(dtypeOf(g.outputs()->Get(i)->view()->dtype()), (*sizes)[i]));
    outputs.push_back(refOf(r.outputs.back()));
  }
  if (Error e = exec.run(inputs, outputs))
    return e;
  // An output whose sizes the data decided holds them row-major from the
  // start of its memory.
  std::vector<std::vector<int64_t>> filled = exec.lastOutputSizes();
  for (size_t i = 0; i < filled.size() && i < r.outputs.size(); ++i)
    if (filled[i] != r.outputs[i].sizes()) {
      Tensor t = Tensor::zeros(r.outputs[i].dtype(), filled[i]);
      size_t bytes = static_cast<size_t>(t.numel()) * dtypeSize(t.dtype());
      if (bytes)
        std::memcpy(t.storage()->data(), r.outputs[i].storage()->data(), bytes);
      r.outputs[i] = t;
    }
  collectMutatedBuffers(outputSpecs, r);
  return r;
}

/// The runtime's options for a tool, which links the fallback component.
RuntimeOptions runtimeOptions(const RunnerOptions &options) {
  RuntimeOptions ro;
  ro.threads = options.threads;
  ro.profile = options.profile;
  ro.fallback = []() -> Expected<const FallbackComponent *> {
    return &linkedFallbackComponent();
  };
  return ro;
}

/// A kernel plan on the runtime, with its object code linked in process:
/// the module's runtime plan, made here as gc-package makes it.
class PlanRunner final : public ModelRunner {
public:
  static Expected<std::unique_ptr<ModelRunner>> create(const Module &m, const LoopGraph &g,
                                                       std::map<std::string, Tensor> weights,
                                                       const RunnerOptions &options) {
    auto runner = std::unique_ptr<PlanRunner>(new PlanRunner(g));
    runner->generator_.state.seed = options.seed;
    // Every graph's kernels: the graphs that cond and while_loop call run
    // with their own.
    for (const auto &lg : m.loopGraphs()) {
      // A CUDA graph's object code is a fatbinary the GPU executor loads.
      if (targetDevice(lg->plan.target) == TargetDevice::CUDA) {
        runner->kernels_.push_back(std::make_unique<GpuKernelImage>(lg->plan.objectCode));
        continue;
      }
      Expected<std::unique_ptr<KernelLibrary>> kernels = runner->loadCpuKernels(*lg);
      if (!kernels)
        return kernels.error().withContext("graph @" + lg->name);
      runner->kernels_.push_back(kernels.take());
    }
    Expected<std::string> bytes = buildRuntimePlan(m);
    if (!bytes)
      return bytes.error();
    Expected<std::shared_ptr<const RuntimePlan>> plan =
        RuntimePlan::read(bytes.take(), "the runtime plan of graph @" + g.name);
    if (!plan)
      return plan.error();
    runner->plan_ = plan.take();
    size_t index = 0;
    while (m.loopGraphs()[index].get() != &g)
      ++index;
    runner->planGraph_ = runner->plan_->root().graphs()->Get(index);
    RuntimeOptions runtime = runtimeOptions(options);
    runtime.graphKernels = [libraries = &runner->kernels_](size_t graph) -> const KernelLibrary & {
      return *(*libraries)[graph];
    };
    Expected<std::unique_ptr<Executor>> exec =
        Executor::create(runner->plan_, index, *runner->kernels_[index], runtime);
    if (!exec)
      return exec.error().withContext("graph @" + g.name);
    runner->executor_ = exec.take();
    for (size_t i = 0; i < g.inputs.size(); ++i)
      if (g.inputSpecs[i].kind != InputKind::UserInput && !isGeneratorInput(g.inputSpecs[i].kind) &&
          !weights.count(g.inputSpecs[i].target))
        return makeError() << "graph @" << g.name << ": no weight '" << g.inputSpecs[i].target
                           << "' for input '" << g.inputs[i].name << "'";
    runner->weights_ = std::move(weights);
    return std::unique_ptr<ModelRunner>(std::move(runner));
  }

  const std::vector<InputSpec> &inputSpecs() const override { return graph_.inputSpecs; }
  const std::vector<OutputSpec> &outputSpecs() const override { return graph_.outputSpecs; }
  RandomState &randomState() override { return generator_.state; }

  Expected<RunResult> run(const std::vector<Tensor> &userInputs) override {
    std::vector<TensorRef> inputs;
    size_t user = 0;
    for (const InputSpec &spec : graph_.inputSpecs) {
      if (isGeneratorInput(spec.kind)) {
        inputs.emplace_back(); // GeneratorBinding::bind fills it in
        continue;
      }
      if (spec.kind != InputKind::UserInput) {
        inputs.push_back(refOf(weights_.at(spec.target)));
        continue;
      }
      if (user == userInputs.size())
        return makeError() << "graph @" << graph_.name << " takes more user inputs than the "
                           << userInputs.size() << " given";
      inputs.push_back(refOf(userInputs[user++]));
    }
    if (user != userInputs.size())
      return makeError() << "graph @" << graph_.name << " takes " << user << " user inputs, but "
                         << userInputs.size() << " were given";
    generator_.bind(*planGraph_, inputs);
    Expected<RunResult> r = runOnRuntime(*executor_, *planGraph_, graph_.outputSpecs, inputs);
    if (r) {
      carryState(graph_.inputSpecs, graph_.outputSpecs, userInputs, *r, weights_);
      generator_.advance(*planGraph_);
    }
    return r;
  }
  std::vector<StepProfile> profile() const override { return executor_->profile(); }
  KernelTargets kernelTargets() const override { return targets_; }

private:
  explicit PlanRunner(const LoopGraph &g) : graph_(g) {}

  /// The object of the CPU level this machine runs best (or
  /// $GC_CPU_TARGET's), linked in process, as a package would load it.
  Expected<std::unique_ptr<KernelLibrary>> loadCpuKernels(const LoopGraph &g) {
    Expected<std::string> level = selectCpuTarget(g.plan.target);
    if (!level)
      return level.error();
    Expected<std::vector<TargetObject>> objects = targetObjects(g.plan.target, g.plan.objectCode);
    if (!objects)
      return objects.error();
    if (!g.plan.kernels.empty())
      targets_ = {*level, g.plan.target};
    // selectCpuTarget chose one of the targets, which have an object each.
    auto chosen = std::find_if(objects->begin(), objects->end(),
                               [&](const TargetObject &o) { return o.target == *level; });
    return loadObjectCode(chosen->object);
  }

  const LoopGraph &graph_;
  std::shared_ptr<const RuntimePlan> plan_;
  const plan::Graph *planGraph_ = nullptr;
  std::vector<std::unique_ptr<KernelLibrary>> kernels_; ///< per loop graph
  std::unique_ptr<Executor> executor_;
  std::map<std::string, Tensor> weights_;
  GeneratorBinding generator_;
  KernelTargets targets_;
};

/// A graph of a package, on the runtime with the package's own kernels and
/// its weights in place. The roles come from the plan's bindings.
class PackageRunner final : public ModelRunner {
public:
  static Expected<std::unique_ptr<ModelRunner>> create(std::unique_ptr<PackageExecutor> exec,
                                                       KernelTargets targets) {
    auto runner =
        std::unique_ptr<PackageRunner>(new PackageRunner(std::move(exec), std::move(targets)));
    const plan::Graph &g = runner->exec_->graph();
    for (const plan::Binding *b : *g.inputs()) {
      std::optional<InputKind> kind = parseInputKind(b->role()->string_view());
      if (!kind)
        return makeError() << graphLabel(g) << ": input '" << b->name()->str()
                           << "' has unknown role '" << b->role()->str() << "'";
      runner->inputSpecs_.push_back(InputSpec{*kind, b->target()->str()});
    }
    for (const plan::Binding *b : *g.outputs()) {
      std::optional<OutputKind> kind = parseOutputKind(b->role()->string_view());
      if (!kind)
        return makeError() << graphLabel(g) << ": output '" << b->name()->str()
                           << "' has unknown role '" << b->role()->str() << "'";
      runner->outputSpecs_.push_back(OutputSpec{*kind, b->target()->str()});
    }
    return std::unique_ptr<ModelRunner>(std::move(runner));
  }
  const std::vector<InputSpec> &inputSpecs() const override { return inputSpecs_; }
  const std::vector<OutputSpec> &outputSpecs() const override { return outputSpecs_; }
  RandomState &randomState() override { return exec_->randomState(); }
  Expected<RunResult> run(const std::vector<Tensor> &userInputs) override {
    std::vector<TensorRef> inputs;
    for (const Tensor &t : userInputs)
      inputs.push_back(refOf(t));
    return runOnRuntime(*exec_, exec_->graph(), outputSpecs_, inputs);
  }
  std::vector<StepProfile> profile() const override { return exec_->profile(); }
  KernelTargets kernelTargets() const override { return targets_; }

private:
  PackageRunner(std::unique_ptr<PackageExecutor> exec, KernelTargets targets)
      : exec_(std::move(exec)), targets_(std::move(targets)) {}
  std::unique_ptr<PackageExecutor> exec_;
  KernelTargets targets_;
  std::vector<InputSpec> inputSpecs_;
  std::vector<OutputSpec> outputSpecs_;
};

/// A runner that also owns the module it runs.
class OwningRunner final : public ModelRunner {
public:
  OwningRunner(std::unique_ptr<Module> m, std::unique_ptr<ModelRunner> r)
      : module_(std::move(m)), runner_(std::move(r)) {}
  const std::vector<InputSpec> &inputSpecs() const override { return runner_->inputSpecs(); }
  const std::vector<OutputSpec> &outputSpecs() const override { return runner_->outputSpecs(); }
  RandomState &randomState() override { return runner_->randomState(); }
  Expected<RunResult> run(const std::vector<Tensor> &userInputs) override {
    return runner_->run(userInputs);
  }
  std::vector<StepProfile> profile() const override { return runner_->profile(); }
  KernelTargets kernelTargets() const override { return runner_->kernelTargets(); }

private:
  std::unique_ptr<Module> module_;
  std::unique_ptr<ModelRunner> runner_;
};

Expected<std::unique_ptr<ModelRunner>> openPackageRunner(std::shared_ptr<MappedFile> file,
                                                         const std::string &graphName,
                                                         const RunnerOptions &options) {
  Expected<std::unique_ptr<LoadedPackage>> pkg =
      openPackage(std::move(file), OpenOptions{.fallback = runtimeOptions(options).fallback});
  if (!pkg)
    return pkg.error();
  std::shared_ptr<const LoadedPackage> shared = pkg.take();
  const auto &graphs = *shared->plan().graphs();
  size_t index = 0;
  while (!graphName.empty() && index < graphs.size() &&
         graphs.Get(index)->name()->string_view() != graphName)
    ++index;
  if (index == graphs.size())
    return makeError() << "no graph " << (graphName.empty() ? "" : "@" + graphName);
  Expected<std::unique_ptr<PackageExecutor>> exec =
      PackageExecutor::create(shared, index, runtimeOptions(options));
  if (!exec)
    return exec.error();
  (*exec)->randomState().seed = options.seed;
  return PackageRunner::create(exec.take(), {shared->kernelTarget(), shared->kernelTargets()});
}

} // namespace

Expected<std::unique_ptr<ModelRunner>> openModelRunner(const std::string &path,
                                                       const std::string &graphName,
                                                       const RunnerOptions &options) {
  if (path != "-") {
    Expected<std::shared_ptr<MappedFile>> file = MappedFile::open(path);
    if (!file)
      return file.error();
    if (isPackage((*file)->bytes()))
      return openPackageRunner(file.take(), graphName, options);
  }
  Expected<std::unique_ptr<Module>> m = readModuleFile(path);
  if (!m)
    return m.error();
  Expected<std::unique_ptr<ModelRunner>> r = makeModelRunner(**m, graphName, options);
  if (!r)
    return r.error().withContext("'" + path + "'");
  return std::unique_ptr<ModelRunner>(new OwningRunner(m.take(), r.take()));
}

namespace {

Expected<std::unique_ptr<ModelRunner>> makeRunner(const Module &module,
                                                  const std::string &graphName,
                                                  std::map<std::string, Tensor> weights,
                                                  const RunnerOptions &options);

/// Adds to `weights` those of a Program source, by running the module's
/// constant program on the others, as libgcrt does when it loads a package.
Error computeProgramWeights(const Module &module, const RunnerOptions &options,
                            std::map<std::string, Tensor> &weights) {
  const Weight *computed = nullptr;
  for (const Weight &w : module.weights())
    if (module.weightSources()[w.source].kind == WeightSource::Kind::Program)
      computed = &w;
  if (!computed)
    return Error::success();
  std::string program(kConstantProgramGraph);
  if (!(module.level() >= Level::Loops ? module.loopGraph(program) != nullptr
                                       : module.graph(program) != nullptr))
    return makeError() << "weight '" << computed->name << "' is computed by graph @" << program
                       << ", which the module does not have";
  Expected<std::unique_ptr<ModelRunner>> runner = makeRunner(module, program, weights, options);
  if (!runner)
    return runner.error();
  Expected<RunResult> r = (*runner)->run({});
  if (!r)
    return r.error().withContext("graph @" + program);
  const std::vector<OutputSpec> &specs = (*runner)->outputSpecs();
  for (size_t i = 0; i < specs.size() && i < r->outputs.size(); ++i)
    weights[specs[i].target] = r->outputs[i];
  for (const Weight &w : module.weights())
    if (!weights.count(w.name))
      return makeError() << "weight '" << w.name << "': graph @" << program
                         << " has no output for it";
  return Error::success();
}

Expected<std::unique_ptr<ModelRunner>> makeRunner(const Module &module,
                                                  const std::string &graphName,
                                                  std::map<std::string, Tensor> weights,
                                                  const RunnerOptions &options) {
  if (module.level() >= Level::Loops) {
    const LoopGraph *g =
        graphName.empty()
            ? (module.loopGraphs().empty() ? nullptr : module.loopGraphs()[0].get())
            : module.loopGraph(graphName);
    if (!g)
      return makeError() << "no graph " << (graphName.empty() ? "" : "@" + graphName);
    if (module.level() == Level::Loops)
      return std::unique_ptr<ModelRunner>(new LoopGraphRunner(module, *g, std::move(weights), options.seed));
    return PlanRunner::create(module, *g, std::move(weights), options);
  }
  const Graph *g = graphName.empty()
                       ? (module.graphs().empty() ? nullptr : module.graphs()[0].get())
                       : module.graph(graphName);
  if (!g)
    return makeError() << "no graph " << (graphName.empty() ? "" : "@" + graphName);
  return std::unique_ptr<ModelRunner>(new GraphRunner(module, *g, std::move(weights), options.seed));
}

} // namespace

Expected<std::unique_ptr<ModelRunner>> makeModelRunner(const Module &module,
                                                       const std::string &graphName,
                                                       const RunnerOptions &options) {
  Expected<std::map<std::string, Tensor>> weights = loadWeights(module);
  if (!weights)
    return weights.error();
  GC_RETURN_IF_ERROR(computeProgramWeights(module, options, *weights));
  return makeRunner(module, graphName, weights.take(), options);
}

} // namespace gc
