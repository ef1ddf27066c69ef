//===- ThreadPoolTest.cpp - Parallel loops --------------------------------===//
#include "gc/Runtime/ThreadPool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>

using namespace gc;

namespace {

/// Runs parallelFor(n) and checks every index was visited exactly once.
void expectCoversOnce(ThreadPool &pool, int64_t n) {
  std::vector<std::atomic<int>> hits(n);
  std::atomic<int> calls{0};
  pool.parallelFor(n, [&](int64_t begin, int64_t end) {
    EXPECT_LT(begin, end);
    ++calls;
    for (int64_t i = begin; i < end; ++i)
      ++hits[i];
  });
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(hits[i].load(), 1) << "index " << i << " of " << n;
  // Each thread's share comes in a bounded number of chunks.
  EXPECT_GE(calls.load(), static_cast<int>(std::min<int64_t>(n, pool.size())));
  EXPECT_LE(calls.load(), std::min<int64_t>(n, 9 * pool.size()));
}

TEST(ThreadPool, CoversTheRangeExactlyOnce) {
  ThreadPool pool(4);
  EXPECT_EQ(pool.size(), 4u);
  for (int64_t n : {1, 3, 4, 5, 17, 1000, 100003})
    expectCoversOnce(pool, n);
}

TEST(ThreadPool, FewerItemsThanThreads) {
  ThreadPool pool(8);
  expectCoversOnce(pool, 2);
  expectCoversOnce(pool, 1);
}

TEST(ThreadPool, EmptyRangeCallsNothing) {
  ThreadPool pool(3);
  bool called = false;
  pool.parallelFor(0, [&](int64_t, int64_t) { called = true; });
  EXPECT_FALSE(called);
}

TEST(ThreadPool, UsesTheWorkers) {
  ThreadPool pool(4);
  std::mutex m;
  std::set<std::thread::id> ids;
  pool.parallelFor(4, [&](int64_t, int64_t) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::lock_guard<std::mutex> lock(m);
    ids.insert(std::this_thread::get_id());
  });
  EXPECT_GT(ids.size(), 1u);
  EXPECT_EQ(ids.count(std::this_thread::get_id()), 1u);
}

TEST(ThreadPool, AFreeThreadTakesOverASlowOnesWork) {
  // The chunk at 0 stalls its thread (as another process on its core
  // would) until every other index is done: the other thread must take
  // over the rest of the stalled thread's share. With fixed halves the
  // stalled chunk would be that whole share.
  ThreadPool pool(2);
  const int64_t n = 64;
  std::atomic<int64_t> doneElsewhere{0};
  bool othersFinishedFirst = false;
  int64_t stalledEnd = 0;
  pool.parallelFor(n, [&](int64_t begin, int64_t end) {
    if (begin != 0) {
      doneElsewhere += end - begin;
      return;
    }
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (doneElsewhere.load() < n - end && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    othersFinishedFirst = doneElsewhere.load() == n - end;
    stalledEnd = end;
  });
  EXPECT_LT(stalledEnd, n / 2);
  EXPECT_TRUE(othersFinishedFirst);
}

TEST(ThreadPool, ManyLoopsInARow) {
  ThreadPool pool(4);
  for (int i = 0; i < 2000; ++i)
    expectCoversOnce(pool, 1 + i % 9);
}

TEST(ThreadPool, SingleThread) {
  ThreadPool pool(1);
  expectCoversOnce(pool, 10);
}

TEST(ThreadPool, DefaultIsHardwareConcurrency) {
  ThreadPool pool(0);
  EXPECT_EQ(pool.size(), std::max(1u, std::thread::hardware_concurrency()));
}

} // namespace
