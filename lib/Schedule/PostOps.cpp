//===- PostOps.cpp - Folding pointwise epilogues into externs -------------===//
//
// The epilogue must read the extern's result X only at its own store
// position, so that storing its value where X's element would have gone
// is the same computation; X must be read by nobody else, and whatever else
// the epilogue reads must be ready when the extern runs.
//
// On the CPU a bfloat16 or float16 result may also be widened first: an
// epilogue that casts X to float32, applies its chain in float32 and
// stores float32 or casts back to X's type (what --precision=bf16 leaves
// around every product) folds as well. oneDNN applies post-ops to its
// float32 sums and converts once on the store, so the folded step rounds
// once where the epilogue rounded twice. Only a chain with an activation
// widens: a chain of adds fuses into the LayerNorm kernel that reads it,
// and folded into the product it made bert_base slower (docs/backend.md).
//
// On a GPU the products of a decode step take more: ProductFolds.cpp.
//
//===----------------------------------------------------------------------===//

#include "PostOps.h"

#include "Fusion.h"
#include "LoopRewrite.h"
#include "PostOpRules.h"
#include "ProductFolds.h"
#include "gc/IR/ExternOps.h"
#include "gc/IR/IndexSimplify.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>
#include <optional>

namespace gc::schedule {

namespace {

/// Whether an epilogue of an extern on `device` whose result has type
/// `result` may compute in float32 (see the file comment).
bool widens(TargetDevice device, DType result) {
  return device == TargetDevice::CPU && (result == DType::BFloat16 || result == DType::Float16);
}

/// Matches an epilogue body as a chain of post-ops applied to a load of
/// the extern's result, in the result's type or, widened, in `chain`.
class ChainMatcher {
public:
  ChainMatcher(SymContext &ctx, const LoopNode &ext, const LoopNode &epilogue, DType chain)
      : ctx_(ctx), ext_(ext), node_(epilogue), result_(ext.outputs[0]),
        store_(withoutUnitLoops(ctx, epilogue, epilogue.storeIndex)), chain_(chain) {}

  /// The post-ops in order, with the view each extra input is read through.
  struct Step {
    PostOp::Kind kind;
    std::optional<BufferView> input;
  };

  std::optional<std::vector<Step>> match() {
    std::vector<Step> steps;
    used_ = 0;
    uint32_t root = node_.body.result;
    // A widened chain may cast its float32 value back to the result's type.
    const BodyOp &last = node_.body.ops[root];
    if (widened() && last.kind == BodyOp::Kind::Cast && last.dtype == result_.type.dtype) {
      ++used_;
      root = last.operands[0];
    }
    if (!walk(root, steps) || used_ != node_.body.ops.size())
      return std::nullopt;
    return steps;
  }

private:
  bool isResultLoad(const BodyOp &op) const {
    return op.kind == BodyOp::Kind::Load && op.buffer == result_.buffer &&
           atStore(op.index) && op.mask < 0 && op.indirect.empty();
  }

  bool widened() const { return chain_ != result_.type.dtype; }

  /// Whether `op` computes in the chain's type.
  bool sameDType(const BodyOp &op) const {
    return op.dtype == chain_;
  }

  bool walk(uint32_t id, std::vector<Step> &steps) {
    const BodyOp &op = node_.body.ops[id];
    ++used_;
    if (!sameDType(op))
      return false;
    if (widened() ? op.kind == BodyOp::Kind::Cast && isResultLoad(node_.body.ops[op.operands[0]])
                  : isResultLoad(op)) {
      used_ += widened();
      return true;
    }
    if (op.kind != BodyOp::Kind::Compute)
      return false;
    const auto &ops = node_.body.ops;
    if (op.op == ScalarOp::Maximum)
      return activation(op, PostOp::Kind::Relu, steps, [](const BodyOp &other, uint32_t) {
        return other.kind == BodyOp::Kind::Const && other.constant == 0;
      });
    if (std::optional<Gelu> g = gelu(id)) {
      used_ += g->ops;
      if (!walk(g->input, steps))
        return false;
      steps.push_back({g->kind, std::nullopt});
      return true;
    }
    // SiLU (x * sigmoid(x)) is no post-op: gc's own kernel for it is
    // cheaper than oneDNN's eltwise_swish inside a convolution (on
    // efficientnet_b0, one thread: 1.8 ms for 48 kernels against 3.0 ms
    // added to the convolutions), and
    // neither GPU library applies it.
    if (op.op == ScalarOp::Add) {
      for (int side = 0; side < 2; ++side) {
        std::optional<Step> extra = extraInput(ops[op.operands[1 - side]]);
        if (!extra)
          continue;
        ++used_;
        if (!walk(op.operands[side], steps))
          return false;
        steps.push_back(*extra);
        return true;
      }
    }
    return false;
  }

  /// `op` as activation `kind` of one operand x, given whether its other
  /// operand is the partner that activation needs for x.
  template <typename Partner>
  bool activation(const BodyOp &op, PostOp::Kind kind, std::vector<Step> &steps,
                  Partner isPartner) {
    for (int side = 0; side < 2; ++side) {
      uint32_t x = op.operands[side];
      const BodyOp &other = node_.body.ops[op.operands[1 - side]];
      if (!isPartner(other, x) || !sameDType(other))
        continue;
      ++used_;
      if (!walk(x, steps))
        return false;
      steps.push_back({kind, std::nullopt});
      return true;
    }
    return false;
  }

  /// A GELU the body computes as torch decomposes it: `kind`, the value it
  /// applies to, and how many ops it takes besides the root and that value.
  struct Gelu {
    PostOp::Kind kind;
    uint32_t input;
    size_t ops;
  };

  /// 0.5 v (1 + erf(v / sqrt(2))) or 0.5 v (1 + tanh(sqrt(2 / pi) (v + 0.044715 v^3)))
  /// rooted at op `id`, the products in either order.
  std::optional<Gelu> gelu(uint32_t id) const {
    const auto &ops = node_.body.ops;
    const BodyOp &root = ops[id];
    if (root.op != ScalarOp::Mul || root.operands.size() != 2)
      return std::nullopt;
    for (int side = 0; side < 2; ++side) {
      std::optional<uint32_t> v = byConstant(root.operands[side], ScalarOp::Mul, 0.5);
      std::optional<uint32_t> f = byConstant(root.operands[1 - side], ScalarOp::Add, 1.0);
      if (!v || !f || !isUnary(ops[*f]))
        continue;
      uint32_t arg = ops[*f].operands[0];
      // The two products by constants above: four ops, and the function.
      const size_t outer = 5;
      if (ops[*f].op == ScalarOp::Erf && byConstant(arg, ScalarOp::Mul, std::numbers::sqrt2 / 2) == v)
        return Gelu{PostOp::Kind::GeluErf, *v, outer + 2};
      std::optional<uint32_t> sum =
          byConstant(arg, ScalarOp::Mul, std::sqrt(2 / std::numbers::pi));
      if (ops[*f].op != ScalarOp::Tanh || !sum || ops[*sum].op != ScalarOp::Add ||
          ops[*sum].kind != BodyOp::Kind::Compute || !sameDType(ops[*sum]))
        continue;
      for (int term = 0; term < 2; ++term) {
        std::optional<uint32_t> cube =
            byConstant(ops[*sum].operands[1 - term], ScalarOp::Mul, 0.044715);
        if (ops[*sum].operands[term] == *v && cube &&
            byConstant(*cube, ScalarOp::Pow, 3.0) == v)
          return Gelu{PostOp::Kind::GeluTanh, *v, outer + 7};
      }
    }
    return std::nullopt;
  }

  bool isUnary(const BodyOp &op) const {
    return op.kind == BodyOp::Kind::Compute && op.operands.size() == 1 && sameDType(op);
  }

  /// The other operand of op `id` if it is `kind` of that operand and a
  /// constant equal to `value` (as its dtype rounds it); a power's constant
  /// must be the exponent.
  std::optional<uint32_t> byConstant(uint32_t id, ScalarOp kind, double value) const {
    const auto &ops = node_.body.ops;
    const BodyOp &op = ops[id];
    if (op.kind != BodyOp::Kind::Compute || op.op != kind || op.operands.size() != 2 ||
        !sameDType(op))
      return std::nullopt;
    for (int side = kind == ScalarOp::Pow ? 1 : 0; side < 2; ++side) {
      const BodyOp &c = ops[op.operands[side]];
      if (c.kind == BodyOp::Kind::Const && std::fabs(c.constant - value) <= 1e-7 * value)
        return op.operands[1 - side];
    }
    return std::nullopt;
  }

  /// An Add's other operand: a same-shaped tensor read at the store
  /// position, or a bias along the extern's bias dimension.
  std::optional<Step> extraInput(const BodyOp &op) const {
    if (op.kind != BodyOp::Kind::Load || op.buffer == result_.buffer ||
        op.mask >= 0 || !op.indirect.empty() || !sameDType(op))
      return std::nullopt;
    if (atStore(op.index)) {
      TensorType t = result_.type;
      t.dtype = op.dtype;
      return Step{PostOp::Kind::Add, BufferView{op.buffer, std::move(t)}};
    }
    std::optional<size_t> dim = externBiasDim(ext_.op, result_.type.rank());
    if (!dim || !op.index->isSymbol())
      return std::nullopt;
    const std::string &var = op.index->symbolName();
    for (size_t k = 0; k < node_.ranges.size(); ++k) {
      if (loopVar(false, k) != var)
        continue;
      const SymExpr *stride = affineCoefficient(ctx_, node_.storeIndex, var);
      if (node_.ranges[k] != result_.type.sizes[*dim] ||
          stride != result_.type.strides[*dim])
        return std::nullopt;
      TensorType t;
      t.dtype = op.dtype;
      t.device = result_.type.device;
      t.sizes = {node_.ranges[k]};
      t.strides = {ctx_.constant(1)};
      t.storageOffset = ctx_.constant(0);
      return Step{PostOp::Kind::AddBias, BufferView{op.buffer, std::move(t)}};
    }
    return std::nullopt;
  }

  bool atStore(const SymExpr *index) const {
    return withoutUnitLoops(ctx_, node_, index) == store_;
  }

  SymContext &ctx_;
  const LoopNode &ext_;
  const LoopNode &node_;
  const BufferView &result_;
  const SymExpr *store_;
  DType chain_;
  size_t used_ = 0;
};

/// Whether every buffer `node` reads, other than `result`, is written only
/// by live nodes before `before`.
bool inputsReadyBefore(const std::vector<Access> &access,
                       const std::set<uint32_t> &folded, uint32_t node,
                       uint32_t result, uint32_t before) {
  for (uint32_t x : access[node].reads) {
    if (x == result)
      continue;
    for (uint32_t n = before; n < access.size(); ++n)
      if (!folded.count(n) && access[n].writes.count(x))
        return false;
  }
  return true;
}

} // namespace

bool libraryApplies(OpId op, TargetDevice device, const std::vector<PostOp::Kind> &kinds) {
  bool gated = std::find(kinds.begin(), kinds.end(), PostOp::Kind::GatedSilu) != kinds.end();
  if (device == TargetDevice::CPU)
    return !gated;
  if (gated)
    return kinds.size() == 1 && externOp(op)->call == ExternCall::Matmul;
  if (externOp(op)->call == ExternCall::Convolution)
    return std::all_of(kinds.begin(), kinds.end(), [](PostOp::Kind k) {
      return k == PostOp::Kind::AddBias || k == PostOp::Kind::Add || k == PostOp::Kind::Relu;
    });
  int adds = 0, biases = 0;
  for (size_t k = 0; k < kinds.size(); ++k) {
    switch (kinds[k]) {
    case PostOp::Kind::Add:
      ++adds;
      break;
    case PostOp::Kind::AddBias:
      ++biases;
      break;
    case PostOp::Kind::Relu:
    case PostOp::Kind::GeluTanh:
      if (k + 1 != kinds.size())
        return false;
      break;
    case PostOp::Kind::GeluErf:
    case PostOp::Kind::Swish:
    case PostOp::Kind::GatedSilu:
      return false;
    }
  }
  return adds <= 1 && biases <= 1;
}

const SymExpr *withoutUnitLoops(SymContext &ctx, const LoopNode &node, const SymExpr *e) {
  std::map<std::string, const SymExpr *> zeros;
  for (size_t k = 0; k < node.ranges.size(); ++k)
    if (node.ranges[k] == ctx.constant(1))
      zeros[loopVar(false, k)] = ctx.constant(0);
  return zeros.empty() ? e : substitute(ctx, e, zeros);
}

namespace {

/// Whether `b`'s elements fill its extent with no gaps in some order of its
/// dims: row-major, or with constant strides that are row-major strides of
/// the dims reordered (a channels-last activation).
bool dense(SymContext &ctx, const Buffer &b) {
  if (b.strides == contiguousStrides(ctx, b.sizes))
    return true;
  std::vector<std::pair<int64_t, int64_t>> dims; // (stride, size), dims of size 1 left out
  for (size_t d = 0; d < b.sizes.size(); ++d) {
    std::optional<int64_t> size = constantOf(b.sizes[d]), stride = constantOf(b.strides[d]);
    if (!size || !stride)
      return false;
    if (*size != 1)
      dims.emplace_back(*stride, *size);
  }
  std::sort(dims.begin(), dims.end());
  int64_t expected = 1;
  for (const auto &[stride, size] : dims) {
    if (stride != expected)
      return false;
    expected *= size;
  }
  return true;
}

} // namespace

bool sameOffsets(SymContext &ctx, const Buffer &result, const Buffer &out,
                 const LoopNode &epilogue) {
  if (out.sizes == result.sizes && out.strides == result.strides)
    return true;
  const SymExpr *count = extentProduct(ctx, out.sizes);
  return dense(ctx, out) && result.strides == contiguousStrides(ctx, result.sizes) &&
         extentProduct(ctx, result.sizes) == count && extentProduct(ctx, epilogue.ranges) == count;
}

std::optional<uint32_t> soleReader(const std::vector<Access> &access,
                                   const std::set<uint32_t> &folded,
                                   uint32_t buffer) {
  std::optional<uint32_t> reader;
  for (uint32_t n = 0; n < access.size(); ++n) {
    if (folded.count(n) || !access[n].reads.count(buffer))
      continue;
    if (reader)
      return std::nullopt;
    reader = n;
  }
  return reader;
}

std::optional<int64_t> constantOf(const SymExpr *e) {
  return e && e->isConst() ? std::optional<int64_t>(e->constant()) : std::nullopt;
}

std::set<uint32_t> foldPostOps(SymContext &ctx, LoopGraph &graph, TargetDevice device) {
  std::set<uint32_t> folded;
  for (uint32_t e = 0; e < graph.nodes.size(); ++e) {
    if (graph.nodes[e].kind != LoopNode::Kind::Extern || folded.count(e) ||
        graph.nodes[e].outputs.empty() ||
        !externBiasDim(graph.nodes[e].op, graph.nodes[e].outputs[0].type.rank()))
      continue;
    if (foldGatedPair(ctx, graph, device, folded, e))
      continue;
    while (true) {
      LoopNode &ext = graph.nodes[e];
      std::vector<Access> access = nodeAccesses(graph);
      uint32_t result = ext.outputs[0].buffer;
      const Buffer &buf = graph.buffers[result];
      std::optional<uint32_t> reader = soleReader(access, folded, result);
      if (buf.kind != BufferKind::Intermediate || !reader ||
          graph.nodes[*reader].kind != LoopNode::Kind::Pointwise ||
          scatters(graph.nodes[*reader]) || *reader < e ||
          !inputsReadyBefore(access, folded, *reader, result, e))
        break;
      const LoopNode &epilogue = graph.nodes[*reader];
      const Buffer &out = graph.buffers[epilogue.output];
      bool widening = widens(device, buf.dtype);
      if ((out.dtype != buf.dtype && !(widening && out.dtype == DType::Float32)) ||
          !sameOffsets(ctx, buf, out, epilogue))
        break;
      // An empty chain is a copy (a reshape of a user output, say): the
      // extern then writes the copy's buffer itself. A widened chain folds
      // only when it holds an activation (the file comment says why).
      auto steps = ChainMatcher(ctx, ext, epilogue, buf.dtype).match();
      if (!steps && widening) {
        steps = ChainMatcher(ctx, ext, epilogue, DType::Float32).match();
        if (steps && !std::any_of(steps->begin(), steps->end(), [](const auto &s) {
              return s.kind != PostOp::Kind::Add && s.kind != PostOp::Kind::AddBias;
            }))
          steps.reset();
      }
      if (!steps)
        break;
      std::vector<PostOp::Kind> kinds;
      for (const PostOp &p : ext.postOps)
        kinds.push_back(p.kind);
      for (const auto &step : *steps)
        kinds.push_back(step.kind);
      if (!libraryApplies(ext.op, device, kinds))
        break;
      for (const auto &step : *steps) {
        PostOp p{step.kind, 0};
        if (step.input) {
          p.input = static_cast<uint32_t>(ext.inputs.size());
          ext.inputs.push_back(*step.input);
        }
        ext.postOps.push_back(p);
      }
      ext.outputs[0].buffer = epilogue.output;
      ext.outputs[0].type.dtype = out.dtype;
      folded.insert(*reader);
    }
    foldResidualAdd(ctx, graph, device, folded, e);
  }
  // After the residual adds: a folded add leaves the norm reading h alone.
  for (uint32_t p = 0; p < graph.nodes.size(); ++p)
    if (!folded.count(p))
      foldRmsNorm(ctx, graph, device, folded, p);
  return folded;
}

} // namespace gc::schedule
