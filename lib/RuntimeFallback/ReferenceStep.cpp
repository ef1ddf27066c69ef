//===- ReferenceStep.cpp - A loop node run by its reference kernel --------===//
#include "ReferenceStep.h"

#include "gc/IR/ExternOps.h"

#include <cmath>
#include <numbers>

namespace gc {

namespace {

/// Copies a view of a buffer into a new contiguous tensor.
Tensor readView(const char *base, const BufferView &view, const StridedLayout &layout) {
  Tensor t = Tensor::zeros(view.type.dtype, layout.sizes);
  unsigned elem = dtypeSize(view.type.dtype);
  copyStrided(reinterpret_cast<char *>(t.storage()->data()), t.strides(),
              base + layout.offset * elem, layout.strides, layout.sizes, elem);
  return t;
}

double gelu(double x, PostOp::Kind kind) {
  if (kind == PostOp::Kind::GeluErf)
    return 0.5 * x * (1 + std::erf(x / std::numbers::sqrt2));
  double inner = std::sqrt(2 / std::numbers::pi) * (x + 0.044715 * x * x * x);
  return 0.5 * x * (1 + std::tanh(inner));
}

double silu(double x) { return x / (1 + std::exp(-x)); }

/// What oneDNN would have fused into the op, done on the result. A bias
/// runs along the dim the op's row names (ExternBias), else the last dim.
/// `up`: a GatedSilu's second product.
void applyPostOps(Tensor &result, const LoopNode &node, const std::vector<Tensor> &inputs,
                  const std::optional<Tensor> &up) {
  if (node.postOps.empty())
    return;
  size_t rank = result.sizes().size();
  size_t biasDim = externBiasDim(node.op, rank).value_or(rank - 1);
  forEachIndex(result.sizes(), [&](const Shape &idx) {
    double v = result.getDouble(idx);
    for (const PostOp &p : node.postOps) {
      switch (p.kind) {
      case PostOp::Kind::AddBias:
        v += inputs[p.input].getDouble({idx[biasDim]});
        break;
      case PostOp::Kind::Add:
        v += inputs[p.input].getDouble(idx);
        break;
      case PostOp::Kind::Relu:
        v = v < 0 ? 0 : v;
        break;
      case PostOp::Kind::GeluErf:
      case PostOp::Kind::GeluTanh:
        v = gelu(v, p.kind);
        break;
      case PostOp::Kind::Swish:
        v = silu(v);
        break;
      case PostOp::Kind::GatedSilu:
        v = silu(v) * up->getDouble(idx);
        break;
      }
    }
    result.setDouble(idx, v);
  });
}

/// A matrix product's left operand `a` (contiguous, rows along its last
/// dim) with its RMSNorm prologue applied: each row's elements times
/// `weight`'s over the root of the row's mean square plus eps, in double
/// and rounded once to a's type (the kernels keep it in float32 unrounded,
/// so the two differ by that rounding).
Tensor rmsNormRows(const Tensor &a, const Tensor &weight, double eps) {
  Tensor out = Tensor::zeros(a.dtype(), a.sizes());
  int64_t k = a.sizes().empty() ? 1 : a.sizes().back();
  Shape rows = a.sizes();
  if (!rows.empty())
    rows.back() = 1;
  forEachIndex(rows, [&](const Shape &row) {
    Shape idx = row;
    double squares = 0;
    for (int64_t j = 0; j < k; ++j) {
      if (!idx.empty())
        idx.back() = j;
      double v = a.getDouble(idx);
      squares += v * v;
    }
    double scale = 1 / std::sqrt(squares / static_cast<double>(k) + eps);
    for (int64_t j = 0; j < k; ++j) {
      if (!idx.empty())
        idx.back() = j;
      out.setDouble(idx, a.getDouble(idx) * scale * weight.getDouble({j}));
    }
  });
  return out;
}

} // namespace

Expected<std::unique_ptr<ReferenceStep>> ReferenceStep::create(const LoopNode &node) {
  for (const PostOp &p : node.postOps) {
    if (p.input >= node.inputs.size())
      return makeError() << "node '" << node.name << "': a post-op reads input " << p.input
                         << " of " << node.inputs.size();
    if (p.kind == PostOp::Kind::GatedSilu && !productOperands(node))
      return makeError() << "node '" << node.name << "': a gated SiLU post-op on "
                         << opName(node.op) << ", which is no matrix product";
  }
  if (node.rmsNorm && (!productOperands(node) || node.rmsNorm->weight >= node.inputs.size()))
    return makeError() << "node '" << node.name << "': an RMSNorm prologue on "
                       << opName(node.op) << " naming input " << node.rmsNorm->weight << " of "
                       << node.inputs.size() << ": a matrix product's norm weight is expected";
  Expected<ReferenceCall> call = ReferenceCall::create(node);
  if (!call)
    return call.error();
  return std::unique_ptr<ReferenceStep>(new ReferenceStep(node, call.take()));
}

Error ReferenceStep::run(char *const *buffers, const std::vector<StridedLayout> &inputs,
                         const std::vector<StridedLayout> &outputs) const {
  return runSized(buffers, inputs,
                  [&](const std::vector<std::vector<int64_t>> &sizes)
                      -> Expected<std::vector<StridedLayout>> {
                    for (size_t i = 0; i < sizes.size() && i < outputs.size(); ++i)
                      if (sizes[i] != outputs[i].sizes)
                        return makeError() << "node '" << node_.name << "': result " << i
                                           << " has shape " << shapeString(sizes[i])
                                           << ", its buffer view " << shapeString(outputs[i].sizes);
                    return outputs;
                  });
}

Error ReferenceStep::runSized(char *const *buffers, const std::vector<StridedLayout> &inputs,
                              const FallbackCall::PlaceOutputs &place) const {
  std::vector<Tensor> in;
  for (size_t i = 0; i < node_.inputs.size(); ++i)
    in.push_back(readView(buffers[node_.inputs[i].buffer], node_.inputs[i], inputs[i]));
  if (node_.rmsNorm) {
    Tensor &a = in[productOperands(node_)->src];
    a = rmsNormRows(a, in[node_.rmsNorm->weight], node_.rmsNorm->eps);
  }
  Expected<std::vector<Tensor>> results = call_.compute(in);
  if (!results)
    return results.error();
  std::vector<Tensor> &out = *results;
  if (out.size() != node_.outputs.size())
    return makeError() << "node '" << node_.name << "': " << out.size() << " results for "
                       << node_.outputs.size() << " outputs";
  if (!out.empty()) {
    // A 16-bit product whose epilogue widened its result writes float32.
    if (!node_.outputs.empty() && out[0].dtype() != node_.outputs[0].type.dtype)
      out[0] = out[0].to(node_.outputs[0].type.dtype);
    // A gated pair's second product: the call again, on the other weight.
    std::optional<Tensor> up;
    for (const PostOp &p : node_.postOps)
      if (p.kind == PostOp::Kind::GatedSilu) {
        std::vector<Tensor> swapped = in;
        swapped[productOperands(node_)->weights] = in[p.input];
        Expected<std::vector<Tensor>> u = call_.compute(swapped);
        if (!u)
          return u.error();
        up = (*u)[0];
      }
    applyPostOps(out[0], node_, in, up);
  }
  std::vector<std::vector<int64_t>> sizes;
  for (const Tensor &t : out)
    sizes.push_back(t.sizes());
  Expected<std::vector<StridedLayout>> outputs = place(sizes);
  if (!outputs)
    return outputs.error();
  for (size_t i = 0; i < out.size(); ++i) {
    const BufferView &view = node_.outputs[i];
    unsigned elem = dtypeSize(view.type.dtype);
    const StridedLayout &o = (*outputs)[i];
    if (o.sizes != out[i].sizes())
      return makeError() << "node '" << node_.name << "': result " << i << " has shape "
                         << shapeString(out[i].sizes()) << ", its buffer view "
                         << shapeString(o.sizes);
    copyStrided(buffers[view.buffer] + o.offset * elem, o.strides,
                reinterpret_cast<const char *>(out[i].storage()->data()) +
                    out[i].offset() * elem,
                out[i].strides(), out[i].sizes(), elem);
  }
  return Error::success();
}

} // namespace gc
