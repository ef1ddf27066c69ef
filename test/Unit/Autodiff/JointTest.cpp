//===- JointTest.cpp - The joint graph's signature ------------------------===//
#include "gc/Autodiff/Autodiff.h"
#include "gc/IR/Printer.h"
#include "gc/Parser/Parser.h"

#include <gtest/gtest.h>

namespace gc {
namespace {

std::unique_ptr<Module> parse(std::string_view text) {
  Expected<std::unique_ptr<Module>> m = parseModule(text, "test");
  EXPECT_TRUE(m) << m.error().message();
  return m.take();
}

// A parameter that requires grad and one that does not, a buffer the graph
// updates, a user input; a float, an int and an aliasing user output.
constexpr std::string_view kForward = R"(module level(core) {
  graph @forward(%w: f32[3]{requires_grad=true} parameter("w"),
                 %frozen: f32[3] parameter("frozen"),
                 %unused: f32[2]{requires_grad=true} parameter("unused"),
                 %buf: f32[3] buffer("buf"),
                 %x: f32[3] user_input("x")) {
    %y = aten.mul.Tensor(self=%x, other=%w) : f32[3]
    %z = aten.mul.Tensor(self=%y, other=%frozen) : f32[3]
    %b = aten.add.Tensor(self=%buf, other=%y) : f32[3]
    %n = aten.argmax.default(self=%z) : i64[]
    %v = aten.view.default(self=%x, size=[3]) : f32[3]
    return %b buffer_mutation("buf"), %z user_output, %n user_output, %v user_output{alias_of="x"}
  }
})";

TEST(Joint, SignatureFollowsAOTAutograd) {
  std::unique_ptr<Module> m = parse(kForward);
  Error e = buildJointModule(*m, JointOptions{true});
  ASSERT_FALSE(e) << e.message();
  EXPECT_EQ(m->level(), Level::Joint);
  ASSERT_EQ(m->graphs().size(), 1u);
  const Graph &g = *m->graphs()[0];
  EXPECT_EQ(g.name(), "joint");
  // Primals unchanged, then one tangent: only %z is a float, non-aliasing
  // user output.
  ASSERT_EQ(g.inputs().size(), 6u);
  EXPECT_EQ(g.inputs()[4]->name(), "x");
  EXPECT_EQ(g.inputs()[5]->name(), "tangents_0");
  EXPECT_EQ(g.inputSpecs()[5], (InputSpec{InputKind::UserInput, "tangents_0"}));
  // Forward outputs as they were, then parameter gradients in input order
  // (requires_grad only), then user-input gradients.
  std::vector<OutputSpec> want = {
      {OutputKind::BufferMutation, "buf", ""},    {OutputKind::UserOutput, "", ""},
      {OutputKind::UserOutput, "", ""},           {OutputKind::UserOutput, "", "x"},
      {OutputKind::GradientToParameter, "w", ""}, {OutputKind::GradientToParameter, "unused", ""},
      {OutputKind::GradientToUserInput, "x", ""},
  };
  EXPECT_EQ(g.outputSpecs(), want);
  // Nothing reaches %unused: its gradient is a zeros tensor.
  const Node *zeros = g.outputs()[5]->definingNode();
  ASSERT_NE(zeros, nullptr);
  EXPECT_EQ(zeros->op(), ops::aten_full_default);
}

TEST(Joint, UserInputGradientsOnlyOnRequest) {
  std::unique_ptr<Module> m = parse(kForward);
  ASSERT_FALSE(buildJointModule(*m, JointOptions{}));
  const Graph &g = *m->graphs()[0];
  EXPECT_EQ(g.outputSpecs().back(), (OutputSpec{OutputKind::GradientToParameter, "unused", ""}));
}

TEST(Joint, OpWithoutDerivativeIsNamed) {
  std::unique_ptr<Module> m = parse(R"(module level(core) {
  graph @forward(%w: f32[4]{requires_grad=true} parameter("w")) {
    %s = aten.as_strided.default(self=%w, size=[2], stride=[2]) : f32[2]{strides=[2]}
    return %s user_output
  }
})");
  Error e = buildJointModule(*m, JointOptions{});
  ASSERT_TRUE(e);
  EXPECT_EQ(e.message(), "graph @forward, node %s (aten.as_strided.default): gc has no "
                         "derivative for this op");
}

TEST(Joint, NeedsACoreModule) {
  std::unique_ptr<Module> m = parse(R"(module level(aten) {
  graph @forward(%x: f32[2] user_input("x")) {
    return %x user_output
  }
})");
  Error e = buildJointModule(*m, JointOptions{});
  ASSERT_TRUE(e);
  EXPECT_EQ(e.message(), "the joint graph is built from a module of level core, not aten");
}

} // namespace
} // namespace gc
