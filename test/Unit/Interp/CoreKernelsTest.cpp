//===- CoreKernelsTest.cpp - Kernels of Kernels/Core.cpp ------------------===//
//
// Each test runs one node through the reference kernels, with expected
// values checked against PyTorch 2.11 (or, for gc.rand, Random123's
// published Philox-4x32-10 answer for a zero counter and key).
//
//===----------------------------------------------------------------------===//

#include "gc/IR/OpSchema.h"
#include "KernelTestUtil.h"
#include "gc/Interp/Kernel.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <variant>

using namespace gc;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

using test::expectTensor;
using test::make;
using test::TestArg;

Tensor int64Scalar(int64_t v) {
  Tensor t = Tensor::zeros(DType::Int64, {});
  t.storeInt(0, v);
  return t;
}

Arg ints(std::vector<int64_t> v) { return Arg::integers(std::move(v)); }
Arg integer(int64_t v) { return Arg::integer(v); }
Arg boolean(bool v) { return Arg::boolean(v); }

std::vector<Tensor> run(OpId op, const std::vector<TestArg> &args,
                        unsigned numResults = 1) {
  return test::runNode(referenceKernels(), op, args, numResults);
}

Tensor run1(OpId op, const std::vector<TestArg> &args) {
  return test::runNode1(referenceKernels(), op, args);
}

void expectFails(OpId op, const std::vector<TestArg> &args,
                 const std::string &fragment) {
  test::expectFailsWith(referenceKernels(), op, args, fragment);
}

TEST(CoreKernels, EveryCoreOpHasAKernel) {
  for (const OpSchema &s : allOpSchemas())
    EXPECT_TRUE(!s.core || s.callsGraphs() || referenceKernels().find(s.id)) << s.name;
}

//===----------------------------------------------------------------------===//
// Copies and rounding
//===----------------------------------------------------------------------===//

TEST(CoreKernels, ToCopyConvertsAndAlwaysCopies) {
  Tensor x = make(DType::Float32, {3}, {-1.5, 0.25, 2.75});
  Tensor same = run1(ops::aten__to_copy_default, {{"self", x}});
  expectTensor(same, DType::Float32, {3}, {-1.5, 0.25, 2.75});
  EXPECT_FALSE(same.sharesStorage(x));
  Tensor asInt = run1(ops::aten__to_copy_default,
                      {{"self", x}, {"dtype", Arg::scalarType(DType::Int32)}});
  expectTensor(asInt, DType::Int32, {3}, {-1, 0, 2});
}

TEST(CoreKernels, TruncRoundsTowardZeroAndKeepsIntegers) {
  expectTensor(run1(ops::aten_trunc_default,
                    {{"self", make(DType::Float64, {4}, {-2.7, -0.5, 0.5, 3.9})}}),
               DType::Float64, {4}, {-2, -0.0, 0, 3});
  expectTensor(run1(ops::aten_trunc_default, {{"self", make(DType::Int64, {2}, {-3, 7})}}),
               DType::Int64, {2}, {-3, 7});
  expectTensor(run1(ops::aten_trunc_default, {{"self", make(DType::Float32, {1}, {kNaN})}}),
               DType::Float32, {1}, {kNaN});
}

//===----------------------------------------------------------------------===//
// Sorting
//===----------------------------------------------------------------------===//

TEST(CoreKernels, SortIsStableAndPutsNaNLast) {
  Tensor x = make(DType::Float32, {2, 4}, {3, kNaN, 1, 3, 2, 2, 5, 0});
  std::vector<Tensor> up = run(ops::aten_sort_default, {{"self", x}}, 2);
  expectTensor(up[0], DType::Float32, {2, 4}, {1, 3, 3, kNaN, 0, 2, 2, 5});
  expectTensor(up[1], DType::Int64, {2, 4}, {2, 0, 3, 1, 3, 0, 1, 2});
  std::vector<Tensor> down =
      run(ops::aten_sort_default, {{"self", x}, {"dim", integer(1)}, {"descending", boolean(true)}},
          2);
  expectTensor(down[0], DType::Float32, {2, 4}, {kNaN, 3, 3, 1, 5, 2, 2, 0});
  expectTensor(down[1], DType::Int64, {2, 4}, {1, 0, 3, 2, 2, 0, 1, 3});
}

TEST(CoreKernels, SortAlongFirstDimOfIntegers) {
  Tensor x = make(DType::Int32, {3, 2}, {5, -1, 2, 7, 9, 0});
  std::vector<Tensor> out = run(ops::aten_sort_default, {{"self", x}, {"dim", integer(0)}}, 2);
  expectTensor(out[0], DType::Int32, {3, 2}, {2, -1, 5, 0, 9, 7});
  expectTensor(out[1], DType::Int64, {3, 2}, {1, 0, 0, 2, 2, 1});
}

TEST(CoreKernels, SortOfScalarAndEmpty) {
  std::vector<Tensor> s = run(ops::aten_sort_default, {{"self", Tensor::scalar(DType::Float32, 4)}}, 2);
  expectTensor(s[0], DType::Float32, {}, {4});
  expectTensor(s[1], DType::Int64, {}, {0});
  std::vector<Tensor> e = run(ops::aten_sort_default, {{"self", make(DType::Float32, {2, 0}, {})}}, 2);
  expectTensor(e[0], DType::Float32, {2, 0}, {});
}

TEST(CoreKernels, TopkLargestAndSmallest) {
  Tensor x = make(DType::Float32, {2, 4}, {1, 4, 2, 4, -1, -3, kNaN, 0});
  std::vector<Tensor> big = run(ops::aten_topk_default, {{"self", x}, {"k", integer(2)}}, 2);
  expectTensor(big[0], DType::Float32, {2, 2}, {4, 4, kNaN, 0});
  expectTensor(big[1], DType::Int64, {2, 2}, {1, 3, 2, 3});
  // Which of two tied values torch picks is unspecified; none tie here.
  std::vector<Tensor> small = run(
      ops::aten_topk_default, {{"self", x}, {"k", integer(2)}, {"largest", boolean(false)}}, 2);
  expectTensor(small[0], DType::Float32, {2, 2}, {1, 2, -3, -1});
  expectTensor(small[1], DType::Int64, {2, 2}, {0, 2, 1, 0});
  std::vector<Tensor> none = run(ops::aten_topk_default, {{"self", x}, {"k", integer(0)}}, 2);
  expectTensor(none[0], DType::Float32, {2, 0}, {});
  expectFails(ops::aten_topk_default, {{"self", x}, {"k", integer(5)}}, "k out of range");
}

//===----------------------------------------------------------------------===//
// Views and padding
//===----------------------------------------------------------------------===//

TEST(CoreKernels, AsStridedViewsTheSameStorage) {
  Tensor x = make(DType::Float32, {6}, {0, 1, 2, 3, 4, 5});
  Tensor v = run1(ops::aten_as_strided_default,
                  {{"self", x}, {"size", ints({2, 2})}, {"stride", ints({1, 2})},
                   {"storage_offset", integer(1)}});
  EXPECT_TRUE(v.sharesStorage(x));
  expectTensor(v, DType::Float32, {2, 2}, {1, 3, 2, 4});
  // The offset defaults to self's own.
  Tensor tail = x.asStrided({3}, {1}, 3);
  Tensor w = run1(ops::aten_as_strided_default,
                  {{"self", tail}, {"size", ints({2})}, {"stride", ints({2})}});
  expectTensor(w, DType::Float32, {2}, {3, 5});
  expectFails(ops::aten_as_strided_default,
              {{"self", x}, {"size", ints({4})}, {"stride", ints({2})}}, "outside its storage");
}

TEST(CoreKernels, ConstantPadPadsAndCrops) {
  Tensor x = make(DType::Float32, {2, 3}, {1, 2, 3, 4, 5, 6});
  // Last dim: one before, none after; first dim: crop one before, one after.
  Tensor out = run1(ops::aten_constant_pad_nd_default,
                    {{"self", x}, {"pad", ints({1, 0, -1, 1})}, {"value", Arg::real(-0.5)}});
  expectTensor(out, DType::Float32, {2, 4}, {-0.5, 4, 5, 6, -0.5, -0.5, -0.5, -0.5});
  Tensor ints64 = make(DType::Int64, {2}, {7, 8});
  expectTensor(run1(ops::aten_constant_pad_nd_default, {{"self", ints64}, {"pad", ints({2, -1})}}),
               DType::Int64, {3}, {0, 0, 7});
  expectFails(ops::aten_constant_pad_nd_default, {{"self", x}, {"pad", ints({1})}}, "must be even");
  expectFails(ops::aten_constant_pad_nd_default, {{"self", x}, {"pad", ints({-2, -2})}},
              "negative output size");
  expectFails(ops::aten_constant_pad_nd_default, {{"self", x}, {"pad", ints({0, 0, 0, 0, 1, 1})}},
              "no more than twice");
}

//===----------------------------------------------------------------------===//
// Random numbers
//===----------------------------------------------------------------------===//

std::vector<double> rand(Shape size, int64_t seed, int64_t offset,
                         std::optional<DType> dtype = std::nullopt) {
  std::vector<TestArg> args = {
      {"size", ints(size)}, {"seed", int64Scalar(seed)}, {"offset", int64Scalar(offset)}};
  if (dtype)
    args.push_back({"dtype", Arg::scalarType(*dtype)});
  return run1(ops::gc_rand_default, args).toDoubles();
}

TEST(CoreKernels, RandMatchesPhiloxKnownAnswer) {
  // Philox-4x32-10 of counter 0 and key 0 begins 0x6627e8d5, 0xe169c58d.
  EXPECT_EQ(rand({1}, 0, 0)[0], std::ldexp(0x6627e8, -24));
  EXPECT_EQ(rand({1}, 0, 0, DType::Float64)[0], std::ldexp(0x6627e8d5e169c58dULL >> 11, -53));
  EXPECT_EQ(rand({1}, 0, 0, DType::BFloat16)[0], std::ldexp(0x66, -8));
  EXPECT_EQ(rand({1}, 0, 0, DType::Float16)[0], std::ldexp(0x6627e8d5 >> 21, -11));
}

TEST(CoreKernels, RandIsACounterStream) {
  std::vector<double> a = rand({2, 50}, 1234, 7);
  EXPECT_EQ(a, rand({2, 50}, 1234, 7));
  // Element i is counter offset + i: shifting the offset shifts the stream.
  std::vector<double> b = rand({10}, 1234, 17);
  for (size_t i = 0; i < b.size(); ++i)
    EXPECT_EQ(b[i], a[i + 10]);
  EXPECT_NE(rand({10}, 1235, 7), std::vector<double>(a.begin(), a.begin() + 10));
  double sum = 0;
  for (double v : a) {
    EXPECT_GE(v, 0);
    EXPECT_LT(v, 1);
    sum += v;
  }
  EXPECT_NEAR(sum / a.size(), 0.5, 0.1);
}

TEST(CoreKernels, RandRefusesIntegerDTypes) {
  expectFails(ops::gc_rand_default,
              {{"size", ints({2})}, {"seed", int64Scalar(0)}, {"offset", int64Scalar(0)},
               {"dtype", Arg::scalarType(DType::Int64)}},
              "floating dtype");
}

} // namespace
