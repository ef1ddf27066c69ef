//===- ProductFolds.cpp - Decode-step neighbours folded into products ----===//
//
// On a GPU, a gated MLP's silu(x Wg^T) * (x Wu^T) folds into the gate's
// product as a GatedSilu post-op naming Wu: the up product and the
// pointwise node go, and gc's few-row kernel computes both sums of each
// output element in one launch and stores the gated value, rounded once
// (the pointwise node, in 16-bit types, rounded each product and the SiLU
// too). Only that kernel computes such a pair, so the pair folds only
// where the runtime will run it: a static count of rows by a Linear weight
// that its rule (gc/Support/GpuFewRows.h) gives the kernel, a decode
// step's. Anything else (a prefill's rows, symbolic or many) keeps its two
// cuBLASLt products and the pointwise kernel, as fast as before; a pair
// the kernel declines after all (a libgcrt built without it) runs on the
// fallback component.
//
// The residual adds around a layer's output and down products fold into
// them as Add post-ops (foldResidualAdd), and each RMSNorm into the
// products after it as their prologue (foldRmsNorm): the few-row kernel
// normalises the left rows as it reads them. Each fold holds only on a GPU
// and, but for the residual adds (cuBLASLt takes one too), only where the
// few-row kernel runs the product.
//
//===----------------------------------------------------------------------===//
#include "ProductFolds.h"

#include "LoopRewrite.h"
#include "PostOpRules.h"

#include "gc/IR/ExternOps.h"
#include "gc/IR/IndexSimplify.h"
#include "gc/Support/GpuFewRows.h"

#include <algorithm>
#include <cmath>

namespace gc::schedule {

namespace {

/// Whether gc's few-row GPU kernel will run `product` (a matrix product
/// with its operands at `operands`): static sizes, the dims before the
/// last two of size 1, a Linear weight ([N, K] with contiguous rows, seen
/// transposed) and contiguous left rows, as the kernel reads them
/// (lib/Runtime/Cuda/CudaFewRowProduct.h), and a shape its rule takes.
bool runsOnFewRowKernel(const LoopNode &product, ProductOperands operands) {
  const TensorType &a = product.inputs[operands.src].type,
                   &w = product.inputs[operands.weights].type, &o = product.outputs[0].type;
  size_t rank = o.rank();
  if (rank < 2 || a.rank() != rank || w.rank() != rank || a.dtype != o.dtype ||
      w.dtype != o.dtype || !(o.dtype == DType::Float32 || isHalfPrecision(o.dtype)))
    return false;
  for (size_t d = 0; d + 2 < rank; ++d)
    if (constantOf(o.sizes[d]) != 1)
      return false;
  std::optional<int64_t> rows = constantOf(o.sizes[rank - 2]), n = constantOf(o.sizes[rank - 1]),
                         k = constantOf(a.sizes[rank - 1]);
  if (!rows || !n || !k || *rows < 1 || *rows > kGpuFewRowsMax || *n < 1 || *k < 1 ||
      *n > INT32_MAX || *k > INT32_MAX)
    return false;
  if (*k > 1 && (constantOf(w.strides[rank - 2]) != 1 || constantOf(a.strides[rank - 1]) != 1))
    return false;
  return fewRowKernelWins(*rows, *n, *k, dtypeSize(o.dtype));
}

/// What the matchers of folded bodies share: a walk over one node's body
/// that records every op it looks at (a fold needs every op to take part),
/// floating-point casts seen through (a folded computation runs in float32
/// and rounds once), and loads at the node's store position.
class BodyMatcher {
protected:
  BodyMatcher(SymContext &ctx, const LoopNode &node)
      : ctx_(ctx), node_(node), store_(withoutUnitLoops(ctx, node, node.storeIndex)) {}

  const BodyOp &op(uint32_t id) {
    used_.insert(id);
    return node_.body.ops[id];
  }

  /// Whether every op of the body was looked at.
  bool usedAll() const { return used_.size() == node_.body.ops.size(); }

  static bool floating(DType t) { return t == DType::Float32 || isHalfPrecision(t); }

  /// `id` past any floating-point casts.
  uint32_t strip(uint32_t id) {
    while (op(id).kind == BodyOp::Kind::Cast && floating(node_.body.ops[id].dtype))
      id = node_.body.ops[id].operands[0];
    return id;
  }

  /// Whether `id` is a plain load at the store position (of `buffer`, if
  /// given).
  bool isLoadAtStore(uint32_t id, std::optional<uint32_t> buffer = std::nullopt) {
    const BodyOp &o = op(id);
    return o.kind == BodyOp::Kind::Load && (!buffer || o.buffer == *buffer) && o.mask < 0 &&
           o.indirect.empty() && withoutUnitLoops(ctx_, node_, o.index) == store_;
  }

  SymContext &ctx_;
  const LoopNode &node_;
  const SymExpr *store_;

private:
  std::set<uint32_t> used_;
};

/// Matches a pointwise body as silu(g) * u (SiLU written x * sigmoid(x)),
/// either product in either order, where g and u are loads of the buffers
/// `gate` and `up` at the store position; casts between floating-point
/// types may stand anywhere (a 16-bit model's float32 SiLU), since the
/// folded pair computes in float32 and rounds once. Every op of the body
/// must take part.
class GatedSiluMatcher : BodyMatcher {
public:
  GatedSiluMatcher(SymContext &ctx, const LoopNode &node, uint32_t gate, uint32_t up)
      : BodyMatcher(ctx, node), gate_(gate), up_(up) {}

  bool match() {
    const BodyOp &root = op(strip(node_.body.result));
    if (!isBinary(root, ScalarOp::Mul))
      return false;
    for (int side = 0; side < 2; ++side)
      if (isSiluOfGate(strip(root.operands[side])) &&
          isLoadAtStore(strip(root.operands[1 - side]), up_))
        return usedAll();
    return false;
  }

private:
  bool isBinary(const BodyOp &o, ScalarOp kind) const {
    return o.kind == BodyOp::Kind::Compute && o.op == kind && o.operands.size() == 2 &&
           floating(o.dtype);
  }

  /// x * sigmoid(x), x the gate's load.
  bool isSiluOfGate(uint32_t id) {
    const BodyOp &mul = op(id);
    if (!isBinary(mul, ScalarOp::Mul))
      return false;
    for (int side = 0; side < 2; ++side) {
      const BodyOp &sigmoid = op(strip(mul.operands[1 - side]));
      if (sigmoid.kind == BodyOp::Kind::Compute && sigmoid.op == ScalarOp::Sigmoid &&
          floating(sigmoid.dtype) && isLoadAtStore(strip(mul.operands[side]), gate_) &&
          isLoadAtStore(strip(sigmoid.operands[0]), gate_))
        return true;
    }
    return false;
  }

  uint32_t gate_, up_;
};

/// Keeps only the ops of `node`'s body that its result and its store need.
void dropUnusedOps(LoopNode &node) {
  std::vector<uint32_t> roots = node.storeIndirect;
  roots.push_back(node.body.result);
  std::vector<uint32_t> renumbered = keepNeededOps(node.body, roots);
  for (uint32_t &v : node.storeIndirect)
    v = renumbered[v];
}

/// The Add ops of `node`'s body that take each load of `result` (an
/// unmasked direct load, read by that Add alone, in `result`'s type) with
/// a load of one other buffer at the same index, and that buffer; nullopt
/// if any load of `result` is not so used or two such buffers differ from
/// `residual` (when set) or one another.
std::optional<std::vector<uint32_t>> residualAdds(const LoopNode &node, uint32_t result,
                                                  DType dtype,
                                                  std::optional<uint32_t> &residual) {
  const std::vector<BodyOp> &ops = node.body.ops;
  std::vector<uint32_t> uses(ops.size(), 0);
  for (const BodyOp &op : ops) {
    for (uint32_t o : op.operands)
      ++uses[o];
    for (uint32_t o : op.indirect)
      ++uses[o];
    if (op.mask >= 0)
      ++uses[op.mask];
  }
  for (uint32_t v : node.storeIndirect)
    ++uses[v];
  ++uses[node.body.result];
  auto plainLoad = [&](uint32_t id) {
    const BodyOp &op = ops[id];
    return op.kind == BodyOp::Kind::Load && op.mask < 0 && op.indirect.empty() &&
           op.dtype == dtype;
  };
  std::vector<uint32_t> adds;
  size_t loads = 0;
  for (uint32_t id = 0; id < ops.size(); ++id) {
    const BodyOp &op = ops[id];
    if (op.kind == BodyOp::Kind::Load && op.buffer == result)
      ++loads;
    if (op.kind != BodyOp::Kind::Compute || op.op != ScalarOp::Add || op.dtype != dtype ||
        op.operands.size() != 2)
      continue;
    for (int side = 0; side < 2; ++side) {
      const BodyOp &r = ops[op.operands[side]], &x = ops[op.operands[1 - side]];
      if (!plainLoad(op.operands[side]) || r.buffer != result || uses[op.operands[side]] != 1 ||
          !plainLoad(op.operands[1 - side]) || x.buffer == result || x.index != r.index ||
          (residual && *residual != x.buffer))
        continue;
      residual = x.buffer;
      adds.push_back(id);
      break;
    }
  }
  if (adds.size() != loads)
    return std::nullopt;
  return adds;
}

/// The parts of a decode step's RMSNorm, `g * (h * rsqrt(s / k + eps))`
/// with s the sum of h's squares: what a product reading its result needs
/// to normalise h itself.
struct RmsNormParts {
  uint32_t h = 0, g = 0, s = 0;
  double eps = 0;
};

/// Matches the RMSNorm of one row of k elements: a pointwise body that
/// multiplies three factors in any order and association, h and g loaded at
/// the store position (a dense row, so g's element is h's), and
/// rsqrt(s / k + eps) (or s * (1 / k)) with s loaded at element 0 and eps
/// a constant; and the reduction writing s, the sum over k of h's squares
/// (pow(h, 2) or h * h), loaded at r0. Casts between floating-point types
/// may stand anywhere, as the folded norm computes in float32. Every op of
/// both bodies must take part.
class RmsNormMatcher : BodyMatcher {
public:
  RmsNormMatcher(SymContext &ctx, const LoopNode &norm, int64_t k) : BodyMatcher(ctx, norm), k_(k) {}

  /// h, g, s and eps of the normalisation, if its body is one.
  std::optional<RmsNormParts> matchNormalisation() {
    std::vector<uint32_t> factors;
    collectFactors(node_.body.result, factors);
    if (factors.size() != 3)
      return std::nullopt;
    std::optional<uint32_t> h, g;
    std::optional<RmsNormParts> scale;
    for (uint32_t f : factors) {
      const BodyOp &o = op(f);
      if (o.kind == BodyOp::Kind::Compute && o.op == ScalarOp::Rsqrt && floating(o.dtype))
        scale = meanSquareScale(strip(o.operands[0]));
      else if (floating(o.dtype) && isLoadAtStore(f) && !h)
        h = o.buffer;
      else if (floating(o.dtype) && isLoadAtStore(f))
        g = o.buffer;
    }
    if (!scale || !h || !g || !usedAll())
      return std::nullopt;
    // Which of the two loads is the row and which the weight, the caller
    // tells from the sum of squares; here h is the first in factor order.
    scale->h = *h;
    scale->g = *g;
    return scale;
  }

  /// Whether `sum`, a reduction, is the sum over k of `h`'s squares.
  static bool isSumOfSquares(SymContext &ctx, const LoopNode &sum, uint32_t h, int64_t k) {
    if (sum.kind != LoopNode::Kind::Reduction || sum.reduce != ReduceKind::Sum || sum.scan ||
        sum.reductionRanges.size() != 1 || constantOf(sum.reductionRanges[0]) != k ||
        scatters(sum))
      return false;
    RmsNormMatcher m(ctx, sum, k);
    uint32_t root = m.strip(sum.body.result);
    const BodyOp &sq = m.op(root);
    if (sq.kind != BodyOp::Kind::Compute || !floating(sq.dtype) || sq.operands.size() != 2)
      return false;
    auto isRowLoad = [&](uint32_t id) {
      const BodyOp &o = m.op(id);
      return o.kind == BodyOp::Kind::Load && o.buffer == h && o.mask < 0 && o.indirect.empty() &&
             withoutUnitLoops(ctx, sum, o.index) == ctx.symbol(loopVar(true, 0));
    };
    bool squares = false;
    if (sq.op == ScalarOp::Pow) {
      const BodyOp &two = m.op(m.strip(sq.operands[1]));
      squares = two.kind == BodyOp::Kind::Const && two.constant == 2 &&
                isRowLoad(m.strip(sq.operands[0]));
    } else if (sq.op == ScalarOp::Mul) {
      uint32_t a = m.strip(sq.operands[0]), b = m.strip(sq.operands[1]);
      squares = isRowLoad(a) && isRowLoad(b) && sum.body.ops[a].index == sum.body.ops[b].index;
    }
    return squares && m.usedAll() && constantOf(withoutUnitLoops(ctx, sum, sum.storeIndex)) == 0;
  }

private:
  /// The factors of the product tree at `id`, casts stripped.
  void collectFactors(uint32_t id, std::vector<uint32_t> &out) {
    id = strip(id);
    const BodyOp &o = op(id);
    if (o.kind == BodyOp::Kind::Compute && o.op == ScalarOp::Mul && floating(o.dtype) &&
        o.operands.size() == 2) {
      collectFactors(o.operands[0], out);
      collectFactors(o.operands[1], out);
    } else {
      out.push_back(id);
    }
  }

  /// s / k + eps (either order of the sum; s * (1 / k) too): s and eps.
  std::optional<RmsNormParts> meanSquareScale(uint32_t id) {
    const BodyOp &add = op(id);
    if (add.kind != BodyOp::Kind::Compute || add.op != ScalarOp::Add || add.operands.size() != 2)
      return std::nullopt;
    for (int side = 0; side < 2; ++side) {
      const BodyOp &eps = op(strip(add.operands[1 - side]));
      const BodyOp &mean = op(strip(add.operands[side]));
      if (eps.kind != BodyOp::Kind::Const || mean.kind != BodyOp::Kind::Compute ||
          mean.operands.size() != 2)
        continue;
      const BodyOp &sum = op(strip(mean.operands[0]));
      const BodyOp &by = op(strip(mean.operands[1]));
      double k = static_cast<double>(k_);
      bool divides = by.kind == BodyOp::Kind::Const &&
                     ((mean.op == ScalarOp::Div && by.constant == k) ||
                      (mean.op == ScalarOp::Mul && std::abs(by.constant * k - 1) < 1e-12));
      if (divides && sum.kind == BodyOp::Kind::Load && sum.mask < 0 && sum.indirect.empty() &&
          constantOf(withoutUnitLoops(ctx_, node_, sum.index)) == 0)
        return RmsNormParts{0, 0, sum.buffer, eps.constant};
    }
    return std::nullopt;
  }

  int64_t k_;
};

/// Whether `b` is a dense buffer of one row of k elements of `dtype`.
bool isDenseRow(SymContext &ctx, const Buffer &b, DType dtype, int64_t k) {
  return b.dtype == dtype && b.strides == contiguousStrides(ctx, b.sizes) &&
         constantOf(extentProduct(ctx, b.sizes)) == k;
}

/// The node that writes `copy` as a float32 copy of a 16-bit buffer (its
/// body a cast of one load at the store position, the copy dense as the
/// source) when it alone writes it and only the nodes `readers` read it.
std::optional<uint32_t> widenedCopy(SymContext &ctx, const LoopGraph &graph,
                                    const std::vector<Access> &access,
                                    const std::set<uint32_t> &folded, uint32_t copy,
                                    const std::set<uint32_t> &readers) {
  if (graph.buffers[copy].kind != BufferKind::Intermediate)
    return std::nullopt;
  std::optional<uint32_t> writer;
  for (uint32_t e = 0; e < graph.nodes.size(); ++e) {
    if (folded.count(e))
      continue;
    if (access[e].reads.count(copy) && !readers.count(e))
      return std::nullopt;
    if (access[e].writes.count(copy)) {
      if (writer)
        return std::nullopt;
      writer = e;
    }
  }
  if (!writer)
    return std::nullopt;
  const LoopNode &node = graph.nodes[*writer];
  const std::vector<BodyOp> &ops = node.body.ops;
  if (node.kind != LoopNode::Kind::Pointwise || scatters(node) || ops.size() != 2 ||
      node.body.result != 1 || ops[1].kind != BodyOp::Kind::Cast ||
      ops[1].dtype != DType::Float32 || ops[1].operands != std::vector<uint32_t>{0} ||
      ops[0].kind != BodyOp::Kind::Load || !isHalfPrecision(ops[0].dtype) || ops[0].mask >= 0 ||
      !ops[0].indirect.empty() ||
      withoutUnitLoops(ctx, node, ops[0].index) != withoutUnitLoops(ctx, node, node.storeIndex))
    return std::nullopt;
  const Buffer &source = graph.buffers[ops[0].buffer], &dest = graph.buffers[copy];
  if (source.strides != contiguousStrides(ctx, source.sizes) ||
      dest.strides != contiguousStrides(ctx, dest.sizes) ||
      extentProduct(ctx, source.sizes) != extentProduct(ctx, dest.sizes) ||
      extentProduct(ctx, node.ranges) != extentProduct(ctx, dest.sizes))
    return std::nullopt;
  return writer;
}

} // namespace

bool foldGatedPair(SymContext &ctx, LoopGraph &graph, TargetDevice device,
                   std::set<uint32_t> &folded, uint32_t e) {
  LoopNode &gate = graph.nodes[e];
  std::optional<ProductOperands> operands = productOperands(gate);
  if (!operands || !gate.postOps.empty() || gate.outputs.size() != 1 ||
      !libraryApplies(gate.op, device, {PostOp::Kind::GatedSilu}) ||
      !runsOnFewRowKernel(gate, *operands))
    return false;
  std::vector<Access> access = nodeAccesses(graph);
  uint32_t g = gate.outputs[0].buffer;
  std::optional<uint32_t> reader = soleReader(access, folded, g);
  if (graph.buffers[g].kind != BufferKind::Intermediate || !reader ||
      graph.nodes[*reader].kind != LoopNode::Kind::Pointwise ||
      scatters(graph.nodes[*reader]) || *reader < e)
    return false;
  const LoopNode &epilogue = graph.nodes[*reader];
  // The up product: the one node writing the other buffer the epilogue reads.
  std::set<uint32_t> others = access[*reader].reads;
  others.erase(g);
  if (others.size() != 1)
    return false;
  uint32_t u = *others.begin();
  std::optional<uint32_t> upNode;
  for (uint32_t n = 0; n < graph.nodes.size(); ++n)
    if (!folded.count(n) && access[n].writes.count(u)) {
      if (upNode)
        return false;
      upNode = n;
    }
  if (!upNode || *upNode == e || graph.buffers[u].kind != BufferKind::Intermediate ||
      soleReader(access, folded, u) != reader)
    return false;
  const LoopNode &up = graph.nodes[*upNode];
  std::optional<ProductOperands> upOperands = productOperands(up);
  if (up.kind != LoopNode::Kind::Extern || up.op != gate.op || !upOperands ||
      !up.postOps.empty() || up.outputs.size() != 1 || up.outputs[0].buffer != u ||
      up.outputs[0].type != gate.outputs[0].type ||
      up.inputs[upOperands->src] != gate.inputs[operands->src])
    return false;
  const BufferView &upWeight = up.inputs[upOperands->weights];
  const TensorType &w = gate.inputs[operands->weights].type;
  if (upWeight.type.dtype != w.dtype || upWeight.type.sizes != w.sizes ||
      upWeight.type.strides != w.strides)
    return false;
  // The up product moves to the gate's place: what it reads must not change
  // between the two.
  for (uint32_t n = std::min(e, *upNode) + 1; n < std::max(e, *upNode); ++n)
    if (!folded.count(n) && (access[n].writes.count(upWeight.buffer) ||
                             access[n].writes.count(gate.inputs[operands->src].buffer)))
      return false;
  const Buffer &out = graph.buffers[epilogue.output];
  if (out.dtype != graph.buffers[g].dtype || graph.buffers[u].sizes != graph.buffers[g].sizes ||
      graph.buffers[u].strides != graph.buffers[g].strides ||
      !sameOffsets(ctx, graph.buffers[g], out, epilogue) ||
      !GatedSiluMatcher(ctx, epilogue, g, u).match())
    return false;
  gate.postOps.push_back({PostOp::Kind::GatedSilu, static_cast<uint32_t>(gate.inputs.size())});
  gate.inputs.push_back(upWeight);
  gate.outputs[0].buffer = epilogue.output;
  folded.insert(*upNode);
  folded.insert(*reader);
  return true;
}

bool foldResidualAdd(SymContext &ctx, LoopGraph &graph, TargetDevice device,
                     const std::set<uint32_t> &folded, uint32_t e) {
  LoopNode &product = graph.nodes[e];
  if (device == TargetDevice::CPU || !productOperands(product) || product.outputs.size() != 1)
    return false;
  std::vector<PostOp::Kind> kinds;
  for (const PostOp &p : product.postOps)
    kinds.push_back(p.kind);
  kinds.push_back(PostOp::Kind::Add);
  if (!libraryApplies(product.op, device, kinds))
    return false;
  const BufferView &view = product.outputs[0];
  uint32_t result = view.buffer;
  const Buffer &buf = graph.buffers[result];
  if (buf.kind != BufferKind::Intermediate || buf.dtype != view.type.dtype)
    return false;
  std::vector<Access> access = nodeAccesses(graph);
  std::optional<uint32_t> residual;
  std::vector<std::pair<uint32_t, std::vector<uint32_t>>> readers;
  for (uint32_t n = 0; n < graph.nodes.size(); ++n) {
    // Another writer's elements of the result would lose their x.
    if (!folded.count(n) && n != e && access[n].writes.count(result))
      return false;
    if (folded.count(n) || n == e || !access[n].reads.count(result))
      continue;
    const LoopNode &reader = graph.nodes[n];
    if (n < e ||
        (reader.kind != LoopNode::Kind::Pointwise && reader.kind != LoopNode::Kind::Reduction) ||
        reader.output == result)
      return false;
    std::optional<std::vector<uint32_t>> adds = residualAdds(reader, result, buf.dtype, residual);
    if (!adds)
      return false;
    readers.push_back({n, std::move(*adds)});
  }
  if (readers.empty() || !residual)
    return false;
  // x is read through the result's view, element for element: both dense
  // with as many elements, and the readers load both at one offset.
  const Buffer &x = graph.buffers[*residual];
  if (x.dtype != buf.dtype || x.strides != contiguousStrides(ctx, x.sizes) ||
      buf.strides != contiguousStrides(ctx, buf.sizes) ||
      extentProduct(ctx, x.sizes) != extentProduct(ctx, buf.sizes))
    return false;
  for (uint32_t n = e; n < graph.nodes.size(); ++n)
    if (!folded.count(n) && access[n].writes.count(*residual))
      return false;
  for (auto &[n, adds] : readers) {
    LoopNode &reader = graph.nodes[n];
    for (uint32_t id : adds) {
      const BodyOp &op = reader.body.ops[id];
      uint32_t load = reader.body.ops[op.operands[0]].buffer == result ? op.operands[0]
                                                                       : op.operands[1];
      reader.body.ops[id] = reader.body.ops[load];
    }
    dropUnusedOps(reader);
  }
  product.postOps.push_back({PostOp::Kind::Add, static_cast<uint32_t>(product.inputs.size())});
  product.inputs.push_back(BufferView{*residual, view.type});
  return true;
}

bool foldRmsNorm(SymContext &ctx, LoopGraph &graph, TargetDevice device,
                 std::set<uint32_t> &folded, uint32_t p) {
  const LoopNode &norm = graph.nodes[p];
  if (device == TargetDevice::CPU || norm.kind != LoopNode::Kind::Pointwise || scatters(norm))
    return false;
  uint32_t n = norm.output;
  const Buffer &nb = graph.buffers[n];
  if (nb.kind != BufferKind::Intermediate)
    return false;
  std::vector<Access> access = nodeAccesses(graph);
  std::vector<uint32_t> products;
  std::optional<int64_t> k;
  for (uint32_t e = 0; e < graph.nodes.size(); ++e) {
    if (folded.count(e) || e == p)
      continue;
    if (access[e].writes.count(n))
      return false;
    if (!access[e].reads.count(n))
      continue;
    const LoopNode &product = graph.nodes[e];
    std::optional<ProductOperands> operands =
        product.kind == LoopNode::Kind::Extern ? productOperands(product) : std::nullopt;
    if (e < p || !operands || product.rmsNorm || !runsOnFewRowKernel(product, *operands))
      return false;
    for (uint32_t i = 0; i < product.inputs.size(); ++i)
      if ((product.inputs[i].buffer == n) != (i == operands->src))
        return false;
    const TensorType &a = product.inputs[operands->src].type;
    std::optional<int64_t> rowK = constantOf(a.sizes.back());
    if (!rowK || (k && *k != *rowK) || constantOf(extentProduct(ctx, a.sizes)) != *rowK)
      return false;
    k = rowK;
    products.push_back(e);
  }
  if (products.empty() || !isDenseRow(ctx, nb, nb.dtype, *k))
    return false;
  std::optional<RmsNormParts> parts = RmsNormMatcher(ctx, norm, *k).matchNormalisation();
  if (!parts)
    return false;
  // The sum of squares: written by one live reduction of h, read by the
  // normalisation alone; of the two loads, h is the one it squares.
  std::optional<uint32_t> sum;
  for (uint32_t e = 0; e < graph.nodes.size(); ++e) {
    if (folded.count(e) || e == p)
      continue;
    if (access[e].reads.count(parts->s))
      return false;
    if (access[e].writes.count(parts->s)) {
      if (sum)
        return false;
      sum = e;
    }
  }
  if (!sum || *sum > p || graph.buffers[parts->s].kind != BufferKind::Intermediate)
    return false;
  if (!RmsNormMatcher::isSumOfSquares(ctx, graph.nodes[*sum], parts->h, *k))
    std::swap(parts->h, parts->g);
  if (parts->h == parts->g || !RmsNormMatcher::isSumOfSquares(ctx, graph.nodes[*sum], parts->h, *k))
    return false;
  // A norm of a 16-bit row that reads a float32 copy of it (the last
  // layer's h, widened once for both nodes) reads the row itself: the
  // prologue widens as it loads, and the copy goes too.
  uint32_t row = parts->h, first = *sum;
  std::optional<uint32_t> widening;
  if (graph.buffers[row].dtype == DType::Float32 && nb.dtype != DType::Float32) {
    widening = widenedCopy(ctx, graph, access, folded, row, {*sum, p});
    if (!widening || *widening > *sum)
      return false;
    row = graph.nodes[*widening].body.ops[0].buffer;
    first = *widening;
  }
  const Buffer &hb = graph.buffers[row], &gb = graph.buffers[parts->g];
  if (!isDenseRow(ctx, hb, nb.dtype, *k) || !isDenseRow(ctx, gb, nb.dtype, *k) ||
      gb.sizes.size() != 1)
    return false;
  // The products read the row and g where the norm's first node read them:
  // nothing may write either in between.
  for (uint32_t e = first + 1; e < products.back(); ++e)
    if (!folded.count(e) && (access[e].writes.count(row) || access[e].writes.count(parts->g)))
      return false;
  for (uint32_t e : products) {
    LoopNode &product = graph.nodes[e];
    BufferView &a = product.inputs[productOperands(product)->src];
    a.buffer = row;
    TensorType weight = a.type;
    weight.sizes = {ctx.constant(*k)};
    weight.strides = {ctx.constant(1)};
    weight.storageOffset = ctx.constant(0);
    product.rmsNorm = RmsNormPrologue{static_cast<uint32_t>(product.inputs.size()), parts->eps};
    product.inputs.push_back(BufferView{parts->g, weight});
  }
  folded.insert(p);
  folded.insert(*sum);
  if (widening)
    folded.insert(*widening);
  return true;
}

} // namespace gc::schedule
