//===- PluginKernel.cpp - Plugin ops in the reference interpreter ---------===//
#include "gc/Interp/PluginKernel.h"

#include "gc/IR/PluginRows.h"
#include "gc/Ops/PluginOps.h"

#include <deque>
#include <map>
#include <mutex>

namespace gc {

namespace {
std::vector<Tensor> runPlugin(const OpCall &call) {
  const PluginOp &op = *pluginOpOf(call.node().op());
  std::vector<Tensor> inputs;
  std::vector<Arg> values;
  for (const NamedArg &a : call.node().args()) {
    values.push_back(a.value);
    if (a.value.kind == ArgKind::Tensor)
      inputs.push_back(call.tensor(a.name));
  }
  std::vector<gc_plugin_type> types(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    types[i].dtype = static_cast<int32_t>(inputs[i].dtype());
    types[i].rank = static_cast<int32_t>(inputs[i].dim());
    if (inputs[i].dim() > GC_PLUGIN_MAX_RANK)
      kernelFail(op.name + ": an input has more than " + std::to_string(GC_PLUGIN_MAX_RANK) +
                 " dims");
    for (int64_t d = 0; d < inputs[i].dim(); ++d)
      types[i].dims[d] = {inputs[i].size(d), static_cast<int32_t>(i), static_cast<int32_t>(d)};
  }
  std::vector<gc_plugin_scalar> scalars = pluginScalars(values);
  Expected<std::vector<gc_plugin_type>> shapes = callShapeFunction(op, types, scalars);
  if (!shapes)
    kernelFail(shapes.error().message());
  std::vector<Tensor> results;
  for (const gc_plugin_type &t : *shapes) {
    Shape sizes;
    for (int32_t d = 0; d < t.rank; ++d)
      sizes.push_back(t.dims[d].input >= 0 ? inputs[t.dims[d].input].size(t.dims[d].dim)
                                           : t.dims[d].size);
    results.push_back(Tensor::zeros(static_cast<DType>(t.dtype), sizes));
  }
  auto tensorsOf = [](const std::vector<Tensor> &list) {
    std::vector<gc_plugin_tensor> out;
    for (const Tensor &t : list)
      out.push_back({t.storage()->data() + t.offset() * dtypeSize(t.dtype()),
                     static_cast<int32_t>(t.dtype()), static_cast<int32_t>(t.dim()),
                     t.sizes().data(), t.strides().data()});
    return out;
  };
  std::vector<gc_plugin_tensor> in = tensorsOf(inputs), out = tensorsOf(results);
  auto n = [](const auto &v) { return static_cast<int32_t>(v.size()); };
  if (Error e = callPlugin(op, "its CPU kernel", [&](char *error, size_t size) {
        return op.op->cpu(in.data(), n(in), scalars.data(), n(scalars), out.data(), n(out),
                          error, size);
      }))
    kernelFail(e.message());
  return results;
}
} // namespace

const KernelEntry *findReferenceKernel(OpId op) {
  if (const KernelEntry *k = referenceKernels().find(op))
    return k;
  if (!isPluginOp(op))
    return nullptr;
  static std::mutex mutex;
  static std::map<OpId, KernelEntry> *entries = new std::map<OpId, KernelEntry>;
  std::lock_guard lock(mutex);
  return &entries->try_emplace(op, KernelEntry{op, runPlugin}).first->second;
}

} // namespace gc
