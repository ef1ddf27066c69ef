//===- TensorIOTest.cpp - The plain-C .npy codec and comparison -----------===//
#include "gc/TensorIO/TensorIO.h"

#include "gc/Support/DType.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <unistd.h>
#include <utility>
#include <vector>

namespace {

/// A version-1 .npy file: `dict` padded to a 64-byte boundary, then `data`.
std::string npyFile(std::string dict, const std::string &data, char version = 1) {
  size_t prefix = version == 1 ? 10 : 12;
  dict.append((64 - (prefix + dict.size() + 1) % 64) % 64, ' ');
  dict += '\n';
  std::string file = std::string("\x93NUMPY", 6) + version + '\0';
  for (size_t i = 0; i < prefix - 8; ++i)
    file += static_cast<char>(dict.size() >> (8 * i));
  return file + dict + data;
}

template <typename T> std::string bytesOf(const std::vector<T> &v) {
  return std::string(reinterpret_cast<const char *>(v.data()), v.size() * sizeof(T));
}

/// A .npy file in memory and what gc_npy_parse makes of it (which points
/// into both, so neither moves).
struct Parsed {
  explicit Parsed(std::string bytes) : file(std::move(bytes)) {
    char message[512] = "";
    ok = gc_npy_parse(file.data(), file.size(), "x.npy", &npy, message, sizeof message);
    error = message;
  }
  Parsed(const Parsed &) = delete;
  std::string file;
  bool ok;
  gc_npy npy;
  std::string error;
};

TEST(NpyParse, ReadsAFloatArrayInCOrder) {
  Parsed p(npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                   bytesOf(std::vector<float>{0, 1, 2, 3, 4, 5})));
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.npy.tensor.dtype, GCRT_FLOAT32);
  ASSERT_EQ(p.npy.tensor.rank, 2u);
  EXPECT_EQ(p.npy.tensor.sizes[0], 2);
  EXPECT_EQ(p.npy.tensor.sizes[1], 3);
  EXPECT_EQ(p.npy.tensor.strides, nullptr);
  EXPECT_EQ(gc_tensor_numel(&p.npy.tensor), 6u);
  EXPECT_EQ(gc_tensor_value(&p.npy.tensor, 4), 4.0);
  EXPECT_EQ(p.npy.tensor.data, p.file.data() + p.file.size() - 6 * sizeof(float));
}

TEST(NpyParse, ReadsFortranOrderInPlace) {
  // numpy.asfortranarray([[0, 1, 2], [3, 4, 5]], dtype='<i4'), saved.
  Parsed p(npyFile("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }",
                   bytesOf(std::vector<int32_t>{0, 3, 1, 4, 2, 5})));
  ASSERT_TRUE(p.ok) << p.error;
  ASSERT_NE(p.npy.tensor.strides, nullptr);
  EXPECT_EQ(p.npy.tensor.strides[0], 1);
  EXPECT_EQ(p.npy.tensor.strides[1], 2);
  for (size_t i = 0; i < 6; ++i)
    EXPECT_EQ(gc_tensor_value(&p.npy.tensor, i), static_cast<double>(i));
}

TEST(NpyParse, ReadsVersionTwoNativeOrderAndScalars) {
  Parsed p(npyFile("{'descr': '=i8', 'fortran_order': False, 'shape': (), }",
                   bytesOf(std::vector<int64_t>{-7}), 2));
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.npy.tensor.dtype, GCRT_INT64);
  EXPECT_EQ(p.npy.tensor.rank, 0u);
  EXPECT_EQ(gc_tensor_value(&p.npy.tensor, 0), -7.0);
  Parsed u(npyFile("{'descr': '<u1', 'fortran_order': False, 'shape': (2,), }", "\x01\xff"));
  ASSERT_TRUE(u.ok) << u.error;
  EXPECT_EQ(u.npy.tensor.dtype, GCRT_UINT8);
  EXPECT_EQ(gc_tensor_value(&u.npy.tensor, 1), 255.0);
}

TEST(NpyParse, HalfPrecisionValues) {
  // float16 1.5 is 0x3e00; bfloat16 -2 is 0xc000.
  Parsed h(npyFile("{'descr': '<f2', 'fortran_order': False, 'shape': (1,), }",
                   bytesOf(std::vector<uint16_t>{0x3e00})));
  ASSERT_TRUE(h.ok) << h.error;
  EXPECT_EQ(gc_tensor_value(&h.npy.tensor, 0), 1.5);
  Parsed b(npyFile("{'descr': '|V2', 'fortran_order': False, 'shape': (1,), }",
                   bytesOf(std::vector<uint16_t>{0xc000})));
  ASSERT_TRUE(b.ok) << b.error;
  EXPECT_EQ(b.npy.tensor.dtype, GCRT_BFLOAT16);
  EXPECT_EQ(gc_tensor_value(&b.npy.tensor, 0), -2.0);
}

TEST(NpyParse, BadFilesSayWhatIsWrongAndNameTheFile) {
  std::string good = npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
                             bytesOf(std::vector<float>{1, 2}));
  struct Case {
    std::string file, error;
  } cases[] = {
      {"hello", "'x.npy': not a valid .npy file: no NUMPY magic"},
      {good.substr(0, 20), "'x.npy': not a valid .npy file: truncated header"},
      {std::string("\x93NUMPY\x02\x00\x40", 9), "'x.npy': not a valid .npy file: no NUMPY magic"},
      {std::string("\x93NUMPY\x02\x00\x40\x00", 10) + "x",
       "'x.npy': not a valid .npy file: truncated header"},
      {std::string("\x93NUMPY\x04\x00\x00\x00", 10),
       "'x.npy': not a valid .npy file: unknown format version 4"},
      {npyFile("{'fortran_order': False, 'shape': (2,), }", ""),
       "'x.npy': not a valid .npy file: no 'descr' in the header"},
      {npyFile("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", ""),
       "'x.npy': unsupported .npy dtype '>f4'"},
      {npyFile("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", ""),
       "'x.npy': unsupported .npy dtype '<c8'"},
      {npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2; 3), }", ""),
       "'x.npy': not a valid .npy file: no valid 'fortran_order' and 'shape'"},
      {npyFile("{'descr': '<f4', 'shape': (2,), }", ""),
       "'x.npy': not a valid .npy file: no valid 'fortran_order' and 'shape'"},
      {npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1,1,1,1,1,1,"
               "1,1,1), }",
               ""),
       "'x.npy': not a valid .npy file: no valid 'fortran_order' and 'shape'"},
      {npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 8), }", ""),
       "'x.npy': not a valid .npy file: shape too large"},
      {good.substr(0, good.size() - 1), "'x.npy': .npy data has 7 bytes, but the shape needs 8"},
      {good + "x", "'x.npy': .npy data has 9 bytes, but the shape needs 8"},
  };
  for (const Case &c : cases) {
    Parsed p(c.file);
    EXPECT_FALSE(p.ok) << c.error;
    EXPECT_EQ(p.error, c.error);
  }
}

/// A file name of this process's own in the temporary directory.
std::string tempFile(const char *name) {
  return std::filesystem::temp_directory_path().string() + "/gc-tensorio-" +
         std::to_string(::getpid()) + "-" + name;
}

TEST(NpyFiles, WritesWhatItReadsForEveryDType) {
  char error[512] = "";
  for (int t = GCRT_BOOL; t <= GCRT_FLOAT64; ++t) {
    std::vector<unsigned char> data(6 * gc::dtypeSize(static_cast<gc::DType>(t)));
    for (size_t i = 0; i < data.size(); ++i)
      data[i] = static_cast<unsigned char>(t == GCRT_BOOL ? i % 2 : i);
    const int64_t sizes[] = {2, 3};
    gcrt_tensor x = {data.data(), static_cast<gcrt_dtype>(t), 2, sizes, nullptr};
    std::string p = tempFile("rt.npy");
    ASSERT_TRUE(gc_npy_write(p.c_str(), &x, error, sizeof error)) << error;
    gc_npy back;
    ASSERT_TRUE(gc_npy_read(p.c_str(), &back, error, sizeof error)) << error;
    std::filesystem::remove(p);
    EXPECT_EQ(static_cast<int>(back.tensor.dtype), t);
    EXPECT_EQ(back.tensor.rank, 2u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(back.tensor.data) % alignof(std::max_align_t), 0u);
    EXPECT_EQ(std::memcmp(back.tensor.data, data.data(), data.size()), 0)
        << gc_dtype_name(static_cast<gcrt_dtype>(t));
    gc_npy_free(&back);
  }
}

TEST(NpyFiles, HeadersAreNumpysAndEndOnA64ByteBoundary) {
  const int64_t sizes[] = {5};
  gcrt_tensor x = {nullptr, GCRT_FLOAT64, 1, sizes, nullptr};
  char header[GC_NPY_HEADER_MAX];
  size_t n = gc_npy_header(&x, header);
  ASSERT_EQ(n, 128u);
  EXPECT_EQ(std::string(header, 10), std::string("\x93NUMPY\x01\x00\x76\x00", 10));
  EXPECT_EQ(std::string(header + 10, 58),
            "{'descr': '<f8', 'fortran_order': False, 'shape': (5,), } ");
  EXPECT_EQ(header[n - 1], '\n');
  x.rank = 0;
  n = gc_npy_header(&x, header);
  EXPECT_NE(std::string(header, n).find("'shape': (), }"), std::string::npos);
  const int64_t wide[GC_NPY_MAX_RANK] = {};
  x = {nullptr, GCRT_FLOAT32, GC_NPY_MAX_RANK, wide, nullptr};
  EXPECT_EQ(gc_npy_header(&x, header) % 64, 0u);
  x.dtype = static_cast<gcrt_dtype>(42);
  EXPECT_EQ(gc_npy_header(&x, header), 0u);
}

TEST(NpyFiles, MissingFilesAndDirectoriesAreErrorsNamingThem) {
  char error[512] = "";
  gc_npy npy;
  std::string missing = tempFile("missing.npy");
  EXPECT_FALSE(gc_npy_read(missing.c_str(), &npy, error, sizeof error));
  EXPECT_EQ(std::string(error), "'" + missing + "': cannot open: No such file or directory");
  const int64_t sizes[] = {1};
  float one = 1;
  gcrt_tensor x = {&one, GCRT_FLOAT32, 1, sizes, nullptr};
  std::string nowhere = tempFile("no/such/dir/out.npy");
  EXPECT_FALSE(gc_npy_write(nowhere.c_str(), &x, error, sizeof error));
  EXPECT_EQ(std::string(error), "'" + nowhere + "': cannot write: No such file or directory");
}

TEST(DTypes, NamesAreGcs) {
  for (int t = GCRT_BOOL; t <= GCRT_FLOAT64; ++t)
    EXPECT_EQ(gc_dtype_name(static_cast<gcrt_dtype>(t)),
              std::string(gc::dtypeName(static_cast<gc::DType>(t))));
  EXPECT_STREQ(gc_dtype_name(static_cast<gcrt_dtype>(10)), "?");
}

TEST(Tolerance, DefaultsPerDTypeAndGivenValues) {
  gc_tolerance f32 = gc_tolerance_for(GCRT_FLOAT32, -1, -1);
  EXPECT_EQ(f32.rtol, 1e-4);
  EXPECT_EQ(f32.atol, 1e-4);
  gc_tolerance f16 = gc_tolerance_for(GCRT_FLOAT16, -1, -1);
  EXPECT_EQ(f16.rtol, 1e-3);
  EXPECT_EQ(f16.atol, 1e-5);
  gc_tolerance bf16 = gc_tolerance_for(GCRT_BFLOAT16, -1, 0.5);
  EXPECT_EQ(bf16.rtol, 1.6e-2);
  EXPECT_EQ(bf16.atol, 0.5);
  EXPECT_EQ(gc_tolerance_for(GCRT_INT64, 0, -1).rtol, 0.0);
}

std::string line(const gc_comparison &c, const char *label) {
  char out[512];
  gc_comparison_line(&c, label, out, sizeof out);
  return out;
}

TEST(Compare, AllCloseWithNaNAndInfinity) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  double a[] = {1.0, nan, inf, 100.0}, e[] = {1.00001, nan, inf, 100.01};
  const int64_t sizes[] = {4};
  gcrt_tensor actual = {a, GCRT_FLOAT64, 1, sizes, nullptr};
  gcrt_tensor expected = {e, GCRT_FLOAT64, 1, sizes, nullptr};
  gc_comparison c;
  EXPECT_TRUE(gc_compare(&actual, &expected, {1e-4, 1e-4}, &c));
  EXPECT_NEAR(c.max_abs_error, 0.01, 1e-9);
  EXPECT_NEAR(c.max_rel_error, 1e-4, 1e-7);
  EXPECT_EQ(line(c, "out0"), "out0: max abs error 0.01, max rel error 0.0001: pass");
  EXPECT_FALSE(gc_compare(&actual, &expected, {1e-6, 1e-6}, &c));
  EXPECT_EQ(line(c, "out0"), "out0: max abs error 0.01, max rel error 0.0001: FAIL");
  e[1] = 0;
  EXPECT_FALSE(gc_compare(&actual, &expected, {1, 1}, &c));
  e[1] = nan;
  e[2] = -inf;
  EXPECT_FALSE(gc_compare(&actual, &expected, {1, 1}, &c));
}

TEST(Compare, ThroughStrides) {
  float a[] = {0, 3, 1, 4, 2, 5}, e[] = {0, 1, 2, 3, 4, 5};
  const int64_t sizes[] = {2, 3}, columnMajor[] = {1, 2};
  gcrt_tensor actual = {a, GCRT_FLOAT32, 2, sizes, columnMajor};
  gcrt_tensor expected = {e, GCRT_FLOAT32, 2, sizes, nullptr};
  gc_comparison c;
  EXPECT_TRUE(gc_compare(&actual, &expected, {0, 0}, &c));
}

TEST(Compare, ShapeAndDTypeMismatchesAreReportedNotCompared) {
  float a[4] = {}, e[4] = {};
  const int64_t four[] = {4}, twoByTwo[] = {2, 2};
  gcrt_tensor actual = {a, GCRT_FLOAT32, 2, twoByTwo, nullptr};
  gcrt_tensor expected = {e, GCRT_FLOAT32, 1, four, nullptr};
  gc_comparison c;
  EXPECT_FALSE(gc_compare(&actual, &expected, {1, 1}, &c));
  EXPECT_EQ(line(c, "out1"), "out1: FAIL: shape [2, 2] differs from the expected [4]");
  actual = {a, GCRT_INT32, 1, four, nullptr};
  EXPECT_FALSE(gc_compare(&actual, &expected, {1, 1}, &c));
  EXPECT_EQ(line(c, "out1"), "out1: FAIL: dtype i32 differs from the expected f32");
}

} // namespace
