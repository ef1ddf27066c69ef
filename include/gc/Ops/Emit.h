//===- Emit.h - Building blocks of decompositions ---------------*- C++ -*-===//
//
// Decomposition rules are written against Emit, a thin layer over
// GraphBuilder with one method per core op (or small pattern of core ops)
// they need, so that a rule reads like the formula it implements. The
// derivative rules (lib/Autodiff) are written against it too.
//
//===----------------------------------------------------------------------===//
#ifndef GC_OPS_EMIT_H
#define GC_OPS_EMIT_H

#include "gc/Ops/Decompositions.h"

#include <optional>
#include <string_view>
#include <vector>

namespace gc::decompose {

using Results = std::optional<std::vector<Value *>>;
using Sizes = std::vector<const SymExpr *>;
using Dims = std::vector<int64_t>;

/// A number argument (torch's Scalar) with the kind it was written with,
/// which decides type promotion.
struct Number {
  enum class Kind { Bool, Int, Float } kind = Kind::Int;
  int64_t i = 0;
  double f = 0;

  static Number integer(int64_t v) { return {Kind::Int, v, static_cast<double>(v)}; }
  static Number real(double v) { return {Kind::Float, 0, v}; }
  double value() const { return kind == Kind::Float ? f : static_cast<double>(i); }
  ArgValue arg() const;
  /// The number as `dtype` would hold it (an int for integer dtypes).
  Number as(DType dtype) const;
  /// The dtype of a 0-dim tensor that promotes with a tensor of `other` as
  /// this number would.
  DType promotionDType(DType other) const;
};
/// The number argument `name`; fails for symbolic values.
Number number(const RewriteContext &ctx, std::string_view name);
std::optional<Number> optNumber(const RewriteContext &ctx, std::string_view name);
/// An int[n] argument with torch's shorthand: one value for every dim;
/// `dflt` for every dim when absent.
Dims intsOfLength(const RewriteContext &ctx, std::string_view name, size_t n, int64_t dflt);
/// True if argument `name` is given as a tensor (not a number, not None).
bool isTensorArg(const RewriteContext &ctx, std::string_view name);

const TensorType &typeOf(const Value *v);
const Sizes &sizesOf(const Value *v);
int64_t rankOf(const Value *v);
/// The product of `sizes` (a tensor's element count).
const SymExpr *sizeProduct(SymContext &syms, const Sizes &sizes);
/// The value of a size that must be static for the rule at hand.
int64_t staticSize(const SymExpr *size, std::string_view what);
/// All of `dims` wrapped into [0, rank), in order; every dim for nullopt or
/// an empty list (torch's "reduce everything"); none for a 0-dim tensor.
Dims wrapDims(std::optional<Dims> dims, int64_t rank);
/// Where floating-point math on `t` happens: `t` itself if floating, else
/// float32 (torch's default dtype); float32 for float16 and bfloat16 too,
/// as torch computes reductions and normalizations of those in float32.
DType computeDType(DType t);

/// The strides a view of `t` with `sizes` would have, or nullopt if no view
/// can have them (torch's rule; symbolic sizes that cannot be compared give
/// nullopt, so callers copy, which is always correct).
std::optional<Sizes> viewStrides(SymContext &syms, const TensorType &t, const Sizes &sizes);

/// Checks the values that replace the old node's results against its
/// recorded types (equal sizes), casting to the recorded dtype where torch
/// computed in another one. Null entries (results no one can use) pass.
Results finish(RewriteContext &ctx, std::vector<Value *> values);

/// A loss's `reduction` argument (torch's Reduction enum).
enum Reduction : int64_t { kNone = 0, kMean = 1, kSum = 2 };

/// A comparison, as Emit::compare makes it.
enum class Cmp : uint8_t { Eq, Ne, Lt, Le, Gt, Ge };

class Emit {
public:
  /// New values go through ctx's builder; creation ops use `device`.
  Emit(RewriteContext &ctx, Device device);
  /// As above, on the device of the old node's first result (or the CPU).
  explicit Emit(RewriteContext &ctx);

  GraphBuilder &builder() { return b_; }
  SymContext &syms() { return b_.syms(); }
  Value *op(OpId op, std::vector<std::pair<std::string, ArgValue>> args);

  // Pointwise.
  /// op(self=x).
  Value *unary(OpId op, Value *x);
  Value *add(Value *a, ArgValue b);
  Value *sub(Value *a, ArgValue b);
  Value *mul(Value *a, ArgValue b);
  Value *div(Value *a, ArgValue b);
  /// aten.<cmp>.Tensor, or aten.<cmp>.Scalar for a number.
  Value *compare(Cmp cmp, Value *a, Value *b);
  Value *compare(Cmp cmp, Value *a, Number b);
  Value *where(Value *cond, Value *a, Value *b);
  Value *maximum(Value *a, Value *b);
  Value *minimum(Value *a, Value *b);
  Value *logicalNot(Value *x);
  /// x converted to dtype (x itself if it has it).
  Value *cast(Value *x, DType dtype);
  /// A 0-dim tensor.
  Value *scalar(Number v, DType dtype);
  /// A 0-dim tensor holding a number argument, with the dtype that makes it
  /// promote with a tensor of `other` as the number would.
  Value *wrapNumber(Number v, DType other);
  Value *full(const Sizes &sizes, Number v, DType dtype);
  /// A tensor of x's sizes filled with v (also for symbolic sizes).
  Value *fullLike(Value *x, Number v, DType dtype);
  /// A bool tensor of x's sizes, all true. Symbolic sizes cannot be written
  /// as an argument yet, so creation ops of such sizes derive from this.
  Value *allTrueLike(Value *x);
  /// arange(n) as int64.
  Value *arange(int64_t n);

  // Reductions.
  Value *sum(Value *x, const Dims &dims, bool keepdim, std::optional<DType> dtype = {});
  Value *amax(Value *x, const Dims &dims, bool keepdim);
  Value *amin(Value *x, const Dims &dims, bool keepdim);
  /// The number of elements a reduction over `dims` sees: a number when
  /// static, else a 0-dim int64 tensor.
  ArgValue count(Value *x, const Dims &dims);
  Value *mean(Value *x, const Dims &dims, bool keepdim);
  /// Variance with torch's `correction` (1 for the unbiased estimate).
  Value *variance(Value *x, const Dims &dims, double correction, bool keepdim);
  /// Softmax along `dim`, numerically stable: exp(x - max) over its sum.
  /// `rowMax` receives the max (keepdim), where callers need it.
  Value *softmax(Value *x, int64_t dim, Value **rowMax = nullptr);
  /// x - max - log(sum(exp(x - max))) along `dim`.
  Value *logSoftmax(Value *x, int64_t dim);
  /// A per-element loss reduced as `reduction` (a Reduction) says.
  Value *reduceLoss(Value *loss, int64_t reduction);

  // Views and data movement.
  /// torch's reshape: a view when the strides allow it, else a contiguous
  /// copy then a view. `size` is the size argument as written (may hold -1
  /// or symbolic values); by default it is made from `sizes`.
  Value *reshape(Value *x, const Sizes &sizes, std::optional<ArgValue> size = {});
  Value *permute(Value *x, const Dims &dims);
  Value *transpose(Value *x, int64_t dim0, int64_t dim1);
  Value *unsqueeze(Value *x, int64_t dim);
  Value *squeeze(Value *x, const Dims &dims);
  Value *expand(Value *x, const Sizes &sizes);
  Value *slice(Value *x, int64_t dim, int64_t start, int64_t end, int64_t step = 1);
  Value *select(Value *x, int64_t dim, int64_t index);
  Value *cat(std::vector<Value *> xs, int64_t dim);
  /// A contiguous copy.
  Value *clone(Value *x);
  /// as_strided of x with the sizes, strides and storage offset of `view`.
  Value *asStrided(Value *x, const TensorType &view);
  Value *flip(Value *x, const Dims &dims);
  /// x with the size-1 dims inserted that make it broadcast along dim `dim`
  /// of a rank-`rank` tensor (a per-channel vector for NCHW: dim 1).
  Value *alongDim(Value *x, int64_t dim, int64_t rank);

  // Matrix products.
  Value *mm(Value *a, Value *b);
  Value *bmm(Value *a, Value *b);
  /// torch.matmul with its broadcasting, through mm and bmm.
  Value *matmul(Value *a, Value *b);

  /// A size argument for `sizes`: ints, with -1 for one symbolic size (view
  /// and reshape infer it); with more, a SymInt[] whose symbolic entries are
  /// computed by sizeValue.
  ArgValue sizeArg(const Sizes &sizes);
  /// A SymInt[] argument holding `sizes` exactly (no -1), and a SymInt one.
  ArgValue symIntsArg(const Sizes &sizes);
  ArgValue symIntArg(const SymExpr *e);
  /// A node computing the size expression `e` (not a constant): each symbol
  /// read with sym_size from a graph input that has it as a dimension,
  /// combined with Python's integer operators. Fails for min and max, and
  /// for a symbol no input has.
  Value *sizeValue(const SymExpr *e);

private:
  GraphBuilder &b_;
  Device device_;
};

/// The windows a convolution of `x` ([..., C, s0, .., s(d-1)], static
/// spatial sizes, d = kernel.size() from 1 to 3) reads: one strided view of
/// the zero-padded input, [..., C, k0, .., k(d-1), o0, .., o(d-1)], holding
/// at kernel offset k and output position o the padded input at
/// o * stride + k * dilation in each spatial dim.
Value *convWindows(Emit &e, Value *x, const Dims &kernel, const Dims &dilation, const Dims &padding,
                   const Dims &stride);
/// im2col of `x` as above: its windows copied as [..., C k0 .. k(d-1),
/// o0 .. o(d-1)], columns ordered (c, k0, ..) as a convolution weight
/// [Cout, C, k0, ..] flattens.
Value *im2col(Emit &e, Value *x, const Dims &kernel, const Dims &dilation, const Dims &padding,
              const Dims &stride);

} // namespace gc::decompose

#endif // GC_OPS_EMIT_H
