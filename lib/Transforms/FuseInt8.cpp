//===- FuseInt8.cpp - PT2E int8 convolutions and linears as int8 calls ----===//
//
// PyTorch's export quantization flow (prepare_pt2e / convert_pt2e) leaves
// its int8 arithmetic as float32 arithmetic between quantize and
// dequantize calls:
//   y = quantize(relu(conv(dequantize(x_q), dequantize(w_q), bias)))
// Run as written, that is slower than float32. With constant int8 weights
// whose zero points are 0, the same computation is one int8 library call
// (gc.qconvolution / gc.qlinear): the uint8 or int8 activations and their
// zero point, the int8 weights, an int32 accumulator scaled per output
// channel by input scale x weight scale, the bias, ReLU, and when a
// per-tensor quantize (over its dtype's whole range) is the only reader of
// the result or of its ReLU, the requantization to its scale and zero
// point. Anything else keeps the float32 result, which later phases fold
// the remaining ReLU and adds into as post-ops. What does not match stays
// as it was and runs through the decompositions.
//
// Runs after freeze (the weights must be constants whose bytes the pass
// reads) and before decompose, on modules compiled for the CPU.
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"

#include "gc/IR/Describe.h"
#include "gc/IR/TargetOf.h"
#include "gc/Ops/GraphBuilder.h"
#include "gc/Tensor/Weights.h"
#include "gc/Transforms/Passes.h"

#include <unordered_map>
#include <unordered_set>

namespace gc {

namespace {

bool isConvolution(const Node &n) {
  if (n.op() == ops::aten_conv2d_default)
    return true;
  ArgReader args(n.args());
  return n.op() == ops::aten_convolution_default && !args.boolean("transposed", false);
}

bool isLinear(const Node &n) { return n.op() == ops::aten_linear_default; }

/// The node defining `v` if it is `op`, else null.
const Node *definedBy(const Value *v, OpId op) {
  const Node *n = v ? v->definingNode() : nullptr;
  return n && n->op() == op ? n : nullptr;
}

/// Whether a quantize or dequantize of `n` spans the whole range of its
/// dtype, uint8 or int8 (oneDNN saturates to the dtype, not to a range).
bool fullRange(const Node &n, bool allowNarrowInt8) {
  ArgReader a(n.args());
  std::optional<DType> dtype = a.dtype("dtype");
  int64_t lo = a.integer("quant_min"), hi = a.integer("quant_max");
  if (dtype == DType::UInt8)
    return lo == 0 && hi == 255;
  if (dtype == DType::Int8)
    return hi == 127 && (lo == -128 || (allowNarrowInt8 && lo == -127));
  return false;
}

bool floatOut(const Node &n) {
  ArgReader a(n.args());
  return a.dtype("out_dtype").value_or(DType::Float32) == DType::Float32;
}

/// The int8 call one convolution or linear becomes.
struct Match {
  const Node *input = nullptr;   ///< dequantize_per_tensor of the activations
  const Value *weight = nullptr; ///< the int8 constant
  std::vector<double> weightScales;
  const Node *relu = nullptr;     ///< folded before the requantization
  const Node *quantize = nullptr; ///< the requantization, or null: float32 out
};

class FuseInt8Pass : public Pass {
public:
  std::string_view name() const override { return "fuse-int8"; }

  Error run(Module &m) override {
    if (targetOf(m).device != TargetDevice::CPU)
      return Error::success();
    GC_RETURN_IF_ERROR(requireFunctional(m, name()));
    for (const auto &g : m.graphs()) {
      std::unordered_map<const Value *, int> uses = countUses(*g);
      std::unordered_map<const Node *, Match> byAnchor; // the node the call replaces
      // What only the call read, dropped now: left for dce, the weights'
      // dequantizes would be folded into float32 constants first.
      std::unordered_set<const Node *> dead;
      for (const auto &n : g->nodes()) {
        if (!isConvolution(*n) && !isLinear(*n))
          continue;
        Expected<std::optional<Match>> match = matchCall(m, *g, *n, uses);
        if (!match)
          return match.error();
        if (!*match)
          continue;
        const Node *anchor = (*match)->quantize ? (*match)->quantize : n.get();
        if (anchor != n.get()) {
          dead.insert(n.get());
          if ((*match)->relu)
            dead.insert((*match)->relu);
        }
        for (const Value *v : {tensorArg(*n, "input"), tensorArg(*n, "weight")})
          if (uses.at(v) == 1)
            dead.insert(v->definingNode());
        byAnchor[anchor] = std::move(**match);
        byAnchor[anchor].relu = byAnchor[anchor].quantize ? byAnchor[anchor].relu : nullptr;
        callOf_[anchor] = n.get();
      }
      if (byAnchor.empty())
        continue;
      GC_RETURN_IF_ERROR(rewriteGraph(m, *g, [&](RewriteContext &ctx) {
        if (dead.count(&ctx.node()))
          return std::optional(std::vector<Value *>(ctx.node().results().size(), nullptr));
        auto it = byAnchor.find(&ctx.node());
        if (it == byAnchor.end())
          return std::optional<std::vector<Value *>>();
        const Node &call = *callOf_.at(&ctx.node());
        ++statistics()[isLinear(call) ? "int8 linears" : "int8 convolutions"];
        if (it->second.quantize)
          ++statistics()["requantized outputs"];
        return std::optional(std::vector<Value *>{emit(ctx, call, it->second)});
      }));
      callOf_.clear();
    }
    return Error::success();
  }

private:
  /// The int8 call `n` (a convolution or linear) can become, or nullopt.
  static Expected<std::optional<Match>>
  matchCall(const Module &m, const Graph &g, const Node &n,
            const std::unordered_map<const Value *, int> &uses) {
    Match match;
    match.input =
        definedBy(tensorArg(n, "input"), ops::quantized_decomposed_dequantize_per_tensor_default);
    const Node *dqw =
        definedBy(tensorArg(n, "weight"), ops::quantized_decomposed_dequantize_per_channel_default);
    if (!match.input || !dqw || !fullRange(*match.input, false) || !floatOut(*match.input) ||
        !fullRange(*dqw, true) || !floatOut(*dqw) || n.results().size() != 1)
      return std::optional<Match>();
    ArgReader dq(dqw->args());
    match.weight = tensorArg(*dqw, "input");
    const Value *scales = tensorArg(*dqw, "scales"), *zeroPoints = tensorArg(*dqw, "zero_points");
    if (!match.weight || !scales || !tensorArg(*match.input, "input"))
      return std::optional<Match>();
    if (match.weight->type().tensor.dtype != DType::Int8 || dq.integer("axis") != 0 || !isConstantInput(g, match.weight) ||
        !isConstantInput(g, scales) || (zeroPoints && !isConstantInput(g, zeroPoints)))
      return std::optional<Match>();
    if (const Value *bias = tensorArg(n, "bias");
        bias && bias->type().tensor.dtype != DType::Float32)
      return std::optional<Match>();

    // The scales become numbers of the call; zero points must be 0.
    std::vector<std::string> names = {weightName(g, scales)};
    if (zeroPoints)
      names.push_back(weightName(g, zeroPoints));
    Expected<std::map<std::string, Tensor>> loaded = loadWeights(m, names);
    if (!loaded)
      return loaded.error().withContext("fuse-int8: " + describeNode(n));
    auto found = loaded->find(names[0]);
    if (found == loaded->end()) // computed when the package loads: no bytes yet
      return std::optional<Match>();
    match.weightScales = found->second.toDoubles();
    if (zeroPoints) {
      auto zp = loaded->find(names[1]);
      if (zp == loaded->end())
        return std::optional<Match>();
      for (double z : zp->second.toDoubles())
        if (z != 0)
          return std::optional<Match>();
    }

    // ReLU and a quantize, each the only reader of what it reads.
    const Value *out = n.results()[0];
    auto soleReader = [&](const Value *v) -> const Node * {
      auto u = uses.find(v);
      if (u == uses.end() || u->second != 1)
        return nullptr;
      for (const auto &other : g.nodes())
        for (const NamedArg &a : other->args())
          for (const Value *x : a.value.values)
            if (x == v)
              return other.get();
      return nullptr;
    };
    const Node *next = soleReader(out);
    if (next && next->op() == ops::aten_relu_default) {
      match.relu = next;
      next = soleReader(next->results()[0]);
    }
    if (next && next->op() == ops::quantized_decomposed_quantize_per_tensor_default &&
        fullRange(*next, false))
      match.quantize = next;
    return std::optional(std::move(match));
  }

  static std::string weightName(const Graph &g, const Value *v) {
    for (size_t i = 0; i < g.inputs().size(); ++i)
      if (g.inputs()[i] == v)
        return g.inputSpecs()[i].target;
    return {};
  }

  /// The convolution's per-dimension parameter `name`, expanded to
  /// `spatial` entries (conv2d's int[2] may hold one).
  static std::vector<int64_t> perDim(const Node &n, std::string_view name, size_t spatial,
                                     int64_t dflt) {
    ArgReader a(n.args());
    std::vector<int64_t> v = a.has(name) ? a.ints(name) : std::vector<int64_t>{dflt};
    if (v.size() == 1)
      v.assign(spatial, v[0]);
    return v;
  }

  static Value *emit(RewriteContext &ctx, const Node &call, const Match &match) {
    ArgReader in(match.input->args());
    Arg scales{ArgKind::Floats, {}, {}, match.weightScales, {}, {}};
    const Value *bias = tensorArg(call, "bias");
    std::vector<std::pair<std::string, ArgValue>> args = {
        {"input", ctx.map(tensorArg(*match.input, "input"))},
        {"input_scale", in.real("scale")},
        {"input_zero_point", in.integer("zero_point")},
        {"weight", ctx.map(match.weight)},
        {"weight_scales", ArgValue(scales)},
        {"bias", bias ? ctx.map(bias) : nullptr},
        {"relu", match.relu != nullptr}};
    if (match.quantize) {
      ArgReader q(match.quantize->args());
      args.push_back({"output_scale", q.real("scale")});
      args.push_back({"output_zero_point", q.integer("zero_point")});
      args.push_back({"output_dtype", *q.dtype("dtype")});
    }
    if (isLinear(call))
      return ctx.builder().create1(ops::gc_qlinear_default, std::move(args), "qlinear");
    size_t spatial = match.weight->type().tensor.rank() - 2;
    ArgReader c(call.args());
    args.push_back({"stride", perDim(call, "stride", spatial, 1)});
    args.push_back({"padding", perDim(call, "padding", spatial, 0)});
    args.push_back({"dilation", perDim(call, "dilation", spatial, 1)});
    args.push_back({"groups", c.integer("groups", 1)});
    return ctx.builder().create1(ops::gc_qconvolution_default, std::move(args), "qconvolution");
  }

  std::unordered_map<const Node *, const Node *> callOf_; // anchor -> convolution or linear
};

} // namespace

std::unique_ptr<Pass> createFuseInt8Pass() { return std::make_unique<FuseInt8Pass>(); }

} // namespace gc
