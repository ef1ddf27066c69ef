//===- TensorTest.cpp - Tensors, .npy files, comparison -------------------===//
#include "gc/Tensor/Compare.h"
#include "gc/Tensor/Npy.h"
#include "gc/Tensor/Tensor.h"
#include "gc/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>

using namespace gc;

namespace {

Tensor iota(DType t, Shape sizes) {
  Tensor x = Tensor::zeros(t, sizes);
  for (int64_t i = 0; i < x.numel(); ++i)
    x.storeDouble(i, static_cast<double>(i));
  return x;
}

TEST(Tensor, ContiguousStridesTreatEmptyDimsAsOne) {
  EXPECT_EQ(contiguousStrides({2, 3, 4}), (Shape{12, 4, 1}));
  EXPECT_EQ(contiguousStrides({2, 0, 4}), (Shape{4, 4, 1}));
  EXPECT_EQ(contiguousStrides({}), Shape{});
}

TEST(Tensor, ViewsAliasTheirBase) {
  Tensor base = iota(DType::Float32, {2, 3});
  Tensor transposed = base.asStrided({3, 2}, {1, 3}, 0);
  EXPECT_FALSE(transposed.isContiguous());
  EXPECT_EQ(transposed.toDoubles(), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  transposed.setDouble({2, 1}, 42);
  EXPECT_EQ(base.getDouble({1, 2}), 42);
  EXPECT_TRUE(base.sharesStorage(transposed));
  EXPECT_FALSE(base.sharesStorage(transposed.clone()));
}

TEST(Tensor, ViewOutsideStorageIsAnError) {
  Tensor base = iota(DType::Float32, {4});
  EXPECT_THROW(base.asStrided({3}, {2}, 0), std::exception);
  EXPECT_NO_THROW(base.asStrided({0}, {100}, 0));
}

TEST(Tensor, ConversionsFollowTorch) {
  Tensor f = Tensor::zeros(DType::Float32, {4});
  const double values[] = {-2.7, 2.7, 0.0, 300.5};
  for (int i = 0; i < 4; ++i)
    f.storeDouble(i, values[i]);
  EXPECT_EQ(f.to(DType::Int64).toInts(), (std::vector<int64_t>{-2, 2, 0, 300}));
  EXPECT_EQ(f.to(DType::Bool).toInts(), (std::vector<int64_t>{1, 1, 0, 1}));
  // Integer stores wrap to the type's width.
  EXPECT_EQ(f.to(DType::UInt8).toInts(), (std::vector<int64_t>{254, 2, 0, 44}));
}

TEST(Tensor, HalfAndBFloat16RoundToNearestEven) {
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00);
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(floatToHalf(5.9604645e-08f), 0x0001); // the smallest subnormal
  EXPECT_EQ(halfToFloat(0x0001), 5.9604645e-08f);
  // 1 + 2^-11 lies halfway between two halves: ties go to even.
  EXPECT_EQ(floatToHalf(1.0f + 0x1p-11f), 0x3c00);
  EXPECT_EQ(floatToHalf(1.0f + 3 * 0x1p-11f), 0x3c02);
  EXPECT_EQ(floatToBFloat16(1.0f), 0x3f80);
  EXPECT_EQ(floatToBFloat16(1.0f + 0x1p-8f), 0x3f80);
  EXPECT_EQ(floatToBFloat16(1.0f + 3 * 0x1p-8f), 0x3f82);
  EXPECT_EQ(bfloat16ToFloat(0x3f82), 1.015625f);
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(std::nanf("")))));
}

TEST(Tensor, CopyFromBroadcastsAndConverts) {
  Tensor dst = Tensor::zeros(DType::Float64, {2, 3});
  Tensor row = iota(DType::Int32, {3});
  dst.copyFrom(row);
  EXPECT_EQ(dst.toDoubles(), (std::vector<double>{0, 1, 2, 0, 1, 2}));
  EXPECT_THROW(dst.copyFrom(iota(DType::Int32, {2})), std::exception);
}

TEST(Tensor, ForEachIndexVisitsScalarsOnceAndEmptyNever) {
  int calls = 0;
  forEachIndex({}, [&](const Shape &) { ++calls; });
  EXPECT_EQ(calls, 1);
  forEachIndex({3, 0}, [&](const Shape &) { ++calls; });
  EXPECT_EQ(calls, 1);
}

class NpyTest : public ::testing::Test {
protected:
  std::string path(const std::string &name) {
    return (std::filesystem::temp_directory_path() /
            ("gc-npy-" + std::to_string(::getpid()) + "-" + name))
        .string();
  }
  Tensor roundTrip(const Tensor &t) {
    std::string p = path("rt.npy");
    EXPECT_FALSE(writeFileAtomic(p, encodeNpy(t)));
    Expected<Tensor> back = readNpy(p);
    std::filesystem::remove(p);
    EXPECT_TRUE(back) << (back ? "" : back.error().message());
    return back ? *back : Tensor();
  }
};

TEST_F(NpyTest, RoundTripsEveryDType) {
  for (DType t : {DType::Bool, DType::UInt8, DType::Int8, DType::Int16, DType::Int32,
                  DType::Int64, DType::Float16, DType::BFloat16, DType::Float32,
                  DType::Float64}) {
    Tensor x = iota(t, {2, 3});
    Tensor back = roundTrip(x);
    EXPECT_EQ(back.dtype(), t);
    EXPECT_EQ(back.sizes(), x.sizes());
    EXPECT_EQ(back.toDoubles(), x.toDoubles()) << dtypeName(t);
  }
}

TEST_F(NpyTest, WritesNonContiguousAndScalarTensors) {
  Tensor x = iota(DType::Float32, {2, 3}).asStrided({3, 2}, {1, 3}, 0);
  EXPECT_EQ(roundTrip(x).toDoubles(), x.toDoubles());
  Tensor s = Tensor::scalar(DType::Int64, 7);
  Tensor back = roundTrip(s);
  EXPECT_EQ(back.dim(), 0);
  EXPECT_EQ(back.toInts(), std::vector<int64_t>{7});
  EXPECT_EQ(roundTrip(Tensor::zeros(DType::Float32, {0, 4})).sizes(), (Shape{0, 4}));
}

TEST_F(NpyTest, ReadsFortranOrder) {
  // numpy.asfortranarray([[0, 1, 2], [3, 4, 5]], dtype='<i4'), saved.
  std::string header = "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }";
  header.append(128 - 10 - header.size() - 1, ' ');
  header += '\n';
  std::string file = std::string("\x93NUMPY\x01\x00", 8) + char(header.size()) + '\0' + header;
  for (int32_t v : {0, 3, 1, 4, 2, 5})
    file.append(reinterpret_cast<const char *>(&v), 4);
  std::string p = path("f.npy");
  ASSERT_FALSE(writeFileAtomic(p, file));
  Expected<Tensor> t = readNpy(p);
  std::filesystem::remove(p);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->toInts(), (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
}

TEST_F(NpyTest, BadFilesAreErrorsNamingTheFile) {
  std::string p = path("bad.npy");
  ASSERT_FALSE(writeFileAtomic(p, "not numpy"));
  Expected<Tensor> t = readNpy(p);
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().message().find(p), std::string::npos);
  std::string shortData = encodeNpy(iota(DType::Float32, {4}));
  ASSERT_FALSE(writeFileAtomic(p, shortData.substr(0, shortData.size() - 3)));
  t = readNpy(p);
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().message().find("needs 16"), std::string::npos);
  std::filesystem::remove(p);
  EXPECT_FALSE(readNpy(path("missing.npy")));
}

TEST(Compare, AllCloseWithNaNAndInfinity) {
  Tensor a = Tensor::zeros(DType::Float32, {4}), e = Tensor::zeros(DType::Float32, {4});
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const double av[] = {1.0, nan, inf, 100.0}, ev[] = {1.00001, nan, inf, 100.01};
  for (int i = 0; i < 4; ++i) {
    a.storeDouble(i, av[i]);
    e.storeDouble(i, ev[i]);
  }
  Comparison c = compareTensors(a, e, 1e-4, 1e-4);
  EXPECT_TRUE(c.pass);
  EXPECT_NEAR(c.max_abs_error, 0.01, 1e-5);
  EXPECT_FALSE(compareTensors(a, e, 1e-6, 1e-6).pass);
  e.storeDouble(1, 0);
  EXPECT_FALSE(compareTensors(a, e, 1, 1).pass);
  Comparison shape = compareTensors(a, Tensor::zeros(DType::Float32, {2, 2}), 1, 1);
  EXPECT_FALSE(shape.pass);
  EXPECT_NE(std::string(shape.problem).find("shape [4]"), std::string::npos);
}

} // namespace
