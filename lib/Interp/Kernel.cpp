//===- Kernel.cpp - Argument access and the kernel registry ---------------===//
#include "gc/Interp/Kernel.h"

#include "gc/Interp/Promotion.h"

namespace gc {

void kernelFail(const std::string &message) { throw KernelError(message); }

Tensor OpCall::lookup(const Value *v) const {
  auto it = tensors_.find(v);
  if (it == tensors_.end())
    kernelFail("no tensor for %" + v->name());
  return it->second;
}

int64_t OpCall::symIntValue(const Value *v, std::string_view name) const {
  auto it = symInts_.find(v);
  if (it == symInts_.end())
    fail(name, "uses the symbolic int %" + v->name() + ", which has no value");
  return it->second;
}

Tensor OpCall::tensor(std::string_view name) const {
  const NamedArg &a = get(name);
  if (a.value.kind != ArgKind::Tensor)
    fail(name, "is not a tensor");
  return lookup(a.value.values[0]);
}

std::optional<Tensor> OpCall::optTensor(std::string_view name) const {
  if (!has(name))
    return std::nullopt;
  return tensor(name);
}

std::vector<Tensor> OpCall::optTensors(std::string_view name) const {
  const NamedArg &a = get(name);
  if (a.value.kind != ArgKind::Tensors && a.value.kind != ArgKind::OptionalTensors)
    fail(name, "is not a list of tensors");
  std::vector<Tensor> out;
  for (const Value *v : a.value.values)
    out.push_back(v ? lookup(v) : Tensor());
  return out;
}

std::vector<Tensor> OpCall::tensors(std::string_view name) const {
  std::vector<Tensor> out = optTensors(name);
  for (const Tensor &t : out)
    if (!t.defined())
      fail(name, "holds None");
  return out;
}

std::optional<std::vector<int64_t>> OpCall::optInts(std::string_view name) const {
  if (!has(name))
    return std::nullopt;
  return ints(name);
}

Scalar OpCall::scalar(std::string_view name) const {
  const Arg &a = get(name).value;
  Scalar s;
  switch (a.kind) {
  case ArgKind::Bool:
    s.kind = Scalar::Kind::Bool;
    s.i = a.ints[0];
    return s;
  case ArgKind::Int:
  case ArgKind::SymInt:
    s.i = integer(name);
    return s;
  case ArgKind::SymBool: // a size comparison (_assert_scalar's condition)
    s.kind = Scalar::Kind::Bool;
    s.i = symIntValue(a.values.at(0), name);
    return s;
  case ArgKind::Float:
    s.kind = Scalar::Kind::Float;
    s.f = a.floats[0];
    return s;
  case ArgKind::Tensor: { // a size value a compiled graph computes at run time (gc-lower)
    Tensor t = lookup(a.values.at(0));
    if (t.numel() != 1)
      fail(name, "is a tensor of more than one element where a number is expected");
    Shape first(static_cast<size_t>(t.dim()), 0);
    if (isFloatingPoint(t.dtype())) {
      s.kind = Scalar::Kind::Float;
      s.f = t.getDouble(first);
    } else {
      s.kind = t.dtype() == DType::Bool ? Scalar::Kind::Bool : Scalar::Kind::Int;
      s.i = t.getInt(first);
    }
    return s;
  }
  default:
    fail(name, "is not a number");
  }
}

Tensor numberTensor(const Scalar &s) {
  if (s.kind == Scalar::Kind::Float)
    return Tensor::scalar(DType::Float64, s.f);
  Tensor t = Tensor::zeros(s.kind == Scalar::Kind::Bool ? DType::Bool : DType::Int64, {});
  t.storeInt(0, s.i);
  return t;
}

const KernelRegistry &referenceKernels() {
  static const KernelRegistry registry = [] {
    KernelRegistry r;
    registerPointwiseKernels(r);
    registerReductionKernels(r);
    registerShapeKernels(r);
    registerIndexingKernels(r);
    registerProductKernels(r);
    registerConvolutionKernels(r);
    registerNormalizationKernels(r);
    registerNNKernels(r);
    registerRecurrentKernels(r);
    registerCoreKernels(r);
    registerLinalgKernels(r);
    registerSizeKernels(r);
    registerQuantizeKernels(r);
    registerDataDependentKernels(r);
    return r;
  }();
  return registry;
}

std::vector<Tensor> runVariant(const OpVariant &v, const OpCall &call,
                               const KernelRegistry &kernels) {
  const KernelEntry *kernel = kernels.find(v.functional);
  if (!kernel)
    kernelFail("no reference kernel for " + opString(v.functional));
  Node functional = call.node();
  functional.setOp(v.functional);
  functional.args() = functionalArgs(v, call.node().args());
  std::vector<Tensor> results = kernel->fn(call.forNode(functional));
  std::vector<Tensor> written;
  for (size_t i = 0; i < v.written.size(); ++i) {
    Tensor target = call.tensor(v.written[i]);
    const Tensor &result = results.at(i);
    if (result.sizes() != target.sizes())
      kernelFail(writeBackMismatch(v, i, "of shape " + shapeString(target.sizes()),
                                   "shape " + shapeString(result.sizes())));
    if (!canCast(result.dtype(), target.dtype()))
      kernelFail("result type " + std::string(dtypeName(result.dtype())) +
                 " can't be cast to the desired output type " +
                 std::string(dtypeName(target.dtype())));
    target.copyFrom(result);
    written.push_back(target);
  }
  return written;
}

} // namespace gc
