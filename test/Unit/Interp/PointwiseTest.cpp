//===- PointwiseTest.cpp - Elementwise reference kernels ------------------===//
//
// Each test runs one node through the pointwise kernels, with expected
// values worked out by hand.
//
//===----------------------------------------------------------------------===//

#include "KernelTestUtil.h"
#include "gc/Interp/Kernel.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <variant>

using namespace gc;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

using test::make;
using test::TestArg;
using test::transposed;

Arg num(int64_t v) { return Arg::integer(v); }
Arg num(double v) { return Arg::real(v); }

const KernelRegistry &pointwiseKernels() {
  static const KernelRegistry registry = [] {
    KernelRegistry r;
    registerPointwiseKernels(r);
    return r;
  }();
  return registry;
}

/// Runs `op` on one node built from `args` through the pointwise kernels.
std::vector<Tensor> run(OpId op, const std::vector<TestArg> &args,
                        unsigned numResults = 1) {
  return test::runNode(pointwiseKernels(), op, args, numResults);
}

/// The single result of `op`.
Tensor run1(OpId op, const std::vector<TestArg> &args) {
  return test::runNode1(pointwiseKernels(), op, args);
}

/// Checks dtype, shape and values; `rtol` 0 asks for exact values.
void expectTensor(const Tensor &t, DType dtype, const Shape &sizes,
                  const std::vector<double> &values, double rtol = 0) {
  test::expectTensor(t, dtype, sizes, values, test::Tolerance::relative(rtol));
}

void expectFails(OpId op, const std::vector<TestArg> &args,
                 const std::string &fragment) {
  test::expectFailsWith(pointwiseKernels(), op, args, fragment);
}

constexpr double kF32 = 1e-6;

//===----------------------------------------------------------------------===//
// Arithmetic
//===----------------------------------------------------------------------===//

TEST(PointwiseArithmetic, AddBroadcastsAndScalesByAlpha) {
  Tensor a = make(DType::Float32, {2, 1}, {1, 2});
  Tensor b = make(DType::Float32, {3}, {10, 20, 30});
  expectTensor(run1(ops::aten_add_Tensor, {{"self", a}, {"other", b}, {"alpha", num(int64_t(2))}}),
               DType::Float32, {2, 3}, {21, 41, 61, 22, 42, 62});
  expectTensor(run1(ops::aten_sub_Tensor, {{"self", a}, {"other", b}}), DType::Float32, {2, 3},
               {-9, -19, -29, -8, -18, -28});
  // rsub: other - alpha * self, with a tensor or a number for other.
  expectTensor(run1(ops::aten_rsub_Tensor, {{"self", a}, {"other", b}, {"alpha", num(int64_t(2))}}),
               DType::Float32, {2, 3}, {8, 18, 28, 6, 16, 26});
  expectTensor(run1(ops::aten_rsub_Scalar, {{"self", a}, {"other", num(1.0)}}), DType::Float32,
               {2, 1}, {0, -1});
}

TEST(PointwiseArithmetic, PromotesTensorsOfDifferentKinds) {
  Tensor i64 = make(DType::Int64, {2}, {1, 2});
  Tensor f32 = make(DType::Float32, {2}, {0.5, 0.25});
  Tensor b = make(DType::Bool, {2}, {1, 0});
  Tensor i32 = make(DType::Int32, {2}, {5, 6});
  expectTensor(run1(ops::aten_add_Tensor, {{"self", i64}, {"other", f32}}), DType::Float32, {2},
               {1.5, 2.25});
  expectTensor(run1(ops::aten_add_Tensor, {{"self", b}, {"other", i32}}), DType::Int32, {2}, {6, 6});
  expectTensor(run1(ops::aten_mul_Tensor, {{"self", b}, {"other", b}}), DType::Bool, {2}, {1, 0});
}

TEST(PointwiseArithmetic, ZeroDimTensorsAndNumbersYieldToTensors) {
  Tensor i32 = make(DType::Int32, {2}, {1, 2});
  Tensor f16 = make(DType::Float16, {2}, {1, 2});
  // A 0-dim int64 does not widen int32; a 0-dim float64 of a higher
  // category does decide the dtype.
  expectTensor(run1(ops::aten_add_Tensor, {{"self", i32}, {"other", Tensor::scalar(DType::Int64, 3)}}),
               DType::Int32, {2}, {4, 5});
  expectTensor(
      run1(ops::aten_mul_Tensor, {{"self", i32}, {"other", Tensor::scalar(DType::Float64, 0.5)}}),
      DType::Float64, {2}, {0.5, 1});
  expectTensor(
      run1(ops::aten_add_Tensor, {{"self", f16}, {"other", Tensor::scalar(DType::Float32, 1)}}),
      DType::Float16, {2}, {2, 3});
  // Numbers recorded in place of `other`.
  expectTensor(run1(ops::aten_add_Tensor, {{"self", i32}, {"other", num(int64_t(1))}}), DType::Int32,
               {2}, {2, 3});
  expectTensor(run1(ops::aten_mul_Tensor, {{"self", i32}, {"other", num(0.5)}}), DType::Float32, {2},
               {0.5, 1});
  expectTensor(run1(ops::aten_mul_Scalar, {{"self", f16}, {"other", num(int64_t(3))}}), DType::Float16,
               {2}, {3, 6});
  expectTensor(run1(ops::aten_add_Tensor,
                    {{"self", make(DType::Bool, {2}, {1, 0})}, {"other", Arg::boolean(true)}}),
               DType::Bool, {2}, {1, 1});
}

TEST(PointwiseArithmetic, IntegersWrapToTheirWidth) {
  Tensor t = make(DType::Int32, {2}, {2147483647, -2147483648.0});
  expectTensor(run1(ops::aten_add_Tensor, {{"self", t}, {"other", num(int64_t(1))}}), DType::Int32,
               {2}, {-2147483648.0, -2147483647});
  Tensor u8 = make(DType::UInt8, {1}, {200});
  expectTensor(run1(ops::aten_mul_Tensor, {{"self", u8}, {"other", num(int64_t(2))}}), DType::UInt8,
               {1}, {144});
}

TEST(PointwiseArithmetic, ReadsNonContiguousAndZeroSizeInputs) {
  Tensor base = make(DType::Float32, {2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor other = make(DType::Float32, {3, 2}, {10, 20, 30, 40, 50, 60});
  expectTensor(run1(ops::aten_sub_Tensor, {{"self", other}, {"other", transposed(base)}}),
               DType::Float32, {3, 2}, {9, 16, 28, 35, 47, 54});
  Tensor empty = Tensor::zeros(DType::Float32, {0, 3});
  expectTensor(
      run1(ops::aten_add_Tensor, {{"self", empty}, {"other", make(DType::Int64, {3}, {1, 2, 3})}}),
      DType::Float32, {0, 3}, {});
}

TEST(PointwiseArithmetic, RejectsWhatTorchRejects) {
  Tensor i = make(DType::Int64, {1}, {1});
  Tensor b = make(DType::Bool, {1}, {1});
  expectFails(ops::aten_add_Tensor, {{"self", i}, {"other", i}, {"alpha", num(0.5)}}, "alpha");
  expectFails(ops::aten_sub_Tensor, {{"self", b}, {"other", b}}, "bool");
  expectFails(ops::aten_add_Tensor,
              {{"self", make(DType::Float32, {2}, {1, 2})},
               {"other", make(DType::Float32, {3}, {1, 2, 3})}},
              "broadcast");
}

TEST(PointwiseArithmetic, DivisionModes) {
  Tensor a = make(DType::Int64, {4}, {7, -7, 7, -7});
  Tensor b = make(DType::Int64, {4}, {2, 2, -2, -2});
  expectTensor(run1(ops::aten_div_Tensor, {{"self", a}, {"other", b}}), DType::Float32, {4},
               {3.5, -3.5, -3.5, 3.5});
  expectTensor(run1(ops::aten_div_Tensor_mode,
                    {{"self", a}, {"other", b}, {"rounding_mode", Arg::string("trunc")}}),
               DType::Int64, {4}, {3, -3, -3, 3});
  expectTensor(run1(ops::aten_div_Tensor_mode,
                    {{"self", a}, {"other", b}, {"rounding_mode", Arg::string("floor")}}),
               DType::Int64, {4}, {3, -4, -4, 3});
  Tensor x = make(DType::Float32, {4}, {-7, 1, -1, 0});
  expectTensor(run1(ops::aten_div_Tensor_mode, {{"self", x},
                                             {"other", make(DType::Float32, {4}, {2, 0, 0, 0})},
                                             {"rounding_mode", Arg::string("floor")}}),
               DType::Float32, {4}, {-4, kInf, -kInf, kNaN});
  expectTensor(run1(ops::aten_div_Tensor, {{"self", x}, {"other", num(int64_t(2))}}), DType::Float32,
               {4}, {-3.5, 0.5, -0.5, 0});
  expectFails(ops::aten_div_Tensor_mode,
              {{"self", a}, {"other", num(int64_t(0))}, {"rounding_mode", Arg::string("trunc")}},
              "ZeroDivisionError");
}

TEST(PointwiseArithmetic, Powers) {
  Tensor i = make(DType::Int64, {3}, {2, 3, -2});
  expectTensor(run1(ops::aten_pow_Tensor_Scalar, {{"self", i}, {"exponent", num(int64_t(3))}}),
               DType::Int64, {3}, {8, 27, -8});
  expectTensor(run1(ops::aten_pow_Tensor_Scalar, {{"self", i}, {"exponent", num(0.5)}}),
               DType::Float32, {3}, {std::sqrt(2.0), std::sqrt(3.0), kNaN}, kF32);
  expectFails(ops::aten_pow_Tensor_Scalar, {{"self", i}, {"exponent", num(int64_t(-1))}},
              "negative integer powers");
  // Tensor exponents may be negative: 1/base, truncated.
  expectTensor(
      run1(ops::aten_pow_Tensor_Tensor, {{"self", make(DType::Int32, {4}, {2, 1, -1, -1})},
                                      {"exponent", make(DType::Int32, {4}, {-1, -5, -3, -2})}}),
      DType::Int32, {4}, {0, 1, -1, 1});
  expectTensor(run1(ops::aten_pow_Tensor_Tensor, {{"self", make(DType::Float32, {2}, {4, 2})},
                                               {"exponent", make(DType::Int64, {2, 1}, {2, -1})}}),
               DType::Float32, {2, 2}, {16, 4, 0.25, 0.5});
}

TEST(PointwiseArithmetic, MaximumMinimumPropagateNaN) {
  Tensor a = make(DType::Float32, {3}, {1, kNaN, 5});
  Tensor b = make(DType::Int64, {3}, {2, 0, 3});
  expectTensor(run1(ops::aten_maximum_default, {{"self", a}, {"other", b}}), DType::Float32, {3},
               {2, kNaN, 5});
  expectTensor(run1(ops::aten_minimum_default, {{"self", b}, {"other", a}}), DType::Float32, {3},
               {1, kNaN, 3});
  expectTensor(run1(ops::aten_maximum_default, {{"self", b}, {"other", make(DType::Int32, {1}, {1})}}),
               DType::Int64, {3}, {2, 1, 3});
}

TEST(PointwiseArithmetic, FmodTakesTheDividendsSignRemainderTheDivisors) {
  Tensor a = make(DType::Int64, {4}, {-7, 7, -7, 6});
  Tensor b = make(DType::Int64, {4}, {3, -3, -3, 3});
  expectTensor(run1(ops::aten_fmod_Tensor, {{"self", a}, {"other", b}}), DType::Int64, {4},
               {-1, 1, -1, 0});
  expectTensor(run1(ops::aten_remainder_Tensor, {{"self", a}, {"other", b}}), DType::Int64, {4},
               {2, -2, -1, 0});
  Tensor x = make(DType::Float32, {3}, {-7.5, 7.5, 1});
  Tensor y = make(DType::Float32, {3}, {2, -2, 0});
  expectTensor(run1(ops::aten_fmod_Tensor, {{"self", x}, {"other", y}}), DType::Float32, {3},
               {-1.5, 1.5, kNaN});
  expectTensor(run1(ops::aten_remainder_Tensor, {{"self", x}, {"other", y}}), DType::Float32, {3},
               {0.5, -0.5, kNaN});
  expectFails(ops::aten_remainder_Tensor, {{"self", a}, {"other", make(DType::Int64, {1}, {0})}},
              "ZeroDivisionError");
}

TEST(PointwiseArithmetic, AddInPlaceWritesThroughTheView) {
  Tensor base = make(DType::Float32, {2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor view = transposed(base); // [3, 2]: 1 4 / 2 5 / 3 6
  std::vector<Tensor> out = run(
      *lookupOp("aten.add_.Tensor"),
      {{"self", view}, {"other", make(DType::Int64, {2}, {10, 100})}, {"alpha", num(int64_t(2))}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].sharesStorage(base));
  EXPECT_EQ(out[0].strides(), view.strides());
  expectTensor(out[0], DType::Float32, {3, 2}, {21, 204, 22, 205, 23, 206});
  expectTensor(base, DType::Float32, {2, 3}, {21, 22, 23, 204, 205, 206});

  // The batch-norm counter: a 0-dim int64 plus the number 1.
  Tensor counter = Tensor::scalar(DType::Int64, 7);
  run(*lookupOp("aten.add_.Tensor"), {{"self", counter}, {"other", num(int64_t(1))}});
  expectTensor(counter, DType::Int64, {}, {8});

  // A float16 self keeps its dtype even with a float32 other.
  Tensor half = make(DType::Float16, {1}, {1});
  expectTensor(
      run1(*lookupOp("aten.add_.Tensor"), {{"self", half}, {"other", make(DType::Float32, {1}, {0.5})}}),
      DType::Float16, {1}, {1.5});

  expectFails(*lookupOp("aten.add_.Tensor"),
              {{"self", make(DType::Int64, {1}, {1})}, {"other", make(DType::Float32, {1}, {1})}},
              "can't be cast");
  expectFails(
      *lookupOp("aten.add_.Tensor"),
      {{"self", make(DType::Float32, {1}, {1})}, {"other", make(DType::Float32, {2}, {1, 2})}},
      "gives shape [2] (an in-place op keeps");
}

//===----------------------------------------------------------------------===//
// Comparisons, logical and bitwise ops
//===----------------------------------------------------------------------===//

TEST(PointwiseCompare, NumbersAreConvertedToTheTensorsDType) {
  // 0.1 as float32 is not 0.1 as double; torch compares in float32.
  Tensor t = make(DType::Float32, {2}, {0.1, 0.2});
  expectTensor(run1(ops::aten_eq_Scalar, {{"self", t}, {"other", num(0.1)}}), DType::Bool, {2},
               {1, 0});
  expectTensor(run1(ops::aten_ne_Scalar, {{"self", t}, {"other", num(0.1)}}), DType::Bool, {2},
               {0, 1});
  // An int tensor against a float number compares in float32.
  expectTensor(
      run1(ops::aten_le_Scalar, {{"self", make(DType::Int64, {3}, {0, 1, 2})}, {"other", num(1.5)}}),
      DType::Bool, {3}, {1, 1, 0});
}

TEST(PointwiseCompare, BroadcastsPromotesAndHandlesNaN) {
  Tensor a = make(DType::Int64, {3, 1}, {1, 2, 3});
  Tensor b = make(DType::Float32, {2}, {2, kNaN});
  expectTensor(run1(ops::aten_lt_Tensor, {{"self", a}, {"other", b}}), DType::Bool, {3, 2},
               {1, 0, 0, 0, 0, 0});
  expectTensor(run1(ops::aten_ge_Tensor, {{"self", a}, {"other", b}}), DType::Bool, {3, 2},
               {0, 0, 1, 0, 1, 0});
  expectTensor(run1(ops::aten_gt_Tensor, {{"self", a}, {"other", b}}), DType::Bool, {3, 2},
               {0, 0, 0, 0, 1, 0});
  expectTensor(run1(ops::aten_le_Tensor, {{"self", a}, {"other", b}}), DType::Bool, {3, 2},
               {1, 0, 1, 0, 0, 0});
  expectTensor(run1(ops::aten_eq_Tensor, {{"self", a}, {"other", b}}), DType::Bool, {3, 2},
               {0, 0, 1, 0, 0, 0});
  expectTensor(run1(ops::aten_ne_Tensor, {{"self", a}, {"other", b}}), DType::Bool, {3, 2},
               {1, 1, 0, 1, 1, 1});
}

TEST(PointwiseLogical, BitwiseOps) {
  Tensor t = make(DType::Bool, {2, 2}, {1, 1, 0, 1});
  Tensor u = make(DType::Bool, {2}, {1, 0});
  expectTensor(run1(ops::aten___and___Tensor, {{"self", t}, {"other", u}}), DType::Bool, {2, 2},
               {1, 0, 0, 0});
  expectTensor(run1(ops::aten___and___Tensor, {{"self", make(DType::Int32, {2}, {6, -1})},
                                            {"other", make(DType::Int64, {2}, {3, 12})}}),
               DType::Int64, {2}, {2, 12});
  expectTensor(run1(ops::aten_bitwise_not_default, {{"self", t}}), DType::Bool, {2, 2}, {0, 0, 1, 0});
  expectTensor(run1(ops::aten_bitwise_not_default, {{"self", make(DType::Int32, {2}, {5, -1})}}),
               DType::Int32, {2}, {-6, 0});
  expectFails(ops::aten_bitwise_not_default, {{"self", make(DType::Float32, {1}, {1})}}, "f32");
  expectFails(ops::aten___and___Tensor, {{"self", make(DType::Float32, {1}, {1})}, {"other", u}},
              "f32");
}

TEST(PointwiseLogical, LogicalOpsTestAgainstZero) {
  Tensor a = make(DType::Float32, {4}, {0, 2.5, kNaN, -0.0});
  Tensor b = make(DType::Int64, {4}, {1, 0, 3, 4});
  expectTensor(run1(ops::aten_logical_and_default, {{"self", a}, {"other", b}}), DType::Bool, {4},
               {0, 0, 1, 0});
  expectTensor(run1(ops::aten_logical_or_default, {{"self", a}, {"other", b}}), DType::Bool, {4},
               {1, 1, 1, 1});
  expectTensor(run1(ops::aten_logical_not_default, {{"self", a}}), DType::Bool, {4}, {1, 0, 0, 1});
  expectTensor(run1(ops::aten_isnan_default, {{"self", a}}), DType::Bool, {4}, {0, 0, 1, 0});
  expectTensor(run1(ops::aten_isnan_default, {{"self", b}}), DType::Bool, {4}, {0, 0, 0, 0});
}

//===----------------------------------------------------------------------===//
// Unary math
//===----------------------------------------------------------------------===//

TEST(PointwiseUnary, IntegerInputsBecomeFloat32) {
  Tensor i = make(DType::Int64, {3}, {0, 1, 4});
  expectTensor(run1(ops::aten_exp_default, {{"self", i}}), DType::Float32, {3},
               {1, std::exp(1.0), std::exp(4.0)}, kF32);
  expectTensor(run1(ops::aten_sqrt_default, {{"self", i}}), DType::Float32, {3}, {0, 1, 2});
  expectTensor(run1(ops::aten_reciprocal_default, {{"self", i}}), DType::Float32, {3},
               {kInf, 1, 0.25});
  expectTensor(run1(ops::aten_sigmoid_default, {{"self", make(DType::Bool, {2}, {0, 1})}}),
               DType::Float32, {2}, {0.5, 0.7310585786300049}, kF32);
}

TEST(PointwiseUnary, FloatMath) {
  Tensor x = make(DType::Float64, {3}, {0.5, -1, 4});
  expectTensor(run1(ops::aten_log_default, {{"self", x}}), DType::Float64, {3},
               {std::log(0.5), kNaN, std::log(4.0)});
  expectTensor(run1(ops::aten_log2_default, {{"self", x}}), DType::Float64, {3}, {-1, kNaN, 2});
  expectTensor(run1(ops::aten_rsqrt_default, {{"self", x}}), DType::Float64, {3},
               {std::sqrt(2.0), kNaN, 0.5}, 1e-15);
  expectTensor(run1(ops::aten_erf_default, {{"self", x}}), DType::Float64, {3},
               {0.5204998778130465, -0.8427007929497149, 0.9999999845827421}, 1e-12);
  expectTensor(run1(ops::aten_tanh_default, {{"self", x}}), DType::Float64, {3},
               {0.46211715726000974, -0.7615941559557649, 0.999329299739067}, 1e-12);
  // float16 results are rounded to float16: e is 2.71875 there.
  expectTensor(run1(ops::aten_exp_default, {{"self", make(DType::Float16, {1}, {1})}}), DType::Float16,
               {1}, {2.71875});
}

TEST(PointwiseUnary, OpsThatKeepIntegerDTypes) {
  Tensor i = make(DType::Int32, {3}, {-3, 0, 5});
  expectTensor(run1(ops::aten_abs_default, {{"self", i}}), DType::Int32, {3}, {3, 0, 5});
  expectTensor(run1(ops::aten_neg_default, {{"self", i}}), DType::Int32, {3}, {3, 0, -5});
  expectTensor(run1(ops::aten_sign_default, {{"self", i}}), DType::Int32, {3}, {-1, 0, 1});
  expectTensor(run1(ops::aten_square_default, {{"self", i}}), DType::Int32, {3}, {9, 0, 25});
  expectTensor(run1(ops::aten_ceil_default, {{"self", i}}), DType::Int32, {3}, {-3, 0, 5});
  expectTensor(run1(ops::aten_floor_default, {{"self", i}}), DType::Int32, {3}, {-3, 0, 5});
  // square is pow(self, 2): bool becomes int64.
  expectTensor(run1(ops::aten_square_default, {{"self", make(DType::Bool, {2}, {1, 0})}}),
               DType::Int64, {2}, {1, 0});
  expectFails(ops::aten_neg_default, {{"self", make(DType::Bool, {1}, {1})}}, "bool");
}

TEST(PointwiseUnary, RoundingAndSigns) {
  Tensor x = make(DType::Float32, {6}, {0.5, 1.5, 2.5, -0.5, -2.5, -1.25});
  expectTensor(run1(ops::aten_round_default, {{"self", x}}), DType::Float32, {6},
               {0, 2, 2, -0.0, -2, -1});
  expectTensor(run1(ops::aten_ceil_default, {{"self", x}}), DType::Float32, {6},
               {1, 2, 3, -0.0, -2, -1});
  expectTensor(run1(ops::aten_floor_default, {{"self", x}}), DType::Float32, {6},
               {0, 1, 2, -1, -3, -2});
  Tensor y = make(DType::Float32, {4}, {-2, 0, 3, kNaN});
  expectTensor(run1(ops::aten_sign_default, {{"self", y}}), DType::Float32, {4}, {-1, 0, 1, 0});
  expectTensor(run1(ops::aten_abs_default, {{"self", y}}), DType::Float32, {4}, {2, 0, 3, kNaN});
  expectTensor(run1(ops::aten_neg_default, {{"self", y}}), DType::Float32, {4}, {2, -0.0, -3, kNaN});
  expectTensor(run1(ops::aten_square_default, {{"self", y}}), DType::Float32, {4}, {4, 0, 9, kNaN});
}

TEST(PointwiseUnary, ReadsNonContiguousInputs) {
  Tensor base = make(DType::Float32, {2, 2}, {1, 4, 9, 16});
  expectTensor(run1(ops::aten_sqrt_default, {{"self", transposed(base)}}), DType::Float32, {2, 2},
               {1, 3, 2, 4});
  expectTensor(run1(ops::aten_sqrt_default, {{"self", Tensor::zeros(DType::Float32, {2, 0})}}),
               DType::Float32, {2, 0}, {});
}

//===----------------------------------------------------------------------===//
// Activations
//===----------------------------------------------------------------------===//

TEST(PointwiseActivation, Relu) {
  expectTensor(run1(ops::aten_relu_default, {{"self", make(DType::Float32, {4}, {-1, 0, 2, kNaN})}}),
               DType::Float32, {4}, {0, 0, 2, kNaN});
  expectTensor(run1(ops::aten_relu_default, {{"self", make(DType::Int64, {2}, {-3, 3})}}),
               DType::Int64, {2}, {0, 3});
  Tensor base = make(DType::Float32, {2, 2}, {-1, 2, 3, -4});
  Tensor view = transposed(base);
  std::vector<Tensor> out = run(*lookupOp("aten.relu_.default"), {{"self", view}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].sharesStorage(base));
  EXPECT_EQ(out[0].strides(), view.strides());
  expectTensor(base, DType::Float32, {2, 2}, {0, 2, 3, 0});
}

TEST(PointwiseActivation, GeluBothApproximations) {
  Tensor x = make(DType::Float64, {3}, {1, -0.5, 0});
  expectTensor(run1(ops::aten_gelu_default, {{"self", x}}), DType::Float64, {3},
               {0.8413447460685429, -0.15426876936299344, 0}, 1e-12);
  expectTensor(run1(ops::aten_gelu_default, {{"self", x}, {"approximate", Arg::string("tanh")}}),
               DType::Float64, {3}, {0.8411919906082768, -0.15428599017485606, 0}, 1e-12);
  expectFails(ops::aten_gelu_default, {{"self", x}, {"approximate", Arg::string("fast")}}, "fast");
  expectFails(ops::aten_gelu_default, {{"self", make(DType::Int64, {1}, {1})}}, "floating");
}

TEST(PointwiseActivation, SiluAndHardFunctions) {
  expectTensor(run1(ops::aten_silu_default, {{"self", make(DType::Float64, {3}, {1, -2, 0})}}),
               DType::Float64, {3}, {0.7310585786300049, -0.2384058440442351, 0}, 1e-12);
  Tensor x = make(DType::Float32, {5}, {-4, -3, 0, 1.5, 4});
  expectTensor(run1(ops::aten_hardsigmoid_default, {{"self", x}}), DType::Float32, {5},
               {0, 0, 0.5, 0.75, 1});
  expectTensor(run1(ops::aten_hardswish_default, {{"self", x}}), DType::Float32, {5},
               {0, 0, 0, 1.125, 4});
  std::vector<Tensor> out = run(*lookupOp("aten.hardswish_.default"), {{"self", x}});
  EXPECT_TRUE(out.at(0).sharesStorage(x));
  expectTensor(x, DType::Float32, {5}, {0, 0, 0, 1.125, 4});
}

//===----------------------------------------------------------------------===//
// Selection
//===----------------------------------------------------------------------===//

TEST(PointwiseSelection, WhereBroadcastsAndPromotes) {
  Tensor cond = make(DType::Bool, {2, 1}, {1, 0});
  Tensor self = make(DType::Int64, {3}, {1, 2, 3});
  expectTensor(run1(ops::aten_where_self, {{"condition", cond}, {"self", self}, {"other", num(0.5)}}),
               DType::Float32, {2, 3}, {1, 2, 3, 0.5, 0.5, 0.5});
  expectTensor(
      run1(ops::aten_where_self,
           {{"condition", cond}, {"self", self}, {"other", make(DType::Int32, {3}, {7, 8, 9})}}),
      DType::Int64, {2, 3}, {1, 2, 3, 7, 8, 9});
  expectFails(ops::aten_where_self,
              {{"condition", make(DType::Float32, {1}, {1})}, {"self", self}, {"other", self}},
              "boolean");
}

TEST(PointwiseSelection, MaskedFillKeepsSelfsDType) {
  Tensor self = make(DType::Int64, {3}, {1, 2, 3});
  Tensor mask = make(DType::Bool, {2, 3}, {1, 0, 0, 0, 1, 1});
  expectTensor(
      run1(ops::aten_masked_fill_Scalar, {{"self", self}, {"mask", mask}, {"value", num(-2.7)}}),
      DType::Int64, {2, 3}, {-2, 2, 3, 1, -2, -2});
  Tensor f = make(DType::Float32, {2, 2}, {1, 2, 3, 4});
  expectTensor(run1(ops::aten_masked_fill_Tensor, {{"self", transposed(f)},
                                                {"mask", make(DType::Bool, {2}, {0, 1})},
                                                {"value", Tensor::scalar(DType::Float64, -kInf)}}),
               DType::Float32, {2, 2}, {1, -kInf, 2, -kInf});
  expectFails(ops::aten_masked_fill_Tensor,
              {{"self", f},
               {"mask", make(DType::Bool, {2}, {0, 1})},
               {"value", make(DType::Float32, {1}, {0})}},
              "0-dimensional");
  expectFails(ops::aten_masked_fill_Scalar,
              {{"self", f}, {"mask", make(DType::Int64, {2}, {0, 1})}, {"value", num(0.0)}},
              "boolean masks");
}

TEST(PointwiseSelection, ClampWithNumbers) {
  Tensor x = make(DType::Float32, {5}, {-2, 0, 1, 5, kNaN});
  expectTensor(
      run1(ops::aten_clamp_default, {{"self", x}, {"min", num(int64_t(0))}, {"max", num(2.0)}}),
      DType::Float32, {5}, {0, 0, 1, 2, kNaN});
  expectTensor(run1(ops::aten_clamp_default, {{"self", x}, {"max", num(0.5)}}), DType::Float32, {5},
               {-2, 0, 0.5, 0.5, kNaN});
  // min > max gives max everywhere.
  expectTensor(run1(ops::aten_clamp_default, {{"self", x}, {"min", num(3.0)}, {"max", num(1.0)}}),
               DType::Float32, {5}, {1, 1, 1, 1, kNaN});
  // A float bound promotes an integer tensor.
  expectTensor(run1(ops::aten_clamp_default,
                    {{"self", make(DType::Int64, {3}, {-1, 0, 3})}, {"min", num(-0.5)}}),
               DType::Float32, {3}, {-0.5, 0, 3});
  expectTensor(run1(ops::aten_clamp_min_default,
                    {{"self", make(DType::Int32, {3}, {-1, 0, 3})}, {"min", num(int64_t(1))}}),
               DType::Int32, {3}, {1, 1, 3});
  expectFails(ops::aten_clamp_default, {{"self", x}}, "at least one");
}

TEST(PointwiseSelection, ClampWithTensors) {
  Tensor x = make(DType::Float32, {2, 3}, {-5, 0, 5, -5, 0, 5});
  Tensor lo = make(DType::Float32, {2, 1}, {-1, 1});
  Tensor hi = make(DType::Int64, {3}, {0, 2, 4});
  expectTensor(run1(ops::aten_clamp_Tensor, {{"self", x}, {"min", lo}, {"max", hi}}), DType::Float32,
               {2, 3}, {-1, 0, 4, 0, 1, 4});
  expectTensor(run1(ops::aten_clamp_Tensor, {{"self", x}, {"min", Arg::none()}, {"max", hi}}),
               DType::Float32, {2, 3}, {-5, 0, 4, -5, 0, 4});
  expectTensor(run1(ops::aten_clamp_min_Tensor, {{"self", x}, {"min", lo}}), DType::Float32, {2, 3},
               {-1, 0, 5, 1, 1, 5});
  expectTensor(run1(ops::aten_clamp_max_Tensor, {{"self", x}, {"max", hi}}), DType::Float32, {2, 3},
               {-5, 0, 4, -5, 0, 4});
  expectTensor(run1(ops::aten_clamp_max_Tensor, {{"self", make(DType::Int64, {2}, {1, 9})},
                                              {"max", make(DType::Float32, {1}, {kNaN})}}),
               DType::Float32, {2}, {kNaN, kNaN});
}

TEST(PointwiseSelection, Lerp) {
  Tensor a = make(DType::Float32, {2}, {0, 10});
  Tensor b = make(DType::Float32, {2, 2}, {4, 20, 8, 30});
  expectTensor(run1(ops::aten_lerp_Scalar, {{"self", a}, {"end", b}, {"weight", num(0.25)}}),
               DType::Float32, {2, 2}, {1, 12.5, 2, 15});
  expectTensor(run1(ops::aten_lerp_Scalar, {{"self", a}, {"end", b}, {"weight", num(0.75)}}),
               DType::Float32, {2, 2}, {3, 17.5, 6, 25});
  expectTensor(run1(ops::aten_lerp_Scalar, {{"self", a}, {"end", b}, {"weight", num(int64_t(1))}}),
               DType::Float32, {2, 2}, {4, 20, 8, 30});
  expectFails(ops::aten_lerp_Scalar,
              {{"self", a}, {"end", make(DType::Float64, {2}, {0, 0})}, {"weight", num(0.5)}},
              "expected dtype");
}

//===----------------------------------------------------------------------===//
// Creation
//===----------------------------------------------------------------------===//

TEST(PointwiseCreation, FullTakesItsDTypeFromTheFillValue) {
  Arg size = Arg::integers({2, 2});
  expectTensor(run1(ops::aten_full_default, {{"size", size}, {"fill_value", num(int64_t(3))}}),
               DType::Int64, {2, 2}, {3, 3, 3, 3});
  expectTensor(run1(ops::aten_full_default, {{"size", size}, {"fill_value", num(0.5)}}),
               DType::Float32, {2, 2}, {0.5, 0.5, 0.5, 0.5});
  expectTensor(run1(ops::aten_full_default, {{"size", size}, {"fill_value", Arg::boolean(true)}}),
               DType::Bool, {2, 2}, {1, 1, 1, 1});
  expectTensor(run1(ops::aten_full_default, {{"size", Arg::integers({3, 0})},
                                          {"fill_value", num(-kInf)},
                                          {"dtype", Arg::scalarType(DType::Float16)}}),
               DType::Float16, {3, 0}, {});
  expectTensor(run1(ops::aten_full_default, {{"size", Arg::integers({1})},
                                          {"fill_value", num(-2.5)},
                                          {"dtype", Arg::scalarType(DType::Int32)}}),
               DType::Int32, {1}, {-2});
}

TEST(PointwiseCreation, LikeAndNewFactories) {
  Tensor self = make(DType::Int32, {2, 1}, {5, 6});
  expectTensor(run1(ops::aten_full_like_default, {{"self", self}, {"fill_value", num(7.9)}}),
               DType::Int32, {2, 1}, {7, 7});
  expectTensor(
      run1(ops::aten_full_like_default,
           {{"self", self}, {"fill_value", num(7.5)}, {"dtype", Arg::scalarType(DType::Float64)}}),
      DType::Float64, {2, 1}, {7.5, 7.5});
  expectTensor(run1(ops::aten_ones_like_default, {{"self", self}}), DType::Int32, {2, 1}, {1, 1});
  expectTensor(run1(ops::aten_zeros_like_default,
                    {{"self", transposed(self)}, {"dtype", Arg::scalarType(DType::Bool)}}),
               DType::Bool, {1, 2}, {0, 0});
  expectTensor(run1(ops::aten_new_ones_default, {{"self", self}, {"size", Arg::integers({3})}}),
               DType::Int32, {3}, {1, 1, 1});
  expectTensor(
      run1(ops::aten_new_ones_default,
           {{"self", self}, {"size", Arg::integers({})}, {"dtype", Arg::scalarType(DType::Bool)}}),
      DType::Bool, {}, {1});
  expectTensor(run1(ops::aten_ones_default, {{"size", Arg::integers({2})}}), DType::Float32, {2},
               {1, 1});
  expectTensor(run1(ops::aten_scalar_tensor_default, {{"s", num(int64_t(3))}}), DType::Float32, {},
               {3});
  expectTensor(run1(ops::aten_scalar_tensor_default,
                    {{"s", num(int64_t(3))}, {"dtype", Arg::scalarType(DType::Int64)}}),
               DType::Int64, {}, {3});
}

TEST(PointwiseCreation, Arange) {
  expectTensor(run1(ops::aten_arange_default, {{"end", num(int64_t(4))}}), DType::Int64, {4},
               {0, 1, 2, 3});
  expectTensor(run1(ops::aten_arange_default, {{"end", num(2.5)}}), DType::Float32, {3}, {0, 1, 2});
  expectTensor(run1(ops::aten_arange_default, {{"end", num(int64_t(0))}}), DType::Int64, {0}, {});
  expectTensor(
      run1(ops::aten_arange_start_step,
           {{"start", num(int64_t(-1))}, {"end", num(int64_t(2))}, {"step", num(int64_t(2))}}),
      DType::Int64, {2}, {-1, 1});
  expectTensor(run1(ops::aten_arange_start_step, {{"start", num(int64_t(2))},
                                               {"end", num(int64_t(-3))},
                                               {"step", num(int64_t(-1))},
                                               {"dtype", Arg::scalarType(DType::Int32)}}),
               DType::Int32, {5}, {2, 1, 0, -1, -2});
  expectTensor(run1(ops::aten_arange_start_step,
                    {{"start", num(int64_t(0))}, {"end", num(int64_t(1))}, {"step", num(0.25)}}),
               DType::Float32, {4}, {0, 0.25, 0.5, 0.75});
  expectTensor(run1(ops::aten_arange_default,
                    {{"end", num(int64_t(3))}, {"dtype", Arg::scalarType(DType::Float64)}}),
               DType::Float64, {3}, {0, 1, 2});
  expectFails(ops::aten_arange_start_step,
              {{"start", num(int64_t(0))}, {"end", num(int64_t(1))}, {"step", num(int64_t(0))}},
              "nonzero");
  expectFails(ops::aten_arange_start_step,
              {{"start", num(int64_t(0))}, {"end", num(int64_t(1))}, {"step", num(int64_t(-1))}},
              "step sign");
}

//===----------------------------------------------------------------------===//
// Copies, aliases and no-ops
//===----------------------------------------------------------------------===//

TEST(PointwiseCopy, CloneAndContiguous) {
  Tensor base = make(DType::Float32, {2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor view = transposed(base);
  Tensor cloned = run1(ops::aten_clone_default, {{"self", view}});
  EXPECT_FALSE(cloned.sharesStorage(base));
  EXPECT_TRUE(cloned.isContiguous());
  expectTensor(cloned, DType::Float32, {3, 2}, {1, 4, 2, 5, 3, 6});
  Tensor packed = run1(ops::aten_contiguous_default, {{"self", view}});
  EXPECT_FALSE(packed.sharesStorage(base));
  expectTensor(packed, DType::Float32, {3, 2}, {1, 4, 2, 5, 3, 6});
  EXPECT_TRUE(run1(ops::aten_contiguous_default, {{"self", base}}).sharesStorage(base));
}

TEST(PointwiseCopy, AliasAndToShareStorageWhenTheyMay) {
  Tensor base = make(DType::Float32, {2, 2}, {1.5, -2.5, 3, 4});
  Tensor view = transposed(base);
  Tensor aliased = run1(ops::aten_alias_default, {{"self", view}});
  EXPECT_TRUE(aliased.sharesStorage(base));
  EXPECT_EQ(aliased.strides(), view.strides());
  Tensor same =
      run1(ops::aten_to_dtype_layout, {{"self", view}, {"dtype", Arg::scalarType(DType::Float32)}});
  EXPECT_TRUE(same.sharesStorage(base));
  Tensor copied = run1(ops::aten_to_dtype_layout, {{"self", view}, {"copy", Arg::boolean(true)}});
  EXPECT_FALSE(copied.sharesStorage(base));
  expectTensor(copied, DType::Float32, {2, 2}, {1.5, 3, -2.5, 4});
  Tensor converted =
      run1(ops::aten_to_dtype_layout, {{"self", view}, {"dtype", Arg::scalarType(DType::Int64)}});
  EXPECT_FALSE(converted.sharesStorage(base));
  expectTensor(converted, DType::Int64, {2, 2}, {1, 3, -2, 4});
}

TEST(PointwiseCopy, AssertTensorMetadataHasNoResults) {
  Tensor t = make(DType::Float32, {2}, {1, 2});
  EXPECT_TRUE(run(ops::aten__assert_tensor_metadata_default,
                  {{"a", t}, {"dtype", Arg::scalarType(DType::Float32)}}, 0)
                  .empty());
  expectFails(ops::aten__assert_tensor_metadata_default,
              {{"a", t}, {"dtype", Arg::scalarType(DType::Int64)}}, "dtype");
}

TEST(PointwiseCopy, DropoutOutsideTrainingIsTheIdentity) {
  Tensor x = make(DType::Float32, {2}, {1, kNaN});
  Tensor y =
      run1(ops::aten_dropout_default, {{"input", x}, {"p", num(0.5)}, {"train", Arg::boolean(false)}});
  EXPECT_TRUE(y.sharesStorage(x));
  Tensor z =
      run1(*lookupOp("aten.dropout_.default"), {{"self", x}, {"p", num(0.2)}, {"train", Arg::boolean(false)}});
  EXPECT_TRUE(z.sharesStorage(x));
  expectFails(ops::aten_dropout_default,
              {{"input", x}, {"p", num(0.5)}, {"train", Arg::boolean(true)}}, "training mode");
  Tensor dropped = run1(ops::aten_dropout_default,
                        {{"input", x}, {"p", num(int64_t(1))}, {"train", Arg::boolean(true)}});
  EXPECT_FALSE(dropped.sharesStorage(x));
  expectTensor(dropped, DType::Float32, {2}, {0, kNaN});
}

TEST(PointwiseCopy, FillAndTypeAs) {
  Tensor x = make(DType::Int64, {2, 2}, {1, 2, 3, 4});
  expectTensor(run1(ops::aten_fill_Scalar, {{"self", x}, {"value", num(2.75)}}), DType::Int64,
               {2, 2}, {2, 2, 2, 2});
  expectTensor(run1(ops::aten_fill_Tensor,
                    {{"self", x}, {"value", Tensor::scalar(DType::Float32, -1.5)}}),
               DType::Int64, {2, 2}, {-1, -1, -1, -1});
  expectFails(ops::aten_fill_Tensor,
              {{"self", x}, {"value", make(DType::Float32, {1}, {1})}}, "0-dim value");
  Tensor y = make(DType::Float64, {1}, {0.5});
  expectTensor(run1(ops::aten_type_as_default, {{"self", x}, {"other", y}}), DType::Float64,
               {2, 2}, {1, 2, 3, 4});
  EXPECT_TRUE(run1(ops::aten_type_as_default, {{"self", x}, {"other", x}}).sharesStorage(x));
}

TEST(PointwiseVariants, InPlaceFillAndOutWriteTheirArgument) {
  // fill_.Tensor: the variant of fill.Tensor that torchvision models use.
  Tensor x = make(DType::Float32, {3}, {1, 2, 3});
  std::vector<Tensor> r = run(*lookupOp("aten.fill_.Tensor"),
                              {{"self", x}, {"value", Tensor::scalar(DType::Float32, 7)}});
  EXPECT_TRUE(r.at(0).sharesStorage(x));
  expectTensor(x, DType::Float32, {3}, {7, 7, 7});
  // hardtanh_ is hardtanh, written back.
  Tensor h = make(DType::Float32, {3}, {-2, 0.5, 2});
  run(*lookupOp("aten.hardtanh_.default"), {{"self", h}});
  expectTensor(h, DType::Float32, {3}, {-1, 0.5, 1});
  // add.out writes `out`, cast to its dtype, and returns it.
  Tensor out = make(DType::Float64, {2}, {0, 0});
  r = run(*lookupOp("aten.add.out"), {{"self", make(DType::Float32, {2}, {1, 2})},
                                      {"other", make(DType::Float32, {2}, {10, 20})},
                                      {"out", out}});
  EXPECT_TRUE(r.at(0).sharesStorage(out));
  expectTensor(out, DType::Float64, {2}, {11, 22});
  // gc does not resize an out= tensor of other sizes.
  expectFails(*lookupOp("aten.add.out"),
              {{"self", make(DType::Float32, {2}, {1, 2})},
               {"other", make(DType::Float32, {2}, {10, 20})},
               {"out", make(DType::Float32, {3}, {0, 0, 0})}},
              "gc does not resize out= tensors");
}

} // namespace
