//===- MemoryPlannerTest.cpp - Arena layout from lifetimes ----------------===//
#include "LoopGraphMaker.h"

#include "gc/Runtime/MemoryPlanner.h"

#include <gtest/gtest.h>

using namespace gc;
using namespace gc::test;

namespace {

/// in -> a -> b -> c -> out, one step each, so a and c never live at once
/// while a and b (and b and c) meet at the step between them.
struct Chain : LoopGraphMaker {
  uint32_t in, a, b, c, out;
  explicit Chain(int64_t elems = 100) {
    in = input("x", DType::Float32, ks({elems}));
    a = buffer("a", BufferKind::Intermediate, DType::Float32, ks({elems}));
    b = buffer("b", BufferKind::Intermediate, DType::Float32, ks({elems}));
    c = buffer("c", BufferKind::Intermediate, DType::Float32, ks({elems}));
    out = buffer("out", BufferKind::Output, DType::Float32, ks({elems}));
    step(in, a);
    step(a, b);
    step(b, c);
    step(c, out);
    output("out", out, whole(out).type);
  }
  void step(uint32_t from, uint32_t to) {
    callNode(LoopNode::Kind::Fallback, ops::aten_neg_default, {whole(from)}, {whole(to)});
  }
  ArenaLayout plan() {
    return planArena(arenaProblem(graph), [&](uint32_t buf) {
      return static_cast<int64_t>(400 * (buf == b ? 2 : 1));
    });
  }
};

bool overlap(int64_t o1, int64_t n1, int64_t o2, int64_t n2) { return o1 < o2 + n2 && o2 < o1 + n1; }

TEST(MemoryPlanner, DisjointLifetimesShareOverlappingDoNot) {
  Chain g;
  ArenaLayout l = g.plan();
  EXPECT_EQ(l.offsets[g.in], -1);
  EXPECT_EQ(l.offsets[g.out], -1);
  EXPECT_EQ(l.offsets[g.a], l.offsets[g.c]);
  EXPECT_FALSE(overlap(l.offsets[g.a], 400, l.offsets[g.b], 800));
  EXPECT_FALSE(overlap(l.offsets[g.c], 400, l.offsets[g.b], 800));
  EXPECT_EQ(l.arenaBytes, 832 + 448);
  EXPECT_EQ(l.sumBytes, 448 + 832 + 448);
  EXPECT_LE(l.arenaBytes, l.sumBytes);
  ASSERT_EQ(l.frees.size(), 4u);
  EXPECT_EQ(l.frees[1], std::vector<uint32_t>{g.a});
  EXPECT_EQ(l.frees[2], std::vector<uint32_t>{g.b});
  EXPECT_EQ(l.frees[3], std::vector<uint32_t>{g.c});
}

TEST(MemoryPlanner, OffsetsAreAligned) {
  Chain g(3); // 12 bytes each
  ArenaLayout l = planArena(arenaProblem(g.graph), [](uint32_t) { return int64_t{12}; });
  for (uint32_t b : {g.a, g.b, g.c})
    EXPECT_EQ(l.offsets[b] % 64, 0) << b;
  EXPECT_NE(l.offsets[g.a], l.offsets[g.b]);
  EXPECT_EQ(l.arenaBytes, 128);
}

TEST(MemoryPlanner, InplacePairHonouredWhenTheInputDies) {
  Chain g;
  g.graph.plan.steps[2].inplace.push_back({g.c, g.b});
  ArenaLayout sizes = planArena(arenaProblem(g.graph), [](uint32_t) { return int64_t{400}; });
  EXPECT_EQ(sizes.offsets[g.c], sizes.offsets[g.b]);
  EXPECT_NE(sizes.offsets[g.a], sizes.offsets[g.b]);
  EXPECT_EQ(sizes.arenaBytes, 2 * 448);
}

TEST(MemoryPlanner, InplacePairIgnoredWhenTheInputLivesOn) {
  Chain g;
  g.graph.plan.steps[2].inplace.push_back({g.c, g.b});
  // b is read again by the last step, so c cannot take its memory.
  g.graph.nodes[3].inputs.push_back(g.whole(g.b));
  ArenaLayout l = planArena(arenaProblem(g.graph), [](uint32_t) { return int64_t{400}; });
  EXPECT_NE(l.offsets[g.c], l.offsets[g.b]);
  EXPECT_FALSE(overlap(l.offsets[g.c], 400, l.offsets[g.b], 400));
}

TEST(MemoryPlanner, InplacePairIgnoredForDifferentSizes) {
  Chain g;
  g.graph.plan.steps[2].inplace.push_back({g.c, g.b});
  ArenaLayout l = g.plan(); // b is twice c's size
  EXPECT_FALSE(overlap(l.offsets[g.c], 400, l.offsets[g.b], 800));
}

TEST(MemoryPlanner, IntermediateBoundToAnOutputLivesToTheEnd) {
  Chain g;
  g.output("a", g.a, g.whole(g.a).type);
  ArenaLayout l = planArena(arenaProblem(g.graph), [](uint32_t) { return int64_t{400}; });
  EXPECT_NE(l.offsets[g.a], l.offsets[g.c]);
  for (const auto &f : l.frees)
    EXPECT_EQ(std::count(f.begin(), f.end(), g.a), 0);
}

TEST(MemoryPlanner, Deterministic) {
  Chain g;
  g.graph.plan.steps[1].inplace.push_back({g.b, g.a});
  ArenaLayout first = g.plan();
  for (int i = 0; i < 5; ++i) {
    ArenaLayout again = g.plan();
    EXPECT_EQ(again.offsets, first.offsets);
    EXPECT_EQ(again.arenaBytes, first.arenaBytes);
    EXPECT_EQ(again.frees, first.frees);
  }
}

TEST(MemoryPlanner, ManyBuffersNeverOverlapWhileAlive) {
  // A ladder: step i writes t_i and reads t_{i-1} and t_{i-3}.
  LoopGraphMaker g;
  uint32_t x = g.input("x", DType::Float32, g.ks({4}));
  std::vector<uint32_t> t;
  std::vector<int64_t> bytes(1, 0);
  for (int i = 0; i < 12; ++i) {
    t.push_back(g.buffer("t" + std::to_string(i), BufferKind::Intermediate, DType::Float32,
                         g.ks({4})));
    std::vector<BufferView> ins = {g.whole(i ? t[i - 1] : x)};
    if (i >= 3)
      ins.push_back(g.whole(t[i - 3]));
    g.callNode(LoopNode::Kind::Fallback, ops::aten_add_Tensor, ins, {g.whole(t[i])});
  }
  auto bytesOf = [](uint32_t b) { return int64_t{100 + 37 * (b % 5)}; };
  ArenaLayout l = planArena(arenaProblem(g.graph), bytesOf);
  auto lifeOf = [&](int i) {
    int last = i;
    for (int j = i + 1; j < 12; ++j)
      if (j == i + 1 || j == i + 3)
        last = j;
    return std::pair{i, last};
  };
  for (int i = 0; i < 12; ++i)
    for (int j = i + 1; j < 12; ++j) {
      auto [f1, l1] = lifeOf(i);
      auto [f2, l2] = lifeOf(j);
      if (f1 <= l2 && f2 <= l1) {
        EXPECT_FALSE(overlap(l.offsets[t[i]], bytesOf(t[i]), l.offsets[t[j]], bytesOf(t[j])))
            << i << " " << j;
      }
    }
  EXPECT_LE(l.arenaBytes, l.sumBytes);
  EXPECT_LT(l.arenaBytes, l.sumBytes * 3 / 4);
}

} // namespace
