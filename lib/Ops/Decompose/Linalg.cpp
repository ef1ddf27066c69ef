//===- Linalg.cpp - Decompositions of linear algebra ----------------------===//
//
// Everything of torch.linalg in terms of a few core factorizations (LU,
// Cholesky, Householder QR, symmetric eigendecomposition, SVD, LDL^T,
// triangular solves; lib/Interp/Kernels/Linalg.cpp) and the core pointwise,
// reduction and matrix-product ops: determinants from LU, inverses and
// solves from LU and triangular solves, pseudo-inverses, ranks, norms and
// condition numbers from singular values, matrix powers by repeated
// squaring, products and tensor forms by reshapes and matmuls.
//
//===----------------------------------------------------------------------===//
#include "gc/Ops/Emit.h"

#include "gc/Ops/ShapeInference.h"

#include <cmath>
#include <limits>

namespace gc {

namespace {

using namespace decompose;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// The static size of dim `d` (negative from the end) of `x`.
int64_t dimSize(Value *x, int64_t d) {
  return staticSize(sizesOf(x)[wrapDimension(d, rankOf(x))], "a matrix dimension");
}

/// Argument `name` of the op being decomposed, checked to be a batch of
/// (`square`) matrices of float32 or float64, as the factorizations need.
Value *matrixArg(RewriteContext &ctx, std::string_view name, bool square = true) {
  Value *v = ctx.value(name);
  std::string what = "argument '" + std::string(name) + "'";
  const TensorType &t = typeOf(v);
  if (t.dtype != DType::Float32 && t.dtype != DType::Float64)
    rewriteFail(what + " of dtype " + std::string(dtypeName(t.dtype)) +
                " is not supported (float32 and float64 are)");
  if (t.rank() < 2)
    rewriteFail(what + " must have at least 2 dimensions");
  if (square && dimSize(v, -2) != dimSize(v, -1))
    rewriteFail(what + " must be batches of square matrices, got " +
                std::to_string(dimSize(v, -2)) + " by " + std::to_string(dimSize(v, -1)));
  return v;
}

/// The last two dims swapped (torch's mT), as a view.
Value *mT(Emit &e, Value *x) { return e.transpose(x, -2, -1); }

/// A bool m x n matrix, true where column - row == offset.
Value *diagonalMask(Emit &e, int64_t m, int64_t n, int64_t offset) {
  Value *rows = e.unsqueeze(e.add(e.arange(m), offset), 1);
  Value *cols = e.unsqueeze(e.arange(n), 0);
  return e.compare(Cmp::Eq, rows, cols);
}

/// The diagonal at `offset` of the matrices in the last two dims of `x`
/// (a copy): [*, m, n] -> [*, L].
Value *diagonalOf(Emit &e, Value *x, int64_t offset = 0) {
  int64_t m = dimSize(x, -2), n = dimSize(x, -1);
  Value *zero = e.scalar(Number::integer(0), typeOf(x).dtype);
  if (offset >= 0) {
    int64_t len = std::max<int64_t>(0, std::min(m, n - offset));
    Value *rows = e.slice(x, -2, 0, len);
    Value *kept = e.where(diagonalMask(e, len, n, offset), rows, zero);
    return e.sum(kept, {rankOf(x) - 1}, false, typeOf(x).dtype);
  }
  int64_t len = std::max<int64_t>(0, std::min(m + offset, n));
  Value *cols = e.slice(x, -1, 0, len);
  Value *kept = e.where(diagonalMask(e, m, len, offset), cols, zero);
  return e.sum(kept, {rankOf(x) - 2}, false, typeOf(x).dtype);
}

/// The n x n identity of `dtype`.
Value *identity(Emit &e, int64_t n, DType dtype) {
  return e.cast(diagonalMask(e, n, n, 0), dtype);
}

/// x with every matrix's entries outside the triangle zeroed (triu/tril).
Value *triangle(Emit &e, Value *x, bool upper) {
  return e.op(upper ? ops::aten_triu_default : ops::aten_tril_default, {{"self", x}});
}

std::vector<Value *> create(Emit &e, OpId op, std::vector<std::pair<std::string, ArgValue>> args) {
  return e.builder().create(op, std::move(args));
}

/// (LU, pivots, info) of A.
std::vector<Value *> luFactor(Emit &e, Value *a, bool checkErrors) {
  return create(e, ops::aten_linalg_lu_factor_ex_default,
                {{"A", a}, {"pivot", true}, {"check_errors", checkErrors}});
}

Value *solveTriangular(Emit &e, Value *a, Value *b, bool upper, bool unit = false) {
  return e.op(ops::aten_linalg_solve_triangular_default,
              {{"self", a}, {"B", b}, {"upper", upper}, {"left", true}, {"unitriangular", unit}});
}

/// X with A X = B (or A^T X = B if `adjoint`) from A's LU and pivots.
Value *luSolveLeft(Emit &e, Value *lu, Value *pivots, Value *b, bool adjoint) {
  std::vector<Value *> plu =
      create(e, ops::aten_lu_unpack_default, {{"LU_data", lu}, {"LU_pivots", pivots}});
  Value *p = plu[0], *l = plu[1], *u = plu[2];
  if (!adjoint) {
    // A = P L U: X = U^-1 L^-1 P^T B.
    Value *y = solveTriangular(e, l, e.matmul(mT(e, p), b), false, true);
    return solveTriangular(e, u, y, true);
  }
  // A^T = U^T L^T P^T: X = P L^-T U^-T B.
  Value *y = solveTriangular(e, mT(e, u), b, false);
  return e.matmul(p, solveTriangular(e, mT(e, l), y, true, true));
}

/// X with A X = B (left) or X A = B, from A's LU.
Value *luSolve(Emit &e, Value *lu, Value *pivots, Value *b, bool left, bool adjoint) {
  if (left)
    return luSolveLeft(e, lu, pivots, b, adjoint);
  // X A = B is A^T X^T = B^T.
  return mT(e, luSolveLeft(e, lu, pivots, mT(e, b), !adjoint));
}

/// (U, S, Vh) of A.
std::vector<Value *> svd(Emit &e, Value *a, bool full) {
  return create(e, ops::aten_linalg_svd_default, {{"A", a}, {"full_matrices", full}});
}

/// The product of a matrix's entries along its last dim.
Value *prodLast(Emit &e, Value *x) {
  return e.op(ops::aten_prod_dim_int, {{"self", x}, {"dim", int64_t(-1)}, {"keepdim", false}});
}

/// det(P) of LU's pivots: -1 per row that was swapped.
Value *permutationSign(Emit &e, Value *pivots, DType dtype) {
  int64_t k = dimSize(pivots, -1);
  Value *swapped = e.compare(Cmp::Ne, pivots, e.add(e.arange(k), int64_t(1)));
  Value *factor = e.where(swapped, e.scalar(Number::integer(-1), dtype),
                          e.scalar(Number::integer(1), dtype));
  return prodLast(e, factor);
}

/// (sign, log|det|) of square matrices, from LU.
std::pair<Value *, Value *> slogdet(Emit &e, Value *a) {
  DType t = typeOf(a).dtype;
  std::vector<Value *> f = luFactor(e, a, false);
  Value *diag = diagonalOf(e, f[0]);
  Value *sign = e.mul(permutationSign(e, f[1], t), prodLast(e, e.unary(ops::aten_sign_default, diag)));
  Value *logAbs = e.sum(e.unary(ops::aten_log_default, e.unary(ops::aten_abs_default, diag)), {rankOf(diag) - 1},
                        false);
  return {sign, logAbs};
}

/// A tolerance argument (atol, rtol) given as a number or a 0-dim tensor,
/// as a value; null if absent.
Value *toleranceArg(RewriteContext &ctx, Emit &e, std::string_view name, DType dtype) {
  if (!ctx.has(name))
    return nullptr;
  if (isTensorArg(ctx, name))
    return e.cast(ctx.value(name), dtype);
  return e.scalar(Number::real(ctx.real(name)), dtype);
}

/// The tolerances of pinv and matrix_rank: a value counts if it exceeds
/// max(atol, rtol * largest). Either may be null (absent).
struct Tolerance {
  Value *atol = nullptr, *rtol = nullptr;
};

/// torch's rule for the atol and rtol arguments: rtol = eps * max(m, n) when
/// neither is given, 0 when only atol is.
Tolerance tolerances(RewriteContext &ctx, Emit &e, Value *a) {
  DType t = typeOf(a).dtype;
  Tolerance tol{toleranceArg(ctx, e, "atol", t), toleranceArg(ctx, e, "rtol", t)};
  if (!tol.rtol) {
    double eps = t == DType::Float64 ? std::numeric_limits<double>::epsilon()
                                     : std::numeric_limits<float>::epsilon();
    double dflt =
        tol.atol ? 0.0 : eps * static_cast<double>(std::max(dimSize(a, -2), dimSize(a, -1)));
    tol.rtol = e.scalar(Number::real(dflt), t);
  }
  return tol;
}

/// The spectrum pinv and matrix_rank threshold: the singular values, or for
/// `hermitian` inputs the eigenvalues of the lower triangle (as torch reads
/// them), with their eigenvectors. `magnitudes` are |values|, `largest`
/// the largest magnitude of each matrix (keepdim).
struct Spectrum {
  Value *values, *magnitudes, *largest;
  Value *left, *rightT; // pinv = rightT^T diag(1/values) left^T
};

Spectrum spectrum(Emit &e, Value *a, bool hermitian) {
  // An empty matrix has no largest eigenvalue; its SVD is empty too.
  if (hermitian && dimSize(a, -1) > 0) {
    std::vector<Value *> wv = create(e, ops::aten_linalg_eigh_default, {{"self", a}});
    Value *mag = e.unary(ops::aten_abs_default, wv[0]);
    return {wv[0], mag, e.amax(mag, {rankOf(mag) - 1}, true), wv[1], mT(e, wv[1])};
  }
  std::vector<Value *> usv = svd(e, a, false);
  return {usv[1], usv[1], e.slice(usv[1], -1, 0, 1), usv[0], usv[2]};
}

/// Where the spectrum's magnitudes exceed the tolerance.
Value *kept(Emit &e, const Spectrum &s, const Tolerance &tol) {
  Value *bound = e.mul(s.largest, tol.rtol);
  if (tol.atol)
    bound = e.maximum(bound, tol.atol);
  return e.compare(Cmp::Gt, s.magnitudes, bound);
}

/// The Moore-Penrose pseudo-inverse: V diag(1/S) U^T over the kept values.
Value *pinv(Emit &e, Value *a, bool hermitian, const Tolerance &tol) {
  Spectrum s = spectrum(e, a, hermitian);
  Value *inv = e.where(kept(e, s, tol), e.unary(ops::aten_reciprocal_default, s.values),
                       e.scalar(Number::integer(0), typeOf(a).dtype));
  Value *vs = e.mul(mT(e, s.rightT), e.unsqueeze(inv, -2));
  return e.matmul(vs, mT(e, s.left));
}

/// The singular values of `a`, descending.
Value *singularValues(Emit &e, Value *a) { return svd(e, a, false)[1]; }

/// x as a stack of matrices: the identity of x's matrix size broadcast.
Value *identityLike(Emit &e, Value *x) {
  Value *eye = identity(e, dimSize(x, -1), typeOf(x).dtype);
  return e.expand(eye, sizesOf(x));
}

Value *inverse(Emit &e, Value *a, bool checkErrors, Value **info = nullptr) {
  std::vector<Value *> f = luFactor(e, a, checkErrors);
  if (info)
    *info = f[2];
  return luSolve(e, f[0], f[1], identityLike(e, a), true, false);
}

/// B as torch.linalg.solve reads it: a vector (one dim less than A, or 1-d)
/// is a column.
bool vectorRhs(Value *a, Value *b) {
  int64_t rb = rankOf(b);
  return rb == 1 || (rb == rankOf(a) - 1 && sizesOf(b) == Sizes(sizesOf(a).begin(), sizesOf(a).end() - 1));
}

std::pair<Value *, Value *> solve(Emit &e, Value *a, Value *b, bool left, bool checkErrors) {
  bool vec = vectorRhs(a, b);
  if (vec)
    b = e.unsqueeze(b, left ? -1 : -2);
  std::vector<Value *> f = luFactor(e, a, checkErrors);
  Value *x = luSolve(e, f[0], f[1], b, left, false);
  if (vec)
    x = e.squeeze(x, {rankOf(x) + (left ? -1 : -2)});
  return {x, f[2]};
}

//===----------------------------------------------------------------------===//
// Rules
//===----------------------------------------------------------------------===//

Results decomposeCholesky(RewriteContext &ctx) {
  Emit e(ctx);
  return finish(ctx, {create(e, ops::aten_linalg_cholesky_ex_default,
                             {{"self", matrixArg(ctx, "self")},
                              {"upper", ctx.boolean("upper", false)},
                              {"check_errors", true}})[0]});
}

/// cholesky_solve: A = L L^T (or U^T U) from its factor; two triangular solves.
Results decomposeCholeskySolve(RewriteContext &ctx) {
  Emit e(ctx);
  Value *b = ctx.value("self"), *f = ctx.value("input2");
  bool upper = ctx.boolean("upper", false);
  Value *lower = upper ? mT(e, f) : f;
  Value *y = solveTriangular(e, lower, b, false);
  return finish(ctx, {solveTriangular(e, mT(e, lower), y, true)});
}

Results decomposeCholeskyInverse(RewriteContext &ctx) {
  Emit e(ctx);
  Value *f = ctx.value("self");
  Value *lower = ctx.boolean("upper", false) ? mT(e, f) : f;
  Value *y = solveTriangular(e, lower, identityLike(e, f), false);
  return finish(ctx, {solveTriangular(e, mT(e, lower), y, true)});
}

Results decomposeLuFactor(RewriteContext &ctx) {
  Emit e(ctx);
  if (!ctx.boolean("pivot", true))
    rewriteFail("linalg_lu_factor: LU without pivoting is not supported on the CPU");
  std::vector<Value *> f = luFactor(e, matrixArg(ctx, "A", false), true);
  return finish(ctx, {f[0], f[1]});
}

/// _lu_with_info (torch.lu): linalg_lu_factor_ex.
Results decomposeLuWithInfo(RewriteContext &ctx) {
  Emit e(ctx);
  return finish(ctx, create(e, ops::aten_linalg_lu_factor_ex_default,
                            {{"A", ctx.value("self")},
                             {"pivot", ctx.boolean("pivot", true)},
                             {"check_errors", ctx.boolean("check_errors", true)}}));
}

Results decomposeLu(RewriteContext &ctx) {
  Emit e(ctx);
  std::vector<Value *> f = create(e, ops::aten_linalg_lu_factor_ex_default,
                                  {{"A", matrixArg(ctx, "A", false)}, {"pivot", ctx.boolean("pivot", true)}});
  return finish(ctx, create(e, ops::aten_lu_unpack_default,
                            {{"LU_data", f[0]}, {"LU_pivots", f[1]}}));
}

Results decomposeLinalgLuSolve(RewriteContext &ctx) {
  Emit e(ctx);
  return finish(ctx, {luSolve(e, ctx.value("LU"), ctx.value("pivots"), ctx.value("B"),
                              ctx.boolean("left", true), ctx.boolean("adjoint", false))});
}

/// lu_solve(b, LU_data, LU_pivots), torch's older spelling.
Results decomposeLuSolve(RewriteContext &ctx) {
  Emit e(ctx);
  return finish(ctx, {luSolve(e, ctx.value("LU_data"), ctx.value("LU_pivots"), ctx.value("self"),
                              true, false)});
}

Results decomposeDet(RewriteContext &ctx) {
  Emit e(ctx);
  Value *a = matrixArg(ctx, "A");
  std::vector<Value *> f = luFactor(e, a, false);
  Value *sign = permutationSign(e, f[1], typeOf(a).dtype);
  return finish(ctx, {e.mul(sign, prodLast(e, diagonalOf(e, f[0])))});
}

Results decomposeSlogdet(RewriteContext &ctx) {
  Emit e(ctx);
  auto [sign, logAbs] = slogdet(e, matrixArg(ctx, "A"));
  return finish(ctx, {sign, logAbs});
}

/// logdet: log|det| where det > 0, -inf where 0, NaN where negative.
Results decomposeLogdet(RewriteContext &ctx) {
  Emit e(ctx);
  auto [sign, logAbs] = slogdet(e, matrixArg(ctx, "self"));
  Value *negative = e.compare(Cmp::Lt, sign, Number::integer(0));
  return finish(ctx, {e.where(negative, e.scalar(Number::real(kNaN), typeOf(logAbs).dtype), logAbs)});
}

Results decomposeInv(RewriteContext &ctx) {
  Emit e(ctx);
  return finish(ctx, {inverse(e, matrixArg(ctx, "A"), true)});
}

Results decomposeInvEx(RewriteContext &ctx) {
  Emit e(ctx);
  Value *info;
  Value *x = inverse(e, matrixArg(ctx, "A"), ctx.boolean("check_errors", false), &info);
  return finish(ctx, {x, info});
}

Results decomposeSolve(RewriteContext &ctx) {
  Emit e(ctx);
  return finish(ctx, {solve(e, matrixArg(ctx, "A"), ctx.value("B"), ctx.boolean("left", true), true).first});
}

Results decomposeSolveEx(RewriteContext &ctx) {
  Emit e(ctx);
  auto [x, info] = solve(e, matrixArg(ctx, "A"), ctx.value("B"), ctx.boolean("left", true),
                         ctx.boolean("check_errors", false));
  return finish(ctx, {x, info});
}

/// triangular_solve(b, A, upper, transpose, unitriangular) -> (X, A).
Results decomposeTriangularSolve(RewriteContext &ctx) {
  Emit e(ctx);
  Value *a = ctx.value("A");
  bool upper = ctx.boolean("upper", true), transpose = ctx.boolean("transpose", false);
  Value *x = solveTriangular(e, transpose ? mT(e, a) : a, ctx.value("self"), upper != transpose,
                             ctx.boolean("unitriangular", false));
  return finish(ctx, {x, e.clone(a)});
}

Results decomposeLdlFactor(RewriteContext &ctx) {
  Emit e(ctx);
  std::vector<Value *> f = create(e, ops::aten_linalg_ldl_factor_ex_default,
                                  {{"self", ctx.value("self")},
                                   {"hermitian", ctx.boolean("hermitian", false)},
                                   {"check_errors", true}});
  return finish(ctx, {f[0], f[1]});
}

Results decomposeEigvalsh(RewriteContext &ctx) {
  Emit e(ctx);
  std::string uplo = ctx.string("UPLO", "L");
  return finish(ctx, {create(e, ops::aten_linalg_eigh_default,
                             {{"self", matrixArg(ctx, "self")}, {"UPLO", uplo.c_str()}})[0]});
}

/// The square root of a symmetric positive semi-definite matrix:
/// V diag(sqrt(w)) V^T.
Results decomposeMatrixSqrth(RewriteContext &ctx) {
  Emit e(ctx);
  std::vector<Value *> wv = create(e, ops::aten_linalg_eigh_default, {{"self", matrixArg(ctx, "self")}});
  Value *scaled = e.mul(wv[1], e.unsqueeze(e.unary(ops::aten_sqrt_default, wv[0]), -2));
  return finish(ctx, {e.matmul(scaled, mT(e, wv[1]))});
}

Results decomposeSvdvals(RewriteContext &ctx) {
  Emit e(ctx);
  return finish(ctx, {singularValues(e, matrixArg(ctx, "A", false))});
}

/// svd(self, some, compute_uv) -> (U, S, V), V not transposed.
Results decomposeSvd(RewriteContext &ctx) {
  Emit e(ctx);
  if (!ctx.boolean("compute_uv", true))
    rewriteFail("svd: compute_uv=False is not supported");
  std::vector<Value *> usv = svd(e, ctx.value("self"), !ctx.boolean("some", true));
  return finish(ctx, {usv[0], usv[1], mT(e, usv[2])});
}

Results decomposePinv(RewriteContext &ctx) {
  Emit e(ctx);
  Value *a = matrixArg(ctx, "self", false);
  return finish(ctx, {pinv(e, a, ctx.boolean("hermitian", false), tolerances(ctx, e, a))});
}

/// pinverse(self, rcond): pinv with rtol = rcond.
Results decomposePinverse(RewriteContext &ctx) {
  Emit e(ctx);
  Value *a = matrixArg(ctx, "self", false);
  Tolerance tol{nullptr, e.scalar(Number::real(ctx.real("rcond", 1e-15)), typeOf(a).dtype)};
  return finish(ctx, {pinv(e, a, false, tol)});
}

Results decomposeMatrixRank(RewriteContext &ctx) {
  Emit e(ctx);
  Value *a = matrixArg(ctx, "input", false);
  Value *keep = kept(e, spectrum(e, a, ctx.boolean("hermitian", false)), tolerances(ctx, e, a));
  return finish(ctx, {e.sum(keep, {rankOf(keep) - 1}, false, DType::Int64)});
}

/// cond with p = None or 2 (largest over smallest singular value), or -2.
Results decomposeCond(RewriteContext &ctx) {
  Emit e(ctx);
  double p = 2;
  if (ctx.has("p"))
    p = number(ctx, "p").value();
  if (p != 2 && p != -2)
    rewriteFail("linalg_cond: p=" + std::to_string(p) + " is not supported (None, 2 and -2 are)");
  Value *s = singularValues(e, matrixArg(ctx, "self", false));
  int64_t k = dimSize(s, -1);
  Value *first = e.select(s, -1, 0), *last = e.select(s, -1, k - 1);
  return finish(ctx, {p == 2 ? e.div(first, last) : e.div(last, first)});
}

/// matrix_norm with ord 'fro' or 'nuc' over two dims.
Results decomposeMatrixNormStr(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = ctx.value("self");
  if (std::optional<DType> t = ctx.dtype("dtype"))
    x = e.cast(x, *t);
  std::string ord = ctx.string("ord", "fro");
  std::vector<int64_t> dims = ctx.has("dim") ? ctx.ints("dim") : std::vector<int64_t>{-2, -1};
  bool keepdim = ctx.boolean("keepdim", false);
  if (dims.size() != 2)
    rewriteFail("linalg_matrix_norm: dim must name two dims");
  Dims d = wrapDims(dims, rankOf(x));
  if (ord == "fro") {
    Value *sq = e.sum(e.mul(x, x), d, keepdim);
    return finish(ctx, {e.unary(ops::aten_sqrt_default, sq)});
  }
  if (ord != "nuc")
    rewriteFail("linalg_matrix_norm: ord '" + ord + "' is not supported ('fro' and 'nuc' are)");
  // Move the two dims last, sum the singular values.
  Dims perm;
  for (int64_t i = 0; i < rankOf(x); ++i)
    if (i != d[0] && i != d[1])
      perm.push_back(i);
  perm.push_back(d[0]);
  perm.push_back(d[1]);
  Value *s = singularValues(e, e.permute(x, perm));
  Value *n = e.sum(s, {rankOf(s) - 1}, false);
  if (keepdim) {
    for (int64_t i : std::vector<int64_t>{std::min(d[0], d[1]), std::max(d[0], d[1])})
      n = e.unsqueeze(n, i);
  }
  return finish(ctx, {n});
}

/// linalg_norm: a vector norm unless it names a matrix norm (ord given with
/// two dims, or a 2-d input with ord and no dim).
Results decomposeNorm(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = ctx.value("self");
  bool hasOrd = ctx.has("ord");
  std::optional<Dims> dims;
  if (ctx.has("dim"))
    dims = ctx.ints("dim");
  bool matrix = hasOrd && (dims ? dims->size() == 2 : rankOf(x) == 2);
  if (matrix)
    rewriteFail("linalg_norm: matrix norms with a numeric ord are not supported");
  std::vector<std::pair<std::string, ArgValue>> args = {
      {"self", x}, {"ord", hasOrd ? ctx.passThrough("ord") : ArgValue(2.0)},
      {"keepdim", ctx.boolean("keepdim", false)}};
  if (dims)
    args.emplace_back("dim", *dims);
  if (std::optional<DType> t = ctx.dtype("dtype"))
    args.emplace_back("dtype", *t);
  return finish(ctx, {e.op(ops::aten_linalg_vector_norm_default, std::move(args))});
}

Results decomposeLinalgDiagonal(RewriteContext &ctx) {
  Emit e(ctx);
  Value *a = ctx.value("A");
  int64_t r = rankOf(a);
  int64_t d1 = wrapDimension(ctx.integer("dim1", -2), r), d2 = wrapDimension(ctx.integer("dim2", -1), r);
  if (d1 == d2)
    rewriteFail("linalg_diagonal: dim1 and dim2 must differ");
  Dims perm;
  for (int64_t i = 0; i < r; ++i)
    if (i != d1 && i != d2)
      perm.push_back(i);
  perm.push_back(d1);
  perm.push_back(d2);
  return finish(ctx, {diagonalOf(e, e.permute(a, perm), ctx.integer("offset", 0))});
}

/// multi_dot: left to right matmuls; a 1-d first (last) operand is a row
/// (column) that goes away again.
Results decomposeMultiDot(RewriteContext &ctx) {
  Emit e(ctx);
  std::vector<Value *> xs = ctx.values("tensors");
  if (xs.size() < 2)
    rewriteFail("linalg_multi_dot: expected at least 2 tensors");
  bool row = rankOf(xs.front()) == 1, col = rankOf(xs.back()) == 1;
  if (row)
    xs.front() = e.unsqueeze(xs.front(), 0);
  if (col)
    xs.back() = e.unsqueeze(xs.back(), 1);
  Value *acc = xs[0];
  for (size_t i = 1; i < xs.size(); ++i)
    acc = e.mm(acc, xs[i]);
  Dims drop;
  if (row)
    drop.push_back(0);
  if (col)
    drop.push_back(1);
  return finish(ctx, {drop.empty() ? acc : e.squeeze(acc, drop)});
}

Results decomposeVecdot(RewriteContext &ctx) {
  Emit e(ctx);
  Value *p = e.mul(ctx.value("x"), ctx.value("y"));
  return finish(ctx, {e.sum(p, {wrapDimension(ctx.integer("dim", -1), rankOf(p))}, false)});
}

/// vander: columns x^0, x^1, ..., x^(N-1), as a running product.
Results decomposeVander(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = ctx.value("x");
  // torch reads a 0-dim x as one element.
  if (rankOf(x) == 0)
    x = e.unsqueeze(x, 0);
  const TensorType &out = ctx.resultType();
  int64_t n = staticSize(out.sizes.back(), "linalg_vander: N");
  Sizes sizes = out.sizes;
  sizes.back() = e.syms().constant(n > 0 ? n - 1 : 0);
  Value *one = e.fullLike(e.unsqueeze(x, -1), Number::integer(1), out.dtype);
  Value *powers = e.cat({one, e.cast(e.expand(e.unsqueeze(x, -1), sizes), out.dtype)}, -1);
  if (n == 0)
    return finish(ctx, {e.slice(powers, -1, 0, 0)});
  return finish(ctx, {e.op(ops::aten_cumprod_default, {{"self", powers}, {"dim", int64_t(-1)}})});
}

Results decomposeTensorinv(RewriteContext &ctx) {
  Emit e(ctx);
  Value *a = ctx.value("self");
  int64_t ind = ctx.integer("ind", 2);
  const Sizes &s = sizesOf(a);
  if (ind <= 0 || ind > rankOf(a))
    rewriteFail("linalg_tensorinv: expected a strictly positive ind up to the rank");
  Sizes front(s.begin(), s.begin() + ind), back(s.begin() + ind, s.end());
  const SymExpr *rows = sizeProduct(e.syms(), front), *cols = sizeProduct(e.syms(), back);
  Value *inv = inverse(e, e.reshape(a, {rows, cols}), true);
  Sizes outSizes = back;
  outSizes.insert(outSizes.end(), front.begin(), front.end());
  return finish(ctx, {e.reshape(inv, outSizes)});
}

Results decomposeTensorsolve(RewriteContext &ctx) {
  Emit e(ctx);
  Value *a = ctx.value("self"), *b = ctx.value("other");
  if (ctx.has("dims")) {
    Dims moved = wrapDims(ctx.ints("dims"), rankOf(a)), perm;
    for (int64_t i = 0; i < rankOf(a); ++i)
      if (std::find(moved.begin(), moved.end(), i) == moved.end())
        perm.push_back(i);
    perm.insert(perm.end(), moved.begin(), moved.end());
    a = e.permute(a, perm);
  }
  const Sizes &s = sizesOf(a);
  Sizes xSizes(s.begin() + rankOf(b), s.end());
  const SymExpr *rows = sizeProduct(e.syms(), sizesOf(b)), *cols = sizeProduct(e.syms(), xSizes);
  Value *x = solve(e, e.reshape(a, {rows, cols}), e.reshape(b, {rows}), true, true).first;
  return finish(ctx, {e.reshape(x, xSizes)});
}

/// matrix_power: repeated squaring; a negative power inverts first.
Results decomposeMatrixPower(RewriteContext &ctx) {
  Emit e(ctx);
  Value *a = matrixArg(ctx, "self");
  int64_t n = ctx.integer("n");
  if (n < 0) {
    a = inverse(e, a, true);
    n = -n;
  }
  Value *result = nullptr;
  for (Value *sq = a; n > 0; n >>= 1) {
    if (n & 1)
      result = result ? e.matmul(result, sq) : sq;
    if (n > 1)
      sq = e.matmul(sq, sq);
  }
  if (!result)
    result = e.clone(identityLike(e, a));
  return finish(ctx, {result});
}

/// qr from geqrf: Q from the reflectors, R the upper triangle.
Results decomposeQr(RewriteContext &ctx) {
  Emit e(ctx);
  Value *a = matrixArg(ctx, "A", false);
  std::string mode = ctx.string("mode", "reduced");
  int64_t m = dimSize(a, -2), n = dimSize(a, -1), k = std::min(m, n);
  std::vector<Value *> f = create(e, ops::aten_geqrf_default, {{"self", a}});
  if (mode == "r")
    rewriteFail("linalg_qr: mode='r' is not supported");
  bool complete = mode == "complete";
  if (!complete && mode != "reduced")
    rewriteFail("linalg_qr: mode '" + mode + "' is not supported");
  int64_t qCols = complete ? m : k;
  // Q's columns come from the reflectors padded (or cut) to qCols columns.
  Value *v = f[0];
  if (n > qCols)
    v = e.slice(v, -1, 0, qCols);
  else if (n < qCols)
    v = e.op(ops::aten_constant_pad_nd_default, {{"self", v}, {"pad", Dims{0, qCols - n}}});
  Value *q = e.op(ops::aten_linalg_householder_product_default, {{"input", v}, {"tau", f[1]}});
  Value *r = triangle(e, complete ? f[0] : e.slice(f[0], -2, 0, k), true);
  return finish(ctx, {q, r});
}

/// ormqr: Q (from geqrf's reflectors) times other, from either side,
/// optionally transposed.
Results decomposeOrmqr(RewriteContext &ctx) {
  Emit e(ctx);
  Value *a = ctx.value("self"), *tau = ctx.value("input2"), *c = ctx.value("input3");
  int64_t m = dimSize(a, -2), n = dimSize(a, -1), k = dimSize(tau, -1);
  if (n > m)
    a = e.slice(a, -1, 0, m);
  else if (n < m)
    a = e.op(ops::aten_constant_pad_nd_default, {{"self", a}, {"pad", Dims{0, m - n}}});
  if (k < m)
    tau = e.op(ops::aten_constant_pad_nd_default, {{"self", tau}, {"pad", Dims{0, m - k}}});
  Value *q = e.op(ops::aten_linalg_householder_product_default, {{"input", a}, {"tau", tau}});
  if (ctx.boolean("transpose", false))
    q = mT(e, q);
  return finish(ctx, {ctx.boolean("left", true) ? e.matmul(q, c) : e.matmul(c, q)});
}

/// polar: A = U H with U = W Vh and H = Vh^T S Vh from A = W S Vh.
Results decomposePolar(RewriteContext &ctx) {
  Emit e(ctx);
  std::vector<Value *> usv = svd(e, matrixArg(ctx, "A", false), false);
  Value *u = e.matmul(usv[0], usv[2]);
  Value *h = e.matmul(e.mul(mT(e, usv[2]), e.unsqueeze(usv[1], -2)), usv[2]);
  return finish(ctx, {u, h});
}

const DecompositionEntry kLinalgDecompositions[] = {
    {ops::aten__lu_with_info_default, decomposeLuWithInfo},
    {ops::aten_cholesky_inverse_default, decomposeCholeskyInverse},
    {ops::aten_cholesky_solve_default, decomposeCholeskySolve},
    {ops::aten_linalg_cholesky_default, decomposeCholesky},
    {ops::aten_linalg_cond_default, decomposeCond},
    {ops::aten_linalg_det_default, decomposeDet},
    {ops::aten_linalg_diagonal_default, decomposeLinalgDiagonal},
    {ops::aten_linalg_eigvalsh_default, decomposeEigvalsh},
    {ops::aten_linalg_inv_default, decomposeInv},
    {ops::aten_linalg_inv_ex_default, decomposeInvEx},
    {ops::aten_linalg_ldl_factor_default, decomposeLdlFactor},
    {ops::aten_linalg_lu_default, decomposeLu},
    {ops::aten_linalg_lu_factor_default, decomposeLuFactor},
    {ops::aten_linalg_lu_solve_default, decomposeLinalgLuSolve},
    {ops::aten_linalg_matrix_norm_str_ord, decomposeMatrixNormStr},
    {ops::aten_linalg_matrix_power_default, decomposeMatrixPower},
    {ops::aten_linalg_matrix_rank_atol_rtol_tensor, decomposeMatrixRank},
    {ops::aten_linalg_matrix_sqrth_default, decomposeMatrixSqrth},
    {ops::aten_linalg_multi_dot_default, decomposeMultiDot},
    {ops::aten_linalg_norm_default, decomposeNorm},
    {ops::aten_linalg_pinv_atol_rtol_float, decomposePinv},
    {ops::aten_linalg_pinv_atol_rtol_tensor, decomposePinv},
    {ops::aten_linalg_polar_default, decomposePolar},
    {ops::aten_linalg_qr_default, decomposeQr},
    {ops::aten_linalg_slogdet_default, decomposeSlogdet},
    {ops::aten_linalg_solve_default, decomposeSolve},
    {ops::aten_linalg_solve_ex_default, decomposeSolveEx},
    {ops::aten_linalg_svdvals_default, decomposeSvdvals},
    {ops::aten_linalg_tensorinv_default, decomposeTensorinv},
    {ops::aten_linalg_tensorsolve_default, decomposeTensorsolve},
    {ops::aten_linalg_vander_default, decomposeVander},
    {ops::aten_linalg_vecdot_default, decomposeVecdot},
    {ops::aten_logdet_default, decomposeLogdet},
    {ops::aten_lu_solve_default, decomposeLuSolve},
    {ops::aten_ormqr_default, decomposeOrmqr},
    {ops::aten_pinverse_default, decomposePinverse},
    {ops::aten_svd_default, decomposeSvd},
    {ops::aten_triangular_solve_default, decomposeTriangularSolve},
};

} // namespace

void registerLinalgDecompositions(DecompositionRegistry &r) { r.add(kLinalgDecompositions); }

} // namespace gc
