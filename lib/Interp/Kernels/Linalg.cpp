//===- Linalg.cpp - Reference kernels of the linear-algebra factorizations ===//
//
// The factorizations the other linear-algebra ops decompose into: LU with
// partial pivoting, Cholesky, Householder QR (LAPACK's geqrf and orgqr
// conventions), symmetric eigendecomposition, SVD, Bunch-Kaufman LDL^T
// (sytrf's pivots) and triangular solves, plus the matrix exponential. Each
// works in double on one matrix at a time, batched over the leading dims,
// following the textbook algorithms (Golub & Van Loan, "Matrix
// Computations"). Pivots and info codes are int32 and 1-based, as LAPACK
// returns them.
//
//===----------------------------------------------------------------------===//
#include "gc/Interp/Kernel.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace gc {
namespace {

using Results = std::vector<Tensor>;

//===----------------------------------------------------------------------===//
// Matrices and batches
//===----------------------------------------------------------------------===//

/// A dense row-major matrix of doubles.
struct Mat {
  int64_t rows = 0, cols = 0;
  std::vector<double> v;
  Mat(int64_t r, int64_t c) : rows(r), cols(c), v(static_cast<size_t>(r * c), 0.0) {}
  static Mat identity(int64_t r, int64_t c) {
    Mat m(r, c);
    for (int64_t i = 0; i < std::min(r, c); ++i)
      m(i, i) = 1;
    return m;
  }
  double &operator()(int64_t i, int64_t j) { return v[i * cols + j]; }
  double operator()(int64_t i, int64_t j) const { return v[i * cols + j]; }
  Mat transposed() const {
    Mat t(cols, rows);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        t(j, i) = (*this)(i, j);
    return t;
  }
  void swapRows(int64_t a, int64_t b) {
    for (int64_t j = 0; j < cols; ++j)
      std::swap((*this)(a, j), (*this)(b, j));
  }
};

Mat operator*(const Mat &a, const Mat &b) {
  Mat c(a.rows, b.cols);
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t k = 0; k < a.cols; ++k)
      for (int64_t j = 0; j < b.cols; ++j)
        c(i, j) += a(i, k) * b(k, j);
  return c;
}

/// The sizes in front of the last `inner` dims.
Shape batchSizes(const Tensor &t, int64_t inner = 2) {
  return Shape(t.sizes().begin(), t.sizes().end() - inner);
}

/// The index of `t`'s batch (its dims before the last `inner`) that batch
/// index `at` of a broadcast batch reads.
Shape operandBatch(const Tensor &t, const Shape &at, int64_t inner = 2) {
  Shape batch = batchSizes(t, inner);
  Shape idx(batch.size());
  size_t skip = at.size() - batch.size();
  for (size_t d = 0; d < batch.size(); ++d)
    idx[d] = batch[d] == 1 ? 0 : at[skip + d];
  return idx;
}

Mat loadMatrix(const Tensor &t, const Shape &batch) {
  Shape at = batch;
  at.resize(batch.size() + 2);
  Mat m(t.size(t.dim() - 2), t.size(t.dim() - 1));
  for (int64_t i = 0; i < m.rows; ++i)
    for (int64_t j = 0; j < m.cols; ++j) {
      at[batch.size()] = i;
      at[batch.size() + 1] = j;
      m(i, j) = t.getDouble(at);
    }
  return m;
}

void storeMatrix(Tensor &t, const Shape &batch, const Mat &m) {
  Shape at = batch;
  at.resize(batch.size() + 2);
  for (int64_t i = 0; i < m.rows; ++i)
    for (int64_t j = 0; j < m.cols; ++j) {
      at[batch.size()] = i;
      at[batch.size() + 1] = j;
      t.setDouble(at, m(i, j));
    }
}

/// Stores `v` (doubles or ints) along the last dim of `t` at `batch`.
template <typename T> void storeVector(Tensor &t, const Shape &batch, const std::vector<T> &v) {
  Shape at = batch;
  at.push_back(0);
  for (size_t i = 0; i < v.size(); ++i) {
    at.back() = static_cast<int64_t>(i);
    if constexpr (std::is_floating_point_v<T>)
      t.setDouble(at, v[i]);
    else
      t.setInt(at, v[i]);
  }
}

template <typename T> std::vector<T> loadVector(const Tensor &t, const Shape &batch) {
  Shape at = batch;
  at.push_back(0);
  std::vector<T> v(static_cast<size_t>(t.size(t.dim() - 1)));
  for (size_t i = 0; i < v.size(); ++i) {
    at.back() = static_cast<int64_t>(i);
    if constexpr (std::is_floating_point_v<T>)
      v[i] = t.getDouble(at);
    else
      v[i] = t.getInt(at);
  }
  return v;
}

/// A new tensor of `dtype`: `batch` then `tail`.
Tensor batchedZeros(DType dtype, const Shape &batch, std::initializer_list<int64_t> tail) {
  Shape sizes = batch;
  sizes.insert(sizes.end(), tail);
  return Tensor::zeros(dtype, sizes);
}

/// The broadcast of two batch shapes.
Shape broadcastBatch(const Shape &a, const Shape &b, const char *op) {
  Shape out(std::max(a.size(), b.size()), 1);
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t x = i < out.size() - a.size() ? 1 : a[i - (out.size() - a.size())];
    int64_t y = i < out.size() - b.size() ? 1 : b[i - (out.size() - b.size())];
    if (x != y && x != 1 && y != 1)
      kernelFail(std::string(op) + ": the batch dimensions of the operands do not broadcast (" +
                 shapeString(a) + " and " + shapeString(b) + ")");
    out[i] = x == 1 ? y : x;
  }
  return out;
}

[[noreturn]] void singular(const char *op, int64_t info) {
  kernelFail(std::string(op) + ": the diagonal element " + std::to_string(info) +
             " is zero: the matrix is singular");
}

//===----------------------------------------------------------------------===//
// LU with partial pivoting
//===----------------------------------------------------------------------===//

/// Gaussian elimination with row pivoting (LAPACK getrf): `a` becomes L
/// (unit diagonal, below) and U; returns the 1-based pivots and info (the
/// first zero pivot, 1-based, or 0).
int64_t luInPlace(Mat &a, std::vector<int32_t> &pivots) {
  int64_t k = std::min(a.rows, a.cols), info = 0;
  pivots.assign(static_cast<size_t>(k), 0);
  for (int64_t j = 0; j < k; ++j) {
    int64_t p = j;
    for (int64_t i = j + 1; i < a.rows; ++i)
      if (std::abs(a(i, j)) > std::abs(a(p, j)))
        p = i;
    pivots[j] = static_cast<int32_t>(p + 1);
    if (a(p, j) != 0) {
      if (p != j)
        a.swapRows(p, j);
      for (int64_t i = j + 1; i < a.rows; ++i)
        a(i, j) /= a(j, j);
    } else if (!info) {
      info = j + 1;
    }
    for (int64_t i = j + 1; i < a.rows; ++i)
      for (int64_t c = j + 1; c < a.cols; ++c)
        a(i, c) -= a(i, j) * a(j, c);
  }
  return info;
}

/// A batched factorization with pivots (LU, LDL^T): each matrix factored in
/// place by `factor`, which fills its pivots and returns LAPACK's info code;
/// results are the factors, the int32 pivots and the info codes.
Results factorWithPivots(const char *op, const Tensor &A, bool check, int64_t pivots,
                         int64_t (*factor)(Mat &, std::vector<int32_t> &)) {
  Shape batch = batchSizes(A);
  Tensor factors = Tensor::zeros(A.dtype(), A.sizes());
  Tensor piv = batchedZeros(DType::Int32, batch, {pivots});
  Tensor info = Tensor::zeros(DType::Int32, batch);
  forEachIndex(batch, [&](const Shape &b) {
    Mat a = loadMatrix(A, b);
    std::vector<int32_t> p;
    int64_t code = factor(a, p);
    if (check && code)
      singular(op, code);
    storeMatrix(factors, b, a);
    storeVector(piv, b, p);
    info.setInt(b, code);
  });
  return {factors, piv, info};
}

Results luFactor(const OpCall &call) {
  Tensor A = call.tensor("A");
  if (!call.boolean("pivot", true))
    kernelFail("linalg_lu_factor_ex: LU without pivoting is not supported on the CPU");
  int64_t m = A.size(A.dim() - 2), n = A.size(A.dim() - 1);
  return factorWithPivots("linalg_lu_factor_ex", A, call.boolean("check_errors", false),
                          std::min(m, n), luInPlace);
}

/// lu_unpack: A = P L U, with P from applying the row swaps in order.
Results luUnpack(const OpCall &call) {
  Tensor LU = call.tensor("LU_data"), pivots = call.tensor("LU_pivots");
  Shape batch = batchSizes(LU);
  int64_t m = LU.size(LU.dim() - 2), n = LU.size(LU.dim() - 1), k = std::min(m, n);
  Tensor P = batchedZeros(LU.dtype(), batch, {m, m});
  Tensor L = batchedZeros(LU.dtype(), batch, {m, k});
  Tensor U = batchedZeros(LU.dtype(), batch, {k, n});
  forEachIndex(batch, [&](const Shape &b) {
    Mat a = loadMatrix(LU, b), l(m, k), u(k, n), p(m, m);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        if (j < i && j < k)
          l(i, j) = a(i, j);
        if (i < k && j >= i)
          u(i, j) = a(i, j);
      }
    for (int64_t i = 0; i < k; ++i)
      l(i, i) = 1;
    std::vector<int64_t> perm(static_cast<size_t>(m));
    std::iota(perm.begin(), perm.end(), 0);
    std::vector<int64_t> piv = loadVector<int64_t>(pivots, b);
    for (int64_t i = 0; i < k; ++i) {
      if (piv[i] < 1 || piv[i] > m)
        kernelFail("lu_unpack: pivot " + std::to_string(piv[i]) + " is out of range [1, " +
                   std::to_string(m) + "]");
      std::swap(perm[i], perm[piv[i] - 1]);
    }
    for (int64_t i = 0; i < m; ++i)
      p(perm[i], i) = 1;
    storeMatrix(P, b, p);
    storeMatrix(L, b, l);
    storeMatrix(U, b, u);
  });
  return {P, L, U};
}

//===----------------------------------------------------------------------===//
// Triangular solves
//===----------------------------------------------------------------------===//

/// Solves T x = b in place for every column of `b`, T triangular (only its
/// `upper` or lower triangle is read), with a unit diagonal if `unit`.
void triangularSolve(const Mat &t, Mat &b, bool upper, bool unit) {
  int64_t n = t.rows;
  for (int64_t c = 0; c < b.cols; ++c)
    for (int64_t s = 0; s < n; ++s) {
      int64_t i = upper ? n - 1 - s : s;
      double x = b(i, c);
      if (upper)
        for (int64_t j = i + 1; j < n; ++j)
          x -= t(i, j) * b(j, c);
      else
        for (int64_t j = 0; j < i; ++j)
          x -= t(i, j) * b(j, c);
      b(i, c) = unit ? x : x / t(i, i);
    }
}

Results solveTriangular(const OpCall &call) {
  Tensor A = call.tensor("self"), B = call.tensor("B");
  bool upper = call.boolean("upper", false), left = call.boolean("left", true);
  bool unit = call.boolean("unitriangular", false);
  Shape batch = broadcastBatch(batchSizes(A), batchSizes(B), "linalg_solve_triangular");
  Tensor X = batchedZeros(B.dtype(), batch, {B.size(B.dim() - 2), B.size(B.dim() - 1)});
  forEachIndex(batch, [&](const Shape &b) {
    Mat a = loadMatrix(A, operandBatch(A, b)), x = loadMatrix(B, operandBatch(B, b));
    if (left) {
      triangularSolve(a, x, upper, unit);
    } else {
      // X A = B is A^T X^T = B^T, and A^T has the other triangle.
      x = x.transposed();
      triangularSolve(a.transposed(), x, !upper, unit);
      x = x.transposed();
    }
    storeMatrix(X, b, x);
  });
  return {X};
}

//===----------------------------------------------------------------------===//
// Cholesky
//===----------------------------------------------------------------------===//

/// A = L L^T from the lower triangle of `a` (the upper one if `upper`, for
/// A = U^T U); returns info, the order of the first leading minor that is
/// not positive definite (1-based), or 0.
int64_t cholesky(const Mat &a, Mat &l, bool upper) {
  int64_t n = a.rows;
  auto at = [&](int64_t i, int64_t j) { return upper ? a(j, i) : a(i, j); };
  for (int64_t j = 0; j < n; ++j) {
    double d = at(j, j);
    for (int64_t k = 0; k < j; ++k)
      d -= l(j, k) * l(j, k);
    if (!(d > 0))
      return j + 1;
    l(j, j) = std::sqrt(d);
    for (int64_t i = j + 1; i < n; ++i) {
      double s = at(i, j);
      for (int64_t k = 0; k < j; ++k)
        s -= l(i, k) * l(j, k);
      l(i, j) = s / l(j, j);
    }
  }
  return 0;
}

Results choleskyEx(const OpCall &call) {
  Tensor A = call.tensor("self");
  bool upper = call.boolean("upper", false), check = call.boolean("check_errors", false);
  Shape batch = batchSizes(A);
  Tensor L = Tensor::zeros(A.dtype(), A.sizes());
  Tensor info = Tensor::zeros(DType::Int32, batch);
  forEachIndex(batch, [&](const Shape &b) {
    Mat a = loadMatrix(A, b), l(a.rows, a.rows);
    int64_t code = cholesky(a, l, upper);
    if (check && code)
      kernelFail("linalg_cholesky: the factorization could not be completed because the input "
                 "is not positive-definite (the leading minor of order " +
                 std::to_string(code) + " is not positive-definite)");
    storeMatrix(L, b, upper ? l.transposed() : l);
    info.setInt(b, code);
  });
  return {L, info};
}

//===----------------------------------------------------------------------===//
// Householder QR
//===----------------------------------------------------------------------===//

/// LAPACK's elementary reflector (larfg) for the column a(j.., j):
/// H = I - tau v v^T with v(0) = 1 maps it to (beta, 0, ..., 0), with
/// beta = -sign(alpha) * norm; tau = 0 (H = I) when the part below is
/// zero. The column becomes (beta, v(1..)).
double reflector(Mat &a, int64_t j) {
  double alpha = a(j, j), below = 0;
  for (int64_t i = j + 1; i < a.rows; ++i)
    below += a(i, j) * a(i, j);
  if (below == 0)
    return 0;
  double beta = -std::copysign(std::sqrt(alpha * alpha + below), alpha);
  for (int64_t i = j + 1; i < a.rows; ++i)
    a(i, j) /= alpha - beta;
  a(j, j) = beta;
  return (beta - alpha) / beta;
}

/// Applies H = I - tau v v^T (v from column `j` of `v`, rows j.., v(j) = 1)
/// from the left to columns [c0, cols) of `m`, rows j...
void applyReflector(const Mat &v, int64_t j, double tau, Mat &m, int64_t c0) {
  if (tau == 0)
    return;
  for (int64_t c = c0; c < m.cols; ++c) {
    double w = m(j, c);
    for (int64_t i = j + 1; i < m.rows; ++i)
      w += v(i, j) * m(i, c);
    w *= tau;
    m(j, c) -= w;
    for (int64_t i = j + 1; i < m.rows; ++i)
      m(i, c) -= w * v(i, j);
  }
}

Results geqrf(const OpCall &call) {
  Tensor A = call.tensor("self");
  Shape batch = batchSizes(A);
  int64_t m = A.size(A.dim() - 2), n = A.size(A.dim() - 1), k = std::min(m, n);
  Tensor out = Tensor::zeros(A.dtype(), A.sizes());
  Tensor tau = batchedZeros(A.dtype(), batch, {k});
  forEachIndex(batch, [&](const Shape &b) {
    Mat a = loadMatrix(A, b);
    std::vector<double> t(static_cast<size_t>(k));
    for (int64_t j = 0; j < k; ++j) {
      t[j] = reflector(a, j);
      double diag = a(j, j);
      a(j, j) = 1;
      applyReflector(a, j, t[j], a, j + 1);
      a(j, j) = diag;
    }
    storeMatrix(out, b, a);
    storeVector(tau, b, t);
  });
  return {out, tau};
}

/// The first n columns of H_1 H_2 ... H_k (LAPACK orgqr).
Results householderProduct(const OpCall &call) {
  Tensor A = call.tensor("input"), tau = call.tensor("tau");
  Shape batch = batchSizes(A);
  Tensor out = Tensor::zeros(A.dtype(), A.sizes());
  forEachIndex(batch, [&](const Shape &b) {
    Mat v = loadMatrix(A, b), q = Mat::identity(v.rows, v.cols);
    std::vector<double> t = loadVector<double>(tau, b);
    for (int64_t j = static_cast<int64_t>(t.size()) - 1; j >= 0; --j)
      applyReflector(v, j, t[j], q, 0);
    storeMatrix(out, b, q);
  });
  return {out};
}

//===----------------------------------------------------------------------===//
// Symmetric eigendecomposition and SVD (Jacobi methods)
//===----------------------------------------------------------------------===//

/// A plane rotation by cos c and sin s.
struct Rotation {
  double c, s;
};

/// The Jacobi rotation that diagonalizes the symmetric 2x2 matrix
/// [[app, apq], [apq, aqq]]: t = tan = sign(z) / (|z| + sqrt(1 + z^2)) with
/// z = (aqq - app) / (2 apq), the smaller of the two angles.
Rotation jacobiRotation(double app, double aqq, double apq) {
  double z = (aqq - app) / (2 * apq);
  double t = std::copysign(1.0, z) / (std::abs(z) + std::hypot(1.0, z));
  double c = 1 / std::hypot(1.0, t);
  return {c, t * c};
}

/// Columns p and q of `m` become c x - s y and s x + c y.
void rotateColumns(Mat &m, int64_t p, int64_t q, Rotation r) {
  for (int64_t i = 0; i < m.rows; ++i) {
    double x = m(i, p), y = m(i, q);
    m(i, p) = r.c * x - r.s * y;
    m(i, q) = r.s * x + r.c * y;
  }
}

/// Cyclic Jacobi on symmetric `a` (destroyed): eigenvalues ascending and
/// the eigenvectors as the columns of the returned matrix.
Mat jacobiEigen(Mat a, std::vector<double> &values) {
  int64_t n = a.rows;
  Mat v = Mat::identity(n, n);
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0, total = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j)
        (i == j ? total : off) += a(i, j) * a(i, j);
    if (off <= 1e-30 * (total + off) || off == 0)
      break;
    for (int64_t p = 0; p < n; ++p)
      for (int64_t q = p + 1; q < n; ++q) {
        if (a(p, q) == 0)
          continue;
        Rotation r = jacobiRotation(a(p, p), a(q, q), a(p, q));
        rotateColumns(a, p, q, r);
        a = a.transposed();
        rotateColumns(a, p, q, r);
        rotateColumns(v, p, q, r);
      }
  }
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t x, int64_t y) { return a(x, x) < a(y, y); });
  Mat sorted(n, n);
  values.resize(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) {
    values[j] = a(order[j], order[j]);
    for (int64_t i = 0; i < n; ++i)
      sorted(i, j) = v(i, order[j]);
  }
  return sorted;
}

Results eigh(const OpCall &call) {
  Tensor A = call.tensor("self");
  bool upper = call.string("UPLO", "L") == "U";
  Shape batch = batchSizes(A);
  int64_t n = A.size(A.dim() - 1);
  Tensor values = batchedZeros(A.dtype(), batch, {n});
  Tensor vectors = Tensor::zeros(A.dtype(), A.sizes());
  forEachIndex(batch, [&](const Shape &b) {
    Mat a = loadMatrix(A, b), s(n, n);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j <= i; ++j)
        s(i, j) = s(j, i) = upper ? a(j, i) : a(i, j);
    std::vector<double> w;
    Mat v = jacobiEigen(s, w);
    storeVector(values, b, w);
    storeMatrix(vectors, b, v);
  });
  return {values, vectors};
}

/// Adds unit columns orthogonal to the first `have` columns of `u` until
/// all its columns are filled (Gram-Schmidt, twice, on e_1, e_2, ...).
void completeBasis(Mat &u, int64_t have) {
  for (int64_t e = 0; have < u.cols && e < u.rows; ++e) {
    std::vector<double> x(static_cast<size_t>(u.rows), 0.0);
    x[e] = 1;
    for (int pass = 0; pass < 2; ++pass)
      for (int64_t j = 0; j < have; ++j) {
        double d = 0;
        for (int64_t i = 0; i < u.rows; ++i)
          d += u(i, j) * x[i];
        for (int64_t i = 0; i < u.rows; ++i)
          x[i] -= d * u(i, j);
      }
    double norm = 0;
    for (double xi : x)
      norm += xi * xi;
    norm = std::sqrt(norm);
    if (norm < 1e-8)
      continue;
    for (int64_t i = 0; i < u.rows; ++i)
      u(i, have) = x[i] / norm;
    ++have;
  }
}

/// One-sided Jacobi (Hestenes) SVD of `a` with rows >= cols: a = U S V^T,
/// U rows x uCols (uCols = cols, or rows for the full basis), S descending.
void jacobiSvd(Mat a, int64_t uCols, Mat &u, std::vector<double> &s, Mat &v) {
  int64_t m = a.rows, n = a.cols;
  Mat w = Mat::identity(n, n);
  for (int sweep = 0; sweep < 100; ++sweep) {
    bool rotated = false;
    for (int64_t p = 0; p < n; ++p)
      for (int64_t q = p + 1; q < n; ++q) {
        double alpha = 0, beta = 0, gamma = 0;
        for (int64_t i = 0; i < m; ++i) {
          alpha += a(i, p) * a(i, p);
          beta += a(i, q) * a(i, q);
          gamma += a(i, p) * a(i, q);
        }
        if (gamma == 0 || std::abs(gamma) <= 1e-15 * std::sqrt(alpha * beta))
          continue;
        rotated = true;
        Rotation r = jacobiRotation(alpha, beta, gamma);
        rotateColumns(a, p, q, r);
        rotateColumns(w, p, q, r);
      }
    if (!rotated)
      break;
  }
  std::vector<double> norms(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) {
    double d = 0;
    for (int64_t i = 0; i < m; ++i)
      d += a(i, j) * a(i, j);
    norms[j] = std::sqrt(d);
  }
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t x, int64_t y) { return norms[x] > norms[y]; });
  u = Mat(m, uCols);
  v = Mat(n, n);
  s.assign(static_cast<size_t>(n), 0.0);
  double largest = n ? norms[order[0]] : 0;
  int64_t have = 0;
  for (int64_t j = 0; j < n; ++j) {
    int64_t src = order[j];
    s[j] = norms[src];
    for (int64_t i = 0; i < n; ++i)
      v(i, j) = w(i, src);
    if (s[j] > 1e-300 && s[j] > largest * 1e-15 && have == j) {
      for (int64_t i = 0; i < m; ++i)
        u(i, j) = a(i, src) / s[j];
      ++have;
    }
  }
  completeBasis(u, have);
}

Results svd(const OpCall &call) {
  Tensor A = call.tensor("A");
  bool full = call.boolean("full_matrices", true);
  Shape batch = batchSizes(A);
  int64_t m = A.size(A.dim() - 2), n = A.size(A.dim() - 1), k = std::min(m, n);
  Tensor U = batchedZeros(A.dtype(), batch, {m, full ? m : k});
  Tensor S = batchedZeros(A.dtype(), batch, {k});
  Tensor Vh = batchedZeros(A.dtype(), batch, {full ? n : k, n});
  forEachIndex(batch, [&](const Shape &b) {
    Mat a = loadMatrix(A, b), u(0, 0), v(0, 0);
    std::vector<double> s;
    // Work on the tall one of a and a^T; a^T = U S V^T gives a = V S U^T.
    bool wide = m < n;
    Mat tall = wide ? a.transposed() : a;
    jacobiSvd(tall, full ? tall.rows : k, u, s, v);
    if (wide)
      std::swap(u, v);
    // Keep the first columns: U is m x (k or m), V is n x (k or n).
    Mat uu(m, full ? m : k), vh(full ? n : k, n);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < uu.cols; ++j)
        uu(i, j) = u(i, j);
    for (int64_t i = 0; i < vh.rows; ++i)
      for (int64_t j = 0; j < n; ++j)
        vh(i, j) = v(j, i);
    s.resize(static_cast<size_t>(k));
    storeMatrix(U, b, uu);
    storeVector(S, b, s);
    storeMatrix(Vh, b, vh);
  });
  return {U, S, Vh};
}

//===----------------------------------------------------------------------===//
// Bunch-Kaufman LDL^T (LAPACK sytrf, lower)
//===----------------------------------------------------------------------===//

/// Factors the lower triangle of symmetric `a` in place as P L D L^T P^T with
/// 1x1 and 2x2 diagonal blocks; pivots as sytrf's: k for a 1x1 block that
/// swapped rows k and i, -k on both rows of a 2x2 block. Returns info.
int64_t ldlInPlace(Mat &a, std::vector<int32_t> &piv) {
  const double alpha = (1 + std::sqrt(17.0)) / 8;
  int64_t n = a.rows, info = 0;
  piv.assign(static_cast<size_t>(n), 0);
  auto maxBelow = [&](int64_t col, int64_t from, int64_t &at) {
    double best = -1;
    for (int64_t i = from; i < n; ++i)
      if (std::abs(a(i, col)) > best) {
        best = std::abs(a(i, col));
        at = i;
      }
    return best < 0 ? 0.0 : best;
  };
  for (int64_t k = 0; k < n;) {
    int64_t step = 1, kp = k, imax = k;
    double absakk = std::abs(a(k, k));
    double colmax = k + 1 < n ? maxBelow(k, k + 1, imax) : 0;
    if (std::max(absakk, colmax) == 0 || std::isnan(absakk)) {
      // A zero column: nothing to eliminate.
      if (!info)
        info = k + 1;
      piv[k] = static_cast<int32_t>(k + 1);
      k += 1;
      continue;
    }
    if (absakk < alpha * colmax) {
      // The largest off-diagonal element in row imax (left part in the row,
      // right part in column imax).
      double rowmax = 0;
      for (int64_t j = k; j < imax; ++j)
        rowmax = std::max(rowmax, std::abs(a(imax, j)));
      int64_t jmax;
      if (imax + 1 < n)
        rowmax = std::max(rowmax, maxBelow(imax, imax + 1, jmax));
      if (absakk >= alpha * colmax * (colmax / rowmax)) {
        kp = k;
      } else if (std::abs(a(imax, imax)) >= alpha * rowmax) {
        kp = imax;
      } else {
        kp = imax;
        step = 2;
      }
    }
    int64_t kk = k + step - 1;
    if (kp != kk) {
      for (int64_t i = kp + 1; i < n; ++i)
        std::swap(a(i, kk), a(i, kp));
      for (int64_t j = kk + 1; j < kp; ++j)
        std::swap(a(j, kk), a(kp, j));
      std::swap(a(kk, kk), a(kp, kp));
      if (step == 2)
        std::swap(a(k + 1, k), a(kp, k));
    }
    if (step == 1) {
      double d = 1 / a(k, k);
      for (int64_t j = k + 1; j < n; ++j)
        for (int64_t i = j; i < n; ++i)
          a(i, j) -= d * a(i, k) * a(j, k);
      for (int64_t i = k + 1; i < n; ++i)
        a(i, k) *= d;
      piv[k] = static_cast<int32_t>(kp + 1);
    } else {
      if (k + 2 < n) {
        double d21 = a(k + 1, k);
        double d11 = a(k + 1, k + 1) / d21, d22 = a(k, k) / d21;
        double t = 1 / (d11 * d22 - 1);
        d21 = t / d21;
        for (int64_t j = k + 2; j < n; ++j) {
          double wk = d21 * (d11 * a(j, k) - a(j, k + 1));
          double wkp1 = d21 * (d22 * a(j, k + 1) - a(j, k));
          for (int64_t i = j; i < n; ++i)
            a(i, j) -= a(i, k) * wk + a(i, k + 1) * wkp1;
          a(j, k) = wk;
          a(j, k + 1) = wkp1;
        }
      }
      piv[k] = piv[k + 1] = static_cast<int32_t>(-(kp + 1));
    }
    k += step;
  }
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i + 1; j < n; ++j)
      a(i, j) = 0;
  return info;
}

Results ldlFactor(const OpCall &call) {
  Tensor A = call.tensor("self");
  if (call.boolean("hermitian", false))
    kernelFail("linalg_ldl_factor_ex: hermitian=True is not supported (real inputs are "
               "symmetric: use hermitian=False)");
  return factorWithPivots("linalg_ldl_factor_ex", A, call.boolean("check_errors", false),
                          A.size(A.dim() - 1), ldlInPlace);
}

/// Solves A X = B in place with A = P L D L^T P^T from ldlInPlace (sytrs).
void ldlSolveInPlace(const Mat &a, const std::vector<int64_t> &piv, Mat &x) {
  int64_t n = a.rows;
  auto axpyRows = [&](int64_t dst, int64_t src, double f) {
    for (int64_t c = 0; c < x.cols; ++c)
      x(dst, c) -= f * x(src, c);
  };
  // L D Y = P^T B, forward.
  for (int64_t k = 0; k < n;) {
    if (piv[k] > 0) {
      int64_t kp = piv[k] - 1;
      if (kp != k)
        x.swapRows(k, kp);
      for (int64_t i = k + 1; i < n; ++i)
        axpyRows(i, k, a(i, k));
      for (int64_t c = 0; c < x.cols; ++c)
        x(k, c) /= a(k, k);
      k += 1;
    } else {
      int64_t kp = -piv[k] - 1;
      if (kp != k + 1)
        x.swapRows(k + 1, kp);
      for (int64_t i = k + 2; i < n; ++i) {
        axpyRows(i, k, a(i, k));
        axpyRows(i, k + 1, a(i, k + 1));
      }
      double akm1k = a(k + 1, k), akm1 = a(k, k) / akm1k, ak = a(k + 1, k + 1) / akm1k;
      double denom = akm1 * ak - 1;
      for (int64_t c = 0; c < x.cols; ++c) {
        double bkm1 = x(k, c) / akm1k, bk = x(k + 1, c) / akm1k;
        x(k, c) = (ak * bkm1 - bk) / denom;
        x(k + 1, c) = (akm1 * bk - bkm1) / denom;
      }
      k += 2;
    }
  }
  // L^T P^T X = Y, backward.
  for (int64_t k = n - 1; k >= 0;) {
    auto subtractBelow = [&](int64_t row, int64_t col) {
      for (int64_t i = k + 1; i < n; ++i)
        axpyRows(row, i, a(i, col));
    };
    if (piv[k] > 0) {
      subtractBelow(k, k);
      int64_t kp = piv[k] - 1;
      if (kp != k)
        x.swapRows(k, kp);
      k -= 1;
    } else {
      subtractBelow(k, k);
      subtractBelow(k - 1, k - 1);
      int64_t kp = -piv[k] - 1;
      if (kp != k)
        x.swapRows(k, kp);
      k -= 2;
    }
  }
}

Results ldlSolve(const OpCall &call) {
  Tensor LD = call.tensor("LD"), pivots = call.tensor("pivots"), B = call.tensor("B");
  if (call.boolean("hermitian", false))
    kernelFail("linalg_ldl_solve: hermitian=True is not supported");
  Shape batch = broadcastBatch(batchSizes(LD), batchSizes(B), "linalg_ldl_solve");
  Tensor X = batchedZeros(B.dtype(), batch, {B.size(B.dim() - 2), B.size(B.dim() - 1)});
  int64_t n = LD.size(LD.dim() - 1);
  forEachIndex(batch, [&](const Shape &b) {
    Shape ab = operandBatch(LD, b);
    Mat a = loadMatrix(LD, ab), x = loadMatrix(B, operandBatch(B, b));
    std::vector<int64_t> piv = loadVector<int64_t>(pivots, operandBatch(pivots, b, 1));
    for (int64_t k = 0; k < n; ++k)
      if (piv[k] == 0 || std::abs(piv[k]) > n ||
          (piv[k] < 0 && (k + 1 >= n || piv[k + 1] != piv[k])))
        kernelFail("linalg_ldl_solve: pivots are not those of linalg_ldl_factor");
      else if (piv[k] < 0)
        ++k;
    ldlSolveInPlace(a, piv, x);
    storeMatrix(X, b, x);
  });
  return {X};
}

//===----------------------------------------------------------------------===//
// Matrix exponential
//===----------------------------------------------------------------------===//

/// Scaling and squaring: exp(A) = exp(A / 2^s)^(2^s) with the 1-norm of
/// A / 2^s below 1/2, where a degree-18 Taylor sum converges past double
/// precision.
Mat expm(const Mat &a) {
  int64_t n = a.rows;
  double norm = 0;
  for (int64_t j = 0; j < n; ++j) {
    double col = 0;
    for (int64_t i = 0; i < n; ++i)
      col += std::abs(a(i, j));
    norm = std::max(norm, col);
  }
  if (!std::isfinite(norm)) {
    Mat nan(n, n);
    std::fill(nan.v.begin(), nan.v.end(), std::nan(""));
    return nan;
  }
  int s = norm > 0.5 ? static_cast<int>(std::ceil(std::log2(norm / 0.5))) : 0;
  Mat x = a;
  for (double &e : x.v)
    e = std::ldexp(e, -s);
  Mat sum = Mat::identity(n, n), term = Mat::identity(n, n);
  for (int k = 1; k <= 18; ++k) {
    term = term * x;
    for (double &e : term.v)
      e /= k;
    for (size_t i = 0; i < sum.v.size(); ++i)
      sum.v[i] += term.v[i];
  }
  for (int i = 0; i < s; ++i)
    sum = sum * sum;
  return sum;
}

Results matrixExp(const OpCall &call) {
  Tensor A = call.tensor("self");
  Tensor out = Tensor::zeros(A.dtype(), A.sizes());
  forEachIndex(batchSizes(A), [&](const Shape &b) { storeMatrix(out, b, expm(loadMatrix(A, b))); });
  return {out};
}

const KernelEntry kKernels[] = {
    {ops::aten_geqrf_default, geqrf},
    {ops::aten_linalg_cholesky_ex_default, choleskyEx},
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

void registerLinalgKernels(KernelRegistry &r) { r.add(kKernels); }

} // namespace gc
