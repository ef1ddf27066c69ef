//===- Interpreter.cpp - Running a graph with reference kernels -----------===//
#include "gc/Interp/Interpreter.h"

#include "gc/IR/Describe.h"
#include "gc/Interp/ControlFlow.h"
#include "gc/Interp/Kernel.h"
#include "gc/Interp/PluginKernel.h"
#include "gc/IR/OpSchema.h"
#include "gc/IR/Printer.h"

#include <algorithm>
#include <unordered_map>

namespace gc {

namespace {

std::string typeString(DType dtype, const Shape &sizes) {
  std::string s(dtypeName(dtype));
  s += shapeString(sizes);
  return s;
}

/// Symbol values bound from the user inputs' sizes.
using Bindings = std::map<std::string, int64_t>;

Expected<Shape> evaluateSizes(const std::vector<const SymExpr *> &sizes, const Bindings &b,
                              const std::string &what) {
  Shape out;
  for (const SymExpr *e : sizes) {
    std::optional<int64_t> v = evaluate(e, b);
    if (!v)
      return makeError() << what << ": cannot evaluate size " << e->str();
    out.push_back(*v);
  }
  return out;
}


Error checkShape(const std::string &name, const TensorType &want, const Tensor &got,
                 const Bindings &b) {
  Expected<Shape> sizes = evaluateSizes(want.sizes, b, name);
  if (!sizes)
    return sizes.error();
  if (*sizes != got.sizes())
    return makeError() << name << ": expected shape " << shapeString(*sizes) << ", got "
                       << shapeString(got.sizes());
  return Error::success();
}

/// Kernels make results contiguous; torch may lay them out otherwise (an
/// attention output follows its query's layout, say), and a later view can
/// depend on that. Copy a fresh result into the layout the graph records.
Tensor withRecordedLayout(const Tensor &t, const TensorType &want, const Bindings &b,
                          const std::vector<Tensor> &inputs) {
  Expected<Shape> strides = evaluateSizes(want.strides, b, "");
  std::optional<int64_t> offset = evaluate(want.storageOffset, b);
  if (!strides || !offset || *offset != 0 || t.numel() == 0)
    return t;
  bool same = true;
  for (int64_t d = 0; d < t.dim(); ++d)
    same &= t.size(d) == 1 || t.strides()[d] == (*strides)[d];
  if (same)
    return t;
  for (const Tensor &in : inputs)
    if (in.defined() && in.sharesStorage(t))
      return t; // a view: its strides are the kernel's to choose
  int64_t extent = 1;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if ((*strides)[d] < 0)
      return t;
    extent += (t.size(d) - 1) * (*strides)[d];
  }
  Tensor out = Tensor::zeros(t.dtype(), {extent}).asStrided(t.sizes(), *strides, 0);
  out.copyFrom(t);
  return out;
}

std::vector<std::string> splitNames(const char *list) {
  std::vector<std::string> out;
  std::string s = list ? list : "";
  for (size_t start = 0; start < s.size();) {
    size_t end = s.find(',', start);
    if (end == std::string::npos)
      end = s.size();
    out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

/// Runs a node that calls graphs of the module (cond, while_loop); each
/// graph it calls runs in this interpreter, which checks its inputs and
/// results as for any graph. Errors name the graph that failed.
Expected<std::vector<Tensor>>
runGraphCall(const Module &m, const Node &n,
             const std::unordered_map<const Value *, Tensor> &tensors) {
  auto args = [&](std::string_view name) {
    std::vector<Tensor> out;
    for (const Value *v : n.arg(name)->value.values)
      out.push_back(tensors.at(v));
    return out;
  };
  auto call = [&](std::string_view name,
                  const std::vector<Tensor> &inputs) -> Expected<std::vector<Tensor>> {
    const Graph &g = *m.graph(n.arg(name)->value.strings.at(0));
    Expected<RunResult> r = runGraph(m, g, inputs, {});
    if (!r)
      return r.error().withContext("graph @" + g.name());
    return std::move(r->outputs);
  };
  return runControlFlow(n.op(), args, call);
}

} // namespace

Error bindInputSizes(const Module &m, const std::string &name, const TensorType &want,
                     const Tensor &got, std::map<std::string, int64_t> &b) {
  if (got.dtype() != want.dtype)
    return makeError() << "input '" << name << "': expected dtype " << dtypeName(want.dtype)
                       << ", got " << dtypeName(got.dtype());
  if (got.dim() != static_cast<int64_t>(want.rank()))
    return makeError() << "input '" << name << "': expected " << want.rank()
                       << " dimensions " << printType(Type::makeTensor(want)) << ", got "
                       << typeString(got.dtype(), got.sizes());
  for (size_t d = 0; d < want.rank(); ++d) {
    const SymExpr *e = want.sizes[d];
    if (!e->isSymbol())
      continue;
    int64_t size = got.sizes()[d];
    auto [it, inserted] = b.emplace(e->symbolName(), size);
    if (!inserted && it->second != size)
      return makeError() << "input '" << name << "': dimension " << d << " is " << size
                         << ", but " << e->symbolName() << " is already " << it->second;
    if (std::optional<SymRange> r = m.syms().range(e->symbolName()))
      if (size < r->min || size > r->max)
        return makeError() << "input '" << name << "': dimension " << d << " is " << size
                           << ", outside the range [" << r->min << ", "
                           << (r->max == SymRange::kUnbounded ? std::string("inf")
                                                              : std::to_string(r->max))
                           << "] of " << e->symbolName();
  }
  return Error::success();
}

Error bindUnbackedSizes(const Module &m, const std::string &where, const TensorType &want,
                        const Tensor &got, std::map<std::string, int64_t> &b) {
  if (got.dim() != static_cast<int64_t>(want.rank()))
    return Error::success(); // checkShape reports it
  for (size_t d = 0; d < want.rank(); ++d) {
    const SymExpr *e = want.sizes[d];
    if (!e->isSymbol() || b.count(e->symbolName()))
      continue;
    int64_t size = got.sizes()[d];
    if (std::optional<SymRange> r = m.syms().range(e->symbolName()))
      if (size < r->min || size > r->max)
        return makeError() << where << ": dimension " << d << " is " << size
                           << ", outside the range [" << r->min << ", "
                           << (r->max == SymRange::kUnbounded ? std::string("inf")
                                                              : std::to_string(r->max))
                           << "] torch.export recorded for " << e->symbolName();
    b.emplace(e->symbolName(), size);
  }
  return Error::success();
}

Tensor generatorInput(InputKind k, const RandomState &rng) {
  Tensor t = Tensor::zeros(DType::Int64, {});
  t.storeInt(0, static_cast<int64_t>(k == InputKind::RngSeed ? rng.seed : rng.offset));
  return t;
}

Expected<RunResult> runGraph(const Module &m, const Graph &graph,
                             const std::vector<Tensor> &userInputs,
                             const std::map<std::string, Tensor> &weights,
                             const RandomState &rng) {
  std::unordered_map<const Value *, Tensor> tensors;
  std::unordered_map<const Value *, int64_t> symInts;
  std::map<std::string, Tensor> buffers;
  Bindings bindings;
  RunResult result;

  size_t wantInputs = 0;
  for (const InputSpec &s : graph.inputSpecs())
    wantInputs += s.kind == InputKind::UserInput;
  if (userInputs.size() != wantInputs)
    return makeError() << "expected " << wantInputs << " user input"
                       << (wantInputs == 1 ? "" : "s") << ", got " << userInputs.size();

  size_t next = 0;
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    const Value *v = graph.inputs()[i];
    const InputSpec &spec = graph.inputSpecs()[i];
    if (!v->type().isTensor())
      return makeError() << "input '" << spec.target << "' is not a tensor; not supported";
    if (spec.kind == InputKind::UserInput) {
      const Tensor &t = userInputs[next++];
      GC_RETURN_IF_ERROR(bindInputSizes(m, spec.target, v->type().tensor, t, bindings));
      tensors[v] = t;
      continue;
    }
    if (isGeneratorInput(spec.kind)) {
      tensors[v] = generatorInput(spec.kind, rng);
      continue;
    }
    auto it = weights.find(spec.target);
    if (it == weights.end())
      return makeError() << "no data for " << inputKindName(spec.kind) << " '" << spec.target << "'";
    tensors[v] = it->second;
    if (spec.kind == InputKind::Buffer)
      buffers[spec.target] = it->second;
  }
  for (size_t i = 0; i < graph.inputs().size(); ++i)
    if (graph.inputSpecs()[i].kind == InputKind::UserInput)
      GC_RETURN_IF_ERROR(checkShape("input '" + graph.inputSpecs()[i].target + "'",
                                    graph.inputs()[i]->type().tensor, tensors[graph.inputs()[i]],
                                    bindings));

  const KernelRegistry &kernels = referenceKernels();
  // Aten-level random ops draw from the run's stream in node order, the
  // counters their decompositions would give them, so an aten graph and its
  // core graph draw the same numbers. (A graph holding both them and gc.rand
  // nodes, made by skipping passes, would reuse numbers; none is made.)
  RandomState stream = rng;
  for (const auto &node : graph.nodes()) {
    std::string where = describeNode(*node);
    std::vector<Tensor> results, inputs;
    if (callsGraphs(node->op())) {
      Expected<std::vector<Tensor>> r = runGraphCall(m, *node, tensors);
      if (!r)
        return r.error().withContext(where);
      results = std::move(*r);
    } else {
      const OpVariant *variant = findVariant(node->op());
      OpId op = variant ? variant->functional : node->op();
      const KernelEntry *kernel = findReferenceKernel(op);
      if (!kernel)
        return makeError() << where << ": the reference interpreter has no kernel for " << op;
      OpCall call(*node, tensors, symInts, &stream);
      try {
        for (const NamedArg &a : node->args())
          if (a.value.kind == ArgKind::Tensor)
            inputs.push_back(call.tensor(a.name));
        results = variant ? runVariant(*variant, call, kernels) : kernel->fn(call);
        std::vector<Tensor> written;
        if (variant)
          written = results;
        for (const std::string &arg : splitNames(kernel->mutates))
          if (std::optional<Tensor> t = call.optTensor(arg))
            written.push_back(*t);
        for (const Tensor &w : written)
          for (const auto &[name, buffer] : buffers)
            if (buffer.sharesStorage(w))
              result.mutatedBuffers[name] = buffer;
      } catch (const std::exception &e) {
        // KernelError, or a library exception from a kernel bug; either way
        // it is reported against the node, never let out.
        return makeError() << where << ": " << e.what();
      }
    }
    if (results.size() != node->results().size())
      return makeError() << where << ": the kernel gave " << results.size()
                         << " results, the graph has " << node->results().size();
    for (size_t i = 0; i < results.size(); ++i) {
      const Value *r = node->results()[i];
      // Symbolic ints and bools are kept as numbers; a size computation's
      // kernel returns its value as a 0-dim tensor.
      if (r->type().kind == Type::Kind::SymInt || r->type().kind == Type::Kind::SymBool) {
        symInts[r] = results[i].toInts().at(0);
        continue;
      }
      const TensorType &want = r->type().tensor;
      if (results[i].dtype() != want.dtype)
        return makeError() << where << ": the kernel made %" << r->name() << " "
                           << dtypeName(results[i].dtype()) << ", the graph says "
                           << dtypeName(want.dtype);
      GC_RETURN_IF_ERROR(
          bindUnbackedSizes(m, where + ": result %" + r->name(), want, results[i], bindings));
      GC_RETURN_IF_ERROR(checkShape(where + ": result %" + r->name(), want, results[i], bindings));
      tensors[r] = withRecordedLayout(results[i], want, bindings, inputs);
    }
  }

  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    const Tensor &t = tensors.at(graph.outputs()[i]);
    result.outputs.push_back(t);
    if (graph.outputSpecs()[i].kind == OutputKind::BufferMutation)
      result.mutatedBuffers[graph.outputSpecs()[i].target] = t;
  }
  result.streamDraws = stream.offset - rng.offset;
  return result;
}

} // namespace gc
