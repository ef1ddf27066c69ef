//===- Products.cpp - Matrix product kernels --------------------------------===//
//
// mm, bmm, addmm, baddbmm, matmul, linear and einsum, on raw float64 or
// int64 arrays (NNCommon.h).
//
//===----------------------------------------------------------------------===//
#include "NNCommon.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

namespace gc {
namespace {

using namespace nn;

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

// Products accumulate in a "wide" dtype: float64 for floating operands, and
// int64 with wraparound for integer ones (held as uint64_t, whose overflow is
// defined). The kernels convert the wide result to the operands' dtype.

DType wideDType(DType d) { return isFloatingPoint(d) ? DType::Float64 : DType::Int64; }

/// The dtype of a product of `a` and `b`: torch multiplies floating or
/// integer matrices of one dtype, never bool ones.
DType productDType(const Tensor &a, const Tensor &b) {
  requireSameDType(a, b);
  if (a.dtype() == DType::Bool)
    kernelFail("matrix products of bool tensors are not supported");
  return a.dtype();
}

/// c[i] += a[i] @ b[i] for `batch` row-major matrices a [m, k], b [k, n].
template <class T>
void matmulLoop(const T *a, const T *b, T *c, int64_t batch, int64_t m, int64_t k, int64_t n) {
  for (int64_t i = 0; i < batch; ++i, a += m * k, b += k * n, c += m * n)
    for (int64_t r = 0; r < m; ++r)
      for (int64_t j = 0; j < k; ++j) {
        T x = a[r * k + j];
        for (int64_t col = 0; col < n; ++col)
          c[r * n + col] += x * b[j * n + col];
      }
}

/// a [..., m, k] @ b [..., k, n], whose batch dimensions are equal, in the
/// wide dtype.
Tensor batchedProduct(const Tensor &a, const Tensor &b) {
  DType wide = wideDType(a.dtype());
  Tensor wa = a.to(wide), wb = b.to(wide);
  int64_t rank = a.dim();
  int64_t m = a.size(rank - 2), k = a.size(rank - 1), n = b.size(rank - 1);
  int64_t batch = sizeProduct(a.sizes(), 0, rank - 2);
  Shape outSizes = a.sizes();
  outSizes.back() = n;
  Tensor out = Tensor::zeros(wide, outSizes);
  if (wide == DType::Float64)
    matmulLoop(rawData<double>(wa), rawData<double>(wb), rawData<double>(out), batch, m, k, n);
  else
    matmulLoop(rawData<uint64_t>(wa), rawData<uint64_t>(wb), rawData<uint64_t>(out), batch, m, k,
               n);
  return out;
}

void requireInnerSizesMatch(const Tensor &a, const Tensor &b) {
  if (a.size(a.dim() - 1) != b.size(b.dim() - 2))
    kernelFail("shapes " + shapeString(a.sizes()) + " and " + shapeString(b.sizes()) +
               " cannot be multiplied");
}

/// torch.matmul in the wide dtype: a 1-D left operand is a row and a 1-D
/// right operand a column, each dropped from the result; batch dimensions
/// broadcast.
Tensor matmulWide(const Tensor &a, const Tensor &b) {
  if (a.dim() == 0 || b.dim() == 0)
    kernelFail("both arguments to matmul need to be at least 1-D, got shapes " +
               shapeString(a.sizes()) + " and " + shapeString(b.sizes()));
  Tensor a2 = a.dim() == 1 ? unsqueezed(a, 0) : a;
  Tensor b2 = b.dim() == 1 ? unsqueezed(b, 1) : b;
  requireInnerSizesMatch(a2, b2);
  Shape aBatch(a2.sizes().begin(), a2.sizes().end() - 2);
  Shape bBatch(b2.sizes().begin(), b2.sizes().end() - 2);
  Shape batch = broadcastShapes(aBatch, bBatch);
  int64_t m = a2.size(a2.dim() - 2), k = a2.size(a2.dim() - 1);
  int64_t n = b2.size(b2.dim() - 1);
  Tensor product = batchedProduct(broadcastTo(a2, concat(batch, {m, k})),
                                  broadcastTo(b2, concat(batch, {k, n})));
  Shape resultSizes = batch;
  if (a.dim() > 1)
    resultSizes.push_back(m);
  if (b.dim() > 1)
    resultSizes.push_back(n);
  return reshaped(product, resultSizes);
}

/// acc = alpha * acc + beta * self, where a null `self` adds nothing.
template <class T> void addScaledLoop(T *acc, const T *self, T beta, T alpha, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    acc[i] = alpha * acc[i] + (self ? beta * self[i] : T(0));
}

/// beta * self + alpha * product, with `self` broadcast to the wide
/// product's shape, converted to `dtype`. As in torch, a zero beta ignores
/// self entirely (its nans and infs too), and integer operands take no
/// floating-point beta or alpha.
Tensor addScaled(const Tensor &product, const Tensor &self, Scalar beta, Scalar alpha,
                 DType dtype) {
  bool floating = product.dtype() == DType::Float64;
  if (!floating && (beta.kind == Scalar::Kind::Float || alpha.kind == Scalar::Kind::Float))
    kernelFail("for integral input tensors, beta and alpha must not be floating-point numbers");
  Tensor acc = product.clone();
  bool useSelf = beta.toDouble() != 0;
  Tensor wideSelf;
  if (useSelf)
    wideSelf = broadcastTo(self, product.sizes()).to(product.dtype());
  if (floating)
    addScaledLoop(rawData<double>(acc), useSelf ? rawData<double>(wideSelf) : nullptr,
                  beta.toDouble(), alpha.toDouble(), acc.numel());
  else
    addScaledLoop(rawData<uint64_t>(acc), useSelf ? rawData<uint64_t>(wideSelf) : nullptr,
                  static_cast<uint64_t>(beta.i), static_cast<uint64_t>(alpha.i), acc.numel());
  return acc.to(dtype);
}

Scalar intScalar(int64_t v) {
  Scalar s;
  s.kind = Scalar::Kind::Int;
  s.i = v;
  return s;
}

Scalar scalarOr(const OpCall &call, std::string_view name, int64_t dflt) {
  return call.has(name) ? call.scalar(name) : intScalar(dflt);
}

std::vector<Tensor> mm(const OpCall &call) {
  Tensor a = call.tensor("self"), b = call.tensor("mat2");
  requireRank(a, 2, "self");
  requireRank(b, 2, "mat2");
  DType dtype = productDType(a, b);
  requireInnerSizesMatch(a, b);
  return {batchedProduct(a, b).to(dtype)};
}

/// gc.qlinear: input [..., K] times weight [N, K] transposed, as integers,
/// then int8Result.
std::vector<Tensor> quantizedLinear(const OpCall &call) {
  Tensor x = int8Input(call), w = int8Weight(call);
  requireRank(w, 2, "weight");
  if (x.dim() < 1 || x.size(x.dim() - 1) != w.size(1))
    kernelFail("int8 linear: input " + shapeString(x.sizes()) + " does not match weight " +
               shapeString(w.sizes()));
  Shape lead(x.sizes().begin(), x.sizes().end() - 1);
  Tensor a = reshaped(x, {sizeProduct(x.sizes(), 0, lead.size()), w.size(1)});
  Tensor product = batchedProduct(a, transposedLast2(w));
  return {int8Result(call, reshaped(product, concat(lead, {w.size(0)})),
                     static_cast<int64_t>(lead.size()))};
}

std::vector<Tensor> bmm(const OpCall &call) {
  Tensor a = call.tensor("self"), b = call.tensor("mat2");
  requireRank(a, 3, "self");
  requireRank(b, 3, "mat2");
  DType dtype = productDType(a, b);
  if (a.size(0) != b.size(0))
    kernelFail("batch sizes differ: " + shapeString(a.sizes()) + " and " + shapeString(b.sizes()));
  requireInnerSizesMatch(a, b);
  return {batchedProduct(a, b).to(dtype)};
}

/// addmm and baddbmm: beta * self + alpha * (m1 @ m2) for m1, m2 of `rank`.
std::vector<Tensor> addProduct(const OpCall &call, const char *m1Name, const char *m2Name,
                               int64_t rank) {
  Tensor self = call.tensor("self");
  Tensor m1 = call.tensor(m1Name), m2 = call.tensor(m2Name);
  requireRank(m1, rank, m1Name);
  requireRank(m2, rank, m2Name);
  DType dtype = productDType(m1, m2);
  requireSameDType(self, m1);
  if (rank == 3 && m1.size(0) != m2.size(0))
    kernelFail("batch sizes differ: " + shapeString(m1.sizes()) + " and " +
               shapeString(m2.sizes()));
  requireInnerSizesMatch(m1, m2);
  return {addScaled(batchedProduct(m1, m2), self, scalarOr(call, "beta", 1),
                    scalarOr(call, "alpha", 1), dtype)};
}

std::vector<Tensor> addmm(const OpCall &call) { return addProduct(call, "mat1", "mat2", 2); }

std::vector<Tensor> baddbmm(const OpCall &call) { return addProduct(call, "batch1", "batch2", 3); }

std::vector<Tensor> matmul(const OpCall &call) {
  Tensor a = call.tensor("self"), b = call.tensor("other");
  DType dtype = productDType(a, b);
  return {matmulWide(a, b).to(dtype)};
}

/// input @ weight^T + bias.
std::vector<Tensor> linear(const OpCall &call) {
  Tensor input = call.tensor("input"), weight = call.tensor("weight");
  DType dtype = productDType(input, weight);
  Tensor product = matmulWide(input, transposedLast2(weight));
  std::optional<Tensor> bias = call.optTensor("bias");
  if (!bias)
    return {product.to(dtype)};
  requireSameDType(*bias, input);
  return {addScaled(product, *bias, intScalar(1), intScalar(1), dtype)};
}

//===----------------------------------------------------------------------===//
// einsum
//===----------------------------------------------------------------------===//

/// einsum's labels as numbers: 'A'-'Z' are 0-25 and 'a'-'z' 26-51, so that
/// the implicit output lists them in that order; the dims an ellipsis
/// stands for take 52, 53, ..., aligned from the right across operands as
/// broadcasting aligns them.
constexpr int kEllipsisLabel = 52;

int einsumLetter(char c) {
  if (c >= 'A' && c <= 'Z')
    return c - 'A';
  if (c >= 'a' && c <= 'z')
    return 26 + (c - 'a');
  kernelFail(std::string("einsum: '") + c + "' is not a subscript letter");
}

/// The labels of one side of the equation for `rank` dims; an ellipsis
/// stands for `ellipsisDims` dims (for an operand: its rank less its
/// letters, returned through `ellipsisDims` when it is negative).
std::vector<int> einsumLabels(std::string_view subscripts, int64_t rank, int64_t &ellipsisDims,
                              int64_t allEllipsisDims) {
  std::vector<int> labels;
  size_t dots = subscripts.find("...");
  int64_t letters = static_cast<int64_t>(subscripts.size()) - (dots == std::string_view::npos ? 0 : 3);
  if (ellipsisDims < 0)
    ellipsisDims = dots == std::string_view::npos ? 0 : rank - letters;
  for (size_t i = 0; i < subscripts.size(); ++i) {
    if (i == dots) {
      for (int64_t k = allEllipsisDims - ellipsisDims; k < allEllipsisDims; ++k)
        labels.push_back(kEllipsisLabel + static_cast<int>(k));
      i += 2;
      continue;
    }
    labels.push_back(einsumLetter(subscripts[i]));
  }
  return labels;
}

/// einsum(equation, tensors): every product of one element per operand,
/// summed over the labels the output leaves out. The reference loop visits
/// every combination of label values once.
std::vector<Tensor> einsum(const OpCall &call) {
  std::string equation;
  for (char c : call.string("equation", ""))
    if (c != ' ')
      equation += c;
  std::vector<Tensor> operands = call.tensors("tensors");
  size_t arrow = equation.find("->");
  std::string lhs = equation.substr(0, arrow);
  std::vector<std::string> specs(1);
  for (char c : lhs) {
    if (c == ',')
      specs.emplace_back();
    else
      specs.back() += c;
  }
  if (operands.empty() || specs.size() != operands.size())
    kernelFail("einsum: the equation has " + std::to_string(specs.size()) + " operands, got " +
               std::to_string(operands.size()) + " tensors");
  for (const Tensor &t : operands)
    requireSameDType(operands[0], t);

  // Ellipsis dims: as many as the operand with the most.
  std::vector<int64_t> ellipsis(operands.size(), -1);
  int64_t allEllipsis = 0;
  for (size_t i = 0; i < operands.size(); ++i) {
    einsumLabels(specs[i], operands[i].dim(), ellipsis[i], 0);
    if (ellipsis[i] < 0)
      kernelFail("einsum: operand " + std::to_string(i) + " has fewer dims than subscripts");
    allEllipsis = std::max(allEllipsis, ellipsis[i]);
  }
  int numLabels = kEllipsisLabel + static_cast<int>(allEllipsis);
  std::vector<int64_t> labelSize(numLabels, -1);
  std::vector<std::vector<int>> labels(operands.size());
  std::vector<int> count(numLabels, 0);
  for (size_t i = 0; i < operands.size(); ++i) {
    labels[i] = einsumLabels(specs[i], operands[i].dim(), ellipsis[i], allEllipsis);
    if (static_cast<int64_t>(labels[i].size()) != operands[i].dim())
      kernelFail("einsum: operand " + std::to_string(i) + " has " +
                 std::to_string(operands[i].dim()) + " dims, its subscripts " + specs[i] + " " +
                 std::to_string(labels[i].size()));
    for (size_t d = 0; d < labels[i].size(); ++d) {
      int64_t &size = labelSize[labels[i][d]];
      int64_t s = operands[i].size(static_cast<int64_t>(d));
      ++count[labels[i][d]];
      if (size == -1 || size == 1)
        size = s;
      else if (s != 1 && s != size)
        kernelFail("einsum: subscript sizes " + std::to_string(size) + " and " +
                   std::to_string(s) + " do not match");
    }
  }
  std::vector<int> outLabels;
  if (arrow != std::string::npos) {
    int64_t outEllipsis = allEllipsis;
    outLabels = einsumLabels(equation.substr(arrow + 2), 0, outEllipsis, allEllipsis);
    for (int l : outLabels)
      if (labelSize[l] < 0)
        kernelFail("einsum: output subscript does not appear in the operands");
  } else {
    for (int l = 0; l < numLabels; ++l)
      if (l >= kEllipsisLabel || count[l] == 1)
        outLabels.push_back(l);
    std::stable_partition(outLabels.begin(), outLabels.end(),
                          [](int l) { return l >= kEllipsisLabel; });
  }

  // Every used label, the output's first; a label's stride in each operand
  // (0 where it broadcasts or is absent) and in the output.
  std::vector<int> loop = outLabels;
  for (int l = 0; l < numLabels; ++l)
    if (labelSize[l] >= 0 && std::find(loop.begin(), loop.end(), l) == loop.end())
      loop.push_back(l);
  Shape outSizes;
  for (int l : outLabels)
    outSizes.push_back(labelSize[l]);
  std::vector<Tensor> data;
  std::vector<std::vector<int64_t>> strides(operands.size(), std::vector<int64_t>(loop.size(), 0));
  for (size_t i = 0; i < operands.size(); ++i) {
    data.push_back(toF64(operands[i]));
    Shape contiguous = contiguousStrides(operands[i].sizes());
    for (size_t d = 0; d < labels[i].size(); ++d)
      if (operands[i].size(static_cast<int64_t>(d)) != 1) {
        size_t at = std::find(loop.begin(), loop.end(), labels[i][d]) - loop.begin();
        strides[i][at] += contiguous[d];
      }
  }
  Tensor out = Tensor::zeros(DType::Float64, outSizes);
  double *acc = rawData<double>(out);
  Shape outStrides = contiguousStrides(outSizes);
  std::vector<int64_t> index(loop.size(), 0);
  int64_t total = 1;
  for (int l : loop)
    total *= labelSize[l];
  for (int64_t step = 0; step < total; ++step) {
    double product = 1;
    for (size_t i = 0; i < operands.size(); ++i) {
      int64_t at = 0;
      for (size_t k = 0; k < loop.size(); ++k)
        at += index[k] * strides[i][k];
      product *= rawData<double>(data[i])[at];
    }
    int64_t o = 0;
    for (size_t k = 0; k < outLabels.size(); ++k)
      o += index[k] * outStrides[k];
    acc[o] += product;
    for (size_t k = loop.size(); k-- > 0;) {
      if (++index[k] < labelSize[loop[k]])
        break;
      index[k] = 0;
    }
  }
  return {out.to(operands[0].dtype())};
}

const KernelEntry kKernels[] = {
    {ops::aten_mm_default, mm},
    {ops::gc_qlinear_default, quantizedLinear},
    {ops::aten_bmm_default, bmm},
    {ops::aten_addmm_default, addmm},
    {ops::aten_baddbmm_default, baddbmm},
    {ops::aten_matmul_default, matmul},
    {ops::aten_linear_default, linear},
    {ops::aten_einsum_default, einsum},
};

} // namespace

void registerProductKernels(KernelRegistry &r) { r.add(kKernels); }

} // namespace gc
