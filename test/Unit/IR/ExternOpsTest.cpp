//===- ExternOpsTest.cpp - Which calls each device runs whole -------------===//
//
// runsWhole is the one rule for keeping scaled_dot_product_attention whole:
// what the CPU's fused attention step takes and what the GPU's kernel takes.
//
//===----------------------------------------------------------------------===//
#include "gc/IR/ExternOps.h"
#include "gc/Parser/Parser.h"

#include <gtest/gtest.h>

namespace gc {
namespace {

/// Whether the one SDPA call of a graph on q, k and v of these types and
/// with these extra arguments runs whole on the CPU and on a GPU.
std::pair<bool, bool> whole(const std::string &q, const std::string &kv,
                            const std::string &args = "", const std::string &mask = "") {
  std::string text = "module level(aten) {\n  graph @g(%q: " + q + " user_input(\"q\"), %k: " +
                     kv + " user_input(\"k\")" +
                     (mask.empty() ? "" : ", %m: " + mask + " user_input(\"m\")") + ") {\n" +
                     "    %o = aten.scaled_dot_product_attention.default(query=%q, key=%k, "
                     "value=%k" + (mask.empty() ? "" : ", attn_mask=%m") + args + ") : " + q +
                     "\n    return %o user_output\n  }\n}\n";
  auto m = parseModule(text, "t.gcir");
  EXPECT_TRUE(m) << m.error().message();
  if (!m)
    return {false, false};
  const Node &n = *(*m)->graphs()[0]->nodes().back();
  return {runsWhole(n, TargetDevice::CPU), runsWhole(n, TargetDevice::CUDA)};
}

using P = std::pair<bool, bool>;

TEST(ExternOpsTest, AttentionRunsWholeByDevice) {
  EXPECT_EQ(whole("f32[2, 4, 9, 64]", "f32[2, 4, 11, 64]"), P(true, true));
  EXPECT_EQ(whole("f32[2, 4, 9, 64]", "f32[2, 4, 11, 64]", ", is_causal=true"), P(true, true));
  // Half precision: both (the CPU's step widens it as it reads).
  EXPECT_EQ(whole("bf16[2, 4, 37, 64]", "bf16[2, 4, 11, 64]"), P(true, true));
  EXPECT_EQ(whole("f16[2, 4, 37, 128]", "f16[2, 4, 11, 128]"), P(true, true));
  // Masks: bool, float32 and half precision, on both.
  EXPECT_EQ(whole("f32[2, 4, 9, 64]", "f32[2, 4, 11, 64]", "", "bool[9, 11]"), P(true, true));
  EXPECT_EQ(whole("bf16[2, 4, 37, 64]", "bf16[2, 4, 11, 64]", "", "bf16[2, 1, 1, 11]"),
            P(true, true));
  EXPECT_EQ(whole("bf16[2, 4, 37, 64]", "bf16[2, 4, 11, 64]", "", "f16[37, 11]"), P(true, true));
  EXPECT_EQ(whole("bf16[2, 4, 37, 64]", "bf16[2, 4, 11, 64]", "", "i32[37, 11]"), P(false, false));
  // Grouped-query attention: both, where key heads divide query heads.
  EXPECT_EQ(whole("f32[2, 8, 9, 64]", "f32[2, 2, 11, 64]", "; enable_gqa=true"), P(true, true));
  EXPECT_EQ(whole("f32[2, 6, 9, 64]", "f32[2, 4, 11, 64]", "; enable_gqa=true"),
            P(false, false));
  EXPECT_EQ(whole("bf16[1, 1, 8, 1, 64]", "bf16[1, 1, 2, 2048, 64]", "; enable_gqa=true"),
            P(true, false));
}

TEST(ExternOpsTest, GpuFloat32FusesOnlyWhereTheKernelIsFaster) {
  // At most 16 static query rows (a decode step); bf16 on tensor cores at
  // any size but a decode step without grouped-query heads.
  EXPECT_EQ(whole("f32[1, 12, 197, 64]", "f32[1, 12, 197, 64]"), P(true, false));
  EXPECT_EQ(whole("f32[1, 32, 1, 64]", "f32[1, 8, 2048, 64]", "; enable_gqa=true"),
            P(true, true));
  EXPECT_EQ(whole("f32[1, 16, 16, 64]", "f32[1, 16, 4096, 64]"), P(true, true));
  EXPECT_EQ(whole("f32[1, 16, 17, 64]", "f32[1, 16, 4096, 64]"), P(true, false));
  EXPECT_EQ(whole("bf16[1, 16, 512, 64]", "bf16[1, 16, 4096, 64]"), P(true, true));
  EXPECT_EQ(whole("bf16[1, 8, 4, 64]", "bf16[1, 8, 2048, 64]"), P(true, false));
  EXPECT_EQ(whole("bf16[1, 32, 1, 64]", "bf16[1, 8, 2048, 64]", "; enable_gqa=true"),
            P(true, true));
  EXPECT_EQ(whole("f32[s0, 4, 9, 64]", "f32[s0, 4, 11, 64]"), P(true, true));
  EXPECT_EQ(whole("f32[1, 4, s0, 64]", "f32[1, 4, s0, 64]"), P(true, false));
  EXPECT_EQ(whole("bf16[s0, 4, 37, 64]", "bf16[s0, 4, 11, 64]"), P(true, true));
}

TEST(ExternOpsTest, AttentionDecomposesWhereNoStepTakesIt) {
  // Head dimension above the kernel's 128, and a rank above 4: the CPU only.
  EXPECT_EQ(whole("f32[1, 2, 5, 160]", "f32[1, 2, 7, 160]"), P(true, false));
  EXPECT_EQ(whole("f32[1, 1, 2, 5, 64]", "f32[1, 1, 2, 7, 64]"), P(true, false));
  // float64, dropout, a mask with is_causal: neither.
  EXPECT_EQ(whole("f64[1, 2, 5, 64]", "f64[1, 2, 7, 64]"), P(false, false));
  EXPECT_EQ(whole("f32[1, 2, 5, 64]", "f32[1, 2, 7, 64]", ", dropout_p=0.1"), P(false, false));
  EXPECT_EQ(whole("f32[1, 2, 5, 64]", "f32[1, 2, 7, 64]", ", is_causal=true", "bool[5, 7]"),
            P(false, false));
}

} // namespace
} // namespace gc
