//===- PromotionTest.cpp - torch's type promotion and broadcasting --------===//
#include "gc/Interp/Promotion.h"

#include "KernelTestUtil.h"

#include <gtest/gtest.h>

using namespace gc;
using gc::test::make;

TEST(Promotion, PromoteTypes) {
  EXPECT_EQ(promoteTypes(DType::UInt8, DType::Int8), DType::Int16);
  EXPECT_EQ(promoteTypes(DType::UInt8, DType::Int32), DType::Int32);
  EXPECT_EQ(promoteTypes(DType::Bool, DType::Int32), DType::Int32);
  EXPECT_EQ(promoteTypes(DType::Float16, DType::BFloat16), DType::Float32);
  EXPECT_EQ(promoteTypes(DType::Int64, DType::Float16), DType::Float16);
  EXPECT_EQ(promoteTypes(DType::Float32, DType::Float64), DType::Float64);
}

TEST(Promotion, ResultTypeRanksTensorsOverScalars) {
  using R = PromotionOperand::Rank;
  auto rt = [](std::initializer_list<PromotionOperand> ops) {
    return resultType(std::span(ops.begin(), ops.size()));
  };
  // An int tensor with a Python float takes the default float type.
  EXPECT_EQ(rt({{DType::Int64, R::Tensor}, {DType::Float32, R::Scalar}}), DType::Float32);
  // A float tensor keeps its type against a 0-dim double.
  EXPECT_EQ(rt({{DType::Float16, R::Tensor}, {DType::Float64, R::ZeroDim}}), DType::Float16);
  // A higher category in a lower rank group still wins.
  EXPECT_EQ(rt({{DType::Int32, R::Tensor}, {DType::Float64, R::ZeroDim}}), DType::Float64);
  EXPECT_EQ(rt({{DType::Bool, R::Tensor}, {DType::Int64, R::Scalar}}), DType::Int64);
  // Same category: the dimensioned tensor's type wins.
  EXPECT_EQ(rt({{DType::UInt8, R::Tensor}, {DType::Int64, R::ZeroDim}}), DType::UInt8);
  EXPECT_EQ(rt({{DType::Int32, R::ZeroDim}, {DType::Int64, R::ZeroDim}}), DType::Int64);
}

TEST(Promotion, BroadcastShapes) {
  EXPECT_EQ(broadcastShapes({3, 1}, {4}), (Shape{3, 4}));
  EXPECT_EQ(broadcastShapes({}, {2, 0}), (Shape{2, 0}));
  EXPECT_THROW(broadcastShapes({3}, {4}), std::exception);
  Tensor b = broadcastTo(make(DType::Float32, {3, 1}, {0, 1, 2}), {2, 3, 4});
  EXPECT_EQ(b.strides(), (Shape{0, 1, 0}));
  EXPECT_EQ(b.getDouble({1, 2, 3}), 2);
}
