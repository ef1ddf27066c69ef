//===- DnnlExtern.cpp - Extern steps run by oneDNN ------------------------===//
//
// Compiles against oneDNN 2.x (Debian 12's 2.6) and 3.x (GC_DNNL_ROOT).
// The two APIs differ in how a primitive is described and how int8 calls
// are scaled; each difference is one helper below with a branch per major
// version, so the rest reads the same for both.
//
//===----------------------------------------------------------------------===//
#include "DnnlExtern.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>
#include <unordered_map>

namespace gc {

namespace {

using dnnl::memory;
using Dims = memory::dims;

/// Torch's per-dimension list as oneDNN's dims.
Dims dimsOf(const flatbuffers::Vector<int64_t> *v) {
  return v ? Dims(v->begin(), v->end()) : Dims();
}

/// The element types the primitives here take: float32, and bfloat16 and
/// float16 (sources and weights of one type, accumulated in float32); the
/// int8 calls' uint8 and int8.
std::optional<memory::data_type> dnnlType(plan::DType t) {
  switch (t) {
  case plan::DType::Float32:
    return memory::data_type::f32;
  case plan::DType::BFloat16:
    return memory::data_type::bf16;
  case plan::DType::Float16:
    return memory::data_type::f16;
  case plan::DType::UInt8:
    return memory::data_type::u8;
  case plan::DType::Int8:
    return memory::data_type::s8;
  default:
    return std::nullopt;
  }
}

int64_t elementBytes(plan::DType t) {
  switch (t) {
  case plan::DType::Float32:
    return 4;
  case plan::DType::UInt8:
  case plan::DType::Int8:
    return 1;
  default:
    return 2;
  }
}

bool isInt8(plan::DType t) { return t == plan::DType::UInt8 || t == plan::DType::Int8; }

memory::desc plainDesc(const StridedLayout &l, plan::DType t) {
  return memory::desc(Dims(l.sizes.begin(), l.sizes.end()), *dnnlType(t),
                      Dims(l.strides.begin(), l.strides.end()));
}

#if DNNL_VERSION_MAJOR >= 3
#define GC_DNNL3 1
#endif

/// A descriptor's dimensions and element type (oneDNN 3 renamed the
/// getters).
Dims descDims(const memory::desc &d) {
#ifdef GC_DNNL3
  return d.get_dims();
#else
  return d.dims();
#endif
}
memory::data_type descType(const memory::desc &d) {
#ifdef GC_DNNL3
  return d.get_data_type();
#else
  return d.data_type();
#endif
}

/// The same tensor in the layout the primitive picks.
memory::desc anyLayout(const memory &m) {
  return memory::desc(descDims(m.get_desc()), descType(m.get_desc()), memory::format_tag::any);
}

/// A tensor the call reads or writes: the caller's view, and where the
/// primitive wants a layout of its own, a memory in that layout and the
/// reorder between them.
struct Operand {
  int arg = 0;         ///< DNNL_ARG_*
  uint32_t buffer = 0; ///< plan buffer
  int64_t byteOffset = 0;
  memory user;
  std::optional<memory> own;
  std::optional<dnnl::reorder> reorder;
  bool isOutput = false;
  /// A constant input keeps its reordered copy while its address stays.
  bool constant = false;
  const char *reorderedFrom = nullptr;
};

class PrimitiveCall final : public CpuCall {
public:
  PrimitiveCall(dnnl::stream &stream, dnnl::primitive prim, std::vector<Operand> operands,
                std::unordered_map<int, memory> attrArgs)
      : stream_(stream), prim_(std::move(prim)), operands_(std::move(operands)),
        attrArgs_(std::move(attrArgs)) {}

  std::string implementation() const override {
    const char *info = nullptr;
    dnnl_primitive_desc_query(prim_.get_primitive_desc(), dnnl_query_impl_info_str, 0, &info);
    return info ? info : "";
  }

  Error execute(char *const *buffers, ExternReorders *reorders) override {
    // Runs one reorder, timing it when asked (oneDNN's CPU stream runs it
    // before returning).
    auto reorder = [&](Operand &op, memory &from, memory &to, bool counted) {
      auto begin = std::chrono::steady_clock::now();
      op.reorder->execute(stream_, from, to);
      if (reorders && counted) {
        stream_.wait();
        ++reorders->count;
        reorders->seconds +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
      }
    };
    try {
      std::unordered_map<int, memory> args = attrArgs_;
      for (Operand &op : operands_) {
        char *data = buffers[op.buffer] + op.byteOffset;
        op.user.set_data_handle(data);
        if (op.reorder && !op.isOutput && !(op.constant && op.reorderedFrom == data)) {
          reorder(op, op.user, *op.own, !op.constant);
          op.reorderedFrom = op.constant ? data : nullptr;
        }
        args.emplace(op.arg, op.own ? *op.own : op.user);
      }
      prim_.execute(stream_, args);
      for (Operand &op : operands_)
        if (op.reorder && op.isOutput)
          reorder(op, *op.own, op.user, true);
      stream_.wait();
    } catch (const dnnl::error &e) {
      return makeError() << "oneDNN: " << e.what();
    }
    return Error::success();
  }

private:
  dnnl::stream &stream_;
  dnnl::primitive prim_;
  std::vector<Operand> operands_;
  /// Arguments the attributes need at run time (oneDNN 3's int8 scales
  /// and zero points), filled once.
  std::unordered_map<int, memory> attrArgs_;
};

/// Views of one call, checked for what every primitive here needs: a
/// floating-point type oneDNN takes (dnnlType), the same for every input,
/// and no empty tensor.
struct Views {
  const plan::OpStep &step;
  const std::vector<StridedLayout> &inputs;
  const std::vector<StridedLayout> &outputs;
  const std::vector<bool> &constant;

  /// An int8 call (scales set): a uint8 or int8 source, int8 weights, a
  /// float32, uint8 or int8 result, float32 post-op operands.
  bool int8() const { return step.dnnl() && step.dnnl()->scales(); }

  /// One type throughout, but that the result and the post-ops' operands
  /// of a 16-bit call may be float32 (an epilogue that widened the result,
  /// lib/Schedule/PostOps.cpp): oneDNN applies post-ops to float32 sums.
  bool usable() const {
    if (int8())
      return usableInt8();
    plan::DType first = step.inputs()->size() ? step.inputs()->Get(0)->dtype() : plan::DType::Float32;
    bool sixteenBits = first == plan::DType::BFloat16 || first == plan::DType::Float16;
    std::vector<bool> postOperand(inputs.size());
    const auto *postOps = step.dnnl()->post_ops();
    for (size_t k = 0; postOps && k < postOps->size(); ++k)
      if (postOps->Get(k)->input() < postOperand.size() &&
          (postOps->Get(k)->kind() == plan::PostOpKind::AddBias ||
           postOps->Get(k)->kind() == plan::PostOpKind::Add))
        postOperand[postOps->Get(k)->input()] = true;
    auto ok = [&](const plan::View *v, const StridedLayout &l, bool widened) {
      return dnnlType(v->dtype()) &&
             (v->dtype() == first || (widened && sixteenBits && v->dtype() == plan::DType::Float32)) &&
             l.numel() > 0;
    };
    for (size_t i = 0; i < inputs.size(); ++i)
      if (!ok(step.inputs()->Get(i), inputs[i], postOperand[i]))
        return false;
    return outputs.size() == 1 && ok(step.outputs()->Get(0), outputs[0], true);
  }
  bool usableInt8() const {
    const plan::DnnlCall &call = *step.dnnl();
    if (outputs.size() != 1 || outputs[0].numel() == 0)
      return false;
    plan::DType out = step.outputs()->Get(0)->dtype();
    if (out != plan::DType::Float32 && !isInt8(out))
      return false;
    for (size_t i = 0; i < inputs.size(); ++i) {
      plan::DType t = step.inputs()->Get(i)->dtype();
      bool ok = i == call.src()       ? isInt8(t)
                : i == call.weights() ? t == plan::DType::Int8
                                      : t == plan::DType::Float32;
      if (!ok || inputs[i].numel() == 0)
        return false;
    }
    return true;
  }
  Operand input(size_t i, int arg, const dnnl::engine &eng) const {
    const plan::View *view = step.inputs()->Get(i);
    return {arg,   view->buffer(), inputs[i].offset * elementBytes(view->dtype()),
            memory(plainDesc(inputs[i], view->dtype()), eng, nullptr), {}, {}, false,
            i < constant.size() && constant[i]};
  }
  Operand output(int arg, const dnnl::engine &eng) const {
    const plan::View *view = step.outputs()->Get(0);
    return {arg, view->buffer(), outputs[0].offset * elementBytes(view->dtype()),
            memory(plainDesc(outputs[0], view->dtype()), eng, nullptr), {}, {}, true};
  }
};

/// Appends `alg` with parameters `alpha` and `beta` (oneDNN 2 also took a
/// scale, always 1 here).
void appendEltwise(dnnl::post_ops &po, dnnl::algorithm alg, float alpha = 0.f, float beta = 0.f) {
#ifdef GC_DNNL3
  po.append_eltwise(alg, alpha, beta);
#else
  po.append_eltwise(1.f, alg, alpha, beta);
#endif
}

/// The post-ops of the step as oneDNN post-ops on a result of rank `rank`
/// whose bias runs along `biasDim`; binary post-ops add their operands.
std::optional<dnnl::post_ops> makePostOps(const Views &v, size_t rank, size_t biasDim,
                                         const dnnl::engine &eng, std::vector<Operand> &operands) {
  dnnl::post_ops po;
  if (v.step.dnnl()->rms_norm())
    return std::nullopt; // a normalisation of the left rows, which no oneDNN call applies
  const auto *postOps = v.step.dnnl()->post_ops();
  for (size_t k = 0; postOps && k < postOps->size(); ++k) {
    const plan::PostOp &p = *postOps->Get(k);
    int index = po.len();
    int arg = DNNL_ARG_ATTR_MULTIPLE_POST_OP(index) | DNNL_ARG_SRC_1;
    switch (p.kind()) {
    case plan::PostOpKind::AddBias: {
      const StridedLayout &bias = v.inputs[p.input()];
      if (bias.sizes.size() != 1)
        return std::nullopt;
      // The unit dims get the strides of a dense row-major tensor: with
      // any other (legal) stride oneDNN 2.6's int8 matmul sees no plain
      // layout and falls to its reference kernel (resnet50's fc: ~100 ms
      // against ~1 ms).
      Dims dims(rank, 1), strides(rank, 1);
      dims[biasDim] = bias.sizes[0];
      strides[biasDim] = bias.strides[0];
      for (size_t d = 0; d < biasDim; ++d)
        strides[d] = bias.sizes[0] * bias.strides[0];
      const plan::View *view = v.step.inputs()->Get(p.input());
      memory::desc md(dims, *dnnlType(view->dtype()), strides);
      po.append_binary(dnnl::algorithm::binary_add, md);
      operands.push_back({arg, view->buffer(), bias.offset * elementBytes(view->dtype()),
                          memory(md, eng, nullptr), {}, {}, false, false});
      break;
    }
    case plan::PostOpKind::Add: {
      if (v.inputs[p.input()].sizes != v.outputs[0].sizes)
        return std::nullopt;
      Operand op = v.input(p.input(), arg, eng);
      po.append_binary(dnnl::algorithm::binary_add, op.user.get_desc());
      operands.push_back(std::move(op));
      break;
    }
    case plan::PostOpKind::Relu:
      appendEltwise(po, dnnl::algorithm::eltwise_relu);
      break;
    case plan::PostOpKind::GeluErf:
      appendEltwise(po, dnnl::algorithm::eltwise_gelu_erf);
      break;
    case plan::PostOpKind::GeluTanh:
      appendEltwise(po, dnnl::algorithm::eltwise_gelu_tanh);
      break;
    case plan::PostOpKind::Swish: // x * sigmoid(alpha * x), alpha 1: SiLU
      appendEltwise(po, dnnl::algorithm::eltwise_swish, 1.f);
      break;
    case plan::PostOpKind::GatedSilu:
      return std::nullopt; // a second product, which no oneDNN post-op computes
    }
  }
  return po;
}

#ifdef GC_DNNL3
/// A one-dimensional memory of `values`, owned by the call.
template <typename T>
memory valuesMemory(const std::vector<T> &values, memory::data_type type,
                    const dnnl::engine &eng) {
  memory m(memory::desc({static_cast<int64_t>(values.size())}, type, memory::format_tag::a), eng);
  std::memcpy(m.get_data_handle(), values.data(), values.size() * sizeof(T));
  return m;
}
#endif

/// Multiplies an int8 call's accumulator by `scales` (one, or one per
/// output channel). oneDNN 2 takes them as output scales, per channel along
/// the result's dimension `channelDim`; oneDNN 3 as the weights' scales, a
/// run-time argument in `attrArgs`, per channel along the weights'
/// dimensions in `weightsMask` (the source keeps scale 1, so the product
/// is the same).
void setScales(dnnl::primitive_attr &attr, const std::vector<float> &scales,
               [[maybe_unused]] size_t channelDim, [[maybe_unused]] int weightsMask,
               [[maybe_unused]] const dnnl::engine &eng,
               [[maybe_unused]] std::unordered_map<int, memory> &attrArgs) {
  bool one = scales.size() == 1;
#ifdef GC_DNNL3
  attr.set_scales_mask(DNNL_ARG_WEIGHTS, one ? 0 : weightsMask);
  attrArgs.emplace(DNNL_ARG_ATTR_SCALES | DNNL_ARG_WEIGHTS,
                   valuesMemory(scales, memory::data_type::f32, eng));
#else
  attr.set_output_scales(one ? 0 : 1 << channelDim, scales);
#endif
}

/// One zero point for argument `arg` (DNNL_ARG_SRC or DNNL_ARG_DST): a
/// value in oneDNN 2, a run-time argument in `attrArgs` in oneDNN 3.
void setZeroPoint(dnnl::primitive_attr &attr, int arg, int32_t zeroPoint,
                  [[maybe_unused]] const dnnl::engine &eng,
                  [[maybe_unused]] std::unordered_map<int, memory> &attrArgs) {
#ifdef GC_DNNL3
  attr.set_zero_points_mask(arg, 0);
  attrArgs.emplace(DNNL_ARG_ATTR_ZERO_POINTS | arg,
                   valuesMemory(std::vector<int32_t>{zeroPoint}, memory::data_type::s32, eng));
#else
  attr.set_zero_points(arg, 0, {zeroPoint});
#endif
}

/// The call's attributes: its post-ops and, for an int8 call, the
/// accumulator's scales (per output channel along `channelDim` of the
/// result and along `weightsMask` of the weights, or one), the source zero
/// point, and the requantization of an integer result.
std::optional<dnnl::primitive_attr> makeAttr(const Views &v, size_t rank, size_t channelDim,
                                             int weightsMask, const dnnl::engine &eng,
                                             std::vector<Operand> &operands,
                                             std::unordered_map<int, memory> &attrArgs) {
  std::optional<dnnl::post_ops> po = makePostOps(v, rank, channelDim, eng, operands);
  if (!po)
    return std::nullopt;
  dnnl::primitive_attr attr;
  const plan::DnnlCall &call = *v.step.dnnl();
  if (v.int8()) {
    std::vector<float> scales(call.scales()->begin(), call.scales()->end());
    if (scales.size() != 1 &&
        static_cast<int64_t>(scales.size()) != v.outputs[0].sizes[channelDim])
      return std::nullopt;
    setScales(attr, scales, channelDim, weightsMask, eng, attrArgs);
    if (call.src_zero_point() != 0)
      setZeroPoint(attr, DNNL_ARG_SRC, call.src_zero_point(), eng, attrArgs);
    if (isInt8(v.step.outputs()->Get(0)->dtype())) {
      appendEltwise(*po, dnnl::algorithm::eltwise_linear, 1.f / call.dst_scale());
      if (call.dst_zero_point() != 0)
        setZeroPoint(attr, DNNL_ARG_DST, call.dst_zero_point(), eng, attrArgs);
    }
  }
  attr.set_post_ops(*po);
  return attr;
}

/// The matrix product's primitive: oneDNN 3 has no operation descriptor.
dnnl::matmul::primitive_desc matmulPd(const memory::desc &src, const memory::desc &weights,
                                      const memory::desc &dst, const dnnl::primitive_attr &attr,
                                      const dnnl::engine &eng) {
#ifdef GC_DNNL3
  return dnnl::matmul::primitive_desc(eng, src, weights, dst, attr);
#else
  return dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, weights, dst), attr, eng);
#endif
}

/// The inference convolution's primitive by algorithm `alg` (`bias` empty
/// for none), padded alike on both sides.
dnnl::convolution_forward::primitive_desc
convolutionPd(dnnl::algorithm alg, const memory::desc &src, const memory::desc &weights,
              const memory::desc &bias, const memory::desc &dst, const Dims &stride,
              const Dims &dilates, const Dims &padding, const dnnl::primitive_attr &attr,
              const dnnl::engine &eng) {
  auto prop = dnnl::prop_kind::forward_inference;
#ifdef GC_DNNL3
  return dnnl::convolution_forward::primitive_desc(eng, prop, alg, src, weights, bias, dst, stride,
                                                   dilates, padding, padding, attr);
#else
  return dnnl::convolution_forward::primitive_desc(
      dnnl::convolution_forward::desc(prop, alg, src, weights, bias, dst, stride, dilates,
                                      padding, padding),
      attr, eng);
#endif
}

/// Gives `op` a memory of its own when the primitive wants another layout.
void bindLayout(Operand &op, const memory::desc &wanted, const dnnl::engine &eng) {
  if (wanted == op.user.get_desc())
    return;
  op.own = memory(wanted, eng);
  op.reorder = op.isOutput ? dnnl::reorder(*op.own, op.user) : dnnl::reorder(op.user, *op.own);
}

std::unique_ptr<CpuCall> prepareMatmul(const Views &v, const dnnl::engine &eng,
                                        dnnl::stream &stream) {
  size_t a = v.step.dnnl()->src(), b = v.step.dnnl()->weights();
  size_t rank = v.outputs[0].sizes.size();
  // An int8 call's weights are a linear's, [N, K]: seen as [K, N] (batched:
  // [1, K, N], broadcast). A linear runs as a matmul, not as oneDNN 2.6's
  // inner product: both have brgemm int8 kernels (AMX, VNNI), but the inner
  // product refuses a source zero point, which PT2E's uint8 activations
  // have, and takes no 3-d source.
  bool linear = v.int8();
  if ((rank != 2 && rank != 3) || v.inputs[a].sizes.size() != rank ||
      v.inputs[b].sizes.size() != (linear ? 2 : rank))
    return nullptr;
  std::vector<Operand> ops = {v.input(a, DNNL_ARG_SRC, eng), v.input(b, DNNL_ARG_WEIGHTS, eng),
                              v.output(DNNL_ARG_DST, eng)};
  if (linear) {
    const StridedLayout &w = v.inputs[b];
    Dims dims = {w.sizes[1], w.sizes[0]}, strides = {w.strides[1], w.strides[0]};
    if (rank == 3) {
      dims.insert(dims.begin(), 1);
      strides.insert(strides.begin(), w.sizes[0] * w.sizes[1]);
    }
    ops[1].user = memory(memory::desc(dims, memory::data_type::s8, strides), eng, nullptr);
  }
  // The weights' output channels are their last dimension.
  int weightsMask = 1 << (descDims(ops[1].user.get_desc()).size() - 1);
  std::unordered_map<int, memory> attrArgs;
  std::optional<dnnl::primitive_attr> attr =
      makeAttr(v, rank, rank - 1, weightsMask, eng, ops, attrArgs);
  if (!attr)
    return nullptr;
  // Constant weights take the layout the primitive likes best, reordered
  // once; others stay as they are.
  memory::desc weights = ops[1].constant ? anyLayout(ops[1].user) : ops[1].user.get_desc();
  dnnl::matmul::primitive_desc pd =
      matmulPd(ops[0].user.get_desc(), weights, ops[2].user.get_desc(), *attr, eng);
  bindLayout(ops[1], pd.weights_desc(), eng);
  return std::make_unique<PrimitiveCall>(stream, dnnl::matmul(pd), std::move(ops),
                                         std::move(attrArgs));
}

/// The rule for oneDNN's Winograd algorithm (F(2x2,3x3) or F(4x4,3x3),
/// oneDNN's choice), for a call whose plan allows it: a float32 2-d 3x3
/// convolution, stride 1, no dilation, one group, with at least
/// kWinogradMinChannels input and output channels. Measured on a 2-core
/// Zen 5 at batch 1 (utils/bench/winograd.cpp; docs/backend.md, "Winograd
/// convolutions"), it beats the direct algorithm on every such shape of
/// resnet18/50 and VGG-16 (1.2 to 2.4 times as fast from cold caches),
/// reorders of the activations to and from its blocked layout included,
/// with errors of the same size against float64; a convolution of an
/// image's 3 channels is 3.5 times slower with it.
constexpr int64_t kWinogradMinChannels = 64;

bool winogradShape(const Views &v, const StridedLayout &wei, const Dims &stride,
                   const Dims &dilates, int64_t groups) {
  auto all = [](const Dims &d, int64_t value) {
    return std::all_of(d.begin(), d.end(), [&](int64_t x) { return x == value; });
  };
  return v.step.dnnl()->winograd() && v.step.outputs()->Get(0)->dtype() == plan::DType::Float32 &&
         wei.sizes.size() == 4 && wei.sizes[2] == 3 && wei.sizes[3] == 3 && all(stride, 1) &&
         all(dilates, 0) && groups == 1 && wei.sizes[0] >= kWinogradMinChannels &&
         wei.sizes[1] >= kWinogradMinChannels;
}

std::unique_ptr<CpuCall> prepareConvolution(const Views &v, const dnnl::engine &eng,
                                             dnnl::stream &stream) {
  const plan::DnnlCall &call = *v.step.dnnl();
  size_t x = call.src(), w = call.weights();
  std::optional<size_t> bias;
  if (call.bias() >= 0)
    bias = static_cast<size_t>(call.bias());
  const StridedLayout &src = v.inputs[x], &wei = v.inputs[w], &dst = v.outputs[0];
  size_t rank = src.sizes.size();
  if (rank < 3 || rank > 5 || wei.sizes.size() != rank || dst.sizes.size() != rank)
    return nullptr;
  size_t spatial = rank - 2;
  Dims stride = dimsOf(call.stride()), padding = dimsOf(call.padding());
  Dims dilates = dimsOf(call.dilation());
  int64_t groups = call.groups();
  int64_t outChannels = wei.sizes[0];
  if (stride.size() != spatial || padding.size() != spatial || dilates.size() != spatial ||
      groups < 1 || outChannels % groups != 0)
    return nullptr;
  // oneDNN counts dilation from 0 (no gap), torch from 1.
  for (int64_t &d : dilates)
    d -= 1;

  std::vector<Operand> ops = {v.input(x, DNNL_ARG_SRC, eng), v.input(w, DNNL_ARG_WEIGHTS, eng),
                              v.output(DNNL_ARG_DST, eng)};
  if (groups > 1) {
    // Weights [O, I/g, k...] seen as [g, O/g, I/g, k...].
    Dims dims = {groups, outChannels / groups}, strides = {wei.strides[0] * (outChannels / groups),
                                                           wei.strides[0]};
    dims.insert(dims.end(), wei.sizes.begin() + 1, wei.sizes.end());
    strides.insert(strides.end(), wei.strides.begin() + 1, wei.strides.end());
    ops[1].user =
        memory(memory::desc(dims, descType(ops[1].user.get_desc()), strides), eng, nullptr);
  }
  memory::desc biasDesc;
  if (bias) {
    if (v.inputs[*bias].sizes != std::vector<int64_t>{outChannels})
      return nullptr;
    ops.push_back(v.input(*bias, DNNL_ARG_BIAS, eng));
    biasDesc = ops.back().user.get_desc();
  }
  // The weights' output channels: [O, ...], or [g, O/g, ...] grouped.
  int weightsMask = groups > 1 ? 0b11 : 0b1;
  std::unordered_map<int, memory> attrArgs;
  std::optional<dnnl::primitive_attr> attr = makeAttr(v, rank, 1, weightsMask, eng, ops, attrArgs);
  if (!attr)
    return nullptr;

  // Where the Winograd rule holds, oneDNN's Winograd primitive runs if it
  // has one for the call (AVX-512, post-ops it takes), on the blocked
  // layouts it picks. Otherwise, weights may take any layout: they are
  // reordered once (constant). The activations keep the layouts they have
  // when a direct implementation takes them (channels-last: brgconv); else
  // the primitive picks them (reordering them every run still beats the
  // GEMM-based and reference implementations that take plain layouts,
  // depthwise ones above all; left to pick, it may choose those itself
  // where a binary post-op's operand is channels-last); then plain
  // activations, and a reference implementation that takes every layout is
  // the last resort.
  auto plainOrAny = [&](const memory &m, bool plain) {
    return plain ? m.get_desc() : anyLayout(m);
  };
  enum class Choice { Winograd, GivenActivations, PlainActivations, AllChosen, AllPlain };
  auto generic = [](const std::string &impl) {
    return impl.rfind("ref", 0) == 0 || impl.find("gemm") != std::string::npos;
  };
  std::optional<dnnl::convolution_forward::primitive_desc> pd;
  // Winograd transforms the weights: only constant ones, transformed once.
  bool winograd = winogradShape(v, wei, stride, dilates, groups) && ops[1].constant;
  for (Choice c : {Choice::Winograd, Choice::GivenActivations, Choice::AllChosen,
                   Choice::PlainActivations, Choice::AllPlain}) {
    if (c == Choice::Winograd && !winograd)
      continue;
    bool plainActs = c != Choice::AllChosen && c != Choice::Winograd;
    auto alg = c == Choice::Winograd ? dnnl::algorithm::convolution_winograd
                                     : dnnl::algorithm::convolution_direct;
    try {
      pd = convolutionPd(alg, plainOrAny(ops[0].user, plainActs),
                         plainOrAny(ops[1].user, c == Choice::AllPlain || !ops[1].constant),
                         biasDesc, plainOrAny(ops[2].user, plainActs), stride, dilates, padding,
                         *attr, eng);
    } catch (const dnnl::error &) {
      if (c == Choice::AllPlain)
        throw;
      continue;
    }
    std::string impl = pd->impl_info_str();
    if (c == Choice::Winograd || c == Choice::GivenActivations ? !generic(impl)
                                      : c == Choice::AllPlain || impl.rfind("ref", 0) != 0)
      break;
  }
  bindLayout(ops[0], pd->src_desc(), eng);
  bindLayout(ops[1], pd->weights_desc(), eng);
  bindLayout(ops[2], pd->dst_desc(), eng);
  return std::make_unique<PrimitiveCall>(stream, dnnl::convolution_forward(*pd), std::move(ops),
                                         std::move(attrArgs));
}

} // namespace

struct DnnlContext::Impl {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
};

DnnlContext::DnnlContext() : impl_(std::make_unique<Impl>()) {}
DnnlContext::~DnnlContext() = default;

std::unique_ptr<CpuCall> DnnlContext::prepare(const plan::OpStep &step,
                                               const std::vector<StridedLayout> &inputs,
                                               const std::vector<StridedLayout> &outputs,
                                               const std::vector<bool> &constant) {
  Views v{step, inputs, outputs, constant};
  if (!step.dnnl() || !v.usable())
    return nullptr;
  // A primitive oneDNN refuses to make means the reference kernel runs.
  try {
    switch (step.dnnl()->primitive()) {
    case plan::DnnlPrimitive::Matmul:
      return prepareMatmul(v, impl_->engine, impl_->stream);
    case plan::DnnlPrimitive::Convolution:
      return prepareConvolution(v, impl_->engine, impl_->stream);
    }
  } catch (const dnnl::error &) {
    return nullptr;
  }
  return nullptr;
}

} // namespace gc
