//===- GraphLowerer.cpp - One core graph to loop IR -----------------------===//
//
// The values, views and buffers of a graph's lowering, when values are
// realized, and the walk over the graph's nodes; each op's lowering is a
// row of its family (Families/*.cpp).
//
//===----------------------------------------------------------------------===//
#include "GraphLowerer.h"

#include "ActivationLayout.h"

#include "gc/IR/ArgReader.h"
#include "gc/IR/IndexSimplify.h"
#include "gc/IR/OpSchema.h"
#include "gc/IR/PluginRows.h"
#include "gc/Ops/ShapeInference.h"

#include <algorithm>
#include <set>

namespace gc::lower {

// Body building blocks ---------------------------------------------------------

uint32_t emit(BodyBuilder &b, const Lowered &v, const Exprs &idx) {
  if (!v.view)
    return v.loader(b, idx);
  SymContext &sx = b.syms();
  const SymExpr *e = v.view->offset;
  for (size_t d = 0; d < idx.size(); ++d)
    e = sx.add(e, sx.mul(idx[d], v.view->strides[d]));
  return b.load(v.view->buffer, v.dtype, e);
}

uint32_t emitBroadcast(BodyBuilder &b, const Lowered &v, const Exprs &outIdx) {
  size_t lead = outIdx.size() - v.sizes.size();
  Exprs idx;
  for (size_t d = 0; d < v.sizes.size(); ++d) {
    bool one = v.sizes[d]->isConst() && v.sizes[d]->constant() == 1;
    idx.push_back(one ? b.syms().constant(0) : outIdx[lead + d]);
  }
  return emit(b, v, idx);
}

std::string loopVar(char prefix, size_t i) { return std::string(1, prefix) + std::to_string(i); }

Exprs loopVars(SymContext &sx, char prefix, size_t n) {
  Exprs out;
  for (size_t i = 0; i < n; ++i)
    out.push_back(sx.symbol(loopVar(prefix, i)));
  return out;
}

const SymExpr *dot(SymContext &sx, const Exprs &idx, const Exprs &strides, const SymExpr *base) {
  const SymExpr *e = base;
  for (size_t d = 0; d < idx.size(); ++d)
    e = sx.add(e, sx.mul(idx[d], strides[d]));
  return e;
}

Exprs denseStrides(SymContext &sx, const TensorType &t) {
  Exprs contiguous = contiguousStrides(sx, t.sizes);
  std::vector<size_t> dims;
  for (size_t d = 0; d < t.rank(); ++d) {
    if (!t.sizes[d]->isConst() || !t.strides[d]->isConst())
      return contiguous;
    if (t.sizes[d]->constant() != 1)
      dims.push_back(d);
  }
  std::stable_sort(dims.begin(), dims.end(), [&](size_t a, size_t b) {
    return t.strides[a]->constant() < t.strides[b]->constant();
  });
  int64_t expected = 1;
  for (size_t d : dims) {
    if (t.strides[d]->constant() != expected)
      return contiguous;
    expected *= t.sizes[d]->constant();
  }
  return t.strides;
}

std::optional<Number> numberArg(const NamedArg *a) {
  if (!a)
    return std::nullopt;
  const Arg &v = a->value;
  switch (v.kind) {
  case ArgKind::Bool:
    return Number{static_cast<double>(v.ints[0]), DType::Bool};
  case ArgKind::Int:
    return Number{static_cast<double>(v.ints[0]), DType::Int64};
  case ArgKind::SymInt:
    if (!v.values.empty() && v.values[0])
      return std::nullopt;
    return Number{static_cast<double>(v.ints[0]), DType::Int64};
  case ArgKind::Float:
    return Number{v.floats[0], DType::Float64};
  default:
    return std::nullopt;
  }
}

std::vector<LoweredPtr> tensorsOf(std::initializer_list<const Operand *> operands) {
  std::vector<LoweredPtr> out;
  for (const Operand *o : operands)
    if (o && o->tensor)
      out.push_back(o->tensor);
  return out;
}

uint32_t emitOperand(BodyBuilder &b, const Operand &o, const Exprs &idx, DType dtype) {
  if (o.tensor)
    return b.cast(emitBroadcast(b, *o.tensor, idx), dtype);
  if (o.symbolic)
    return b.cast(b.index(o.symbolic), dtype);
  return b.cast(b.constant(o.number.dtype, o.number.value), dtype);
}

size_t wrap(int64_t d, size_t rank) {
  int64_t r = static_cast<int64_t>(std::max<size_t>(rank, 1));
  int64_t w = d < 0 ? d + r : d;
  if (w < 0 || w >= r)
    throw LowerError("dim " + std::to_string(d) + " is out of range");
  return static_cast<size_t>(w);
}

namespace {

/// A value several consumers read is recomputed in each of them while its
/// body costs at most this much (softmax's exp(x - max) stays inlined in
/// both the sum and the division), and is realized beyond that: a short body
/// is cheaper to repeat than a round trip through memory, as Inductor's
/// realize-on-reuse threshold also judges.
constexpr unsigned kReuseInlineCost = 4;

const LoweringRegistry &lowerings() {
  static const LoweringRegistry registry = [] {
    LoweringRegistry r;
    registerPointwiseLowerings(r);
    registerReductionLowerings(r);
    registerViewLowerings(r);
    registerIndexingLowerings(r);
    registerPoolingLowerings(r);
    registerCallLowerings(r);
    return r;
  }();
  return registry;
}

/// True if `op` lowers to a strided view of its input: a read of its result
/// is a read of the input. clone is one of them, though no view in torch:
/// its copy is made only where the value is realized.
bool lowersToView(OpId op) {
  const OpLowering *l = lowerings().find(op);
  return l && l->view;
}

/// gc-lower makes code for the CPU and for CUDA GPUs (gc-codegen picks
/// which): a tensor on any other device (meta) is refused, naming the first
/// input or node that has one.
Error requireCompilableDevices(const Module &module) {
  auto compilable = [](const Value *v) {
    return !v->type().isTensor() || v->type().tensor.device.kind == DeviceKind::CPU ||
           v->type().tensor.device.kind == DeviceKind::CUDA;
  };
  auto refuse = [](const Graph &g, const std::string &what, const Value *v) -> Error {
    return makeError() << "graph '" << g.name() << "': " << what << " is on "
                       << deviceName(v->type().tensor.device)
                       << "; gc compiles for the CPU and for CUDA GPUs only";
  };
  for (const auto &g : module.graphs()) {
    for (const Value *v : g->inputs())
      if (!compilable(v))
        return refuse(*g, "input '" + v->name() + "'", v);
    for (const auto &n : g->nodes())
      for (const Value *v : n->results())
        if (!compilable(v))
          return refuse(*g, "node '" + v->name() + "' (" + opString(n->op()) + ")" + locSuffix(n->loc()), v);
  }
  return Error::success();
}

void collectSymbols(const SymExpr *e, std::set<std::string> &out) {
  if (e->isSymbol())
    out.insert(e->symbolName());
  for (const SymExpr *o : e->operands())
    collectSymbols(o, out);
}

/// A size no graph input binds is an unbacked symbol (u0, ...): the count
/// nonzero, unique or a boolean mask computes from the data. The call that
/// computes it runs on the host and binds it; every buffer it sizes is
/// planned at its upper bound, which must be known: gc-lower refuses an
/// unbounded one, naming the first node that makes it.
Error requireBoundedSizes(const Module &module) {
  for (const auto &g : module.graphs()) {
    std::set<std::string> bound;
    for (const Value *v : g->inputs())
      if (v->type().isTensor())
        for (const SymExpr *e : v->type().tensor.sizes)
          collectSymbols(e, bound);
    for (const auto &n : g->nodes())
      for (const Value *v : n->results()) {
        if (!v->type().isTensor())
          continue;
        std::set<std::string> used;
        for (const SymExpr *e : v->type().tensor.sizes)
          collectSymbols(e, used);
        for (const std::string &s : used) {
          if (bound.count(s))
            continue;
          std::optional<SymRange> r = module.syms().range(s);
          if (!r || r->max == SymRange::kUnbounded)
            return makeError() << "graph '" << g->name() << "': node '" << v->name() << "' ("
                               << opString(n->op()) << ")" << locSuffix(n->loc())
                               << ": data-dependent size " << s
                               << " (an unbacked symbol) has no upper bound, and compiled "
                                  "plans place its buffers at that bound; bound it in the "
                                  "model (torch._check("
                               << s << " <= N)) or run the core graph with gc-run";
          bound.insert(s);
        }
      }
  }
  return Error::success();
}

} // namespace

// Values, buffers and nodes -------------------------------------------------

std::vector<int64_t> GraphLowerer::ints(const Node &n, const char *name) const {
  try {
    return ArgReader(n.args()).ints(name);
  } catch (const ArgumentError &e) {
    throw LowerError(e.what());
  }
}

BodyBuilder GraphLowerer::builder(const Exprs &ranges, const Exprs &reductionRanges) const {
  VarRanges r = symRanges_;
  for (size_t i = 0; i < ranges.size(); ++i)
    r[loopVar('i', i)] = loopVarRange(ranges[i], symRanges_);
  for (size_t i = 0; i < reductionRanges.size(); ++i)
    r[loopVar('r', i)] = loopVarRange(reductionRanges[i], symRanges_);
  return BodyBuilder(sx_, std::move(r));
}

std::string GraphLowerer::uniqueName(std::set<std::string> &taken, const std::string &base) {
  std::string name = base;
  for (int k = 1; !taken.insert(name).second; ++k)
    name = base + "_" + std::to_string(k);
  return name;
}

uint32_t GraphLowerer::addBuffer(std::string name, BufferKind kind, DType dtype, Exprs sizes,
                                 Exprs strides, bool flexible) {
  name = uniqueName(bufferNames_, name);
  out_.buffers.push_back(
      Buffer{std::move(name), kind, dtype, std::move(sizes), std::move(strides), flexible});
  return static_cast<uint32_t>(out_.buffers.size() - 1);
}

BufferView GraphLowerer::bufferView(DType dtype, const StridedView &v) const {
  TensorType t;
  t.dtype = dtype;
  t.sizes = v.sizes;
  t.strides = v.strides;
  t.storageOffset = v.offset;
  return BufferView{v.buffer, std::move(t)};
}

LoweredPtr GraphLowerer::stridedLowered(DType dtype, StridedView view) const {
  auto l = std::make_shared<Lowered>();
  l->dtype = dtype;
  l->sizes = view.sizes;
  l->view = std::move(view);
  return l;
}

LoweredPtr GraphLowerer::pointwise(DType dtype, Exprs sizes, unsigned ownCost,
                                   const std::vector<LoweredPtr> &inputs, Loader loader) const {
  auto l = std::make_shared<Lowered>();
  l->dtype = dtype;
  l->sizes = std::move(sizes);
  l->cost = ownCost;
  for (const LoweredPtr &in : inputs)
    l->cost += in->cost;
  l->loader = std::move(loader);
  if (!inputs.empty() && inputs[0]->epilogueOf &&
      std::all_of(inputs.begin(), inputs.end(),
                  [&](const LoweredPtr &in) { return in->epilogueOf == inputs[0]->epilogueOf; }))
    l->epilogueOf = inputs[0]->epilogueOf;
  return l;
}

Operand GraphLowerer::operand(const Node &n, const char *name) const {
  const NamedArg *a = n.arg(name);
  if (a && a->value.kind == ArgKind::Tensor) {
    LoweredPtr t = value(a->value.values[0]);
    return Operand{t, {}, {t->dtype, t->sizes.empty() ? PromotionOperand::Rank::ZeroDim
                                                       : PromotionOperand::Rank::Tensor}};
  }
  if (a && a->value.kind == ArgKind::SymInt && a->value.values.at(0))
    return Operand{nullptr, {}, {DType::Int64, PromotionOperand::Rank::Scalar},
                   symIntOf(sx_, *a->value.values[0])};
  std::optional<Number> num = numberArg(a);
  if (!num)
    throw LowerError(std::string("argument '") + name + "' is neither a tensor nor a number");
  return Operand{nullptr, *num, {num->dtype, PromotionOperand::Rank::Scalar}};
}

LoweredPtr GraphLowerer::makeView(const LoweredPtr &base, Exprs sizes, IndexMap map) {
  auto l = std::make_shared<Lowered>();
  l->dtype = base->dtype;
  l->sizes = sizes;
  l->cost = base->cost;
  if (base->view) {
    BodyBuilder b = builder(sizes);
    Exprs vars = loopVars(sx_, 'i', sizes.size());
    const SymExpr *e =
        b.simplify(dot(sx_, map(sx_, vars), base->view->strides, base->view->offset));
    StridedView v{base->view->buffer, sizes, {}, nullptr};
    std::map<std::string, const SymExpr *> zero;
    for (size_t d = 0; d < sizes.size(); ++d) {
      const SymExpr *c = affineCoefficient(sx_, e, loopVar('i', d));
      if (!c)
        break;
      v.strides.push_back(c);
      zero[loopVar('i', d)] = sx_.constant(0);
    }
    if (v.strides.size() == sizes.size()) {
      v.offset = substitute(sx_, e, zero);
      l->view = std::move(v);
      l->cost = 1;
      return l;
    }
  }
  l->loader = [base, map](BodyBuilder &b, const Exprs &idx) {
    return emit(b, *base, map(b.syms(), idx));
  };
  return l;
}

void GraphLowerer::addNode(LoopNode node) {
  node.name = uniqueName(nodeNames_, node.name);
  if (auto it = originLocs_.find(node.origin); it != originLocs_.end())
    node.loc = it->second;
  out_.nodes.push_back(std::move(node));
}

void GraphLowerer::writePointwise(const std::string &name, const std::string &origin,
                                  const Lowered &l, uint32_t buffer) {
  LoopNode node;
  node.kind = LoopNode::Kind::Pointwise;
  node.name = name;
  node.origin = origin;
  node.ranges = l.sizes;
  BodyBuilder b = builder(l.sizes);
  Exprs vars = loopVars(sx_, 'i', l.sizes.size());
  uint32_t result = b.cast(emit(b, l, vars), out_.buffers[buffer].dtype);
  node.body = std::move(b).finish(result);
  node.output = buffer;
  node.storeIndex =
      builder(l.sizes).simplify(dot(sx_, vars, out_.buffers[buffer].strides, sx_.constant(0)));
  addNode(std::move(node));
}

void GraphLowerer::addScatter(const std::string &name, const std::string &origin,
                              uint32_t buffer, const Exprs &ranges, BodyBuilder b, uint32_t value,
                              std::vector<uint32_t> at, const Exprs &target,
                              StoreCombine combine) {
  LoopNode node;
  node.kind = LoopNode::Kind::Pointwise;
  node.name = name;
  node.origin = origin;
  node.ranges = ranges;
  uint32_t result = b.cast(value, out_.buffers[buffer].dtype);
  node.body = std::move(b).finish(result, &at);
  node.storeIndirect = std::move(at);
  node.combine = combine;
  node.output = buffer;
  node.storeIndex =
      builder(ranges).simplify(dot(sx_, target, out_.buffers[buffer].strides, sx_.constant(0)));
  addNode(std::move(node));
}

uint32_t GraphLowerer::resultBuffer(const Value *v, const TensorType &type, bool flexible) {
  auto owned = ownedOutput_.find(v);
  if (owned != ownedOutput_.end()) {
    Exprs strides = denseStrides(sx_, type);
    uint32_t buf = addBuffer(v->name(), BufferKind::Output, type.dtype, type.sizes, strides, false);
    TensorType bound = type;
    bound.strides = strides;
    bound.storageOffset = sx_.constant(0);
    outputBindings_[owned->second] = LoopBinding{v->name(), buf, std::move(bound)};
    ownedOutput_.erase(owned);
    return buf;
  }
  Exprs strides = flexible ? contiguousStrides(sx_, type.sizes) : denseStrides(sx_, type);
  if (channelsLast_.count(v) && type.rank() == 4) {
    strides = channelsLastStrides(sx_, type.sizes);
    ++report_.channelsLastBuffers;
  }
  return addBuffer(v->name(), BufferKind::Intermediate, type.dtype, type.sizes, strides, flexible);
}

std::optional<uint32_t> GraphLowerer::inPlaceBuffer(const Value *result, const Value *self) {
  auto owned = ownedOutput_.find(result);
  auto input = std::find(g_.inputs().begin(), g_.inputs().end(), self);
  if (owned == ownedOutput_.end() || input == g_.inputs().end() || uses(self) != 1)
    return std::nullopt;
  size_t i = static_cast<size_t>(input - g_.inputs().begin());
  const OutputSpec &out = g_.outputSpecs()[static_cast<size_t>(owned->second)];
  const InputSpec &in = g_.inputSpecs()[i];
  const LoopBinding &binding = out_.inputs[i];
  const TensorType &type = binding.type;
  const TensorType &rt = result->type().tensor;
  bool offsetZero = !type.storageOffset || (type.storageOffset->isConst() &&
                                            type.storageOffset->constant() == 0);
  if (out.kind != OutputKind::BufferMutation || in.kind != InputKind::Buffer ||
      in.target != out.target || type.dtype != rt.dtype || type.sizes != rt.sizes ||
      type.strides != denseStrides(sx_, type) || !offsetZero)
    return std::nullopt;
  outputBindings_[static_cast<size_t>(owned->second)] =
      LoopBinding{result->name(), binding.buffer, type};
  ownedOutput_.erase(owned);
  return binding.buffer;
}

StridedView GraphLowerer::realize(const Value *v) {
  LoweredPtr l = value(v);
  if (l->view)
    return *l->view;
  TensorType type = v->type().tensor;
  type.sizes = l->sizes;
  uint32_t buf = resultBuffer(v, type, true);
  writePointwise(v->name(), v->name(), *l, buf);
  StridedView view{buf, l->sizes, out_.buffers[buf].strides, sx_.constant(0)};
  vals_[v] = stridedLowered(l->dtype, view);
  return view;
}

void GraphLowerer::define(const Value *v, LoweredPtr l) {
  vals_[v] = l;
  if (l->view)
    return;
  unsigned uses = uses_.count(v) ? uses_.at(v) : 0;
  // Several readers of an extern's epilogue read it from memory: the extern
  // computes it as it stores (PostOps.h), where each reader would repeat it.
  if (ownedOutput_.count(v) || (uses > 1 && (l->cost > kReuseInlineCost || l->epilogueOf)) ||
      l->cost > options_.maxInlineOps)
    realize(v);
}

void GraphLowerer::addReduction(LoopNode node, BodyBuilder b, uint32_t value,
                                const Value *result) {
  const TensorType &rt = result->type().tensor;
  node.kind = LoopNode::Kind::Reduction;
  node.name = result->name();
  node.origin = result->name();
  node.ranges = rt.sizes;
  node.body = std::move(b).finish(value);
  node.output = resultBuffer(result, rt, true);
  const Exprs &strides = out_.buffers[node.output].strides;
  node.storeIndex = builder(rt.sizes).simplify(
      dot(sx_, loopVars(sx_, 'i', rt.rank()), strides, sx_.constant(0)));
  StridedView view{node.output, rt.sizes, strides, sx_.constant(0)};
  addNode(std::move(node));
  vals_[result] = stridedLowered(rt.dtype, view);
}

LoweredPtr GraphLowerer::scratchReduction(const std::string &name, const std::string &origin,
                                          ReduceKind kind, const Exprs &outer,
                                          const Exprs &inner, BodyBuilder b, uint32_t value) {
  LoopNode node;
  node.kind = LoopNode::Kind::Reduction;
  node.reduce = kind;
  node.name = name;
  node.origin = origin;
  node.ranges = outer;
  node.reductionRanges = inner;
  DType dtype = b.dtypeOf(value);
  node.body = std::move(b).finish(value);
  Exprs strides = contiguousStrides(sx_, outer);
  node.output = addBuffer(name, BufferKind::Intermediate,
                          kind == ReduceKind::ArgMax || kind == ReduceKind::ArgMin ? DType::Int64
                                                                                   : dtype,
                          outer, strides, true);
  node.storeIndex = builder(outer).simplify(
      dot(sx_, loopVars(sx_, 'i', outer.size()), strides, sx_.constant(0)));
  LoweredPtr l = stridedLowered(out_.buffers[node.output].dtype,
                                StridedView{node.output, outer, strides, sx_.constant(0)});
  addNode(std::move(node));
  return l;
}

unsigned GraphLowerer::uses(const Value *v) const {
  auto it = uses_.find(v);
  return it == uses_.end() ? 0 : it->second;
}

// Calls ----------------------------------------------------------------------

Error GraphLowerer::fallback(const Node &n, const std::string &why) {
  if (options_.noFallback)
    return makeError() << where(n) << ": no lowering for " << n.op()
                       << (why.empty() ? "" : " with " + why);
  report_.fallbacks.push_back("node '" + nodeName(n) + "'" + locSuffix(n.loc()) + ": " +
                              opString(n.op()));
  return callNode(n, LoopNode::Kind::Fallback);
}

Error GraphLowerer::callNode(const Node &n, LoopNode::Kind kind) {
  LoopNode node;
  node.kind = kind;
  node.name = nodeName(n);
  node.origin = nodeName(n);
  node.op = n.op();
  // A channels-last convolution reads a graph input (or another fixed
  // buffer) through one conversion into a channels-last buffer of its own.
  bool channelsLast = !n.results().empty() && channelsLast_.count(n.results()[0]);
  auto input = [&](const Value *v, const std::string &arg) -> int64_t {
    StridedView view = realize(v);
    if (channelsLast && arg == "input" && view.sizes.size() == 4 &&
        view.strides != channelsLastStrides(sx_, view.sizes)) {
      uint32_t buf = addBuffer(v->name() + "_channels_last", BufferKind::Intermediate,
                               value(v)->dtype, view.sizes,
                               channelsLastStrides(sx_, view.sizes), true);
      ++report_.channelsLastBuffers;
      writePointwise(out_.buffers[buf].name, v->name(), *value(v), buf);
      view = StridedView{buf, view.sizes, out_.buffers[buf].strides, sx_.constant(0)};
    }
    node.inputs.push_back(bufferView(value(v)->dtype, view));
    return static_cast<int64_t>(node.inputs.size() - 1);
  };
  for (const NamedArg &a : n.args()) {
    LoopArg arg{a.name, a.keywordOnly, a.value};
    switch (a.value.kind) {
    case ArgKind::Tensor:
    case ArgKind::Tensors:
    case ArgKind::OptionalTensors:
      arg.value.values.clear();
      arg.value.ints.clear();
      for (const Value *v : a.value.values)
        arg.value.ints.push_back(v ? input(v, a.name) : -1);
      break;
    case ArgKind::SymInt:
    case ArgKind::SymBool:
      if (a.value.values.size() == 1 && a.value.values[0]) {
        // Read at run time from a one-element tensor (a check on a count).
        const Value *v = a.value.values[0];
        GC_RETURN_IF_ERROR(lowerSizeValue(n, v));
        arg.value.kind = ArgKind::Tensor;
        arg.value.values.clear();
        arg.value.ints = {input(v, a.name)};
        break;
      }
      [[fallthrough]];
    case ArgKind::SymInts:
    case ArgKind::SymFloat:
      for (const Value *v : a.value.values)
        if (v)
          return makeError() << where(n) << ": argument '" << a.name
                             << "' is symbolic; not supported by gc-lower";
      arg.value.values.clear();
      break;
    default:
      break;
    }
    node.args.push_back(std::move(arg));
  }
  for (const Value *r : n.results()) {
    TensorType t;
    if (r->type().isTensor()) {
      t = r->type().tensor;
    } else if (computesSizes(n.op())) {
      // A size value computed on the host: a one-element tensor.
      t.dtype = r->type().kind == Type::Kind::SymBool ? DType::Bool : DType::Int64;
      t.storageOffset = sx_.constant(0);
    } else {
      return makeError() << where(n) << ": result '" << r->name() << "' is not a tensor";
    }
    uint32_t buf = resultBuffer(r, t, false);
    StridedView view{buf, t.sizes, out_.buffers[buf].strides, sx_.constant(0)};
    node.outputs.push_back(bufferView(t.dtype, view));
    auto result = std::make_shared<Lowered>(*stridedLowered(t.dtype, view));
    if (kind == LoopNode::Kind::Extern)
      result->epilogueOf = buf;
    vals_[r] = std::move(result);
  }
  addNode(std::move(node));
  return Error::success();
}

// Driver ---------------------------------------------------------------------

bool GraphLowerer::makesUnbackedSize(const Node &n) {
  bool makes = false;
  for (const Value *r : n.results()) {
    if (!r->type().isTensor())
      continue;
    std::set<std::string> used;
    for (const SymExpr *e : r->type().tensor.sizes)
      collectSymbols(e, used);
    for (const std::string &s : used)
      makes |= knownSizes_.insert(s).second;
  }
  return makes;
}

Error GraphLowerer::lowerSizeValue(const Node &user, const Value *v) {
  if (vals_.count(v))
    return Error::success();
  const Node *d = v->definingNode();
  if (!d || !computesSizes(d->op()))
    return makeError() << where(user) << ": argument %" << v->name()
                       << " is symbolic and not computed from sizes; not supported by gc-lower";
  return callNode(*d, LoopNode::Kind::Fallback);
}

Error GraphLowerer::lowerNode(const Node &n) {
  // Its count is computed on the host, by the op's reference kernel, before
  // anything reads the result.
  if (makesUnbackedSize(n))
    return fallback(n);
  // A size computation has nothing to run: where a node uses its value,
  // lowering reads it as an expression (symIntOf).
  if (computesSizes(n.op()))
    return Error::success();
  // cond and while_loop stay calls: each graph they call is lowered to a
  // loop graph of its own, and the plan runs the one the data picks.
  if (callsGraphs(n.op()))
    return callNode(n, LoopNode::Kind::Call);
  // A plugin's op stays one opaque call, which the plan runs through the
  // plugin's kernel (gc/Ops/PluginOps.h): no fallback, nothing to fuse.
  if (isPluginOp(n.op()))
    return callNode(n, LoopNode::Kind::Fallback);
  const OpLowering *l = lowerings().find(n.op());
  if (!l)
    return fallback(n);
  for (const Value *r : n.results())
    if (!r->type().isTensor())
      return fallback(n);
  try {
    return l->lower(*this, n, *l);
  } catch (const std::exception &e) {
    return makeError() << where(n) << ": " << e.what();
  }
}

Error GraphLowerer::run() {
  channelsLast_ = channelsLastValues(g_, options_.layout);
  out_.inputSpecs = g_.inputSpecs();
  out_.outputSpecs = g_.outputSpecs();
  for (size_t i = 0; i < g_.inputs().size(); ++i) {
    const Value *v = g_.inputs()[i];
    if (!v->type().isTensor())
      return makeError() << "graph '" << g_.name() << "': input '" << v->name()
                         << "' is not a tensor; not supported by gc-lower";
    const TensorType &t = v->type().tensor;
    uint32_t buf = addBuffer(v->name(), BufferKind::Input, t.dtype, t.sizes, t.strides, false);
    for (const SymExpr *e : t.sizes)
      collectSymbols(e, knownSizes_);
    out_.inputs.push_back(LoopBinding{v->name(), buf, t});
    vals_[v] = stridedLowered(t.dtype, StridedView{buf, t.sizes, t.strides, sx_.constant(0)});
  }

  for (const Value *v : g_.outputs())
    ++uses_[v];
  for (const auto &n : g_.nodes()) {
    if (n->loc())
      originLocs_.emplace(nodeName(*n), n->loc());
    for (const Value *r : n->results())
      if (n->loc())
        originLocs_.emplace(r->name(), n->loc());
  }
  for (auto it = g_.nodes().rbegin(); it != g_.nodes().rend(); ++it) {
    const Node &n = **it;
    unsigned through = 0;
    if (lowersToView(n.op()))
      for (const Value *r : n.results())
        through += uses_.count(r) ? uses_.at(r) : 0;
    for (const NamedArg &a : n.args())
      for (const Value *v : a.value.values)
        if (v)
          uses_[v] += lowersToView(n.op()) ? through : 1;
  }

  outputBindings_.resize(g_.outputs().size());
  std::map<const Value *, int> seen;
  for (size_t i = 0; i < g_.outputs().size(); ++i)
    ++seen[g_.outputs()[i]];
  for (size_t i = 0; i < g_.outputs().size(); ++i) {
    const Value *v = g_.outputs()[i];
    if (seen[v] == 1 && v->definingNode() && g_.outputSpecs()[i].aliasOf.empty() &&
        v->type().isTensor())
      ownedOutput_[v] = static_cast<int>(i);
  }

  for (const auto &node : g_.nodes())
    GC_RETURN_IF_ERROR(lowerNode(*node));

  for (size_t i = 0; i < g_.outputs().size(); ++i) {
    if (outputBindings_[i])
      continue;
    const Value *v = g_.outputs()[i];
    if (!v->type().isTensor())
      return makeError() << "graph '" << g_.name() << "': output '" << v->name()
                         << "' is not a tensor; not supported by gc-lower";
    TensorType t = v->type().tensor;
    t.strides = denseStrides(sx_, t);
    t.storageOffset = sx_.constant(0);
    std::string name = "out" + std::to_string(i);
    uint32_t buf = addBuffer(name, BufferKind::Output, t.dtype, t.sizes, t.strides, false);
    writePointwise(name, v->name(), *value(v), buf);
    outputBindings_[i] = LoopBinding{v->name(), buf, std::move(t)};
  }
  for (std::optional<LoopBinding> &b : outputBindings_)
    out_.outputs.push_back(std::move(*b));
  return Error::success();
}

} // namespace gc::lower

namespace gc {

Expected<LowerReport> lowerModule(Module &module, const LowerOptions &options) {
  if (module.level() != Level::Core && module.level() != Level::Partitioned)
    return makeError() << "gc-lower expects a module at the core or partitioned level, got "
                       << levelName(module.level());
  GC_RETURN_IF_ERROR(lower::requireCompilableDevices(module));
  GC_RETURN_IF_ERROR(lower::requireBoundedSizes(module));
  LowerReport report;
  LowerOptions resolved = options;
  resolved.layout = resolveLayout(options.layout, module);
  for (const auto &g : module.graphs()) {
    LoopGraph &lg = module.addLoopGraph(g->name());
    lower::GraphLowerer lowerer(module, *g, resolved, lg, report);
    GC_RETURN_IF_ERROR(lowerer.run());
  }
  module.clearGraphs();
  module.setLevel(Level::Loops);
  return report;
}

std::vector<OpId> loweredOps() {
  std::vector<OpId> ops = lower::lowerings().ops();
  for (const OpSchema &s : allOpSchemas())
    if (s.core && (s.computesSizes() || s.callsGraphs()))
      ops.push_back(s.id);
  std::sort(ops.begin(), ops.end(), [](OpId a, OpId b) { return opName(a) < opName(b); });
  return ops;
}

} // namespace gc
