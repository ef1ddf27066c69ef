//===- Linalg.cpp - Shapes of the linear-algebra factorizations -----------===//
//
// The core linear-algebra ops work on the last two dims of their inputs (a
// batch of matrices in front). They take float32 or float64 (torch also
// takes complex, which gc has not). Matrix sizes must be static; batch
// sizes may be symbolic. Results are contiguous; pivots and info codes are
// int32, as LAPACK's, and torch's, are.
//
//===----------------------------------------------------------------------===//
#include "ShapeUtil.h"

namespace gc {
namespace shape {
namespace {

/// The name torch's errors give the op: its name without "aten." and
/// overload.
std::string opName(const ShapeContext &ctx) {
  std::string name(opString(ctx.op()));
  if (name.starts_with("aten."))
    name = name.substr(5);
  return name.substr(0, name.find('.'));
}

/// A batch of matrices: batch sizes in front of `rows` x `cols`.
struct MatrixArg {
  const TensorType *type;
  Sizes batch;
  int64_t rows, cols;
};

/// Argument `name` as a batch of matrices of a floating dtype (float32 or
/// float64); `square` requires rows == cols.
MatrixArg matrixArg(const ShapeContext &ctx, std::string_view name, bool square = false) {
  const TensorType &t = ctx.tensor(name);
  std::string what = opName(ctx) + ": argument '" + std::string(name) + "'";
  if (t.dtype != DType::Float32 && t.dtype != DType::Float64)
    shapeFail(what + " of dtype " + std::string(dtypeName(t.dtype)) +
              " is not supported (float32 and float64 are)");
  if (t.rank() < 2)
    shapeFail(what + " must have at least 2 dimensions, got " + std::to_string(t.rank()));
  MatrixArg m{&t, Sizes(t.sizes.begin(), t.sizes.end() - 2),
              constantSize(t.sizes[t.rank() - 2], what + " rows"),
              constantSize(t.sizes[t.rank() - 1], what + " columns")};
  if (square && m.rows != m.cols)
    shapeFail(what + " must be batches of square matrices, but they are " +
              std::to_string(m.rows) + " by " + std::to_string(m.cols) + " matrices");
  return m;
}

/// A result of `dtype`: `batch` followed by `tail`.
Type batched(const ShapeContext &ctx, DType dtype, const Sizes &batch,
             std::initializer_list<int64_t> tail) {
  Sizes sizes = batch;
  for (int64_t s : tail)
    sizes.push_back(ctx.syms().constant(s));
  return result(contiguousType(ctx.syms(), dtype, sizes));
}

/// linalg_lu_factor_ex: LU (m x n), pivots (min(m, n)), info.
std::vector<Type> luFactor(const ShapeContext &ctx) {
  MatrixArg a = matrixArg(ctx, "A");
  DType t = a.type->dtype;
  return {batched(ctx, t, a.batch, {a.rows, a.cols}),
          batched(ctx, DType::Int32, a.batch, {std::min(a.rows, a.cols)}),
          batched(ctx, DType::Int32, a.batch, {})};
}

/// lu_unpack: P (m x m), L (m x k), U (k x n), k = min(m, n).
std::vector<Type> luUnpack(const ShapeContext &ctx) {
  MatrixArg a = matrixArg(ctx, "LU_data");
  const TensorType &piv = ctx.tensor("LU_pivots");
  int64_t k = std::min(a.rows, a.cols);
  if (piv.dtype != DType::Int32 || piv.rank() != a.batch.size() + 1 ||
      constantSize(piv.sizes.back(), "lu_unpack: pivots") != k)
    shapeFail("lu_unpack: LU_pivots must be int32 of shape [..., " + std::to_string(k) + "]");
  if (!ctx.boolean("unpack_data", true) || !ctx.boolean("unpack_pivots", true))
    shapeFail("lu_unpack: unpack_data=False or unpack_pivots=False is not supported");
  DType t = a.type->dtype;
  return {batched(ctx, t, a.batch, {a.rows, a.rows}), batched(ctx, t, a.batch, {a.rows, k}),
          batched(ctx, t, a.batch, {k, a.cols})};
}

/// Batch sizes of two batched operands, broadcast.
Sizes batchOf(const ShapeContext &ctx, const MatrixArg &a, const MatrixArg &b) {
  return broadcastSizes(ctx.syms(), a.batch, b.batch);
}

/// linalg_solve_triangular: X with A X = B (left) or X A = B.
std::vector<Type> solveTriangular(const ShapeContext &ctx) {
  MatrixArg a = matrixArg(ctx, "self", true), b = matrixArg(ctx, "B");
  bool left = ctx.boolean("left", true);
  if (a.type->dtype != b.type->dtype)
    shapeFail("linalg_solve_triangular: A and B must have the same dtype");
  if ((left ? b.rows : b.cols) != a.rows)
    shapeFail("linalg_solve_triangular: incompatible shapes of A (" + std::to_string(a.rows) +
              " by " + std::to_string(a.cols) + ") and B (" + std::to_string(b.rows) + " by " +
              std::to_string(b.cols) + ")");
  return {batched(ctx, b.type->dtype, batchOf(ctx, a, b), {b.rows, b.cols})};
}

/// linalg_cholesky_ex: L, info.
std::vector<Type> cholesky(const ShapeContext &ctx) {
  MatrixArg a = matrixArg(ctx, "self", true);
  return {batched(ctx, a.type->dtype, a.batch, {a.rows, a.rows}),
          batched(ctx, DType::Int32, a.batch, {})};
}

/// geqrf: the reflectors below R (m x n) and their scales (min(m, n)).
std::vector<Type> geqrf(const ShapeContext &ctx) {
  MatrixArg a = matrixArg(ctx, "self");
  return {batched(ctx, a.type->dtype, a.batch, {a.rows, a.cols}),
          batched(ctx, a.type->dtype, a.batch, {std::min(a.rows, a.cols)})};
}

/// linalg_householder_product: the first n columns of H_1 ... H_k.
std::vector<Type> householderProduct(const ShapeContext &ctx) {
  MatrixArg a = matrixArg(ctx, "input");
  const TensorType &tau = ctx.tensor("tau");
  if (tau.dtype != a.type->dtype || tau.rank() != a.batch.size() + 1)
    shapeFail("linalg_householder_product: tau must have input's dtype and one dimension less");
  int64_t k = constantSize(tau.sizes.back(), "linalg_householder_product: tau");
  if (a.rows < a.cols || a.cols < k)
    shapeFail("linalg_householder_product: needs input.shape[-2] >= input.shape[-1] >= "
              "tau.shape[-1], got " +
              std::to_string(a.rows) + ", " + std::to_string(a.cols) + ", " + std::to_string(k));
  return {batched(ctx, a.type->dtype, a.batch, {a.rows, a.cols})};
}

/// linalg_eigh: eigenvalues (ascending), eigenvectors as columns.
std::vector<Type> eigh(const ShapeContext &ctx) {
  MatrixArg a = matrixArg(ctx, "self", true);
  std::string uplo = ctx.string("UPLO", "L");
  if (uplo != "L" && uplo != "U")
    shapeFail("linalg_eigh: UPLO must be 'L' or 'U', got '" + uplo + "'");
  return {batched(ctx, a.type->dtype, a.batch, {a.rows}),
          batched(ctx, a.type->dtype, a.batch, {a.rows, a.rows})};
}

/// linalg_svd: U, S (descending), Vh; full_matrices makes U and Vh square.
std::vector<Type> svd(const ShapeContext &ctx) {
  MatrixArg a = matrixArg(ctx, "A");
  int64_t k = std::min(a.rows, a.cols);
  bool full = ctx.boolean("full_matrices", true);
  DType t = a.type->dtype;
  return {batched(ctx, t, a.batch, {a.rows, full ? a.rows : k}), batched(ctx, t, a.batch, {k}),
          batched(ctx, t, a.batch, {full ? a.cols : k, a.cols})};
}

/// linalg_ldl_factor_ex: LD, pivots (LAPACK sytrf's), info.
std::vector<Type> ldlFactor(const ShapeContext &ctx) {
  MatrixArg a = matrixArg(ctx, "self", true);
  return {batched(ctx, a.type->dtype, a.batch, {a.rows, a.rows}),
          batched(ctx, DType::Int32, a.batch, {a.rows}), batched(ctx, DType::Int32, a.batch, {})};
}

/// linalg_ldl_solve: X with A X = B, A given by LD and pivots.
std::vector<Type> ldlSolve(const ShapeContext &ctx) {
  MatrixArg ld = matrixArg(ctx, "LD", true), b = matrixArg(ctx, "B");
  const TensorType &piv = ctx.tensor("pivots");
  if (piv.dtype != DType::Int32 || piv.rank() != ld.batch.size() + 1)
    shapeFail("linalg_ldl_solve: pivots must be int32 with one dimension less than LD");
  if (b.rows != ld.rows || b.type->dtype != ld.type->dtype)
    shapeFail("linalg_ldl_solve: B must have LD's dtype and " + std::to_string(ld.rows) + " rows");
  return {batched(ctx, b.type->dtype, batchOf(ctx, ld, b), {b.rows, b.cols})};
}

std::vector<Type> matrixExp(const ShapeContext &ctx) {
  MatrixArg a = matrixArg(ctx, "self", true);
  return {batched(ctx, a.type->dtype, a.batch, {a.rows, a.rows})};
}

constexpr ShapeEntry kEntries[] = {
    {ops::aten_geqrf_default, geqrf},
    {ops::aten_linalg_cholesky_ex_default, cholesky},
    {ops::aten_linalg_eigh_default, eigh},
    {ops::aten_linalg_householder_product_default, householderProduct},
    {ops::aten_linalg_ldl_factor_ex_default, ldlFactor},
    {ops::aten_linalg_ldl_solve_default, ldlSolve},
    {ops::aten_linalg_lu_factor_ex_default, luFactor},
    {ops::aten_linalg_solve_triangular_default, solveTriangular},
    {ops::aten_linalg_svd_default, svd},
    {ops::aten_lu_unpack_default, luUnpack},
    {ops::aten_matrix_exp_default, matrixExp},
};

} // namespace
} // namespace shape

void registerLinalgShapes(ShapeRegistry &r) { r.add(shape::kEntries); }

} // namespace gc
