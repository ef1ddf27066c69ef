//===- StridedCopyTest.cpp - Planning copies between GPU layouts ----------===//
//
// When a tensor in GPU memory is copied as one block, the strided-copy
// kernel's arguments otherwise, and that the kernel's PTX assembles for the
// architectures gc targets (where the build found ptxas). Running it is
// CudaExecutorTest's, on a GPU.
//
//===----------------------------------------------------------------------===//
#include "Cuda/StridedCopy.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

using namespace gc;
using namespace gc::cuda;

namespace {

StridedCopyPlan plan(const std::vector<int64_t> &sizes, const std::vector<int64_t> &dst,
                     const std::vector<int64_t> &src) {
  Expected<StridedCopyPlan> p = planStridedCopy(sizes, dst, src);
  EXPECT_TRUE(bool(p)) << p.error().message();
  return p ? p.take() : StridedCopyPlan{};
}

TEST(StridedCopy, SameRowMajorLayoutIsOneBlock) {
  StridedCopyPlan p = plan({2, 3, 4}, {12, 4, 1}, {12, 4, 1});
  EXPECT_TRUE(p.block);
  EXPECT_EQ(p.numel, 24);
  EXPECT_TRUE(p.sizes.empty());
}

TEST(StridedCopy, SizeOneDimensionsAndTheirStridesDoNotMatter) {
  // [1, 5, 1] with arbitrary strides where the size is 1.
  StridedCopyPlan p = plan({1, 5, 1}, {99, 1, 7}, {5, 1, 1});
  EXPECT_TRUE(p.block);
  EXPECT_EQ(p.numel, 5);
  // A single element is a block too.
  EXPECT_TRUE(plan({}, {}, {}).block);
  EXPECT_EQ(plan({}, {}, {}).numel, 1);
}

TEST(StridedCopy, EmptyTensorsCopyNothing) {
  StridedCopyPlan p = plan({4, 0, 3}, {3, 3, 1}, {0, 1, 5});
  EXPECT_EQ(p.numel, 0);
  EXPECT_TRUE(p.block);
}

TEST(StridedCopy, PermutedOutputToRowMajor) {
  // The training package's 'permute_12': f32[2, 16, 3, 3] laid out with
  // strides [9, 144, 3, 1], copied into a row-major tensor. The last two
  // dimensions merge on both sides; the first two stay.
  StridedCopyPlan p = plan({2, 16, 3, 3}, {144, 9, 3, 1}, {9, 144, 3, 1});
  EXPECT_FALSE(p.block);
  EXPECT_EQ(p.numel, 288);
  EXPECT_EQ(p.sizes, (std::vector<int64_t>{2, 16, 9}));
  EXPECT_EQ(p.dstStrides, (std::vector<int64_t>{144, 9, 1}));
  EXPECT_EQ(p.srcStrides, (std::vector<int64_t>{9, 144, 1}));
}

TEST(StridedCopy, SliceWithGapsKeepsItsRowStride) {
  // x[:, :3] of a [4, 8] tensor into a dense [4, 3].
  StridedCopyPlan p = plan({4, 3}, {3, 1}, {8, 1});
  EXPECT_FALSE(p.block);
  EXPECT_EQ(p.sizes, (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(p.dstStrides, (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(p.srcStrides, (std::vector<int64_t>{8, 1}));
}

TEST(StridedCopy, BroadcastSourceHasZeroStrides) {
  // A [3] bias broadcast to [2, 3]: the outer dimension reads it again.
  StridedCopyPlan p = plan({2, 3}, {3, 1}, {0, 1});
  EXPECT_FALSE(p.block);
  EXPECT_EQ(p.sizes, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(p.srcStrides, (std::vector<int64_t>{0, 1}));
  // A scalar broadcast everywhere merges to one dimension of stride 0.
  StridedCopyPlan s = plan({2, 3}, {3, 1}, {0, 0});
  EXPECT_EQ(s.sizes, (std::vector<int64_t>{6}));
  EXPECT_EQ(s.srcStrides, (std::vector<int64_t>{0}));
}

TEST(StridedCopy, ContiguousInAnotherOrderIsNotABlock) {
  // A transposed [3, 4] (column-major) into row-major.
  StridedCopyPlan p = plan({3, 4}, {4, 1}, {1, 3});
  EXPECT_FALSE(p.block);
  EXPECT_EQ(p.sizes, (std::vector<int64_t>{3, 4}));
}

TEST(StridedCopy, TooManyDimensionsAreNamed) {
  // Nine dimensions of 2, every other one reversed: nothing merges.
  std::vector<int64_t> sizes(9, 2), dst(9), src(9);
  for (int d = 8, s = 1; d >= 0; --d, s *= 2) {
    dst[d] = s;
    src[8 - d] = s;
  }
  Expected<StridedCopyPlan> p = planStridedCopy(sizes, dst, src);
  ASSERT_FALSE(bool(p));
  EXPECT_EQ(p.error().message(), "a copy between layouts with 9 dimensions that do not merge; "
                                 "gc's GPU copy takes at most 8");
}

TEST(StridedCopy, ArgumentsAreThePlanPadded) {
  StridedCopyPlan p = plan({2, 16, 3, 3}, {144, 9, 3, 1}, {9, 144, 3, 1});
  StridedCopyArgs a = stridedCopyArgs(p, 0x1000, 0x2000, 4);
  EXPECT_EQ(a.dst, 0x1000u);
  EXPECT_EQ(a.src, 0x2000u);
  EXPECT_EQ(a.numel, 288u);
  EXPECT_EQ(a.elemBytes, 4u);
  EXPECT_EQ(a.rank, 3u);
  EXPECT_EQ(a.sizes[2], 9);
  EXPECT_EQ(a.sizes[3], 0);
  EXPECT_EQ(a.srcStrides[1], 144);
  // The offsets the PTX reads them at.
  EXPECT_EQ(offsetof(StridedCopyArgs, elemBytes), 24u);
  EXPECT_EQ(offsetof(StridedCopyArgs, rank), 28u);
  EXPECT_EQ(offsetof(StridedCopyArgs, sizes), 32u);
  EXPECT_EQ(offsetof(StridedCopyArgs, dstStrides), 96u);
  EXPECT_EQ(offsetof(StridedCopyArgs, srcStrides), 160u);
}

TEST(StridedCopy, BlocksCoverSmallCopiesAndCapLargeOnes) {
  EXPECT_EQ(stridedCopyBlocks(1), 1u);
  EXPECT_EQ(stridedCopyBlocks(257), 2u);
  EXPECT_EQ(stridedCopyBlocks(int64_t(1) << 40), 65535u);
}

TEST(StridedCopy, PtxAssemblesForTheTargets) {
#ifndef GC_TEST_PTXAS
  GTEST_SKIP() << "the build found no ptxas";
#else
  std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / "gc-strided-copy";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "copy.ptx") << kStridedCopyPtx;
  for (const char *arch : {"sm_80", "sm_90"}) {
    std::string cmd = std::string(GC_TEST_PTXAS) + " -arch=" + arch + " -o " +
                      (dir / "copy.cubin").string() + " " + (dir / "copy.ptx").string();
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }
  std::filesystem::remove_all(dir);
#endif
}

} // namespace
