//===- Kernel.cpp - Argument access and the kernel registry ---------------===//
#include "gc/Interp/Kernel.h"

namespace gc {

void kernelFail(const std::string &message) { throw KernelError(message); }

const NamedArg *OpCall::find(std::string_view name) const { return node_.arg(name); }

const NamedArg &OpCall::get(std::string_view name) const {
  const NamedArg *a = find(name);
  if (!a)
    kernelFail("missing argument '" + std::string(name) + "'");
  return *a;
}

bool OpCall::has(std::string_view name) const {
  const NamedArg *a = find(name);
  return a && a->value.kind != ArgKind::None;
}

Tensor OpCall::lookup(const Value *v) const {
  auto it = tensors_.find(v);
  if (it == tensors_.end())
    kernelFail("no tensor for %" + v->name());
  return it->second;
}

int64_t OpCall::symInt(const Value *v, int64_t constant) const {
  if (!v)
    return constant;
  auto it = symInts_.find(v);
  if (it == symInts_.end())
    kernelFail("no value for symbolic int %" + v->name());
  return it->second;
}

Tensor OpCall::tensor(std::string_view name) const {
  const NamedArg &a = get(name);
  if (a.value.kind != ArgKind::Tensor)
    kernelFail("argument '" + std::string(name) + "' is not a tensor");
  return lookup(a.value.values[0]);
}

std::optional<Tensor> OpCall::optTensor(std::string_view name) const {
  if (!has(name))
    return std::nullopt;
  return tensor(name);
}

std::vector<Tensor> OpCall::tensors(std::string_view name) const {
  const NamedArg &a = get(name);
  if (a.value.kind != ArgKind::Tensors && a.value.kind != ArgKind::OptionalTensors)
    kernelFail("argument '" + std::string(name) + "' is not a list of tensors");
  std::vector<Tensor> out;
  for (const Value *v : a.value.values) {
    if (!v)
      kernelFail("argument '" + std::string(name) + "' holds None");
    out.push_back(lookup(v));
  }
  return out;
}

std::vector<Tensor> OpCall::optTensors(std::string_view name) const {
  const NamedArg &a = get(name);
  if (a.value.kind != ArgKind::Tensors && a.value.kind != ArgKind::OptionalTensors)
    kernelFail("argument '" + std::string(name) + "' is not a list of tensors");
  std::vector<Tensor> out;
  for (const Value *v : a.value.values)
    out.push_back(v ? lookup(v) : Tensor());
  return out;
}

std::vector<int64_t> OpCall::ints(std::string_view name) const {
  const Arg &a = get(name).value;
  switch (a.kind) {
  case ArgKind::Int:
  case ArgKind::Ints:
  case ArgKind::Bool:
  case ArgKind::Bools:
    return a.ints;
  case ArgKind::SymInt:
  case ArgKind::SymInts: {
    std::vector<int64_t> out;
    for (size_t i = 0; i < a.values.size(); ++i)
      out.push_back(symInt(a.values[i], a.ints[i]));
    return out;
  }
  default:
    kernelFail("argument '" + std::string(name) + "' is not an integer list");
  }
}

std::optional<std::vector<int64_t>> OpCall::optInts(std::string_view name) const {
  if (!has(name))
    return std::nullopt;
  return ints(name);
}

int64_t OpCall::integer(std::string_view name) const {
  std::vector<int64_t> v = ints(name);
  if (v.size() != 1)
    kernelFail("argument '" + std::string(name) + "' is not a single integer");
  return v[0];
}

int64_t OpCall::integer(std::string_view name, int64_t dflt) const {
  return has(name) ? integer(name) : dflt;
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
    s.i = a.ints[0];
    return s;
  case ArgKind::SymInt:
    s.i = symInt(a.values[0], a.ints[0]);
    return s;
  case ArgKind::Float:
    s.kind = Scalar::Kind::Float;
    s.f = a.floats[0];
    return s;
  default:
    kernelFail("argument '" + std::string(name) + "' is not a number");
  }
}

double OpCall::real(std::string_view name) const { return scalar(name).toDouble(); }

double OpCall::real(std::string_view name, double dflt) const {
  return has(name) ? real(name) : dflt;
}

bool OpCall::boolean(std::string_view name, bool dflt) const {
  if (!has(name))
    return dflt;
  const Arg &a = get(name).value;
  if (a.kind != ArgKind::Bool)
    kernelFail("argument '" + std::string(name) + "' is not a boolean");
  return a.ints[0] != 0;
}

std::string OpCall::string(std::string_view name, const std::string &dflt) const {
  if (!has(name))
    return dflt;
  const Arg &a = get(name).value;
  if (a.kind != ArgKind::String)
    kernelFail("argument '" + std::string(name) + "' is not a string");
  return a.strings[0];
}

std::optional<DType> OpCall::dtype(std::string_view name) const {
  if (!has(name))
    return std::nullopt;
  const Arg &a = get(name).value;
  if (a.kind != ArgKind::ScalarType)
    kernelFail("argument '" + std::string(name) + "' is not a dtype");
  return static_cast<DType>(a.ints[0]);
}

void KernelRegistry::add(std::span<const KernelEntry> entries) {
  for (const KernelEntry &e : entries)
    kernels_.emplace(e.op, e);
}

const KernelEntry *KernelRegistry::find(std::string_view op) const {
  auto it = kernels_.find(op);
  return it == kernels_.end() ? nullptr : &it->second;
}

std::vector<std::string> KernelRegistry::ops() const {
  std::vector<std::string> out;
  for (const auto &[op, entry] : kernels_)
    out.push_back(op);
  return out;
}

const KernelRegistry &referenceKernels() {
  static const KernelRegistry registry = [] {
    KernelRegistry r;
    registerPointwiseKernels(r);
    registerReductionKernels(r);
    registerShapeKernels(r);
    registerIndexingKernels(r);
    registerNNKernels(r);
    return r;
  }();
  return registry;
}

} // namespace gc
