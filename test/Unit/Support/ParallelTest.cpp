//===- ParallelTest.cpp - forEachIndex and mapIndices ----------------------===//
//
// mapIndices gives its results in index order and, where several indices
// fail, the lowest one's error, for any thread count.
//
//===----------------------------------------------------------------------===//
#include "gc/Support/Parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>

using namespace gc;

namespace {

TEST(Parallel, ForEachIndexCallsEveryIndexOnce) {
  for (unsigned threads : {1u, 2u, 7u}) {
    std::vector<std::atomic<int>> calls(100);
    forEachIndex(calls.size(), threads, [&](size_t i) { ++calls[i]; });
    for (const std::atomic<int> &c : calls)
      EXPECT_EQ(c.load(), 1);
  }
}

TEST(Parallel, MapIndicesKeepsIndexOrder) {
  for (unsigned threads : {1u, 2u, 7u}) {
    Expected<std::vector<std::string>> got = mapIndices<std::string>(
        50, threads, [](size_t i) -> Expected<std::string> { return std::to_string(i * i); });
    ASSERT_TRUE(bool(got)) << got.error().message();
    ASSERT_EQ(got->size(), 50u);
    for (size_t i = 0; i < got->size(); ++i)
      EXPECT_EQ((*got)[i], std::to_string(i * i));
  }
  Expected<std::vector<int>> none =
      mapIndices<int>(0, 2, [](size_t) -> Expected<int> { return 1; });
  ASSERT_TRUE(bool(none));
  EXPECT_TRUE(none->empty());
}

TEST(Parallel, MapIndicesReturnsTheLowestFailure) {
  for (unsigned threads : {1u, 2u, 7u}) {
    Expected<std::vector<int>> got = mapIndices<int>(40, threads, [](size_t i) -> Expected<int> {
      if (i == 13 || i == 29)
        return makeError() << "job " << i << " failed";
      return static_cast<int>(i);
    });
    ASSERT_FALSE(bool(got));
    EXPECT_EQ(got.error().message(), "job 13 failed");
  }
}

} // namespace
