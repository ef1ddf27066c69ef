//===- Pooling.cpp - 2-d max and average pooling --------------------------===//
//
// max_pool2d (values, and indices where they are read) and avg_pool2d as
// Reductions over each window.
//
//===----------------------------------------------------------------------===//
#include "../GraphLowerer.h"

#include "gc/IR/ArgReader.h"

#include <limits>

namespace gc::lower {

namespace {

/// `x` read at `in`, a window element of a pooling over the last two dims;
/// `outside` (as `dtype`) where the element lies in the padding or past the
/// input (ceil_mode). Without padding or ceil_mode every window lies inside.
uint32_t emitWindow(BodyBuilder &b, const Lowered &x, const Exprs &in,
                    const std::vector<int64_t> &padding, bool ceilMode, DType dtype,
                    double outside) {
  size_t rank = in.size();
  std::optional<uint32_t> cond;
  for (size_t k = 0; k < 2; ++k) {
    if (padding[k] == 0 && !ceilMode)
      continue;
    uint32_t c = emitInRange(b, in[rank - 2 + k], b.syms().constant(0), x.sizes[rank - 2 + k]);
    cond = cond ? b.compute(ScalarOp::LogicalAnd, DType::Bool, {*cond, c}) : c;
  }
  if (!cond)
    return b.cast(emit(b, x, in), dtype);
  return emitMasked(b, *cond, dtype, [&] { return emit(b, x, in); }, b.constant(dtype, outside));
}

/// A pooling window argument: one value per spatial dim, or one for both;
/// an absent or empty one (stride) means `dflt`.
std::vector<int64_t> windowArg(const GraphLowerer &lowerer, const Node &n, const char *name,
                               std::vector<int64_t> dflt) {
  std::vector<int64_t> v = ArgReader(n.args()).has(name) ? lowerer.ints(n, name) : dflt;
  if (v.empty())
    v = dflt;
  if (v.size() == 1)
    v.push_back(v[0]);
  if (v.size() != 2)
    throw LowerError(std::string("argument '") + name + "' needs 1 or 2 values");
  return v;
}

Error maxPool(GraphLowerer &lowerer, const Node &n, const OpLowering &) {
  SymContext &sx = lowerer.syms();
  LoweredPtr x = lowerer.value(n.arg("self")->value.values[0]);
  std::vector<int64_t> kernel = windowArg(lowerer, n, "kernel_size", {});
  std::vector<int64_t> stride = windowArg(lowerer, n, "stride", kernel);
  std::vector<int64_t> padding = windowArg(lowerer, n, "padding", {0, 0});
  std::vector<int64_t> dilation = windowArg(lowerer, n, "dilation", {1, 1});
  bool ceilMode = ArgReader(n.args()).boolean("ceil_mode", false);
  const Value *result = n.results()[0];
  const TensorType &rt = result->type().tensor;
  size_t rank = rt.rank();
  if (rank < 3 || x->sizes.size() != rank)
    throw LowerError("max_pool2d expects 3 or 4 dimensions");
  Exprs outer = rt.sizes, inner{sx.constant(kernel[0]), sx.constant(kernel[1])};
  Exprs ivars = loopVars(sx, 'i', rank), rvars = loopVars(sx, 'r', 2);
  // Where window element (r0, r1) of output point (..., i_h, i_w) reads.
  Exprs starts, in(ivars.begin(), ivars.end() - 2);
  for (size_t k = 0; k < 2; ++k) {
    starts.push_back(sx.sub(sx.mul(ivars[rank - 2 + k], sx.constant(stride[k])),
                             sx.constant(padding[k])));
    in.push_back(sx.add(starts[k], sx.mul(rvars[k], sx.constant(dilation[k]))));
  }
  // The window's value at (r0, r1); -inf where padding is read.
  auto window = [&](BodyBuilder &b) {
    return emitWindow(b, *x, in, padding, ceilMode, x->dtype,
                      -std::numeric_limits<double>::infinity());
  };
  LoopNode values;
  values.reduce = ReduceKind::Max;
  values.reductionRanges = inner;
  BodyBuilder vb = lowerer.builder(outer, inner);
  uint32_t v = window(vb);
  lowerer.addReduction(std::move(values), std::move(vb), v, result);
  if (n.results().size() < 2 || lowerer.uses(n.results()[1]) == 0)
    return Error::success();

  // The indices (what the backward scatters into): the first largest
  // element of each window, as torch picks it, as a position in the
  // input's H x W plane. ArgMax gives its place r0 * kw + r1 in the window.
  const Value *indices = n.results()[1];
  const TensorType &it = indices->type().tensor;
  BodyBuilder pb = lowerer.builder(outer, inner);
  uint32_t w = window(pb);
  LoweredPtr place =
      lowerer.scratchReduction(indices->name() + "_window", indices->name(), ReduceKind::ArgMax,
                               it.sizes, inner, std::move(pb), w);
  const SymExpr *width = x->sizes[rank - 1];
  lowerer.define(
      indices,
      lowerer.pointwise(
          DType::Int64, it.sizes, 6, {place}, [=, &sx](BodyBuilder &b, const Exprs &idx) {
            uint32_t p = emit(b, *place, idx);
            uint32_t kw = b.constant(DType::Int64, static_cast<double>(kernel[1]));
            uint32_t r0 = b.compute(ScalarOp::FloorDiv, DType::Int64, {p, kw});
            uint32_t r1 = b.compute(ScalarOp::Remainder, DType::Int64, {p, kw});
            auto along = [&](size_t k, uint32_t r) {
              const SymExpr *start = sx.sub(sx.mul(idx[rank - 2 + k], sx.constant(stride[k])),
                                            sx.constant(padding[k]));
              uint32_t step =
                  b.compute(ScalarOp::Mul, DType::Int64,
                            {r, b.constant(DType::Int64, static_cast<double>(dilation[k]))});
              return b.compute(ScalarOp::Add, DType::Int64, {b.index(start), step});
            };
            uint32_t row = b.compute(ScalarOp::Mul, DType::Int64, {along(0, r0), b.index(width)});
            return b.compute(ScalarOp::Add, DType::Int64, {row, along(1, r1)});
          }));
  return Error::success();
}

/// avg_pool2d: a Sum over each window (padding, and the part of a ceil_mode
/// window past the input, read as 0) into a buffer, then a division by the
/// window's count as torch counts it: the window clipped to the padded input
/// (count_include_pad), or to the input itself, or divisor_override.
Error avgPool(GraphLowerer &lowerer, const Node &n, const OpLowering &) {
  SymContext &sx = lowerer.syms();
  LoweredPtr x = lowerer.value(n.arg("self")->value.values[0]);
  std::vector<int64_t> kernel = windowArg(lowerer, n, "kernel_size", {});
  std::vector<int64_t> stride = windowArg(lowerer, n, "stride", kernel);
  std::vector<int64_t> padding = windowArg(lowerer, n, "padding", {0, 0});
  ArgReader args(n.args());
  bool ceilMode = args.boolean("ceil_mode", false);
  bool countPad = args.boolean("count_include_pad", true);
  std::optional<int64_t> divisorOverride;
  if (args.has("divisor_override")) {
    divisorOverride = args.integer("divisor_override");
    if (*divisorOverride == 0)
      throw LowerError("divisor_override must not be zero");
  }
  const Value *result = n.results()[0];
  const TensorType &rt = result->type().tensor;
  size_t rank = rt.rank();
  if (rank < 3 || x->sizes.size() != rank)
    throw LowerError("avg_pool2d expects 3 or 4 dimensions");
  if (rt.dtype == DType::Bool)
    throw LowerError("avg_pool2d of a bool input is not supported");
  Exprs outer = rt.sizes, inner{sx.constant(kernel[0]), sx.constant(kernel[1])};
  Exprs ivars = loopVars(sx, 'i', rank), rvars = loopVars(sx, 'r', 2);
  auto start = [=, &sx](const Exprs &idx, size_t k) {
    return sx.sub(sx.mul(idx[rank - 2 + k], sx.constant(stride[k])), sx.constant(padding[k]));
  };
  Exprs in(ivars.begin(), ivars.end() - 2);
  for (size_t k = 0; k < 2; ++k)
    in.push_back(sx.add(start(ivars, k), rvars[k]));

  BodyBuilder sb = lowerer.builder(outer, inner);
  uint32_t v = emitWindow(sb, *x, in, padding, ceilMode, rt.dtype, 0);
  LoweredPtr sums = lowerer.scratchReduction(result->name() + "_sum", result->name(),
                                             ReduceKind::Sum, outer, inner, std::move(sb), v);

  Exprs inSizes = x->sizes;
  DType dtype = rt.dtype;
  lowerer.define(
      result,
      lowerer.pointwise(dtype, outer, 8, {sums}, [=, &sx](BodyBuilder &b, const Exprs &idx) {
        const SymExpr *count = sx.constant(1);
        for (size_t k = 0; k < 2; ++k) {
          if (divisorOverride)
            break;
          const SymExpr *lo = start(idx, k), *size = inSizes[rank - 2 + k];
          const SymExpr *hi =
              sx.min(sx.add(lo, sx.constant(kernel[k])), sx.add(size, sx.constant(padding[k])));
          if (!countPad) {
            lo = sx.max(lo, sx.constant(0));
            hi = sx.min(hi, size);
          }
          count = sx.mul(count, sx.sub(hi, lo));
        }
        uint32_t divisor = divisorOverride
                               ? b.constant(dtype, static_cast<double>(*divisorOverride))
                               : b.cast(b.index(b.simplify(count)), dtype);
        // Integer averages truncate, as torch's integer division does.
        ScalarOp div = isFloatingPoint(dtype) ? ScalarOp::Div : ScalarOp::TruncDiv;
        return b.compute(div, dtype, {emit(b, *sums, idx), divisor});
      }));
  return Error::success();
}

const OpLowering kRows[] = {
    OpLowering{ops::aten_max_pool2d_with_indices_default, &maxPool},
    OpLowering{ops::aten_avg_pool2d_default, &avgPool},
};

} // namespace

void registerPoolingLowerings(LoweringRegistry &r) { r.add(kRows); }

} // namespace gc::lower
