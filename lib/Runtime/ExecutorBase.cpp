//===- ExecutorBase.cpp - What the CPU and GPU executors share ------------===//
//
// Everything that depends only on the values of the size symbols (evaluated
// layouts, arena offsets, loop counts, library calls) is worked out once per
// binding of those symbols and kept in an Instance; a run then only places
// buffers and goes through the steps.
//
//===----------------------------------------------------------------------===//
#include "ExecutorBase.h"
#include "PluginStep.h"

#include "ExternCall.h"
#include "GraphCall.h"

#include <algorithm>
#include <limits>
#include <set>

namespace gc {

namespace {

using plan::BufferKind;
using Programs = flatbuffers::Vector<flatbuffers::Offset<plan::SizeProgram>>;

/// Distinct symbol bindings kept before the cache starts over.
constexpr size_t kMaxInstances = 64;

/// Evaluates each program of `list`.
Expected<std::vector<int64_t>> evaluateAll(const Programs *list,
                                           std::span<const int64_t> symbols) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < list->size(); ++i) {
    Expected<int64_t> v = evaluate(*list->Get(i), symbols);
    if (!v)
      return v.error();
    out.push_back(*v);
  }
  return out;
}

Expected<StridedLayout> evaluateLayout(const Programs *sizes, const Programs *strides,
                                       const plan::SizeProgram *offset,
                                       std::span<const int64_t> symbols) {
  Expected<std::vector<int64_t>> sz = evaluateAll(sizes, symbols);
  if (!sz)
    return sz.error();
  Expected<std::vector<int64_t>> st = evaluateAll(strides, symbols);
  if (!st)
    return st.error();
  StridedLayout l{sz.take(), st.take(), 0};
  if (offset) {
    Expected<int64_t> off = evaluate(*offset, symbols);
    if (!off)
      return off.error();
    l.offset = *off;
  }
  for (size_t d = 0; d < l.sizes.size(); ++d)
    if (l.sizes[d] < 0 || l.strides[d] < 0)
      return makeError() << "negative size or stride in a layout";
  if (l.offset < 0)
    return makeError() << "negative storage offset " << l.offset;
  return l;
}

std::vector<std::vector<BindingSize>>
decodeSizes(const flatbuffers::Vector<flatbuffers::Offset<plan::Binding>> &bindings) {
  std::vector<std::vector<BindingSize>> out;
  for (const plan::Binding *b : bindings) {
    std::vector<BindingSize> &sizes = out.emplace_back();
    for (const plan::SizeProgram *p : *b->view()->sizes())
      sizes.emplace_back(*p);
  }
  return out;
}

} // namespace

StridedLayout callerLayout(const TensorRef &t) {
  StridedLayout l{t.sizes, t.strides, 0};
  if (l.strides.empty() && !l.sizes.empty()) {
    l.strides.assign(l.sizes.size(), 1);
    for (size_t d = l.sizes.size() - 1; d > 0; --d)
      l.strides[d - 1] = l.strides[d] * std::max<int64_t>(l.sizes[d], 1);
  }
  return l;
}

BindingSize::BindingSize(const plan::SizeProgram &p) {
  if (std::optional<uint32_t> slot = boundSymbol(p)) {
    binds = static_cast<int32_t>(*slot);
  } else if (p.code()->size() == 1 && p.code()->Get(0)->op() == plan::SizeOp::Const) {
    constant = p.code()->Get(0)->arg();
  } else {
    program = &p;
  }
}

Expected<int64_t> BindingSize::value(std::span<const int64_t> symbols) const {
  if (binds >= 0)
    return symbols[binds];
  return program ? evaluate(*program, symbols) : Expected<int64_t>(constant);
}

StepInstance::StepInstance() = default;
StepInstance::StepInstance(StepInstance &&) noexcept = default;
StepInstance::~StepInstance() = default;

ExecutorBase::ExecutorBase(std::shared_ptr<const RuntimePlan> plan, const plan::Graph &graph,
                           const RuntimeOptions &options)
    : planFile_(std::move(plan)), plan_(planFile_->root()), graph_(graph),
      numBuffers_(graph.buffers()->size()), options_(options), profiling_(options.profile) {}

ExecutorBase::~ExecutorBase() = default;

std::string ExecutorBase::stepLabel(size_t s) const {
  if (const plan::KernelStep *k = step(s).detail_as_KernelStep())
    return "kernel '" + k->entry()->str() + "'" + stepSourceSuffix(step(s));
  return "node '" + step(s).name()->str() + "'" + stepSourceSuffix(step(s));
}

Error ExecutorBase::checkSymbolsBound() {
  size_t numSymbols = plan_.symbols()->size();
  std::vector<bool> bound(numSymbols, false);
  for (const plan::Binding *b : *graph_.inputs())
    for (const plan::SizeProgram *p : *b->view()->sizes())
      if (std::optional<uint32_t> slot = boundSymbol(*p))
        bound[*slot] = true;
  // A step may read only the symbols the inputs and the steps before it
  // bound; buffers, bindings and kernel symbols any the run binds.
  std::optional<int64_t> unbound;
  std::string where;
  auto visit = [&](const plan::SizeProgram *p, const std::string &what) {
    if (!p)
      return;
    for (const plan::SizeInsn *insn : *p->code())
      if (insn->op() == plan::SizeOp::Symbol && !bound[insn->arg()] && !unbound) {
        unbound = insn->arg();
        where = what;
      }
  };
  auto visitAll = [&](const Programs *list, const std::string &what) {
    for (const plan::SizeProgram *p : *list)
      visit(p, what);
  };
  auto visitView = [&](const plan::View *v, const std::string &what) {
    visitAll(v->sizes(), what);
    visitAll(v->strides(), what);
    visit(v->offset(), what);
  };
  stepBinds_.assign(graph_.steps()->size(), {});
  for (size_t s = 0; s < graph_.steps()->size(); ++s) {
    const plan::Step *st = &step(s);
    std::string label = stepLabel(s);
    if (const plan::KernelStep *k = st->detail_as_KernelStep()) {
      visit(st->flops(), label);
      visit(st->bytes(), label);
      visit(k->parallel_range(), label);
      visit(k->work(), label);
      visit(k->grid(), label);
      continue;
    }
    const plan::OpStep &op = *st->detail_as_OpStep();
    for (const plan::View *v : *op.inputs())
      visitView(v, label);
    // An output size that is a symbol nothing bound yet is an unbacked
    // size: this step computes it, on the host.
    for (size_t j = 0; j < op.outputs()->size(); ++j) {
      const plan::View &v = *op.outputs()->Get(j);
      for (size_t d = 0; d < v.sizes()->size(); ++d) {
        std::optional<uint32_t> slot = boundSymbol(*v.sizes()->Get(d));
        if (!slot || *slot >= numSymbols || bound[*slot])
          continue;
        if (op.dnnl() || op.attention() || op.call() || op.plugin())
          return makeError() << label << ": output " << j << " is sized by "
                             << plan_.symbols()->Get(*slot)->name()->str()
                             << ", which no input binds, but only a fallback step computes "
                                "sizes; the plan is corrupt";
        if (plan_.symbols()->Get(*slot)->max() == INT64_MAX)
          return makeError() << label << " computes size "
                             << plan_.symbols()->Get(*slot)->name()->str()
                             << ", which has no upper bound to plan its buffers at";
        bound[*slot] = true;
        stepBinds_[s].push_back({j, d, *slot});
        unbacked_.push_back(*slot);
      }
    }
    for (const plan::View *v : *op.outputs())
      visitView(v, label);
    // Its work may count the sizes it computes (a profile reads it after).
    visit(st->flops(), label);
    visit(st->bytes(), label);
  }
  if (unbound)
    return makeError() << where << " reads size symbol "
                       << plan_.symbols()->Get(*unbound)->name()->str()
                       << " before any input or step binds it";
  for (const plan::Buffer *b : *graph_.buffers()) {
    visitAll(b->sizes(), "buffer '" + b->name()->str() + "'");
    visitAll(b->strides(), "buffer '" + b->name()->str() + "'");
  }
  for (const auto *list : {graph_.inputs(), graph_.outputs()})
    for (const plan::Binding *b : *list)
      visitView(b->view(), "binding '" + b->name()->str() + "'");
  for (uint32_t slot : *graph_.kernel_symbols())
    if (slot >= numSymbols || (!bound[slot] && !unbound))
      unbound = slot;
  if (unbound)
    return makeError() << "size symbol "
                       << (*unbound < static_cast<int64_t>(numSymbols)
                               ? plan_.symbols()->Get(*unbound)->name()->str()
                               : std::to_string(*unbound))
                       << " is not the size of any input";
  // The outputs whose layout an unbacked size decides.
  std::vector<bool> isUnbacked(numSymbols, false);
  for (uint32_t slot : unbacked_)
    isUnbacked[slot] = true;
  auto readsUnbacked = [&](const plan::SizeProgram *p) {
    if (p)
      for (const plan::SizeInsn *insn : *p->code())
        if (insn->op() == plan::SizeOp::Symbol && isUnbacked[insn->arg()])
          return true;
    return false;
  };
  for (const plan::Binding *b : *graph_.outputs()) {
    const plan::View &v = *b->view();
    bool reads = readsUnbacked(v.offset());
    for (const auto *list : {v.sizes(), v.strides()})
      for (const plan::SizeProgram *p : *list)
        reads |= readsUnbacked(p);
    dataOutputs_.push_back(reads);
  }
  return Error::success();
}

Error ExecutorBase::prepareFallback(size_t s) {
  if (fallbacks_[s])
    return Error::success();
  const plan::OpStep &op = *step(s).detail_as_OpStep();
  std::string what =
      "node '" + step(s).name()->str() + "' (" + op.op()->str() + ")" + stepSourceSuffix(step(s));
  if (!op.fallback() || op.fallback()->size() == 0)
    return makeError() << what << ": no library can run it and the plan has no fallback for it";
  if (!options_.fallback)
    return makeError() << what << ": no library can run it and this program has no fallback "
                       << "component";
  Expected<const FallbackComponent *> component = options_.fallback();
  if (!component)
    return component.error().withContext(what);
  std::vector<DType> inputs, outputs;
  for (const auto &[views, out] : {std::pair{op.inputs(), &inputs}, {op.outputs(), &outputs}})
    for (const plan::View *v : *views)
      out->push_back(dtypeOf(v->dtype()));
  Expected<std::unique_ptr<FallbackCall>> call = (*component)->prepare(
      std::span(op.fallback()->data(), op.fallback()->size()), inputs, outputs);
  if (!call)
    return call.error();
  fallbacks_[s] = call.take();
  return Error::success();
}

Error ExecutorBase::init() {
  GC_RETURN_IF_ERROR(checkSymbolsBound());
  Expected<std::vector<const PluginOp *>> plugins =
      resolvePluginSteps(plan_, graph_, runsOnGpu());
  if (!plugins)
    return plugins.error();
  plugins_ = plugins.take();
  inputSizes_ = decodeSizes(*graph_.inputs());
  outputSizes_ = decodeSizes(*graph_.outputs());
  size_t numSteps = graph_.steps()->size();
  fallbacks_.resize(numSteps);
  calls_.resize(numSteps);
  arenaProblem_.intermediate.resize(numBuffers_);
  for (size_t b = 0; b < numBuffers_; ++b)
    arenaProblem_.intermediate[b] = buffer(b).kind() == BufferKind::Intermediate;
  for (const plan::Binding *b : *graph_.outputs())
    arenaProblem_.outputs.push_back(b->view()->buffer());
  // Steps that can only run on the fallback component load it now, so
  // that a package needing it fails here, naming every op it needs.
  std::vector<size_t> needFallback;
  for (size_t s = 0; s < numSteps; ++s) {
    const plan::Step &st = step(s);
    arenaProblem_.uses.emplace_back(st.uses()->begin(), st.uses()->end());
    auto &inplace = arenaProblem_.inplace.emplace_back();
    for (const plan::InplacePair *p : *st.inplace())
      inplace.emplace_back(p->output(), p->input());
    if (const plan::KernelStep *k = st.detail_as_KernelStep()) {
      GC_RETURN_IF_ERROR(resolveKernel(s, *k));
      continue;
    }
    if (st.detail_as_OpStep()->call()) {
      Expected<std::unique_ptr<GraphCall>> call =
          GraphCall::create(planFile_, *st.detail_as_OpStep(), options_);
      if (!call)
        return call.error().withContext("node '" + st.name()->str() + "'");
      calls_[s] = call.take();
      continue;
    }
    if (!plugins_[s] && !st.detail_as_OpStep()->dnnl() && !st.detail_as_OpStep()->attention())
      needFallback.push_back(s);
  }
  if (!needFallback.empty()) {
    // Asked for once up front, so that a missing component is one error
    // naming every op that needs it.
    Expected<const FallbackComponent *> c =
        options_.fallback ? options_.fallback()
                          : Expected<const FallbackComponent *>(
                                makeError() << "this program has no fallback component");
    if (!c) {
      std::set<std::string> ops;
      for (size_t s : needFallback)
        ops.insert(step(s).detail_as_OpStep()->op()->str());
      std::string list;
      for (const std::string &op : ops)
        list += (list.empty() ? "" : ", ") + op;
      return makeError() << needFallback.size()
                         << (needFallback.size() == 1 ? " step runs" : " steps run")
                         << " on the fallback component (" << list
                         << "): " << c.error().message();
    }
  }
  for (size_t s : needFallback)
    GC_RETURN_IF_ERROR(prepareFallback(s));
  staticArena_ = staticArena();
  return Error::success();
}

std::optional<ArenaLayout> ExecutorBase::staticArena() const {
  std::vector<int64_t> bytes(numBuffers_, 0);
  for (size_t b = 0; b < numBuffers_; ++b) {
    const plan::Buffer &buf = buffer(b);
    if (buf.kind() != BufferKind::Intermediate)
      continue;
    // A layout that reads a symbol is not static.
    std::vector<int64_t> none;
    for (const auto *list : {buf.sizes(), buf.strides()})
      for (const plan::SizeProgram *p : *list)
        for (const plan::SizeInsn *insn : *p->code())
          if (insn->op() == plan::SizeOp::Symbol)
            return std::nullopt;
    Expected<StridedLayout> l = evaluateLayout(buf.sizes(), buf.strides(), nullptr, none);
    if (!l)
      return std::nullopt;
    bytes[b] = l->extent() * dtypeSize(dtypeOf(buf.dtype()));
  }
  // The plan's placements are taken when they hold every buffer the steps
  // use; a plan without them (or with too small ones) gets ours.
  ArenaLayout ours = planArena(arenaProblem_, [&](uint32_t b) { return bytes[b]; });
  std::vector<const plan::Placement *> given(numBuffers_, nullptr);
  for (const plan::Placement *p : *graph_.placements())
    given[p->buffer()] = p;
  bool planCovers = graph_.placements()->size() > 0;
  for (size_t b = 0; b < given.size() && planCovers; ++b) {
    if (ours.offsets[b] < 0)
      continue;
    const plan::Placement *p = given[b];
    // Compared without a sum, which a corrupt plan could overflow.
    planCovers = p && p->offset() >= 0 && p->offset() % kBufferAlignment == 0 &&
                 p->bytes() >= bytes[b] && p->bytes() <= graph_.arena_bytes() &&
                 p->offset() <= graph_.arena_bytes() - p->bytes();
  }
  if (planCovers) {
    for (size_t b = 0; b < given.size(); ++b)
      ours.offsets[b] = ours.offsets[b] < 0 ? -1 : given[b]->offset();
    ours.arenaBytes = graph_.arena_bytes();
  }
  return ours;
}

std::string ExecutorBase::inputName(size_t i) const {
  if (input(i).target()->size())
    return input(i).target()->str();
  return input(i).name()->str();
}

Expected<std::vector<int64_t>> ExecutorBase::bindInputs(std::span<const TensorRef> inputs) const {
  size_t numInputs = graph_.inputs()->size();
  if (inputs.size() != numInputs)
    return makeError() << "expected " << numInputs << " inputs, got " << inputs.size();
  size_t numSymbols = plan_.symbols()->size();
  std::vector<int64_t> values(numSymbols, 0);
  std::vector<bool> bound(numSymbols, false);
  auto mismatch = [&](size_t i) -> Error {
    const plan::View &want = *input(i).view();
    return makeError() << "input '" << inputName(i) << "': expected "
                       << typeText(want.dtype(), want.sizes(), plan_) << ", got "
                       << typeText(inputs[i].dtype, inputs[i].sizes);
  };
  for (size_t i = 0; i < inputs.size(); ++i) {
    const plan::View &want = *input(i).view();
    const TensorRef &got = inputs[i];
    size_t rank = want.sizes()->size();
    if (got.dtype != dtypeOf(want.dtype()) || got.sizes.size() != rank)
      return mismatch(i);
    if (!got.strides.empty() && got.strides.size() != got.sizes.size())
      return makeError() << "input '" << inputName(i) << "': " << got.strides.size()
                         << " strides for " << got.sizes.size() << " dimensions";
    if (!got.data && callerLayout(got).numel() != 0)
      return makeError() << "input '" << inputName(i) << "': no data";
    for (size_t d = 0; d < rank; ++d) {
      int32_t binds = inputSizes_[i][d].binds;
      if (binds < 0)
        continue;
      auto slot = static_cast<size_t>(binds);
      const plan::Symbol &sym = *plan_.symbols()->Get(slot);
      int64_t size = got.sizes[d];
      if (bound[slot] && values[slot] != size)
        return makeError() << "input '" << inputName(i) << "': dimension " << d << " is " << size
                           << ", but " << sym.name()->str() << " is already " << values[slot];
      bound[slot] = true;
      values[slot] = size;
      if (size < sym.min() || size > sym.max())
        return makeError() << "input '" << inputName(i) << "': dimension " << d << " is " << size
                           << ", outside the range [" << sym.min() << ", "
                           << (sym.max() == INT64_MAX ? std::string("inf")
                                                      : std::to_string(sym.max()))
                           << "] of " << sym.name()->str();
    }
  }
  // The guards, now that every symbol is bound.
  for (size_t i = 0; i < inputs.size(); ++i)
    for (size_t d = 0; d < inputs[i].sizes.size(); ++d) {
      Expected<int64_t> want = inputSizes_[i][d].value(values);
      if (!want || *want != inputs[i].sizes[d])
        return mismatch(i);
    }
  // Until a step computes them, unbacked sizes stand at their upper bounds.
  for (uint32_t slot : unbacked_)
    values[slot] = plan_.symbols()->Get(slot)->max();
  return values;
}

Expected<std::unique_ptr<Instance>> ExecutorBase::makeInstance(const std::vector<int64_t> &values) {
  auto inst = std::make_unique<Instance>();
  inst->serial = ++instancesMade_;
  inst->values = values;
  for (uint32_t slot : *graph_.kernel_symbols())
    inst->symbols.push_back(values[slot]);
  // Memory is planned with the unbacked sizes at their upper bounds, so
  // that every count a step may find places buffers alike.
  std::vector<int64_t> planning = values;
  for (uint32_t slot : unbacked_)
    planning[slot] = plan_.symbols()->Get(slot)->max();
  for (const plan::Buffer *buf : *graph_.buffers()) {
    std::string what = "buffer '" + buf->name()->str() + "'";
    Expected<StridedLayout> room = evaluateLayout(buf->sizes(), buf->strides(), nullptr, planning);
    if (!room)
      return room.error().withContext(what);
    Expected<StridedLayout> l = evaluateLayout(buf->sizes(), buf->strides(), nullptr, values);
    if (!l)
      return l.error().withContext(what);
    if (l->extent() > room->extent())
      return makeError() << what << " needs more room for the sizes a step computed than for "
                            "their upper bounds";
    inst->bufferBytes.push_back(room->extent() * dtypeSize(dtypeOf(buf->dtype())));
    inst->buffers.push_back(l.take());
  }
  if (staticArena_) {
    inst->offsets = staticArena_->offsets;
    inst->arenaBytes = staticArena_->arenaBytes;
  } else {
    ArenaLayout layout =
        planArena(arenaProblem_, [&](uint32_t b) { return inst->bufferBytes[b]; });
    inst->offsets = std::move(layout.offsets);
    inst->arenaBytes = layout.arenaBytes;
  }
  // A view reaching past its buffer would read or write memory nobody
  // planned for it; a corrupt file must not get that far.
  auto viewOf = [&](const plan::View &v, const std::string &what) -> Expected<StridedLayout> {
    Expected<StridedLayout> l = evaluateLayout(v.sizes(), v.strides(), v.offset(), values);
    if (!l)
      return l.error().withContext(what);
    if (l->extent() > inst->buffers[v.buffer()].extent())
      return makeError() << what << ": its view " << typeText(dtypeOf(v.dtype()), l->sizes)
                         << " reaches past buffer '" << buffer(v.buffer()).name()->str() << "'";
    return l;
  };
  for (const auto &[bindings, out] : {std::pair{graph_.inputs(), &inst->inputViews},
                                      std::pair{graph_.outputs(), &inst->outputViews}})
    for (const plan::Binding *b : *bindings) {
      Expected<StridedLayout> l = viewOf(*b->view(), "binding '" + b->name()->str() + "'");
      if (!l)
        return l.error();
      out->push_back(l.take());
    }

  for (size_t s = 0; s < graph_.steps()->size(); ++s) {
    const plan::Step &st = step(s);
    StepInstance &si = inst->steps.emplace_back();
    if (profiling_)
      for (const auto &[program, count] :
           {std::pair{st.flops(), &si.flops}, std::pair{st.bytes(), &si.bytes}})
        if (program) {
          Expected<int64_t> v = evaluate(*program, values);
          if (!v)
            return v.error().withContext(stepLabel(s));
          *count = *v;
        }
    if (const plan::KernelStep *k = st.detail_as_KernelStep()) {
      GC_RETURN_IF_ERROR(prepareKernel(*k, values, si).withContext(stepLabel(s)));
      continue;
    }
    const plan::OpStep &op = *st.detail_as_OpStep();
    std::string what = stepLabel(s);
    for (const auto &[views, out] : {std::pair{op.inputs(), &si.inputs},
                                     std::pair{op.outputs(), &si.outputs}})
      for (const plan::View *v : *views) {
        Expected<StridedLayout> l = viewOf(*v, what);
        if (!l)
          return l.error();
        out->push_back(l.take());
      }
    if (plugins_[s]) {
      si.call = makePluginCall(*plugins_[s], op, si.inputs, si.outputs);
      continue;
    }
    if (!op.dnnl() && !op.attention())
      continue;
    GC_RETURN_IF_ERROR(prepareExtern(op, si).withContext(what));
    if (!si.call)
      GC_RETURN_IF_ERROR(prepareFallback(s));
  }
  GC_RETURN_IF_ERROR(finishInstance(*inst));
  return inst;
}

Expected<Instance *> ExecutorBase::instanceFor(const std::vector<int64_t> &values) {
  auto it = instances_.find(values);
  if (it != instances_.end())
    return it->second.get();
  if (instances_.size() >= kMaxInstances)
    instances_.clear();
  Expected<std::unique_ptr<Instance>> inst = makeInstance(values);
  if (!inst)
    return inst.error();
  return instances_.emplace(values, inst.take()).first->second.get();
}

Expected<std::vector<std::vector<int64_t>>>
ExecutorBase::outputSizes(std::span<const TensorRef> inputs) {
  Expected<std::vector<int64_t>> values = bindInputs(inputs);
  if (!values)
    return values.error();
  std::vector<std::vector<int64_t>> out;
  for (size_t j = 0; j < outputSizes_.size(); ++j) {
    std::vector<int64_t> &sizes = out.emplace_back();
    for (const BindingSize &size : outputSizes_[j]) {
      Expected<int64_t> v = size.value(*values);
      if (!v)
        return v.error().withContext("output '" + output(j).name()->str() + "'");
      sizes.push_back(*v);
    }
  }
  return out;
}

Expected<std::vector<std::vector<int64_t>>>
ExecutorBase::outputStrides(std::span<const TensorRef> inputs) {
  Expected<std::vector<int64_t>> values = bindInputs(inputs);
  if (!values)
    return values.error();
  Expected<Instance *> inst = instanceFor(*values);
  if (!inst)
    return inst.error();
  std::vector<std::vector<int64_t>> out;
  for (const StridedLayout &view : (*inst)->outputViews)
    out.push_back(view.strides);
  return out;
}

Error ExecutorBase::setStream(std::optional<void *> stream) {
  if (!stream)
    return Error::success();
  return makeError() << graphLabel(graph_) << " runs on the CPU, which has no CUDA stream";
}

Expected<std::vector<StridedLayout>>
ExecutorBase::checkOutputs(const Instance &inst, std::span<const TensorRef> outputs) const {
  size_t numOutputs = graph_.outputs()->size();
  if (outputs.size() != numOutputs)
    return makeError() << "expected " << numOutputs << " outputs, got " << outputs.size();
  std::vector<StridedLayout> layouts;
  for (size_t j = 0; j < outputs.size(); ++j) {
    const plan::Binding &b = output(j);
    DType dtype = dtypeOf(b.view()->dtype());
    const TensorRef &got = outputs[j];
    if (got.dtype != dtype || got.sizes != inst.outputViews[j].sizes)
      return makeError() << "output '" << b.name()->str() << "': expected "
                         << typeText(dtype, inst.outputViews[j].sizes) << ", got "
                         << typeText(got.dtype, got.sizes);
    if (!got.strides.empty() && got.strides.size() != got.sizes.size())
      return makeError() << "output '" << b.name()->str() << "': " << got.strides.size()
                         << " strides for " << got.sizes.size() << " dimensions";
    layouts.push_back(callerLayout(got));
    if (!got.data && layouts.back().numel() != 0)
      return makeError() << "output '" << b.name()->str() << "': no data";
  }
  return layouts;
}

Expected<ExecutorBase::RunStart> ExecutorBase::startRun(std::span<const TensorRef> inputs,
                                                        std::span<const TensorRef> outputs) {
  Expected<std::vector<int64_t>> values = bindInputs(inputs);
  if (!values)
    return values.error();
  Expected<Instance *> inst = instanceFor(*values);
  if (!inst)
    return inst.error();
  Expected<std::vector<StridedLayout>> layouts = checkOutputs(**inst, outputs);
  if (!layouts)
    return layouts.error();
  if (profiling_ && profile_.empty())
    for (size_t s = 0; s < graph_.steps()->size(); ++s) {
      StepProfile &p = profile_.emplace_back(StepProfile{step(s).name()->str(), step(s).kind()});
      p.modulePath = stepModulePath(step(s));
    }
  current_ = *inst;
  return RunStart{*inst, layouts.take()};
}

Error ExecutorBase::refuseDeviceTensors(std::span<const TensorRef> inputs,
                                       std::span<const TensorRef> outputs) const {
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].onDevice)
      return makeError() << "input '" << inputName(i) << "' is in GPU memory, but "
                         << graphLabel(graph_) << " runs on the CPU";
  for (size_t j = 0; j < outputs.size(); ++j)
    if (outputs[j].onDevice)
      return makeError() << "output '" << output(j).name()->str() << "' is in GPU memory, but "
                         << graphLabel(graph_) << " runs on the CPU";
  return Error::success();
}

Expected<TensorRef> ExecutorBase::allocatePersistent(DType dtype,
                                                    const std::vector<int64_t> &sizes) {
  TensorRef t{nullptr, dtype, sizes, {}};
  size_t bytes = static_cast<size_t>(callerLayout(t).numel()) * dtypeSize(dtype);
  persistent_.push_back(std::make_unique<HostBuffer>());
  t.data = persistent_.back()->reserve(std::max<size_t>(bytes, 1));
  return t;
}

Error ExecutorBase::copy(const TensorRef &dst, const TensorRef &src, const std::string &what) {
  if (dst.onDevice || src.onDevice)
    return makeError() << what << " is in GPU memory, but " << graphLabel(graph_)
                       << " runs on the CPU";
  copyStrided(static_cast<char *>(dst.data), callerLayout(dst).strides,
              static_cast<const char *>(src.data), callerLayout(src).strides, src.sizes,
              dtypeSize(src.dtype));
  return Error::success();
}

bool ExecutorBase::runsOnHost(size_t s, const StepInstance &si) const {
  return (calls_[s] || fallbacks_[s]) && !si.call;
}

Error ExecutorBase::runOnHost(size_t s, StepInstance &si, char *const *buffers,
                              std::vector<int64_t> &values) {
  if (calls_[s])
    return calls_[s]->run(buffers, si.inputs, si.outputs).withContext(stepLabel(s));
  // The fallback component takes each view's buffer base, inputs first.
  const plan::OpStep &op = *step(s).detail_as_OpStep();
  std::vector<char *> bases;
  for (const auto *views : {op.inputs(), op.outputs()})
    for (const plan::View *v : *views)
      bases.push_back(buffers[v->buffer()]);
  if (!bindsSizes(s))
    return fallbacks_[s]->run(bases.data(), si.inputs, si.outputs);
  // The results' sizes bind the step's unbacked symbols, within their
  // ranges (the checks torch.export recorded); its output views are then
  // laid out for them, inside buffers planned at the upper bounds.
  auto place = [&](const std::vector<std::vector<int64_t>> &sizes)
      -> Expected<std::vector<StridedLayout>> {
    for (const SizeBinding &b : stepBinds_[s]) {
      const plan::Symbol &sym = *plan_.symbols()->Get(b.slot);
      if (b.output >= sizes.size() || b.dim >= sizes[b.output].size())
        return makeError() << stepLabel(s) << ": its kernel gave no size for output "
                           << b.output;
      int64_t size = sizes[b.output][b.dim];
      if (size < sym.min() || size > sym.max())
        return makeError() << stepLabel(s) << ": result " << b.output << ": dimension "
                           << b.dim << " is " << size << ", outside the range [" << sym.min()
                           << ", " << sym.max() << "] torch.export recorded for "
                           << sym.name()->str();
      values[b.slot] = size;
    }
    std::vector<StridedLayout> out;
    for (const plan::View *v : *op.outputs()) {
      Expected<StridedLayout> l = evaluateLayout(v->sizes(), v->strides(), v->offset(), values);
      if (!l)
        return l.error().withContext(stepLabel(s));
      if (l->extent() * static_cast<int64_t>(dtypeSize(dtypeOf(v->dtype()))) >
          current_->bufferBytes[v->buffer()])
        return makeError() << stepLabel(s) << ": its view "
                           << typeText(dtypeOf(v->dtype()), l->sizes) << " reaches past buffer '"
                           << buffer(v->buffer()).name()->str() << "'";
      out.push_back(l.take());
    }
    return out;
  };
  return fallbacks_[s]->runSized(bases.data(), si.inputs, place);
}

Expected<Instance *> ExecutorBase::instanceAfter(const std::vector<int64_t> &values) {
  Expected<Instance *> inst = instanceFor(values);
  if (inst)
    current_ = *inst;
  return inst;
}

void ExecutorBase::finishRun(const Instance &inst) {
  lastSizes_.clear();
  for (const StridedLayout &view : inst.outputViews)
    lastSizes_.push_back(view.sizes);
}

void ExecutorBase::leaveOutFirstRun(size_t s) {
  StepProfile &p = profile_[s];
  if (p.runs != 1 || p.firstSeconds > 0)
    return;
  double first = p.seconds;
  std::string name = std::move(p.name), modulePath = std::move(p.modulePath);
  p = StepProfile{std::move(name), p.kind};
  p.modulePath = std::move(modulePath);
  // A step too quick for the clock still leaves its first run out.
  p.firstSeconds = std::max(first, std::numeric_limits<double>::min());
}

void ExecutorBase::recordStep(size_t s, double seconds) {
  leaveOutFirstRun(s);
  StepProfile &p = profile_[s];
  p.minSeconds = p.runs ? std::min(p.minSeconds, seconds) : seconds;
  p.seconds += seconds;
  ++p.runs;
  p.flops += static_cast<double>(current_->steps[s].flops);
  p.bytes += static_cast<double>(current_->steps[s].bytes);
}

void ExecutorBase::recordReorders(size_t s, int64_t count, double seconds) {
  leaveOutFirstRun(s);
  profile_[s].reorders += count;
  profile_[s].reorderSeconds += seconds;
}

} // namespace gc
