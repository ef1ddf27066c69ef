//===- NNTest.cpp - Tests of the neural-network reference kernels ---------===//
//
// Each test runs one node through its kernel, with expected values worked
// out by hand.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"
#include "gc/Interp/Kernel.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>

using namespace gc;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

using test::make;
using test::transposed;

Tensor f32(Shape sizes, const std::vector<double> &values) {
  return make(DType::Float32, std::move(sizes), values);
}

/// 1, 2, ..., n as a float32 tensor of `sizes`.
Tensor iota(Shape sizes) {
  std::vector<double> v(static_cast<size_t>(numel(sizes)));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<double>(i + 1);
  return f32(std::move(sizes), v);
}

/// Builds a graph of one node and runs it through the reference kernels.
class OneNode {
public:
  explicit OneNode(OpId op) : op_(op) {}

  OneNode &tensor(const std::string &name, const Tensor &t) {
    node_.addTensor(name, t);
    return *this;
  }
  OneNode &tensors(const std::string &name, const std::vector<Tensor> &ts) {
    node_.addTensorList(name, ts);
    return *this;
  }
  OneNode &arg(const std::string &name, Arg a) {
    node_.addArg(name, std::move(a));
    return *this;
  }
  OneNode &ints(const std::string &name, std::vector<int64_t> v) {
    return arg(name, Arg::integers(std::move(v)));
  }
  OneNode &integer(const std::string &name, int64_t v) { return arg(name, Arg::integer(v)); }
  OneNode &real(const std::string &name, double v) { return arg(name, Arg::real(v)); }
  OneNode &boolean(const std::string &name, bool v) { return arg(name, Arg::boolean(v)); }
  OneNode &none(const std::string &name) { return arg(name, Arg::none()); }

  std::vector<Tensor> run(size_t results = 1) {
    std::vector<Tensor> out = node_.run(referenceKernels(), op_, results);
    EXPECT_EQ(out.size(), results) << op_;
    return out;
  }
  Tensor run1() { return run(1).at(0); }

private:
  OpId op_;
  test::OneNodeGraph node_;
};

void expectValues(const Tensor &t, DType dtype, const Shape &sizes, const std::vector<double> &want,
                  double tol = 1e-6) {
  test::expectTensor(t, dtype, sizes, want, test::Tolerance::absolute(tol));
}

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

TEST(NNMatmul, Mm) {
  Tensor out =
      OneNode(ops::aten_mm_default).tensor("self", iota({2, 3})).tensor("mat2", iota({3, 2})).run1();
  // [[1,2,3],[4,5,6]] @ [[1,2],[3,4],[5,6]]
  expectValues(out, DType::Float32, {2, 2}, {22, 28, 49, 64});
}

TEST(NNMatmul, MmNonContiguousAndFloat64) {
  // The transposed view of [[1,2],[3,4]] is [[1,3],[2,4]].
  Tensor a = make(DType::Float64, {2, 2}, {1, 2, 3, 4});
  Tensor out = OneNode(ops::aten_mm_default)
                   .tensor("self", transposed(a))
                   .tensor("mat2", make(DType::Float64, {2, 1}, {1, 10}))
                   .run1();
  expectValues(out, DType::Float64, {2, 1}, {31, 42});
}

TEST(NNMatmul, MmIntegersWrap) {
  Tensor a = make(DType::Int32, {1, 2}, {65536, 1});
  Tensor b = make(DType::Int32, {2, 1}, {65536, 5});
  Tensor out = OneNode(ops::aten_mm_default).tensor("self", a).tensor("mat2", b).run1();
  // 2^32 + 5 wraps to 5 in int32.
  EXPECT_EQ(out.dtype(), DType::Int32);
  EXPECT_EQ(out.toInts(), std::vector<int64_t>{5});
}

TEST(NNMatmul, MmZeroSize) {
  Tensor out = OneNode(ops::aten_mm_default)
                   .tensor("self", f32({0, 5}, {}))
                   .tensor("mat2", iota({5, 10}))
                   .run1();
  expectValues(out, DType::Float32, {0, 10}, {});
  // An empty inner dimension sums nothing.
  out = OneNode(ops::aten_mm_default)
            .tensor("self", f32({2, 0}, {}))
            .tensor("mat2", f32({0, 3}, {}))
            .run1();
  expectValues(out, DType::Float32, {2, 3}, {0, 0, 0, 0, 0, 0});
}

Tensor einsum(const std::string &equation, const std::vector<Tensor> &ts) {
  return OneNode(ops::aten_einsum_default)
      .arg("equation", Arg::string(equation))
      .tensors("tensors", ts)
      .run1();
}

TEST(NNEinsum, ContractsBroadcastsAndSums) {
  Tensor a = make(DType::Float32, {2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = make(DType::Float32, {3, 2}, {1, 0, 0, 1, 1, 1});
  expectValues(einsum("ij,jk->ik", {a, b}), DType::Float32, {2, 2}, {4, 5, 10, 11});
  expectValues(einsum("ij,jk->ki", {a, b}), DType::Float32, {2, 2}, {4, 10, 5, 11});
  // Implicit output: the labels seen once, in order (upper case first).
  expectValues(einsum("ij,jK", {a, b}), DType::Float32, {2, 2}, {4, 10, 5, 11});
  expectValues(einsum("ij->", {a}), DType::Float32, {}, {21});
  expectValues(einsum("ii", {make(DType::Float64, {2, 2}, {1, 2, 3, 4})}), DType::Float64, {}, {5});
  // An ellipsis broadcasts: [2, 1, 3] against [3] row by row.
  expectValues(einsum("...j,j->...", {make(DType::Float32, {2, 1, 3}, {1, 2, 3, 4, 5, 6}),
                                       make(DType::Float32, {3}, {1, 0, -1})}),
               DType::Float32, {2, 1}, {-2, -2});
  expectValues(einsum("b i j, b j -> b i", {make(DType::Float32, {1, 2, 2}, {1, 2, 3, 4}),
                                            make(DType::Float32, {1, 2}, {1, 1})}),
               DType::Float32, {1, 2}, {3, 7});
}

TEST(NNEinsum, Errors) {
  Tensor a = make(DType::Float32, {2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_THROW(einsum("ij,jk->ik", {a}), KernelError);                   // operands
  EXPECT_THROW(einsum("ijk->i", {a}), KernelError);                      // dims
  EXPECT_THROW(einsum("ij,ij->i", {a, make(DType::Float32, {3, 2}, {1, 2, 3, 4, 5, 6})}),
               KernelError);                                             // sizes
  EXPECT_THROW(einsum("ij->k", {a}), KernelError);                       // output label
  EXPECT_THROW(einsum("i1->i", {a}), KernelError);                       // not a letter
  EXPECT_THROW(einsum("ij,ij->i", {a, make(DType::Float64, {2, 3}, {1, 2, 3, 4, 5, 6})}),
               KernelError);                                             // dtypes
}

TEST(NNMatmul, MmErrors) {
  EXPECT_THROW(OneNode(ops::aten_mm_default)
                   .tensor("self", iota({2, 3}))
                   .tensor("mat2", make(DType::Float64, {3, 2}, {1, 2, 3, 4, 5, 6}))
                   .run1(),
               KernelError);
  EXPECT_THROW(
      OneNode(ops::aten_mm_default).tensor("self", iota({2, 3})).tensor("mat2", iota({2, 3})).run1(),
      KernelError);
  EXPECT_THROW(OneNode(ops::aten_mm_default)
                   .tensor("self", iota({2, 3, 1}))
                   .tensor("mat2", iota({1, 3}))
                   .run1(),
               KernelError);
}

TEST(NNMatmul, Bmm) {
  Tensor out = OneNode(ops::aten_bmm_default)
                   .tensor("self", iota({2, 1, 2}))
                   .tensor("mat2", f32({2, 2, 1}, {1, 1, 1, -1}))
                   .run1();
  // [1,2]@[1,1]^T = 3; [3,4]@[1,-1]^T = -1.
  expectValues(out, DType::Float32, {2, 1, 1}, {3, -1});
}

TEST(NNMatmul, AddmmBroadcastsSelf) {
  Tensor out = OneNode(ops::aten_addmm_default)
                   .tensor("self", f32({2}, {1, 2}))
                   .tensor("mat1", iota({2, 2}))
                   .tensor("mat2", f32({2, 2}, {1, 0, 0, 1}))
                   .real("beta", 0.5)
                   .integer("alpha", 2)
                   .run1();
  // 0.5 * [1, 2] + 2 * [[1,2],[3,4]]
  expectValues(out, DType::Float32, {2, 2}, {2.5, 5, 6.5, 9});
}

TEST(NNMatmul, AddmmZeroBetaIgnoresNan) {
  Tensor out = OneNode(ops::aten_addmm_default)
                   .tensor("self", f32({1, 1}, {kNan}))
                   .tensor("mat1", f32({1, 1}, {3}))
                   .tensor("mat2", f32({1, 1}, {4}))
                   .integer("beta", 0)
                   .run1();
  expectValues(out, DType::Float32, {1, 1}, {12});
}

TEST(NNMatmul, AddmmIntegerRejectsFloatScalars) {
  Tensor i = make(DType::Int64, {1, 1}, {2});
  EXPECT_THROW(OneNode(ops::aten_addmm_default)
                   .tensor("self", i)
                   .tensor("mat1", i)
                   .tensor("mat2", i)
                   .real("alpha", 0.5)
                   .run1(),
               KernelError);
  Tensor out = OneNode(ops::aten_addmm_default)
                   .tensor("self", i)
                   .tensor("mat1", i)
                   .tensor("mat2", i)
                   .integer("beta", 3)
                   .run1();
  EXPECT_EQ(out.dtype(), DType::Int64);
  EXPECT_EQ(out.toInts(), std::vector<int64_t>{10});
}

TEST(NNMatmul, Baddbmm) {
  Tensor out = OneNode(ops::aten_baddbmm_default)
                   .tensor("self", f32({1}, {100}))
                   .tensor("batch1", iota({2, 1, 2}))
                   .tensor("batch2", f32({2, 2, 1}, {1, 1, 1, -1}))
                   .run1();
  expectValues(out, DType::Float32, {2, 1, 1}, {103, 99});
}

TEST(NNMatmul, MatmulVectors) {
  // 1-D . 1-D is a 0-dim dot product.
  Tensor dot =
      OneNode(ops::aten_matmul_default).tensor("self", iota({3})).tensor("other", iota({3})).run1();
  expectValues(dot, DType::Float32, {}, {14});
  // 2-D @ 1-D drops the column.
  Tensor mv = OneNode(ops::aten_matmul_default)
                  .tensor("self", iota({2, 3}))
                  .tensor("other", f32({3}, {1, 0, -1}))
                  .run1();
  expectValues(mv, DType::Float32, {2}, {-2, -2});
  // 1-D @ 3-D prepends a row, then drops it.
  Tensor vm = OneNode(ops::aten_matmul_default)
                  .tensor("self", f32({2}, {1, -1}))
                  .tensor("other", iota({2, 2, 2}))
                  .run1();
  expectValues(vm, DType::Float32, {2, 2}, {-2, -2, -2, -2});
  EXPECT_THROW(
      OneNode(ops::aten_matmul_default).tensor("self", f32({}, {1})).tensor("other", iota({1})).run1(),
      KernelError);
}

TEST(NNMatmul, MatmulBroadcastsBatch) {
  // [2, 1, 1, 2] @ [3, 2, 1] -> [2, 3, 1, 1]
  Tensor a = f32({2, 1, 1, 2}, {1, 0, 0, 1});
  Tensor b = iota({3, 2, 1});
  Tensor out = OneNode(ops::aten_matmul_default).tensor("self", a).tensor("other", b).run1();
  // a[0] picks the first element of each b[j], a[1] the second.
  expectValues(out, DType::Float32, {2, 3, 1, 1}, {1, 3, 5, 2, 4, 6});
}

TEST(NNMatmul, Linear) {
  Tensor w = f32({2, 3}, {1, 0, 0, 0, 1, 1});
  Tensor out = OneNode(ops::aten_linear_default)
                   .tensor("input", iota({2, 1, 3}))
                   .tensor("weight", w)
                   .tensor("bias", f32({2}, {10, 20}))
                   .run1();
  expectValues(out, DType::Float32, {2, 1, 2}, {11, 25, 14, 31});
  Tensor noBias =
      OneNode(ops::aten_linear_default).tensor("input", iota({3})).tensor("weight", w).run1();
  expectValues(noBias, DType::Float32, {2}, {1, 5});
  Tensor empty = OneNode(ops::aten_linear_default)
                     .tensor("input", f32({0, 3}, {}))
                     .tensor("weight", w)
                     .tensor("bias", f32({2}, {10, 20}))
                     .run1();
  expectValues(empty, DType::Float32, {0, 2}, {});
}

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

TEST(NNConv, Conv2dBasicWithBias) {
  Tensor out = OneNode(ops::aten_conv2d_default)
                   .tensor("input", iota({1, 1, 3, 3}))
                   .tensor("weight", f32({1, 1, 2, 2}, {1, 1, 1, 1}))
                   .tensor("bias", f32({1}, {0.5}))
                   .run1();
  expectValues(out, DType::Float32, {1, 1, 2, 2}, {12.5, 16.5, 24.5, 28.5});
}

TEST(NNConv, Conv2dStridePadding) {
  // 3x3 ones over 1..9 padded by 1, every other position.
  Tensor out = OneNode(ops::aten_conv2d_default)
                   .tensor("input", iota({1, 1, 3, 3}))
                   .tensor("weight", f32({1, 1, 3, 3}, std::vector<double>(9, 1)))
                   .none("bias")
                   .ints("stride", {2, 2})
                   .ints("padding", {1})
                   .run1();
  expectValues(out, DType::Float32, {1, 1, 2, 2}, {12, 16, 24, 28});
}

TEST(NNConv, Conv2dDilation) {
  Tensor out = OneNode(ops::aten_conv2d_default)
                   .tensor("input", iota({1, 1, 3, 3}))
                   .tensor("weight", f32({1, 1, 2, 2}, {1, 1, 1, 1}))
                   .ints("dilation", {2, 2})
                   .run1();
  expectValues(out, DType::Float32, {1, 1, 1, 1}, {1 + 3 + 7 + 9});
}

TEST(NNConv, Conv2dChannelsAndGroups) {
  Tensor input = iota({1, 2, 2, 2});
  // Two input channels into one output: c0 + 10 * c1.
  Tensor mixed = OneNode(ops::aten_conv2d_default)
                     .tensor("input", input)
                     .tensor("weight", f32({1, 2, 1, 1}, {1, 10}))
                     .run1();
  expectValues(mixed, DType::Float32, {1, 1, 2, 2}, {51, 62, 73, 84});
  // Depthwise with two outputs per group: 1*c0, 2*c0, 3*c1, 4*c1.
  Tensor depthwise = OneNode(ops::aten_conv2d_default)
                         .tensor("input", input)
                         .tensor("weight", f32({4, 1, 1, 1}, {1, 2, 3, 4}))
                         .integer("groups", 2)
                         .run1();
  expectValues(depthwise, DType::Float32, {1, 4, 2, 2},
               {1, 2, 3, 4, 2, 4, 6, 8, 15, 18, 21, 24, 20, 24, 28, 32});
  EXPECT_THROW(OneNode(ops::aten_conv2d_default)
                   .tensor("input", input)
                   .tensor("weight", f32({3, 1, 1, 1}, {1, 2, 3}))
                   .integer("groups", 2)
                   .run1(),
               KernelError);
}

TEST(NNConv, Conv2dUnbatchedAndNonContiguous) {
  // The transposed view of 1..9 is [[1,4,7],[2,5,8],[3,6,9]].
  Tensor input = transposed(iota({1, 3, 3}));
  Tensor out = OneNode(ops::aten_conv2d_default)
                   .tensor("input", input)
                   .tensor("weight", f32({1, 1, 1, 2}, {1, -1}))
                   .run1();
  expectValues(out, DType::Float32, {1, 3, 2}, {-3, -3, -3, -3, -3, -3});
}

TEST(NNConv, Conv2dZeroBatch) {
  Tensor out = OneNode(ops::aten_conv2d_default)
                   .tensor("input", f32({0, 1, 3, 3}, {}))
                   .tensor("weight", f32({2, 1, 2, 2}, std::vector<double>(8, 1)))
                   .run1();
  expectValues(out, DType::Float32, {0, 2, 2, 2}, {});
}

TEST(NNConv, Conv2dPaddingStrings) {
  // An even kernel pads its odd amount after the input under "same".
  Tensor same = OneNode(ops::aten_conv2d_padding)
                    .tensor("input", iota({1, 1, 1, 3}))
                    .tensor("weight", f32({1, 1, 1, 2}, {1, 1}))
                    .arg("padding", Arg::string("same"))
                    .run1();
  expectValues(same, DType::Float32, {1, 1, 1, 3}, {3, 5, 3});
  Tensor valid = OneNode(ops::aten_conv2d_padding)
                     .tensor("input", iota({1, 1, 1, 3}))
                     .tensor("weight", f32({1, 1, 1, 2}, {1, 1}))
                     .arg("padding", Arg::string("valid"))
                     .run1();
  expectValues(valid, DType::Float32, {1, 1, 1, 2}, {3, 5});
  EXPECT_THROW(OneNode(ops::aten_conv2d_padding)
                   .tensor("input", iota({1, 1, 1, 3}))
                   .tensor("weight", f32({1, 1, 1, 2}, {1, 1}))
                   .arg("padding", Arg::string("same"))
                   .ints("stride", {2})
                   .run1(),
               KernelError);
}

OneNode convolutionNode(const Tensor &input, const Tensor &weight, size_t spatial,
                        bool transposed = false) {
  OneNode n(ops::aten_convolution_default);
  n.tensor("input", input)
      .tensor("weight", weight)
      .none("bias")
      .ints("stride", std::vector<int64_t>(spatial, 1))
      .ints("padding", std::vector<int64_t>(spatial, 0))
      .ints("dilation", std::vector<int64_t>(spatial, 1))
      .boolean("transposed", transposed)
      .ints("output_padding", std::vector<int64_t>(spatial, 0))
      .integer("groups", 1);
  return n;
}

TEST(NNConv, Convolution1d3dAndErrors) {
  Tensor out1 = convolutionNode(iota({1, 1, 4}), f32({1, 1, 2}, {1, -1}), 1).run1();
  expectValues(out1, DType::Float32, {1, 1, 3}, {-1, -1, -1});
  Tensor out3 =
      convolutionNode(iota({1, 1, 2, 2, 2}), f32({1, 1, 2, 2, 2}, std::vector<double>(8, 1)), 3)
          .run1();
  expectValues(out3, DType::Float32, {1, 1, 1, 1, 1}, {36});
  EXPECT_THROW(convolutionNode(iota({1, 1, 4}), f32({1, 1, 2}, {1, -1}), 1, true).run1(),
               KernelError);
  // Integer convolution is exact, as torch's CPU kernel; bool is refused.
  Tensor ints =
      convolutionNode(make(DType::Int64, {1, 1, 2}, {1, -2}), make(DType::Int64, {1, 1, 1}, {3}), 1)
          .run1();
  expectValues(ints, DType::Int64, {1, 1, 2}, {3, -6});
  EXPECT_THROW(
      convolutionNode(make(DType::Bool, {1, 1, 2}, {1, 0}), make(DType::Bool, {1, 1, 1}, {1}), 1)
          .run1(),
      KernelError);
  // The kernel must fit in the padded input.
  EXPECT_THROW(convolutionNode(iota({1, 1, 2}), iota({1, 1, 3}), 1).run1(), KernelError);
}

TEST(NNConv, Float64StaysFloat64) {
  Tensor out = OneNode(ops::aten_conv2d_default)
                   .tensor("input", make(DType::Float64, {1, 1, 1, 1}, {0.1}))
                   .tensor("weight", make(DType::Float64, {1, 1, 1, 1}, {3}))
                   .run1();
  EXPECT_EQ(out.dtype(), DType::Float64);
  EXPECT_EQ(out.toDoubles()[0], 0.1 * 3);
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

TEST(NNPool, MaxPool2dWithIndices) {
  std::vector<Tensor> r = OneNode(ops::aten_max_pool2d_with_indices_default)
                              .tensor("self", iota({1, 1, 4, 4}))
                              .ints("kernel_size", {2, 2})
                              .run(2);
  expectValues(r[0], DType::Float32, {1, 1, 2, 2}, {6, 8, 14, 16});
  EXPECT_EQ(r[1].dtype(), DType::Int64);
  EXPECT_EQ(r[1].toInts(), (std::vector<int64_t>{5, 7, 13, 15}));
}

TEST(NNPool, MaxPool2dCeilMode) {
  auto pool = [](bool ceil) {
    return OneNode(ops::aten_max_pool2d_with_indices_default)
        .tensor("self", iota({1, 3, 3}))
        .ints("kernel_size", {2})
        .ints("stride", {2})
        .boolean("ceil_mode", ceil)
        .run(2);
  };
  std::vector<Tensor> ceil = pool(true);
  expectValues(ceil[0], DType::Float32, {1, 2, 2}, {5, 6, 8, 9});
  EXPECT_EQ(ceil[1].toInts(), (std::vector<int64_t>{4, 5, 7, 8}));
  expectValues(pool(false)[0], DType::Float32, {1, 1, 1}, {5});
}

TEST(NNPool, MaxPool2dPaddingDilation) {
  Tensor padded = OneNode(ops::aten_max_pool2d_default)
                      .tensor("self", iota({1, 1, 3, 3}))
                      .ints("kernel_size", {3, 3})
                      .ints("stride", {1, 1})
                      .ints("padding", {1, 1})
                      .run1();
  expectValues(padded, DType::Float32, {1, 1, 3, 3}, {5, 6, 6, 8, 9, 9, 8, 9, 9});
  std::vector<Tensor> dilated = OneNode(ops::aten_max_pool2d_with_indices_default)
                                    .tensor("self", iota({1, 1, 4, 4}))
                                    .ints("kernel_size", {2, 2})
                                    .ints("stride", {1, 1})
                                    .ints("padding", {0, 0})
                                    .ints("dilation", {2, 2})
                                    .run(2);
  expectValues(dilated[0], DType::Float32, {1, 1, 2, 2}, {11, 12, 15, 16});
  EXPECT_EQ(dilated[1].toInts(), (std::vector<int64_t>{10, 11, 14, 15}));
  // Padding beyond half the kernel is refused, as torch does.
  EXPECT_THROW(OneNode(ops::aten_max_pool2d_default)
                   .tensor("self", iota({1, 1, 3, 3}))
                   .ints("kernel_size", {2, 2})
                   .ints("padding", {2, 2})
                   .run1(),
               KernelError);
}

TEST(NNPool, MaxPool2dNanWinsAndEmptyStride) {
  std::vector<Tensor> r = OneNode(ops::aten_max_pool2d_with_indices_default)
                              .tensor("self", f32({1, 1, 2, 2}, {1, kNan, 3, 4}))
                              .ints("kernel_size", {2, 2})
                              .ints("stride", {})
                              .run(2);
  expectValues(r[0], DType::Float32, {1, 1, 1, 1}, {kNan});
  EXPECT_EQ(r[1].toInts(), std::vector<int64_t>{1});
}

TEST(NNPool, MaxPool2dNonContiguous) {
  // The transposed view of 1..4 is [[1,3],[2,4]]: the max, 4, is at flat
  // index 3 of the view.
  std::vector<Tensor> r = OneNode(ops::aten_max_pool2d_with_indices_default)
                              .tensor("self", transposed(iota({1, 2, 2})))
                              .ints("kernel_size", {1, 2})
                              .run(2);
  expectValues(r[0], DType::Float32, {1, 2, 1}, {3, 4});
  EXPECT_EQ(r[1].toInts(), (std::vector<int64_t>{1, 3}));
}

OneNode avgPoolNode(const Tensor &self, std::vector<int64_t> kernel, std::vector<int64_t> stride,
                    std::vector<int64_t> padding) {
  OneNode n(ops::aten_avg_pool2d_default);
  n.tensor("self", self)
      .ints("kernel_size", std::move(kernel))
      .ints("stride", std::move(stride))
      .ints("padding", std::move(padding));
  return n;
}

TEST(NNPool, AvgPool2d) {
  expectValues(avgPoolNode(iota({1, 1, 3, 3}), {2, 2}, {1, 1}, {0, 0}).run1(), DType::Float32,
               {1, 1, 2, 2}, {3, 4, 6, 7});
  // The corner window of a 3x3 kernel padded by 1 holds 1, 2, 4, 5.
  Tensor withPad = avgPoolNode(iota({1, 3, 3}), {3, 3}, {2, 2}, {1, 1}).run1();
  expectValues(withPad, DType::Float32, {1, 2, 2}, {12.0 / 9, 16.0 / 9, 24.0 / 9, 28.0 / 9});
  Tensor withoutPad = avgPoolNode(iota({1, 3, 3}), {3, 3}, {2, 2}, {1, 1})
                          .boolean("count_include_pad", false)
                          .run1();
  expectValues(withoutPad, DType::Float32, {1, 2, 2}, {3, 4, 6, 7});
  Tensor overridden =
      avgPoolNode(iota({1, 3, 3}), {3, 3}, {2, 2}, {1, 1}).integer("divisor_override", 2).run1();
  expectValues(overridden, DType::Float32, {1, 2, 2}, {6, 8, 12, 14});
}

TEST(NNPool, AvgPool2dIntegerTruncates) {
  // Window sums -1 + 0 + 1 + 3 = 3 and 0 - 4 + 3 + 0 = -1, over 4.
  Tensor x = make(DType::Int64, {1, 2, 3}, {-1, 0, -4, 1, 3, 0});
  expectValues(avgPoolNode(x, {2, 2}, {1, 1}, {0, 0}).run1(), DType::Int64, {1, 1, 2}, {0, 0});
  Tensor y = make(DType::Int64, {1, 2, 2}, {-3, -3, -3, 2});
  expectValues(avgPoolNode(y, {2, 2}, {1, 1}, {0, 0}).run1(), DType::Int64, {1, 1, 1}, {-1});
}

TEST(NNPool, AvgPool2dCeilMode) {
  // The last windows hang over the input: divided by what they cover.
  Tensor out =
      avgPoolNode(iota({1, 1, 3, 3}), {2, 2}, {2, 2}, {0, 0}).boolean("ceil_mode", true).run1();
  expectValues(out, DType::Float32, {1, 1, 2, 2}, {3, 4.5, 7.5, 9});
}

TEST(NNPool, AdaptiveAvgPool2d) {
  // Windows of 3 into 2: [0, 2) and [1, 3).
  Tensor out = OneNode(ops::aten_adaptive_avg_pool2d_default)
                   .tensor("self", iota({1, 1, 3, 3}))
                   .ints("output_size", {2, 2})
                   .run1();
  expectValues(out, DType::Float32, {1, 1, 2, 2}, {3, 4, 6, 7});
  // Windows of 5 into 3: [0, 2), [1, 4), [3, 5).
  Tensor row = OneNode(ops::aten__adaptive_avg_pool2d_default)
                   .tensor("self", iota({1, 1, 5}))
                   .ints("output_size", {1, 3})
                   .run1();
  expectValues(row, DType::Float32, {1, 1, 3}, {1.5, 3, 4.5});
  Tensor global = OneNode(ops::aten_adaptive_avg_pool2d_default)
                      .tensor("self", iota({2, 1, 3, 3}))
                      .ints("output_size", {1, 1})
                      .run1();
  expectValues(global, DType::Float32, {2, 1, 1, 1}, {5, 14});
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

OneNode batchNormNode(const Tensor &input, const Tensor &mean, const Tensor &var, bool training,
                      double eps) {
  OneNode n(ops::aten_batch_norm_default);
  n.tensor("input", input)
      .none("weight")
      .none("bias")
      .tensor("running_mean", mean)
      .tensor("running_var", var)
      .boolean("training", training)
      .real("momentum", 0.1)
      .real("eps", eps)
      .boolean("cudnn_enabled", false);
  return n;
}

TEST(NNNorm, BatchNormEval) {
  OneNode n(ops::aten_batch_norm_default);
  Tensor out = n.tensor("input", iota({2, 2}))
                   .tensor("weight", f32({2}, {2, 1}))
                   .tensor("bias", f32({2}, {0, 1}))
                   .tensor("running_mean", f32({2}, {1, 2}))
                   .tensor("running_var", f32({2}, {4, 0.25}))
                   .boolean("training", false)
                   .real("momentum", 0.1)
                   .real("eps", 0)
                   .boolean("cudnn_enabled", false)
                   .run1();
  expectValues(out, DType::Float32, {2, 2}, {0, 1, 2, 5});
}

TEST(NNNorm, BatchNormTrainingUpdatesRunningStatsInPlace) {
  Tensor mean = f32({1}, {0}), var = f32({1}, {1});
  // Batch statistics of 1..4: mean 2.5, biased variance 1.25, unbiased 5/3.
  Tensor out = batchNormNode(iota({2, 1, 2}), mean, var, true, 0).run1();
  double s = std::sqrt(1.25);
  expectValues(out, DType::Float32, {2, 1, 2}, {-1.5 / s, -0.5 / s, 0.5 / s, 1.5 / s});
  expectValues(mean, DType::Float32, {1}, {0.25});
  expectValues(var, DType::Float32, {1}, {0.9 + 0.1 * 5 / 3});
}

TEST(NNNorm, BatchNormEmptyInput) {
  Tensor out = batchNormNode(f32({0}, {}), f32({0}, {}), f32({0}, {}), true, 1e-5).run1();
  expectValues(out, DType::Float32, {0}, {});
}

TEST(NNNorm, NativeBatchNormLegitNoTraining) {
  std::vector<Tensor> r = OneNode(ops::aten__native_batch_norm_legit_no_training_default)
                              .tensor("input", iota({1, 2, 1}))
                              .tensor("weight", f32({2}, {1, 1}))
                              .tensor("bias", f32({2}, {0, 0}))
                              .tensor("running_mean", f32({2}, {1, 1}))
                              .tensor("running_var", f32({2}, {1, 1}))
                              .real("momentum", 0.1)
                              .real("eps", 0)
                              .run(3);
  expectValues(r[0], DType::Float32, {1, 2, 1}, {0, 1});
  expectValues(r[1], DType::Float32, {0}, {});
  expectValues(r[2], DType::Float32, {0}, {});
}

TEST(NNNorm, NativeBatchNormLegitFunctional) {
  Tensor mean = f32({1}, {0}), var = f32({1}, {1});
  std::vector<Tensor> r = OneNode(ops::aten__native_batch_norm_legit_functional_default)
                              .tensor("input", iota({2, 1, 2}))
                              .none("weight")
                              .none("bias")
                              .tensor("running_mean", mean)
                              .tensor("running_var", var)
                              .boolean("training", true)
                              .real("momentum", 0.1)
                              .real("eps", 0)
                              .run(5);
  double s = std::sqrt(1.25);
  expectValues(r[0], DType::Float32, {2, 1, 2}, {-1.5 / s, -0.5 / s, 0.5 / s, 1.5 / s});
  expectValues(r[1], DType::Float32, {1}, {2.5});
  expectValues(r[2], DType::Float32, {1}, {1 / s});
  expectValues(r[3], DType::Float32, {1}, {0.25});
  expectValues(r[4], DType::Float32, {1}, {0.9 + 0.1 * 5 / 3});
  // Functional: the inputs keep their values.
  expectValues(mean, DType::Float32, {1}, {0});
  expectValues(var, DType::Float32, {1}, {1});
}

TEST(NNNorm, NativeBatchNormTraining) {
  Tensor mean = f32({1}, {0}), var = f32({1}, {1});
  std::vector<Tensor> r = OneNode(ops::aten_native_batch_norm_default)
                              .tensor("input", iota({2, 1, 2}))
                              .none("weight")
                              .none("bias")
                              .tensor("running_mean", mean)
                              .tensor("running_var", var)
                              .boolean("training", true)
                              .real("momentum", 0.5)
                              .real("eps", 0)
                              .run(3);
  expectValues(r[1], DType::Float32, {1}, {2.5});
  expectValues(r[2], DType::Float32, {1}, {1 / std::sqrt(1.25)});
  expectValues(mean, DType::Float32, {1}, {1.25});
}

TEST(NNNorm, LayerNorm) {
  // Row [1, 2, 3]: mean 2, variance 2/3; row [4, 6, 8]: mean 6, variance 8/3.
  Tensor input = f32({2, 3}, {1, 2, 3, 4, 6, 8});
  double a = 1 / std::sqrt(2.0 / 3), b = 1 / std::sqrt(8.0 / 3);
  Tensor out = OneNode(ops::aten_layer_norm_default)
                   .tensor("input", input)
                   .ints("normalized_shape", {3})
                   .tensor("weight", f32({3}, {1, 2, 3}))
                   .tensor("bias", f32({3}, {0, 0, 1}))
                   .real("eps", 0)
                   .run1();
  expectValues(out, DType::Float32, {2, 3}, {-a, 0, 3 * a + 1, -2 * b, 0, 6 * b + 1});

  std::vector<Tensor> r = OneNode(ops::aten_native_layer_norm_default)
                              .tensor("input", input)
                              .ints("normalized_shape", {3})
                              .none("weight")
                              .none("bias")
                              .real("eps", 0)
                              .run(3);
  expectValues(r[0], DType::Float32, {2, 3}, {-a, 0, a, -2 * b, 0, 2 * b});
  expectValues(r[1], DType::Float32, {2, 1}, {2, 6});
  expectValues(r[2], DType::Float32, {2, 1}, {a, b});
}

TEST(NNNorm, LayerNormOverTwoDims) {
  std::vector<Tensor> r = OneNode(ops::aten_native_layer_norm_default)
                              .tensor("input", f32({1, 2, 2}, {1, 1, 3, 3}))
                              .ints("normalized_shape", {2, 2})
                              .none("weight")
                              .none("bias")
                              .real("eps", 0)
                              .run(3);
  expectValues(r[0], DType::Float32, {1, 2, 2}, {-1, -1, 1, 1});
  expectValues(r[1], DType::Float32, {1, 1, 1}, {2});
  EXPECT_THROW(OneNode(ops::aten_layer_norm_default)
                   .tensor("input", iota({2, 3}))
                   .ints("normalized_shape", {2})
                   .run1(),
               KernelError);
}

TEST(NNNorm, GroupNorm) {
  // Groups [1, 2] and [3, 4]: each normalizes to [-1, 1].
  Tensor out = OneNode(ops::aten_group_norm_default)
                   .tensor("input", iota({1, 4, 1}))
                   .integer("num_groups", 2)
                   .tensor("weight", f32({4}, {1, 2, 3, 4}))
                   .none("bias")
                   .real("eps", 0)
                   .run1();
  expectValues(out, DType::Float32, {1, 4, 1}, {-1, 2, -3, 4});
  std::vector<Tensor> r = OneNode(ops::aten_native_group_norm_default)
                              .tensor("input", iota({1, 4, 1}))
                              .none("weight")
                              .tensor("bias", f32({4}, {0, 0, 10, 10}))
                              .integer("N", 1)
                              .integer("C", 4)
                              .integer("HxW", 1)
                              .integer("group", 2)
                              .real("eps", 0)
                              .run(3);
  expectValues(r[0], DType::Float32, {1, 4, 1}, {-1, 1, 9, 11});
  expectValues(r[1], DType::Float32, {1, 2}, {1.5, 3.5});
  expectValues(r[2], DType::Float32, {1, 2}, {2, 2});
}

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

// softmax([1, 2, 3]) and log_softmax([1, 2, 3]).
const std::vector<double> kSoftmax123 = {0.09003057317038046, 0.24472847105479764,
                                         0.6652409557748219};
const std::vector<double> kLogSoftmax123 = {-2.4076059644443806, -1.4076059644443806,
                                            -0.4076059644443804};

TEST(NNSoftmax, SoftmaxAndLogSoftmax) {
  Tensor s = OneNode(ops::aten_softmax_int).tensor("self", iota({3})).integer("dim", 0).run1();
  expectValues(s, DType::Float32, {3}, kSoftmax123);
  Tensor l = OneNode(ops::aten_log_softmax_int).tensor("self", iota({3})).integer("dim", -1).run1();
  expectValues(l, DType::Float32, {3}, kLogSoftmax123);
}

TEST(NNSoftmax, DimsAndNonContiguous) {
  // Along dim 0 of [[1, 2], [3, 4]], each column is softmax([a, a + 2]).
  double lo = 1 / (1 + std::exp(2.0)), hi = 1 - lo;
  Tensor s = OneNode(ops::aten__softmax_default)
                 .tensor("self", iota({2, 2}))
                 .integer("dim", 0)
                 .boolean("half_to_float", false)
                 .run1();
  expectValues(s, DType::Float32, {2, 2}, {lo, lo, hi, hi});
  // The same through a transposed view, along its last dim.
  Tensor t = OneNode(ops::aten__softmax_default)
                 .tensor("self", transposed(iota({2, 2})))
                 .integer("dim", -1)
                 .boolean("half_to_float", false)
                 .run1();
  expectValues(t, DType::Float32, {2, 2}, {lo, hi, lo, hi});
}

TEST(NNSoftmax, StableForLargeValues) {
  Tensor s =
      OneNode(ops::aten_softmax_int).tensor("self", f32({2}, {1000, 1000})).integer("dim", 0).run1();
  expectValues(s, DType::Float32, {2}, {0.5, 0.5});
  Tensor l = OneNode(ops::aten__log_softmax_default)
                 .tensor("self", f32({2}, {-1000, 0}))
                 .integer("dim", 0)
                 .boolean("half_to_float", false)
                 .run1();
  expectValues(l, DType::Float32, {2}, {-1000, 0});
}

TEST(NNSoftmax, DTypes) {
  Tensor s = OneNode(ops::aten_softmax_int)
                 .tensor("self", make(DType::Int64, {3}, {1, 2, 3}))
                 .integer("dim", 0)
                 .arg("dtype", Arg::scalarType(DType::Float64))
                 .run1();
  expectValues(s, DType::Float64, {3}, kSoftmax123, 1e-12);
  EXPECT_THROW(OneNode(ops::aten_softmax_int)
                   .tensor("self", make(DType::Int64, {3}, {1, 2, 3}))
                   .integer("dim", 0)
                   .run1(),
               KernelError);
  Tensor h = OneNode(ops::aten__softmax_default)
                 .tensor("self", make(DType::Float16, {3}, {1, 2, 3}))
                 .integer("dim", 0)
                 .boolean("half_to_float", true)
                 .run1();
  expectValues(h, DType::Float32, {3}, kSoftmax123);
}

TEST(NNSoftmax, ScalarEmptyAndMasked) {
  Tensor scalar =
      OneNode(ops::aten_softmax_int).tensor("self", f32({}, {5})).integer("dim", -1).run1();
  expectValues(scalar, DType::Float32, {}, {1});
  Tensor empty =
      OneNode(ops::aten_log_softmax_int).tensor("self", f32({0, 3}, {})).integer("dim", 1).run1();
  expectValues(empty, DType::Float32, {0, 3}, {});
  EXPECT_THROW(OneNode(ops::aten_softmax_int).tensor("self", iota({3})).integer("dim", 1).run1(),
               KernelError);
  // A line of -inf is nan for softmax, zeros for _safe_softmax.
  Tensor masked = f32({2, 2}, {-kInf, -kInf, 0, -kInf});
  expectValues(OneNode(ops::aten_softmax_int).tensor("self", masked).integer("dim", 1).run1(),
               DType::Float32, {2, 2}, {kNan, kNan, 1, 0});
  expectValues(
      OneNode(ops::aten__safe_softmax_default).tensor("self", masked).integer("dim", 1).run1(),
      DType::Float32, {2, 2}, {0, 0, 1, 0});
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

// With q = 1, keys [0, 1] and values [10, 20], the scores are [0, 1]: the
// weights are 1 / (1 + e) and e / (1 + e).
const double kAttended = 10 / (1 + std::exp(1.0)) + 20 * std::exp(1.0) / (1 + std::exp(1.0));

OneNode sdpaNode(const Tensor &q, const Tensor &k, const Tensor &v) {
  OneNode n(ops::aten_scaled_dot_product_attention_default);
  n.tensor("query", q).tensor("key", k).tensor("value", v);
  return n;
}

TEST(NNAttention, Basic) {
  Tensor k = f32({2, 1}, {0, 1}), v = f32({2, 1}, {10, 20});
  expectValues(sdpaNode(f32({1, 1}, {1}), k, v).run1(), DType::Float32, {1, 1}, {kAttended}, 1e-5);
  // A zero scale weighs the values evenly; default scale is 1/sqrt(E).
  expectValues(sdpaNode(f32({1, 1}, {1}), k, v).real("scale", 0).run1(), DType::Float32, {1, 1},
               {15}, 1e-5);
  Tensor q2 = f32({1, 4}, {0.5, 0.5, 0.5, 0.5}), k2 = f32({2, 4}, {0, 0, 0, 0, 1, 1, 1, 1});
  expectValues(sdpaNode(q2, k2, v).run1(), DType::Float32, {1, 1}, {kAttended}, 1e-5);
}

TEST(NNAttention, CausalAndMasks) {
  Tensor q = f32({2, 1}, {1, 1}), k = f32({2, 1}, {0, 1}), v = f32({2, 1}, {10, 20});
  expectValues(sdpaNode(q, k, v).boolean("is_causal", true).run1(), DType::Float32, {2, 1},
               {10, kAttended}, 1e-5);
  // Causal with L < S keeps the top-left triangle.
  Tensor k3 = f32({3, 1}, {0, 0, 0}), v3 = f32({3, 1}, {1, 2, 3});
  expectValues(sdpaNode(f32({2, 1}, {1, 1}), k3, v3).boolean("is_causal", true).run1(),
               DType::Float32, {2, 1}, {1, 1.5}, 1e-5);

  Tensor keepSecond = make(DType::Bool, {1, 2}, {0, 1});
  expectValues(sdpaNode(q, k, v).tensor("attn_mask", keepSecond).run1(), DType::Float32, {2, 1},
               {20, 20}, 1e-5);
  Tensor addMask = f32({2, 2}, {0, -kInf, 0, 0});
  expectValues(sdpaNode(q, k, v).tensor("attn_mask", addMask).run1(), DType::Float32, {2, 1},
               {10, kAttended}, 1e-5);
  // A fully masked row gives zeros.
  Tensor none = make(DType::Bool, {2, 2}, {0, 0, 1, 1});
  expectValues(sdpaNode(q, k, v).tensor("attn_mask", none).run1(), DType::Float32, {2, 1},
               {0, kAttended}, 1e-5);
  EXPECT_THROW(sdpaNode(q, k, v).tensor("attn_mask", addMask).boolean("is_causal", true).run1(),
               KernelError);
  EXPECT_THROW(sdpaNode(q, k, v).real("dropout_p", 0.1).run1(), KernelError);
}

TEST(NNAttention, BroadcastBatchAndGqa) {
  // Two query batches against one key/value batch.
  Tensor q = f32({2, 1, 1}, {1, 0});
  Tensor k = f32({1, 2, 1}, {0, 1}), v = f32({1, 2, 1}, {10, 20});
  expectValues(sdpaNode(q, k, v).run1(), DType::Float32, {2, 1, 1}, {kAttended, 15}, 1e-5);
  // Two query heads share one key/value head.
  Tensor qh = f32({1, 2, 1, 1}, {1, 0});
  Tensor kh = f32({1, 1, 2, 1}, {0, 1}), vh = f32({1, 1, 2, 1}, {10, 20});
  expectValues(sdpaNode(qh, kh, vh).boolean("enable_gqa", true).run1(), DType::Float32,
               {1, 2, 1, 1}, {kAttended, 15}, 1e-5);
  Tensor kh2 = f32({1, 2, 2, 1}, {0, 1, 0, 0}), vh2 = f32({1, 2, 2, 1}, {10, 20, 1, 3});
  Tensor q4 = f32({1, 4, 1, 1}, {1, 1, 1, 1});
  // Heads 0, 1 use key/value head 0; heads 2, 3 use head 1.
  expectValues(sdpaNode(q4, kh2, vh2).boolean("enable_gqa", true).run1(), DType::Float32,
               {1, 4, 1, 1}, {kAttended, kAttended, 2, 2}, 1e-5);
}

TEST(NNAttention, ResultLaidOutLikeQuery) {
  // A query [B=1, H=2, L=2, E=1] stored as [B, L, H, E], as a head split of
  // a projection leaves it.
  Tensor q = f32({1, 2, 2, 1}, {1, 0, 1, 0}).asStrided({1, 2, 2, 1}, {4, 1, 2, 1}, 0);
  Tensor k = f32({2, 1}, {0, 1}), v = f32({2, 1}, {10, 20});
  Tensor out = sdpaNode(q, k, v).run1();
  EXPECT_EQ(shapeString(out.strides()), shapeString({4, 1, 2, 1}));
  // Head 0 has q = 1 in both rows, head 1 has q = 0.
  expectValues(out, DType::Float32, {1, 2, 2, 1}, {kAttended, kAttended, 15, 15}, 1e-5);
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

TEST(NNLoss, MseLoss) {
  Tensor a = iota({3}), b = f32({3}, {1, 1, 1});
  expectValues(OneNode(ops::aten_mse_loss_default).tensor("self", a).tensor("target", b).run1(),
               DType::Float32, {}, {5.0 / 3});
  expectValues(OneNode(ops::aten_mse_loss_default)
                   .tensor("self", a)
                   .tensor("target", b)
                   .integer("reduction", 2)
                   .run1(),
               DType::Float32, {}, {5});
  // A 0-dim target broadcasts.
  expectValues(OneNode(ops::aten_mse_loss_default)
                   .tensor("self", a)
                   .tensor("target", f32({}, {1}))
                   .integer("reduction", 0)
                   .run1(),
               DType::Float32, {3}, {0, 1, 4});
  expectValues(OneNode(ops::aten_mse_loss_default)
                   .tensor("self", f32({0}, {}))
                   .tensor("target", f32({0}, {}))
                   .run1(),
               DType::Float32, {}, {kNan});
}

OneNode crossEntropyNode(const Tensor &self, const Tensor &target) {
  OneNode n(ops::aten_cross_entropy_loss_default);
  n.tensor("self", self).tensor("target", target);
  return n;
}

TEST(NNLoss, CrossEntropyClassIndices) {
  Tensor logits = f32({2, 3}, {1, 2, 3, 1, 2, 3});
  Tensor target = make(DType::Int64, {2}, {0, 2});
  double l0 = -kLogSoftmax123[0], l2 = -kLogSoftmax123[2];
  expectValues(crossEntropyNode(logits, target).run1(), DType::Float32, {}, {(l0 + l2) / 2});
  expectValues(crossEntropyNode(logits, target).integer("reduction", 0).run1(), DType::Float32, {2},
               {l0, l2});
  // Weighted: the mean divides by the weights of the targets.
  expectValues(crossEntropyNode(logits, target).tensor("weight", f32({3}, {1, 2, 3})).run1(),
               DType::Float32, {}, {(l0 + 3 * l2) / 4});
  // Ignored targets count for nothing.
  expectValues(crossEntropyNode(logits, target).integer("ignore_index", 0).run1(), DType::Float32,
               {}, {l2});
  EXPECT_THROW(crossEntropyNode(logits, make(DType::Int64, {2}, {0, 3})).run1(), KernelError);
}

TEST(NNLoss, CrossEntropyLabelSmoothing) {
  Tensor logits = f32({2, 3}, {1, 2, 3, 1, 2, 3});
  Tensor target = make(DType::Int64, {2}, {0, 2});
  double smooth = -(kLogSoftmax123[0] + kLogSoftmax123[1] + kLogSoftmax123[2]) / 3;
  double l0 = 0.7 * -kLogSoftmax123[0] + 0.3 * smooth;
  double l2 = 0.7 * -kLogSoftmax123[2] + 0.3 * smooth;
  expectValues(
      crossEntropyNode(logits, target).real("label_smoothing", 0.3).integer("reduction", 0).run1(),
      DType::Float32, {2}, {l0, l2});
  expectValues(
      crossEntropyNode(logits, target).real("label_smoothing", 0.3).integer("reduction", 2).run1(),
      DType::Float32, {}, {l0 + l2});
}

TEST(NNLoss, CrossEntropyProbabilities) {
  Tensor logits = f32({2, 3}, {1, 2, 3, 1, 2, 3});
  Tensor probs = f32({2, 3}, {0, 0, 1, 0.5, 0, 0.5});
  double l0 = -kLogSoftmax123[2];
  double l1 = -(kLogSoftmax123[0] + kLogSoftmax123[2]) / 2;
  expectValues(crossEntropyNode(logits, probs).run1(), DType::Float32, {}, {(l0 + l1) / 2});
  // Weights scale each class, and the mean still divides by the batch size.
  expectValues(crossEntropyNode(logits, probs).tensor("weight", f32({3}, {2, 1, 1})).run1(),
               DType::Float32, {}, {(l0 - kLogSoftmax123[0] - kLogSoftmax123[2] / 2) / 2});
}

TEST(NNLoss, CrossEntropySpatialAndUnbatched) {
  // Input [1, 3, 2]: column 0 holds logits [1, 2, 3], column 1 [3, 2, 1].
  Tensor logits = f32({1, 3, 2}, {1, 3, 2, 2, 3, 1});
  Tensor target = make(DType::Int64, {1, 2}, {2, 0});
  expectValues(crossEntropyNode(logits, target).integer("reduction", 0).run1(), DType::Float32,
               {1, 2}, {-kLogSoftmax123[2], -kLogSoftmax123[2]});
  expectValues(crossEntropyNode(iota({3}), make(DType::Int64, {}, {1})).run1(), DType::Float32, {},
               {-kLogSoftmax123[1]});
}

TEST(NNLoss, NllLossForward) {
  std::vector<Tensor> r = OneNode(ops::aten_nll_loss_forward_default)
                              .tensor("self", f32({2, 2}, {-1, -2, -3, -4}))
                              .tensor("target", make(DType::Int64, {2}, {1, 0}))
                              .none("weight")
                              .integer("reduction", 1)
                              .integer("ignore_index", -100)
                              .run(2);
  expectValues(r[0], DType::Float32, {}, {2.5});
  expectValues(r[1], DType::Float32, {}, {2});
}

} // namespace
