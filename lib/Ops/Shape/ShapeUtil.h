//===- ShapeUtil.h - Helpers shared by the shape functions ------*- C++ -*-===//
//
// Private to lib/Ops/Shape. Each helper is defined beside the family that
// needs it most: general helpers and layouts with the pointwise ops
// (Pointwise.cpp, since torch's layout rules come from its elementwise
// iterator), dimension lists with the reductions (Reduction.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef GC_LIB_OPS_SHAPE_SHAPEUTIL_H
#define GC_LIB_OPS_SHAPE_SHAPEUTIL_H

#include "gc/Ops/ShapeInference.h"

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace gc::shape {

using Sizes = std::vector<const SymExpr *>;

/// A tensor result. Results never require grad: torch.export records
/// requires_grad only on the graph's inputs, even for views of parameters.
inline Type result(TensorType t) {
  t.requiresGrad = false;
  return Type::makeTensor(std::move(t));
}

/// The result list of an op with one tensor result.
inline std::vector<Type> one(TensorType t) { return {result(std::move(t))}; }

/// The number of elements of a tensor of `sizes`.
const SymExpr *numel(SymContext &syms, const Sizes &sizes);

/// The sign of a - b (-1, 0, 1), or nullopt when it depends on symbols.
std::optional<int> compareSizes(SymContext &syms, const SymExpr *a, const SymExpr *b);

/// The value of a size that must be a constant for the op to have a known
/// number of results or a known shape; `what` names it in the error.
int64_t constantSize(const SymExpr *e, const std::string &what);

/// The device of the first tensor among `operands` (CPU if none).
Device deviceOf(std::span<const TensorType *const> operands);

/// An `int` or `SymInt` argument as an expression.
const SymExpr *symInt(const ShapeContext &ctx, std::string_view name);
/// An `int[]` or `SymInt[]` argument as expressions, symbolic entries
/// included (ShapeContext::sizes takes only constants).
Sizes symInts(const ShapeContext &ctx, std::string_view name);

// ---- Dimensions (Reduction.cpp) ----

/// `dims` wrapped into [0, rank); a dimension named twice is an error.
std::vector<int64_t> wrapDims(const std::vector<int64_t> &dims, int64_t rank);

/// Which dimensions an `int[1]? dim` argument reduces: the listed ones, or
/// all of them when the argument is absent, None or empty (torch's rule for
/// sum, mean, amax and the other full reductions).
std::vector<bool> reducedDims(const ShapeContext &ctx, std::string_view name, int64_t rank);

/// The sizes of a reduction's result: reduced dimensions become 1 with
/// `keepdim`, or disappear.
Sizes reducedSizes(SymContext &syms, const Sizes &sizes, const std::vector<bool> &reduced,
                   bool keepdim);

/// An `int[N]` argument with N entries: a single value is repeated, an
/// absent or empty list gives `dflt`.
std::vector<int64_t> expandedInts(const ShapeContext &ctx, std::string_view name, size_t n,
                                  const std::vector<int64_t> &dflt);

// ---- Layouts (Pointwise.cpp) ----

/// torch's is_contiguous: row-major strides, size-1 dimensions ignored.
bool isContiguous(SymContext &syms, const TensorType &t);
/// torch's is_non_overlapping_and_dense: a permutation of a contiguous layout.
bool isNonOverlappingAndDense(SymContext &syms, const TensorType &t);
/// torch's suggest_memory_format for a 4-d tensor: true if the strides order
/// the dimensions as channels_last (N, H, W, C from slowest to fastest).
bool suggestsChannelsLast(SymContext &syms, const TensorType &t);

/// A tensor of `dtype` and `sizes`, stored as channels_last (4-d).
TensorType channelsLastType(SymContext &syms, DType dtype, Sizes sizes, Device device);

/// empty_like(like, memory_format=preserve) with `dtype`: the same strides
/// when `like` is dense, else dense strides in the order of `like`'s.
TensorType preservedLayoutType(SymContext &syms, const TensorType &like, DType dtype);

/// The result of an elementwise op of `dtype` over `operands` (each
/// broadcast to `sizes`), laid out as torch's TensorIterator lays out its
/// output: contiguous when every operand is, the operands' strides when they
/// all share one dense layout, else dense strides ordering the dimensions as
/// the operands' strides do.
TensorType elementwiseType(SymContext &syms, DType dtype, const Sizes &sizes,
                           std::span<const TensorType *const> operands);

/// A tensor of `dtype` and `sizes` in `format` (contiguous or channels_last),
/// or laid out like `like` for `preserve`.
TensorType formattedType(SymContext &syms, DType dtype, const TensorType &like,
                         MemoryFormat format);

} // namespace gc::shape

#endif // GC_LIB_OPS_SHAPE_SHAPEUTIL_H
