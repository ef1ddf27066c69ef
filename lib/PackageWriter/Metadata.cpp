//===- Metadata.cpp - The package's metadata JSON -------------------------===//
#include "Metadata.h"

#include "gc/IR/LoopIR.h"
#include "gc/IR/Random.h"

#include <nlohmann/json.hpp>

namespace gc::package {

namespace {

using Json = nlohmann::ordered_json;

Json shapeJson(const std::vector<const SymExpr *> &sizes) {
  Json shape = Json::array();
  for (const SymExpr *s : sizes)
    shape.push_back(s->isConst() ? Json(s->constant()) : Json(s->str()));
  return shape;
}

Json tensorJson(const std::string &name, std::string_view kind, const std::string &target,
                const std::string &path, const TensorType &type) {
  Json j;
  j["name"] = name;
  j["kind"] = kind;
  if (!target.empty())
    j["target"] = target;
  if (!path.empty())
    j["path"] = path;
  j["dtype"] = dtypeName(type.dtype);
  j["shape"] = shapeJson(type.sizes);
  return j;
}

Json graphJson(const LoopGraph &g) {
  Json j;
  j["name"] = g.name;
  j["target"] = g.plan.target;
  j["kernels"] = g.plan.kernels.size();
  j["arena_bytes"] = g.plan.arenaBytes;
  Json inputs = Json::array();
  for (size_t i = 0; i < g.inputs.size(); ++i)
    if (g.inputSpecs[i].kind == InputKind::UserInput)
      inputs.push_back(tensorJson(g.inputs[i].name, inputKindName(g.inputSpecs[i].kind),
                                  g.inputSpecs[i].target, g.inputSpecs[i].path, g.inputs[i].type));
  j["inputs"] = inputs;
  Json weights = Json::array();
  for (size_t i = 0; i < g.inputs.size(); ++i)
    if (g.inputSpecs[i].kind != InputKind::UserInput && !isGeneratorInput(g.inputSpecs[i].kind))
      weights.push_back(g.inputSpecs[i].target);
  j["weights"] = weights;
  // Random numbers come from the context's generator, not from inputs.
  if (Expected<int64_t> draws = randomDraws(g))
    j["random_draws"] = *draws;
  Json outputs = Json::array(), mutated = Json::array();
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const OutputSpec &spec = g.outputSpecs[i];
    Json out = tensorJson(g.outputs[i].name, outputKindName(spec.kind), spec.target, spec.path,
                          g.outputs[i].type);
    // The runtime returns a copy; this tells a caller that PyTorch's result
    // was the input itself or a view of it, so writes to one show in the other.
    if (!spec.aliasOf.empty())
      out["alias_of"] = spec.aliasOf;
    outputs.push_back(out);
    if (spec.kind == OutputKind::BufferMutation)
      mutated.push_back(spec.target);
  }
  j["outputs"] = outputs;
  j["mutated_buffers"] = mutated;
  return j;
}

} // namespace

std::string packageMetadata(const Module &m, const PackageOptions &options) {
  Json j;
  j["format"] = kPackageFormat;
  j["version"] = std::to_string(kPackageMajor) + "." + std::to_string(kPackageMinor);
  j["gc_version"] = GC_VERSION;
  j["producer"] = m.producer();
  WeightsMode weights = m.target() ? m.target()->weights : WeightsMode::Embed;
  j["flags"] = Json{{"linker", options.linker}, {"weights", weightsModeName(weights)}};
  Json symbols = Json::array();
  for (const auto &[name, range] : m.syms().ranges()) {
    Json s;
    s["name"] = name;
    s["min"] = range.min;
    s["max"] = range.max == SymRange::kUnbounded ? Json(nullptr) : Json(range.max);
    symbols.push_back(s);
  }
  j["symbols"] = symbols;
  Json graphs = Json::array();
  for (const auto &g : m.loopGraphs())
    graphs.push_back(graphJson(*g));
  j["graphs"] = graphs;
  return j.dump(2) + "\n";
}

} // namespace gc::package
