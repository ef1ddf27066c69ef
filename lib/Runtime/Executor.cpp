//===- Executor.cpp - Running a kernel plan -------------------------------===//
//
// Everything that depends only on the values of the size symbols (evaluated
// layouts, arena offsets, loop counts, oneDNN primitives) is worked out once
// per binding of those symbols and kept in an Instance; a run then only sets
// up buffer pointers and goes through the steps.
//
//===----------------------------------------------------------------------===//
#include "gc/Runtime/Runtime.h"

#include "DnnlExtern.h"
#include "ReferenceStep.h"
#include "StridedLayout.h"

#include "gc/Runtime/MemoryPlanner.h"
#include "gc/Runtime/ThreadPool.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <new>

namespace gc {

namespace {

/// Below this much work (loop points times body operations) a kernel runs
/// on the calling thread:
/// waking the workers would cost more than it saves.
constexpr int64_t kParallelWork = 64 * 1024;
/// Distinct symbol bindings kept before the cache starts over.
constexpr size_t kMaxInstances = 64;
constexpr size_t kAlignment = 64;

/// Grow-only, 64-byte aligned memory.
class AlignedBuffer {
public:
  ~AlignedBuffer() { release(); }
  char *reserve(size_t bytes) {
    if (bytes > size_) {
      release();
      data_ = static_cast<char *>(::operator new(bytes, std::align_val_t(kAlignment)));
      size_ = bytes;
    }
    return data_;
  }

private:
  void release() {
    if (data_)
      ::operator delete(data_, std::align_val_t(kAlignment));
    data_ = nullptr;
    size_ = 0;
  }
  char *data_ = nullptr;
  size_t size_ = 0;
};

/// What a zero-size buffer points at: no element is ever read or written.
alignas(kAlignment) char emptyBuffer[kAlignment];

size_t alignUp(size_t v) { return (v + kAlignment - 1) / kAlignment * kAlignment; }

StridedLayout callerLayout(const TensorRef &t) {
  StridedLayout l{t.sizes, t.strides, 0};
  if (l.strides.empty() && !l.sizes.empty()) {
    l.strides.assign(l.sizes.size(), 1);
    for (size_t d = l.sizes.size() - 1; d > 0; --d)
      l.strides[d - 1] = l.strides[d] * std::max<int64_t>(l.sizes[d], 1);
  }
  return l;
}

/// A step with its symbol-dependent data evaluated.
struct StepInstance {
  int64_t iterations = 1; ///< Kernel: the first parallel range
  bool parallel = false;  ///< Kernel: worth splitting across threads
  std::vector<StridedLayout> inputs, outputs; ///< Extern/Fallback views
  std::unique_ptr<DnnlCall> dnnl;             ///< Extern, when oneDNN takes it
};

struct Instance {
  std::vector<int64_t> symbols; ///< per Plan::symbols
  std::vector<StridedLayout> buffers;
  std::vector<int64_t> bufferBytes;
  std::vector<int64_t> offsets; ///< arena offsets, -1 if not in the arena
  int64_t arenaBytes = 0;
  std::vector<StridedLayout> inputViews, outputViews;
  std::vector<StepInstance> steps;
};

class ExecutorImpl final : public Executor {
public:
  ExecutorImpl(const Module &module, const LoopGraph &graph, const RuntimeOptions &options)
      : module_(module), graph_(graph), pool_(options.threads), profiling_(options.profile) {}

  Error init(const KernelLibrary &kernels);

  Expected<std::vector<std::vector<int64_t>>>
  outputSizes(std::span<const TensorRef> inputs) override;
  Error run(std::span<const TensorRef> inputs, std::span<const TensorRef> outputs) override;
  std::vector<StepProfile> profile() const override { return profile_; }

private:
  Error checkStructure() const;
  /// The arena layout when every intermediate's size is static, else
  /// nullopt (then each symbol binding gets its own).
  std::optional<ArenaLayout> staticArena() const;
  std::string inputName(size_t i) const;
  Expected<SymbolValues> bindInputs(std::span<const TensorRef> inputs) const;
  Expected<Instance *> instanceFor(const SymbolValues &values);
  Expected<std::unique_ptr<Instance>> makeInstance(const SymbolValues &values);
  Expected<std::vector<StridedLayout>> checkOutputs(const Instance &inst,
                                                    std::span<const TensorRef> outputs) const;
  /// Which caller tensors go through scratch: copied in before the steps,
  /// or out after them.
  struct Copies {
    std::vector<bool> in, out;
  };
  /// Points bufferPtrs_ at the arena, the caller's tensors and scratch.
  Copies placeBuffers(const Instance &inst, std::span<const TensorRef> inputs,
                      std::span<const TensorRef> outputs,
                      const std::vector<StridedLayout> &outLayouts);
  Error runStep(size_t s, StepInstance &step, char *const *buffers, const int64_t *symbols);

  const Module &module_;
  const LoopGraph &graph_;
  ThreadPool pool_;
  DnnlContext dnnl_;
  std::vector<KernelEntryFn> kernelFns_; ///< per KernelGroup
  std::vector<std::unique_ptr<ReferenceStep>> reference_; ///< per step; null for kernels
  std::optional<ArenaLayout> staticArena_;
  std::map<std::vector<int64_t>, std::unique_ptr<Instance>> instances_;
  AlignedBuffer arena_, scratch_;
  std::vector<char *> bufferPtrs_;
  bool profiling_;
  std::vector<StepProfile> profile_;
};

Error ExecutorImpl::checkStructure() const {
  const Plan &plan = graph_.plan;
  size_t numBuffers = graph_.buffers.size();
  auto checkView = [&](const BufferView &v) { return v.buffer < numBuffers; };
  for (const LoopNode &n : graph_.nodes) {
    if (n.kind == LoopNode::Kind::Pointwise || n.kind == LoopNode::Kind::Reduction) {
      if (n.output >= numBuffers)
        return makeError() << "node '" << n.name << "' writes buffer " << n.output << " of "
                           << numBuffers;
      for (const BodyOp &op : n.body.ops)
        if (op.kind == BodyOp::Kind::Load && op.buffer >= numBuffers)
          return makeError() << "node '" << n.name << "' reads buffer " << op.buffer << " of "
                             << numBuffers;
      continue;
    }
    if (!std::all_of(n.inputs.begin(), n.inputs.end(), checkView) ||
        !std::all_of(n.outputs.begin(), n.outputs.end(), checkView))
      return makeError() << "node '" << n.name << "' has a view of a missing buffer";
  }
  for (const KernelGroup &k : plan.kernels)
    for (uint32_t n : k.nodes)
      if (n >= graph_.nodes.size())
        return makeError() << "kernel '" << k.name << "' runs missing node " << n;
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const PlanStep &step = plan.steps[s];
    size_t limit = step.kind == PlanStep::Kind::Kernel ? plan.kernels.size() : graph_.nodes.size();
    if (step.index >= limit)
      return makeError() << "plan step " << s << " refers to missing "
                         << (step.kind == PlanStep::Kind::Kernel ? "kernel " : "node ")
                         << step.index;
  }
  for (const LoopBinding &b : graph_.inputs)
    if (b.buffer >= numBuffers)
      return makeError() << "input '" << b.name << "' is bound to missing buffer " << b.buffer;
  for (const LoopBinding &b : graph_.outputs)
    if (b.buffer >= numBuffers)
      return makeError() << "output '" << b.name << "' is bound to missing buffer " << b.buffer;
  return Error::success();
}

Error ExecutorImpl::init(const KernelLibrary &kernels) {
  GC_RETURN_IF_ERROR(checkStructure());
  const Plan &plan = graph_.plan;
  for (const KernelGroup &k : plan.kernels) {
    KernelEntryFn fn = kernels.lookup(k.name);
    if (!fn)
      return makeError() << "kernel '" << k.name << "' is not in the kernel library";
    kernelFns_.push_back(fn);
  }
  for (const PlanStep &step : plan.steps) {
    reference_.emplace_back();
    if (step.kind == PlanStep::Kind::Kernel)
      continue;
    const LoopNode &node = graph_.nodes[step.index];
    Expected<std::unique_ptr<ReferenceStep>> ref = ReferenceStep::create(node);
    if (!ref)
      return ref.error();
    reference_.back() = ref.take();
  }

  staticArena_ = staticArena();
  return Error::success();
}

std::optional<ArenaLayout> ExecutorImpl::staticArena() const {
  const Plan &plan = graph_.plan;
  std::vector<int64_t> bytes(graph_.buffers.size(), 0);
  for (size_t b = 0; b < graph_.buffers.size(); ++b) {
    const Buffer &buf = graph_.buffers[b];
    if (buf.kind != BufferKind::Intermediate)
      continue;
    Expected<StridedLayout> l = evaluateLayout(buf.sizes, buf.strides, {});
    if (!l)
      return std::nullopt;
    bytes[b] = l->extent() * dtypeSize(buf.dtype);
  }
  // The plan's placements are taken when they hold every buffer the steps
  // use; a plan without them (or with too small ones) gets ours.
  ArenaLayout ours = planArena(graph_, [&](uint32_t b) { return bytes[b]; });
  std::vector<const BufferPlacement *> given(graph_.buffers.size(), nullptr);
  for (const BufferPlacement &p : plan.placements)
    if (p.buffer < given.size())
      given[p.buffer] = &p;
  bool planCovers = !plan.placements.empty();
  for (size_t b = 0; b < given.size() && planCovers; ++b) {
    if (ours.offsets[b] < 0)
      continue;
    const BufferPlacement *p = given[b];
    planCovers = p && p->offset >= 0 && p->offset % kAlignment == 0 && p->bytes >= bytes[b] &&
                 p->offset + p->bytes <= plan.arenaBytes;
  }
  if (planCovers) {
    for (size_t b = 0; b < given.size(); ++b)
      ours.offsets[b] = ours.offsets[b] < 0 ? -1 : given[b]->offset;
    ours.arenaBytes = plan.arenaBytes;
  }
  return ours;
}

std::string ExecutorImpl::inputName(size_t i) const {
  if (i < graph_.inputSpecs.size() && !graph_.inputSpecs[i].target.empty())
    return graph_.inputSpecs[i].target;
  return graph_.inputs[i].name;
}

Expected<SymbolValues> ExecutorImpl::bindInputs(std::span<const TensorRef> inputs) const {
  if (inputs.size() != graph_.inputs.size())
    return makeError() << "expected " << graph_.inputs.size() << " inputs, got " << inputs.size();
  SymbolValues values;
  auto mismatch = [&](size_t i) -> Error {
    const TensorType &want = graph_.inputs[i].type;
    return makeError() << "input '" << inputName(i) << "': expected "
                       << typeText(want.dtype, want.sizes) << ", got "
                       << typeText(inputs[i].dtype, inputs[i].sizes);
  };
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorType &want = graph_.inputs[i].type;
    const TensorRef &got = inputs[i];
    if (got.dtype != want.dtype || got.sizes.size() != want.rank())
      return mismatch(i);
    if (!got.strides.empty() && got.strides.size() != got.sizes.size())
      return makeError() << "input '" << inputName(i) << "': " << got.strides.size()
                         << " strides for " << got.sizes.size() << " dimensions";
    if (!got.data && callerLayout(got).numel() != 0)
      return makeError() << "input '" << inputName(i) << "': no data";
    for (size_t d = 0; d < want.rank(); ++d) {
      if (!want.sizes[d]->isSymbol())
        continue;
      const std::string &sym = want.sizes[d]->symbolName();
      int64_t size = got.sizes[d];
      auto [it, inserted] = values.emplace(sym, size);
      if (!inserted && it->second != size)
        return makeError() << "input '" << inputName(i) << "': dimension " << d << " is " << size
                           << ", but " << sym << " is already " << it->second;
      std::optional<SymRange> r = module_.syms().range(sym);
      if (r && (size < r->min || size > r->max))
        return makeError() << "input '" << inputName(i) << "': dimension " << d << " is " << size
                           << ", outside the range [" << r->min << ", "
                           << (r->max == SymRange::kUnbounded ? std::string("inf")
                                                              : std::to_string(r->max))
                           << "] of " << sym;
    }
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::optional<std::vector<int64_t>> sizes = evaluateAll(graph_.inputs[i].type.sizes, values);
    if (!sizes || *sizes != inputs[i].sizes)
      return mismatch(i);
  }
  for (const std::string &sym : graph_.plan.symbols)
    if (!values.count(sym))
      return makeError() << "size symbol " << sym << " is not the size of any input";
  return values;
}

Expected<std::unique_ptr<Instance>> ExecutorImpl::makeInstance(const SymbolValues &values) {
  auto inst = std::make_unique<Instance>();
  for (const std::string &sym : graph_.plan.symbols)
    inst->symbols.push_back(values.at(sym));
  for (const Buffer &buf : graph_.buffers) {
    Expected<StridedLayout> l = evaluateLayout(buf.sizes, buf.strides, values);
    if (!l)
      return l.error().withContext("buffer '" + buf.name + "'");
    inst->bufferBytes.push_back(l->extent() * dtypeSize(buf.dtype));
    inst->buffers.push_back(l.take());
  }
  if (staticArena_) {
    inst->offsets = staticArena_->offsets;
    inst->arenaBytes = staticArena_->arenaBytes;
  } else {
    ArenaLayout layout =
        planArena(graph_, [&](uint32_t b) { return inst->bufferBytes[b]; });
    inst->offsets = std::move(layout.offsets);
    inst->arenaBytes = layout.arenaBytes;
  }
  // A view reaching past its buffer would read or write memory nobody
  // planned for it; a corrupt file must not get that far.
  auto viewOf = [&](uint32_t buffer, const TensorType &type,
                    const std::string &what) -> Expected<StridedLayout> {
    Expected<StridedLayout> l = evaluateLayout(type, values);
    if (!l)
      return l.error().withContext(what);
    if (l->extent() > inst->buffers[buffer].extent())
      return makeError() << what << ": its view " << typeText(type.dtype, l->sizes)
                         << " reaches past buffer '" << graph_.buffers[buffer].name << "'";
    return l;
  };
  auto views = [&](const std::vector<LoopBinding> &bindings,
                   std::vector<StridedLayout> &out) -> Error {
    for (const LoopBinding &b : bindings) {
      Expected<StridedLayout> l = viewOf(b.buffer, b.type, "binding '" + b.name + "'");
      if (!l)
        return l.error();
      out.push_back(l.take());
    }
    return Error::success();
  };
  GC_RETURN_IF_ERROR(views(graph_.inputs, inst->inputViews));
  GC_RETURN_IF_ERROR(views(graph_.outputs, inst->outputViews));

  const Plan &plan = graph_.plan;
  for (const PlanStep &step : plan.steps) {
    StepInstance &si = inst->steps.emplace_back();
    if (step.kind == PlanStep::Kind::Kernel) {
      const KernelGroup &k = plan.kernels[step.index];
      if (!k.parallelRanges.empty()) {
        std::optional<int64_t> n = evaluate(k.parallelRanges[0], values);
        if (!n)
          return makeError() << "kernel '" << k.name << "': cannot evaluate its parallel range "
                             << k.parallelRanges[0]->str();
        si.iterations = *n;
      }
      int64_t work = 0;
      for (uint32_t n : k.nodes) {
        const LoopNode &node = graph_.nodes[n];
        int64_t points = 1;
        for (const auto *ranges : {&node.ranges, &node.reductionRanges})
          for (const SymExpr *r : *ranges)
            points *= evaluate(r, values).value_or(1);
        // A point of an erf-heavy body costs many times one of a copy.
        work += points * static_cast<int64_t>(1 + node.body.ops.size());
      }
      si.parallel = si.iterations > 1 && work >= kParallelWork && pool_.size() > 1;
      continue;
    }
    const LoopNode &node = graph_.nodes[step.index];
    for (const auto &[views, out] : {std::pair{&node.inputs, &si.inputs},
                                     std::pair{&node.outputs, &si.outputs}})
      for (const BufferView &v : *views) {
        Expected<StridedLayout> l = viewOf(v.buffer, v.type, "node '" + node.name + "'");
        if (!l)
          return l.error();
        out->push_back(l.take());
      }
    if (step.kind == PlanStep::Kind::Extern && DnnlContext::supports(node.op)) {
      // Parameters and constants do not change while the executor lives,
      // so what oneDNN derives from them (reordered weights) is kept.
      std::vector<bool> constant;
      for (const BufferView &v : node.inputs) {
        bool isConstant = false;
        for (size_t i = 0; i < graph_.inputs.size(); ++i)
          isConstant |= graph_.inputs[i].buffer == v.buffer &&
                        (graph_.inputSpecs[i].kind == InputKind::Parameter ||
                         graph_.inputSpecs[i].kind == InputKind::Constant);
        constant.push_back(isConstant);
      }
      si.dnnl = dnnl_.prepare(node, si.inputs, si.outputs, constant);
    }
  }
  return inst;
}

Expected<Instance *> ExecutorImpl::instanceFor(const SymbolValues &values) {
  std::vector<int64_t> key;
  for (const auto &[name, v] : values)
    key.push_back(v);
  auto it = instances_.find(key);
  if (it != instances_.end())
    return it->second.get();
  if (instances_.size() >= kMaxInstances)
    instances_.clear();
  Expected<std::unique_ptr<Instance>> inst = makeInstance(values);
  if (!inst)
    return inst.error();
  return instances_.emplace(std::move(key), inst.take()).first->second.get();
}

Expected<std::vector<std::vector<int64_t>>>
ExecutorImpl::outputSizes(std::span<const TensorRef> inputs) {
  Expected<SymbolValues> values = bindInputs(inputs);
  if (!values)
    return values.error();
  std::vector<std::vector<int64_t>> out;
  for (const LoopBinding &b : graph_.outputs) {
    std::optional<std::vector<int64_t>> sizes = evaluateAll(b.type.sizes, *values);
    if (!sizes)
      return makeError() << "output '" << b.name << "': cannot evaluate its sizes";
    out.push_back(std::move(*sizes));
  }
  return out;
}

Error ExecutorImpl::runStep(size_t s, StepInstance &step, char *const *buffers,
                            const int64_t *symbols) {
  const PlanStep &ps = graph_.plan.steps[s];
  if (ps.kind == PlanStep::Kind::Kernel) {
    KernelEntryFn fn = kernelFns_[ps.index];
    if (step.iterations <= 0)
      return Error::success();
    if (!step.parallel) {
      fn(buffers, symbols, 0, step.iterations);
      return Error::success();
    }
    pool_.parallelFor(step.iterations,
                      [&](int64_t begin, int64_t end) { fn(buffers, symbols, begin, end); });
    return Error::success();
  }
  if (step.dnnl)
    return step.dnnl->run(buffers).withContext("node '" + graph_.nodes[ps.index].name + "'");
  return reference_[s]->run(buffers, step.inputs, step.outputs);
}

Expected<std::vector<StridedLayout>>
ExecutorImpl::checkOutputs(const Instance &inst, std::span<const TensorRef> outputs) const {
  if (outputs.size() != graph_.outputs.size())
    return makeError() << "expected " << graph_.outputs.size() << " outputs, got "
                       << outputs.size();
  std::vector<StridedLayout> layouts;
  for (size_t j = 0; j < outputs.size(); ++j) {
    const LoopBinding &b = graph_.outputs[j];
    const TensorRef &got = outputs[j];
    if (got.dtype != b.type.dtype || got.sizes != inst.outputViews[j].sizes)
      return makeError() << "output '" << b.name << "': expected "
                         << typeText(b.type.dtype, inst.outputViews[j].sizes) << ", got "
                         << typeText(got.dtype, got.sizes);
    if (!got.strides.empty() && got.strides.size() != got.sizes.size())
      return makeError() << "output '" << b.name << "': " << got.strides.size()
                         << " strides for " << got.sizes.size() << " dimensions";
    layouts.push_back(callerLayout(got));
    if (!got.data && layouts.back().numel() != 0)
      return makeError() << "output '" << b.name << "': no data";
  }
  return layouts;
}

ExecutorImpl::Copies ExecutorImpl::placeBuffers(const Instance &inst,
                                                std::span<const TensorRef> inputs,
                                                std::span<const TensorRef> outputs,
                                                const std::vector<StridedLayout> &outLayouts) {
  size_t numBuffers = graph_.buffers.size();
  bufferPtrs_.assign(numBuffers, nullptr);
  char *arena = arena_.reserve(std::max<int64_t>(inst.arenaBytes, 1));
  for (size_t b = 0; b < numBuffers; ++b)
    if (graph_.buffers[b].kind == BufferKind::Intermediate && inst.offsets[b] >= 0)
      bufferPtrs_[b] = arena + inst.offsets[b];

  // Caller memory is used in place when its layout is the buffer's; the
  // rest goes through scratch, laid out once we know what needs it.
  Copies copies{std::vector<bool>(inputs.size(), false), std::vector<bool>(outputs.size(), true)};
  std::vector<size_t> scratchOffset(numBuffers, SIZE_MAX);
  size_t scratchBytes = 0;
  auto needScratch = [&](size_t b) {
    if (scratchOffset[b] == SIZE_MAX) {
      scratchOffset[b] = scratchBytes;
      scratchBytes += alignUp(inst.bufferBytes[b]);
    }
  };
  for (size_t i = 0; i < inputs.size(); ++i) {
    uint32_t b = graph_.inputs[i].buffer;
    const StridedLayout &buf = inst.buffers[b];
    if (!bufferPtrs_[b] && inst.inputViews[i].sameMemoryAs(buf) &&
        callerLayout(inputs[i]).sameMemoryAs(buf)) {
      bufferPtrs_[b] = static_cast<char *>(inputs[i].data);
      continue;
    }
    copies.in[i] = true;
    needScratch(b);
  }
  for (size_t j = 0; j < outputs.size(); ++j) {
    uint32_t b = graph_.outputs[j].buffer;
    const StridedLayout &buf = inst.buffers[b];
    if (graph_.buffers[b].kind == BufferKind::Output && !bufferPtrs_[b] &&
        inst.outputViews[j].sameMemoryAs(buf) && outLayouts[j].sameMemoryAs(buf)) {
      bufferPtrs_[b] = static_cast<char *>(outputs[j].data);
      copies.out[j] = false;
    }
  }
  for (size_t b = 0; b < numBuffers; ++b)
    if (graph_.buffers[b].kind == BufferKind::Output && !bufferPtrs_[b])
      needScratch(b);
  char *scratch = scratch_.reserve(std::max<size_t>(scratchBytes, 1));
  for (size_t b = 0; b < numBuffers; ++b) {
    if (scratchOffset[b] != SIZE_MAX)
      bufferPtrs_[b] = scratch + scratchOffset[b];
    if (!bufferPtrs_[b] || inst.bufferBytes[b] == 0)
      bufferPtrs_[b] = emptyBuffer;
  }
  return copies;
}

Error ExecutorImpl::run(std::span<const TensorRef> inputs, std::span<const TensorRef> outputs) {
  Expected<SymbolValues> values = bindInputs(inputs);
  if (!values)
    return values.error();
  Expected<Instance *> found = instanceFor(*values);
  if (!found)
    return found.error();
  Instance &inst = **found;
  Expected<std::vector<StridedLayout>> outLayouts = checkOutputs(inst, outputs);
  if (!outLayouts)
    return outLayouts.error();
  Copies copies = placeBuffers(inst, inputs, outputs, *outLayouts);
  pool_.bindToCallingThread();

  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!copies.in[i])
      continue;
    const StridedLayout &view = inst.inputViews[i];
    unsigned elem = dtypeSize(inputs[i].dtype);
    copyStrided(bufferPtrs_[graph_.inputs[i].buffer] + view.offset * elem, view.strides,
                static_cast<const char *>(inputs[i].data), callerLayout(inputs[i]).strides,
                view.sizes, elem);
  }
  if (profiling_ && profile_.empty())
    for (const PlanStep &ps : graph_.plan.steps)
      profile_.push_back({ps.kind == PlanStep::Kind::Kernel ? graph_.plan.kernels[ps.index].name
                                                            : graph_.nodes[ps.index].name,
                          ps.kind, 0, 0});
  for (size_t s = 0; s < inst.steps.size(); ++s) {
    auto start = profiling_ ? std::chrono::steady_clock::now()
                            : std::chrono::steady_clock::time_point();
    GC_RETURN_IF_ERROR(runStep(s, inst.steps[s], bufferPtrs_.data(), inst.symbols.data()));
    if (profiling_) {
      double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      StepProfile &p = profile_[s];
      p.minSeconds = p.runs ? std::min(p.minSeconds, seconds) : seconds;
      p.seconds += seconds;
      ++p.runs;
    }
  }
  for (size_t j = 0; j < outputs.size(); ++j) {
    if (!copies.out[j])
      continue;
    const StridedLayout &view = inst.outputViews[j];
    unsigned elem = dtypeSize(outputs[j].dtype);
    copyStrided(static_cast<char *>(outputs[j].data), (*outLayouts)[j].strides,
                bufferPtrs_[graph_.outputs[j].buffer] + view.offset * elem, view.strides,
                view.sizes, elem);
  }
  return Error::success();
}

} // namespace

const char *stepKindName(PlanStep::Kind k) {
  static const char *const kNames[] = {"kernel", "extern", "fallback"};
  return kNames[static_cast<size_t>(k)];
}

Expected<std::unique_ptr<Executor>> Executor::create(const Module &module, const LoopGraph &graph,
                                                     const KernelLibrary &kernels,
                                                     const RuntimeOptions &options) {
  auto exec = std::make_unique<ExecutorImpl>(module, graph, options);
  GC_RETURN_IF_ERROR(exec->init(kernels));
  return std::unique_ptr<Executor>(std::move(exec));
}

} // namespace gc
