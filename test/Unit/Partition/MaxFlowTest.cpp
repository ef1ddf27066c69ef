//===- MaxFlowTest.cpp - Maximum flow and minimum cut ---------------------===//
#include "gc/Partition/MaxFlow.h"

#include <gtest/gtest.h>

namespace gc {
namespace {

// The textbook network (Cormen et al., figure 26.1): its maximum flow is 23.
FlowNetwork textbookNetwork() {
  FlowNetwork net(6);
  net.addEdge(0, 1, 16);
  net.addEdge(0, 2, 13);
  net.addEdge(2, 1, 4);
  net.addEdge(1, 3, 12);
  net.addEdge(3, 2, 9);
  net.addEdge(2, 4, 14);
  net.addEdge(4, 3, 7);
  net.addEdge(3, 5, 20);
  net.addEdge(4, 5, 4);
  return net;
}

TEST(MaxFlowTest, TextbookNetwork) {
  FlowNetwork net = textbookNetwork();
  EXPECT_EQ(net.maxFlow(0, 5), 23u);
  // The minimum cut: {s, v1, v2, v4} against {v3, t}; its edges v1->v3
  // (12), v4->v3 (7) and v4->t (4) add up to the flow.
  EXPECT_EQ(net.sourceSide(0), (std::vector<bool>{true, true, true, false, true, false}));
}

TEST(MaxFlowTest, NoPath) {
  FlowNetwork net(3);
  net.addEdge(0, 1, 5);
  EXPECT_EQ(net.maxFlow(0, 2), 0u);
  EXPECT_EQ(net.sourceSide(0), (std::vector<bool>{true, true, false}));
}

TEST(MaxFlowTest, InfiniteEdgesAreNeverCut) {
  // s -inf-> a -3-> b -inf-> t, and s -inf-> b: the cut must cross a->b and
  // then has nothing finite left on s->b->t.
  FlowNetwork net(4);
  net.addEdge(0, 1, FlowNetwork::kInfinite);
  net.addEdge(1, 2, 3);
  net.addEdge(2, 3, FlowNetwork::kInfinite);
  EXPECT_EQ(net.maxFlow(0, 3), 3u);
  EXPECT_EQ(net.sourceSide(0), (std::vector<bool>{true, true, false, false}));

  FlowNetwork uncuttable(3);
  uncuttable.addEdge(0, 1, FlowNetwork::kInfinite);
  uncuttable.addEdge(1, 2, FlowNetwork::kInfinite);
  EXPECT_GE(uncuttable.maxFlow(0, 2), FlowNetwork::kInfinite);
}

TEST(MaxFlowTest, TiesCutClosestToTheSource) {
  // s -> a -5-> b -5-> c -> t: both finite edges are minimum cuts; the one
  // next to the source is reported.
  FlowNetwork net(5);
  net.addEdge(0, 1, FlowNetwork::kInfinite);
  net.addEdge(1, 2, 5);
  net.addEdge(2, 3, 5);
  net.addEdge(3, 4, FlowNetwork::kInfinite);
  EXPECT_EQ(net.maxFlow(0, 4), 5u);
  EXPECT_EQ(net.sourceSide(0), (std::vector<bool>{true, true, false, false, false}));
}

TEST(MaxFlowTest, Deterministic) {
  FlowNetwork a = textbookNetwork(), b = textbookNetwork();
  EXPECT_EQ(a.maxFlow(0, 5), b.maxFlow(0, 5));
  EXPECT_EQ(a.sourceSide(0), b.sourceSide(0));
}

} // namespace
} // namespace gc
