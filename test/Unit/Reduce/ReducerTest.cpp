//===- ReducerTest.cpp - The delta-debugging search ------------------------===//
#include "gc/Reduce/Reducer.h"

#include "gc/Parser/Parser.h"

#include <cstdlib>
#include <filesystem>
#include <gtest/gtest.h>

namespace gc {
namespace {

/// Interesting while the first graph still calls `op_`, with a count of
/// the calls, so that a test can tell the search made no extra ones.
class CallsOp : public Oracle {
public:
  explicit CallsOp(OpId op) : op_(op) {}
  Expected<Verdict> judge(const std::string &, const Module &m) override {
    ++calls;
    for (const auto &n : m.graphs()[0]->nodes())
      if (n->op() == op_)
        return Verdict{true, ""};
    return Verdict{false, "no such op"};
  }
  std::string litLines() const override { return ""; }
  int calls = 0;

private:
  OpId op_;
};

/// A chain of 40 abs calls, with a tanh in the middle, and two outputs.
std::unique_ptr<Module> chain() {
  std::string text = "module level(core) {\n  graph @f(%x: f32[8, 6] user_input(\"x\")) {\n";
  std::string prev = "x";
  for (int i = 0; i < 40; ++i) {
    std::string name = "v" + std::to_string(i);
    std::string op = i == 20 ? "aten.tanh.default" : "aten.abs.default";
    text += "    %" + name + " = " + op + "(self=%" + prev + ") : f32[8, 6]\n";
    prev = name;
  }
  text += "    return %v39 user_output, %v10 user_output\n  }\n}\n";
  Expected<std::unique_ptr<Module>> m = parseModule(text, "chain");
  EXPECT_TRUE(m) << m.error().message();
  return std::move(*m);
}

/// A directory of its own for each test: ctest runs them side by side.
struct TempDir {
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "gc-reduce-test-XXXXXX");
    EXPECT_NE(mkdtemp(pattern.data()), nullptr);
    path = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::filesystem::path path;
};

TEST(Reducer, ShrinksToTheOneInterestingNode) {
  TempDir dir;
  CallsOp oracle(ops::aten_tanh_default);
  ReduceStats stats;
  Expected<std::unique_ptr<Module>> out =
      reduceModule(chain(), oracle, {dir.path.string(), 0, nullptr}, stats);
  ASSERT_TRUE(out) << out.error().message();
  const Graph &g = *(*out)->graphs()[0];
  ASSERT_EQ(g.nodes().size(), 1u);
  EXPECT_EQ(g.nodes()[0]->op(), ops::aten_tanh_default);
  EXPECT_EQ(g.outputs().size(), 1u);
  // The sizes halved down to 1.
  EXPECT_EQ(stats.end.elements, 2);
  EXPECT_EQ(stats.start.nodes, 40u);
  EXPECT_EQ(stats.end.nodes, 1u);
  EXPECT_EQ(static_cast<size_t>(oracle.calls), stats.tests);
  EXPECT_FALSE(stats.timedOut);
  EXPECT_FALSE(stats.unverified);

  // 1-minimal: no single edit of any kind keeps it interesting and smaller.
  for (EditKind k : {EditKind::CutToInput, EditKind::DropOutput, EditKind::HoistOutput,
                     EditKind::HalveDim, EditKind::HalveSize})
    for (const Edit &e : proposeEdits(**out, k)) {
      Expected<std::unique_ptr<Module>> c = applyEdits(**out, std::vector<Edit>{e});
      if (!c || !(moduleSize(**c) < moduleSize(**out)))
        continue;
      EXPECT_FALSE(oracle.judge("", **c)->interesting) << editKindName(k);
    }
}

TEST(Reducer, SameInputSameResult) {
  TempDir dir;
  CallsOp a(ops::aten_tanh_default), b(ops::aten_tanh_default);
  ReduceStats sa, sb;
  auto ra = reduceModule(chain(), a, {dir.path.string(), 0, nullptr}, sa);
  auto rb = reduceModule(chain(), b, {dir.path.string(), 0, nullptr}, sb);
  ASSERT_TRUE(ra && rb);
  EXPECT_EQ(sa.tests, sb.tests);
  EXPECT_EQ(moduleSize(**ra), moduleSize(**rb));
}

TEST(Reducer, UninterestingInputIsAnError) {
  TempDir dir;
  CallsOp oracle(ops::aten_neg_default);
  ReduceStats stats;
  auto out = reduceModule(chain(), oracle, {dir.path.string(), 0, nullptr}, stats);
  ASSERT_FALSE(out);
  EXPECT_NE(out.error().message().find("the input is not interesting to the test: no such op"),
            std::string::npos);
  EXPECT_EQ(oracle.calls, 1);
}

TEST(Reducer, CheckCandidateComparesRecordedTypes) {
  auto m = chain();
  Error ok = checkCandidate(*m);
  EXPECT_FALSE(static_cast<bool>(ok)) << ok.message();
  Expected<std::unique_ptr<Module>> bad = parseModule(
      "module level(core) {\n  graph @f(%x: f32[8] user_input(\"x\")) {\n"
      "    %y = aten.abs.default(self=%x) : f32[7]\n    return %y user_output\n  }\n}\n",
      "bad");
  ASSERT_TRUE(bad);
  Error e = checkCandidate(**bad);
  ASSERT_TRUE(static_cast<bool>(e));
  EXPECT_NE(e.message().find("node %y"), std::string::npos);
}

} // namespace
} // namespace gc
