//===- PluginOps.cpp - Ops a plugin gives, for the compiler ---------------===//
#include "gc/Ops/PluginOps.h"

#include "gc/IR/OpSchema.h"
#include "gc/IR/PluginRows.h"
#include "gc/Ops/ShapeInference.h"

namespace gc {

namespace {
/// The argument types the ABI passes: tensors, and scalars as
/// gc_plugin_scalar.
bool passable(const std::string &type) {
  return type == "Tensor" || type == "int" || type == "SymInt" || type == "bool" ||
         type == "float";
}
} // namespace

Error loadCompilerPlugin(const std::string &path) {
  Expected<const PluginLibrary *> lib = loadPlugin(path);
  if (!lib)
    return lib.error();
  for (const PluginOp &op : (*lib)->ops) {
    std::string summary = "custom op of the plugin " + (*lib)->fileName;
    Expected<OpId> id = registerPluginOp(op.name, op.op->schema, summary);
    if (!id)
      return id.error().withContext("plugin '" + path + "'");
    const OpSchema &s = opSchema(*id);
    for (const ArgDef &a : s.args)
      if (!passable(a.type) || a.mutated)
        return makeError() << "plugin '" << path << "': op " << op.name << ": argument '"
                           << a.name << "' is " << (a.mutated ? "written in place" : a.type)
                           << "; a plugin op takes Tensor, int, SymInt, bool and float "
                           << "arguments and writes only its results";
    if (s.returns.empty() || s.returnsView)
      return makeError() << "plugin '" << path << "': op " << op.name
                         << " must return new tensors";
    for (const std::string &r : s.returns)
      if (r != "Tensor")
        return makeError() << "plugin '" << path << "': op " << op.name << " returns " << r
                           << "; a plugin op returns tensors";
  }
  return Error::success();
}

Error loadCompilerPlugins(const std::vector<std::string> &paths) {
  for (const std::string &p : paths)
    GC_RETURN_IF_ERROR(loadCompilerPlugin(p));
  return Error::success();
}

const PluginOp *pluginOpOf(OpId op) {
  return isPluginOp(op) ? findPluginOp(opName(op)) : nullptr;
}

std::vector<gc_plugin_scalar> pluginScalars(const std::vector<Arg> &args) {
  std::vector<gc_plugin_scalar> out;
  for (const Arg &a : args)
    switch (a.kind) {
    case ArgKind::Int:
    case ArgKind::Bool:
    case ArgKind::SymInt:
      out.push_back({a.ints.empty() ? 0 : a.ints[0], 0.0});
      break;
    case ArgKind::Float:
      out.push_back({0, a.floats[0]});
      break;
    default:
      break;
    }
  return out;
}

Expected<std::vector<gc_plugin_type>>
callShapeFunction(const PluginOp &op, const std::vector<gc_plugin_type> &inputs,
                  const std::vector<gc_plugin_scalar> &scalars) {
  std::vector<gc_plugin_type> outputs(opSchema(*lookupOp(op.name)).returns.size());
  GC_RETURN_IF_ERROR(callPlugin(op, "its shape function", [&](char *error, size_t size) {
    return op.op->shape(inputs.data(), static_cast<int32_t>(inputs.size()), scalars.data(),
                        static_cast<int32_t>(scalars.size()), outputs.data(),
                        static_cast<int32_t>(outputs.size()), error, size);
  }));
  // What the callers read must hold: a dtype, a rank, and each dim a
  // constant or a dim of an input.
  for (size_t o = 0; o < outputs.size(); ++o) {
    const gc_plugin_type &t = outputs[o];
    auto bad = [&](const std::string &why) -> Error {
      return makeError() << op.name << ": its shape function gave output " << o << " " << why;
    };
    if (t.dtype < 0 || t.dtype >= kNumDTypes)
      return bad("dtype " + std::to_string(t.dtype) + ", which is no gc_plugin_dtype");
    if (t.rank < 0 || t.rank > GC_PLUGIN_MAX_RANK)
      return bad("rank " + std::to_string(t.rank));
    for (int32_t d = 0; d < t.rank; ++d) {
      const gc_plugin_dim &dim = t.dims[d];
      if (dim.input >= 0 && (static_cast<size_t>(dim.input) >= inputs.size() || dim.dim < 0 ||
                             dim.dim >= inputs[dim.input].rank))
        return bad("dim " + std::to_string(d) + " as dim " + std::to_string(dim.dim) +
                   " of input " + std::to_string(dim.input) + ", which has no such dim");
      if (dim.input < 0 && dim.size < 0)
        return bad("dim " + std::to_string(d) + " of size " + std::to_string(dim.size));
    }
  }
  return outputs;
}

Expected<std::vector<Type>> pluginResultTypes(const PluginOp &op,
                                              const std::vector<NamedArg> &args,
                                              SymContext &syms) {
  std::vector<const TensorType *> tensors;
  std::vector<Arg> values;
  for (const NamedArg &a : args) {
    values.push_back(a.value);
    if (a.value.kind == ArgKind::Tensor)
      tensors.push_back(&a.value.values[0]->type().tensor);
    else if (a.value.kind == ArgKind::SymInt && !a.value.values.empty() && a.value.values[0])
      return makeError() << op.name << ": argument '" << a.name
                         << "' is a size known only at run time; a plugin op takes sizes "
                            "known at compile time";
  }
  std::vector<gc_plugin_type> inputs(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorType &t = *tensors[i];
    if (t.rank() > GC_PLUGIN_MAX_RANK)
      return makeError() << op.name << ": input " << i << " has " << t.rank()
                         << " dims; a plugin op takes at most " << GC_PLUGIN_MAX_RANK;
    inputs[i].dtype = static_cast<int32_t>(t.dtype);
    inputs[i].rank = static_cast<int32_t>(t.rank());
    for (size_t d = 0; d < t.rank(); ++d)
      inputs[i].dims[d] = {t.sizes[d]->isConst() ? t.sizes[d]->constant() : -1,
                           static_cast<int32_t>(i), static_cast<int32_t>(d)};
  }
  Expected<std::vector<gc_plugin_type>> called =
      callShapeFunction(op, inputs, pluginScalars(values));
  if (!called)
    return called.error();
  const std::vector<gc_plugin_type> &outputs = *called;
  Device device = tensors.empty() ? Device{} : tensors[0]->device;
  std::vector<Type> out;
  for (const gc_plugin_type &t : *called) {
    std::vector<const SymExpr *> sizes;
    for (int32_t d = 0; d < t.rank; ++d) {
      const gc_plugin_dim &dim = t.dims[d];
      sizes.push_back(dim.input >= 0 ? tensors[dim.input]->sizes[dim.dim]
                                     : syms.constant(dim.size));
    }
    out.push_back(Type::makeTensor(
        contiguousType(syms, static_cast<DType>(t.dtype), std::move(sizes), device)));
  }
  return out;
}

} // namespace gc
