//===- EditsTest.cpp - gc-reduce's edits, one kind at a time --------------===//
#include "gc/Reduce/Edits.h"

#include "gc/IR/Printer.h"
#include "gc/Parser/Parser.h"

#include <gtest/gtest.h>

namespace gc {
namespace {

// x -> abs -> a; a * w (a weight) -> b; b + x -> c; outputs b and c.
constexpr std::string_view kText = R"(module level(core) {
  source {kind=archive, path="weights.pt2"}
  weight {name="w", type=f32[4, 8], offset=0, bytes=128, sha256=""}
  graph @f(%w: f32[4, 8] parameter("w"), %x: f32[4, 8] user_input("x")) {
    %a = aten.abs.default(self=%x) : f32[4, 8]
    %b = aten.mul.Tensor(self=%a, other=%w) : f32[4, 8]
    %c = aten.add.Tensor(self=%b, other=%x) : f32[4, 8]
    return %b user_output, %c user_output
  }
}
)";

std::unique_ptr<Module> parse() {
  Expected<std::unique_ptr<Module>> m = parseModule(kText, "test");
  EXPECT_TRUE(m) << m.error().message();
  return std::move(*m);
}

std::unique_ptr<Module> apply(const Module &m, std::vector<Edit> edits) {
  Expected<std::unique_ptr<Module>> out = applyEdits(m, edits);
  EXPECT_TRUE(out) << out.error().message();
  return out ? std::move(*out) : nullptr;
}

const Graph &graph(const Module &m) { return *m.graphs()[0]; }

TEST(Edits, ProposalsFollowTheGraph) {
  auto m = parse();
  EXPECT_EQ(proposeEdits(*m, EditKind::CutToInput).size(), 3u);
  EXPECT_EQ(proposeEdits(*m, EditKind::DropOutput).size(), 2u);
  // b reads a and w, c reads b and x: one hoist per operand.
  EXPECT_EQ(proposeEdits(*m, EditKind::HoistOutput).size(), 4u);
  std::vector<Edit> weights = proposeEdits(*m, EditKind::WeightToInput);
  ASSERT_EQ(weights.size(), 1u);
  EXPECT_EQ(weights[0].index, 0u);
  // Only user inputs narrow: x's two dimensions, and the sizes 4 and 8.
  EXPECT_EQ(proposeEdits(*m, EditKind::HalveDim).size(), 2u);
  EXPECT_EQ(proposeEdits(*m, EditKind::HalveSize).size(), 2u);
}

TEST(Edits, CutNodeBecomesAnInputAndWhatOnlyItReadGoes) {
  auto m = parse();
  // Cutting b: a and the weight w are read by nothing else and go.
  auto out = apply(*m, {{EditKind::CutToInput, 1}});
  const Graph &g = graph(*out);
  ASSERT_EQ(g.nodes().size(), 1u);
  EXPECT_EQ(g.nodes()[0]->results()[0]->name(), "c");
  ASSERT_EQ(g.inputs().size(), 2u);
  EXPECT_EQ(g.inputs()[0]->name(), "x");
  EXPECT_EQ(g.inputs()[1]->name(), "b");
  EXPECT_EQ(g.inputSpecs()[1].kind, InputKind::UserInput);
  EXPECT_TRUE(out->weights().empty());
  EXPECT_TRUE(out->weightSources().empty());
  EXPECT_LT(moduleSize(*out), moduleSize(*m));
}

TEST(Edits, CutToZerosMakesAConstant) {
  auto m = parse();
  auto out = apply(*m, {{EditKind::CutToZeros, 0}});
  const Graph &g = graph(*out);
  ASSERT_EQ(g.nodes().size(), 3u);
  EXPECT_EQ(g.nodes()[0]->op(), ops::aten_full_default);
  EXPECT_EQ(g.nodes()[0]->results()[0]->name(), "a");
  EXPECT_NE(printModule(*out).find("fill_value=0"), std::string::npos);
}

TEST(Edits, DropAndHoistOutputs) {
  auto m = parse();
  auto dropped = apply(*m, {{EditKind::DropOutput, 1}});
  // c goes with its output; b still needs a.
  EXPECT_EQ(graph(*dropped).nodes().size(), 2u);
  EXPECT_EQ(graph(*dropped).outputs()[0]->name(), "b");
  // Output b becomes its operand a: the weight and mul are unread then.
  auto hoisted = apply(*dropped, {{EditKind::HoistOutput, 0, 0}});
  EXPECT_EQ(graph(*hoisted).nodes().size(), 1u);
  EXPECT_EQ(graph(*hoisted).outputs()[0]->name(), "a");
  EXPECT_TRUE(hoisted->weights().empty());
  // No output left is no candidate.
  EXPECT_FALSE(applyEdits(*m, std::vector<Edit>{{EditKind::DropOutput, 0},
                                                {EditKind::DropOutput, 1}}));
}

TEST(Edits, WeightToInputDropsTheWeight) {
  auto m = parse();
  auto out = apply(*m, {{EditKind::WeightToInput, 0}});
  EXPECT_EQ(graph(*out).inputSpecs()[0].kind, InputKind::UserInput);
  EXPECT_TRUE(out->weights().empty());
  EXPECT_EQ(graph(*out).nodes().size(), 3u);
}

TEST(Edits, HalvingInfersTypesAgainOrRefuses) {
  auto m = parse();
  // The weight keeps f32[4, 8], so x alone cannot narrow: mul's broadcast
  // refuses, and the edit is no candidate.
  EXPECT_FALSE(applyEdits(*m, std::vector<Edit>{{EditKind::HalveDim, 1, 1}}));
  auto free = apply(*m, {{EditKind::WeightToInput, 0}});
  auto out = apply(*free, {{EditKind::HalveSize, 8}});
  EXPECT_NE(printModule(*out).find("%c = aten.add.Tensor(self=%b, other=%x) : f32[4, 4]"),
            std::string::npos)
      << printModule(*out);
}

TEST(Edits, OutOfRangeEditIsAnError) {
  auto m = parse();
  EXPECT_FALSE(applyEdits(*m, std::vector<Edit>{{EditKind::CutToInput, 7}}));
  EXPECT_FALSE(applyEdits(*m, std::vector<Edit>{{EditKind::HalveDim, 1, 5}}));
}

} // namespace
} // namespace gc
