//===- PluginRowsTest.cpp - Op rows that plugins register -----------------===//
//
// A plugin op's row is found by name and by id like OpDefs.def's rows, in
// the core op set, past the variants; registering it again is harmless, but
// another schema or the name of gc's own op is refused.
//
//===----------------------------------------------------------------------===//

#include "gc/IR/OpSchema.h"
#include "gc/IR/OpVariants.h"
#include "gc/IR/PluginRows.h"

#include <gtest/gtest.h>

namespace gc {
namespace {

TEST(PluginRows, RegisteredRowIsFoundLikeOthers) {
  Expected<OpId> id = registerPluginOp("testns.twice.default", "(Tensor x, int k) -> Tensor",
                                       "custom op of a test");
  ASSERT_TRUE(id) << id.error().message();
  EXPECT_TRUE(isPluginOp(*id));
  EXPECT_GE(static_cast<size_t>(*id), kNumOps + opVariants().size());
  EXPECT_EQ(lookupOp("testns.twice.default"), *id);
  EXPECT_EQ(opName(*id), "testns.twice.default");
  EXPECT_TRUE(isCoreOp(*id));
  EXPECT_EQ(findVariant(*id), nullptr);
  EXPECT_EQ(opSchema(*id).args.size(), 2u);
  EXPECT_EQ(opSchema(*id).args[1].type, "int");
  EXPECT_FALSE(isPluginOp(ops::aten_add_Tensor));

  Expected<OpId> again = registerPluginOp("testns.twice.default", "(Tensor x, int k) -> Tensor",
                                          "custom op of a test");
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, *id);
}

TEST(PluginRows, ConflictsAreErrors) {
  ASSERT_TRUE(registerPluginOp("testns.once.default", "(Tensor x) -> Tensor", ""));
  Expected<OpId> other =
      registerPluginOp("testns.once.default", "(Tensor x, float a) -> Tensor", "");
  ASSERT_FALSE(other);
  EXPECT_NE(other.error().message().find("registered with schema"), std::string::npos);
  Expected<OpId> ours = registerPluginOp("aten.add.Tensor", "(Tensor self) -> Tensor", "");
  ASSERT_FALSE(ours);
  EXPECT_NE(ours.error().message().find("one gc defines itself"), std::string::npos);
  EXPECT_FALSE(registerPluginOp("testns.bad.default", "(Tensor x -> Tensor", ""));
}

TEST(PluginRows, UnknownOpMessageSaysWhatToDo) {
  EXPECT_EQ(unknownOpMessage("aten.nosuch.default"),
            "'aten.nosuch.default' is not an op gc knows (docs/ops.md lists those it does)");
  EXPECT_NE(unknownOpMessage("mylib.op.default").find("--plugin=PATH"), std::string::npos);
}

} // namespace
} // namespace gc
