//===- PluginStep.cpp - A plan step that calls a plugin's kernel ----------===//
#include "PluginStep.h"

#include <map>
#include <set>

namespace gc {

namespace {
class PluginStepCall : public ExternCall {
public:
  PluginStepCall(const PluginOp &op, const plan::OpStep &step,
                 const std::vector<StridedLayout> &inputs,
                 const std::vector<StridedLayout> &outputs)
      : op_(op), inputs_(inputs), outputs_(outputs) {
    for (const plan::PluginScalar *s : *step.plugin()->scalars())
      scalars_.push_back({s->i(), s->f()});
    for (const auto &[views, out] : {std::pair{step.inputs(), &inputViews_},
                                     std::pair{step.outputs(), &outputViews_}})
      for (const plan::View *v : *views)
        out->push_back({v->buffer(), dtypeOf(v->dtype())});
  }

  Error run(const ExternArgs &args) override {
    bool gpu = args.deviceBuffers != nullptr;
    std::vector<gc_plugin_tensor> ins = tensors(inputViews_, inputs_, args),
                                  outs = tensors(outputViews_, outputs_, args);
    const gc_plugin_op &op = *op_.op;
    auto n = [](const auto &v) { return static_cast<int32_t>(v.size()); };
    return callPlugin(op_, gpu ? "its CUDA kernel" : "its CPU kernel", [&](char *e, size_t size) {
      return gpu ? op.cuda(ins.data(), n(ins), scalars_.data(), n(scalars_), outs.data(), n(outs),
                           args.stream, e, size)
                 : op.cpu(ins.data(), n(ins), scalars_.data(), n(scalars_), outs.data(), n(outs),
                          e, size);
    });
  }

private:
  struct ViewOf {
    uint32_t buffer;
    DType dtype;
  };

  static std::vector<gc_plugin_tensor> tensors(const std::vector<ViewOf> &views,
                                               const std::vector<StridedLayout> &layouts,
                                               const ExternArgs &args) {
    std::vector<gc_plugin_tensor> out;
    for (size_t i = 0; i < views.size(); ++i) {
      const StridedLayout &l = layouts[i];
      int64_t bytes = l.offset * dtypeSize(views[i].dtype);
      char *base = args.deviceBuffers
                       ? reinterpret_cast<char *>(args.deviceBuffers[views[i].buffer])
                       : args.hostBuffers[views[i].buffer];
      out.push_back({base + bytes, static_cast<int32_t>(views[i].dtype),
                     static_cast<int32_t>(l.sizes.size()), l.sizes.data(), l.strides.data()});
    }
    return out;
  }

  const PluginOp &op_;
  std::vector<StridedLayout> inputs_, outputs_;
  std::vector<ViewOf> inputViews_, outputViews_;
  std::vector<gc_plugin_scalar> scalars_;
};
} // namespace

Expected<std::vector<const PluginOp *>> resolvePluginSteps(const plan::Plan &plan,
                                                           const plan::Graph &graph, bool gpu) {
  std::map<std::string, std::string> libraries;
  if (plan.plugins())
    for (const plan::PluginUse *u : *plan.plugins())
      libraries.emplace(u->op()->str(), u->library()->str());
  std::vector<const PluginOp *> out(graph.steps()->size(), nullptr);
  std::set<std::string> missing, noCuda;
  for (size_t s = 0; s < out.size(); ++s) {
    const plan::OpStep *op = graph.steps()->Get(s)->detail_as_OpStep();
    if (!op || !op->plugin())
      continue;
    std::string name = op->plugin()->op()->str();
    out[s] = findPluginOp(name);
    if (!out[s])
      missing.insert(name);
    else if (gpu && !out[s]->op->cuda)
      noCuda.insert(name + " (" + out[s]->library->fileName + ")");
  }
  auto list = [](const std::set<std::string> &names, auto &&describe) {
    std::string text;
    for (const std::string &n : names)
      text += (text.empty() ? "" : ", ") + describe(n);
    return text;
  };
  if (!missing.empty())
    return makeError() << "the package calls plugin op"
                       << (missing.size() == 1 ? " " : "s ")
                       << list(missing,
                               [&](const std::string &n) {
                                 auto it = libraries.find(n);
                                 return n + " (compiled with " +
                                        (it == libraries.end() ? "?" : it->second) + ")";
                               })
                       << ", which no loaded plugin gives; load the plugin "
                          "(gcrt-run --plugin=PATH, gcrt_plugin_load, or GCRT_PLUGINS)";
  if (!noCuda.empty())
    return makeError() << "the package runs on a GPU, and plugin op"
                       << (noCuda.size() == 1 ? " " : "s ")
                       << list(noCuda, [](const std::string &n) { return n; })
                       << " has no CUDA kernel; give it one or compile for the CPU";
  return out;
}

std::unique_ptr<ExternCall> makePluginCall(const PluginOp &op, const plan::OpStep &step,
                                           const std::vector<StridedLayout> &inputs,
                                           const std::vector<StridedLayout> &outputs) {
  return std::make_unique<PluginStepCall>(op, step, inputs, outputs);
}

} // namespace gc
