//===- TargetTest.cpp - CPU target lists, levels and their objects --------===//
#include "gc/Support/Target.h"
#include "gc/Support/TargetObjects.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace gc;

namespace {

TEST(CpuTargetList, SortsByLevelAndDropsRepeats) {
  Expected<std::vector<std::string>> list = cpuTargetList("x86-64-v4,,x86-64-v3,x86-64-v4");
  ASSERT_TRUE(list) << list.error().message();
  EXPECT_EQ(joinTargets(*list), "x86-64-v3,x86-64-v4");
  EXPECT_EQ(joinTargets(*cpuTargetList("native")), "native");
}

TEST(CpuTargetList, RefusesUnknownEmptyAndMixedNative) {
  Expected<std::vector<std::string>> bad = cpuTargetList("x86-64-v3,pentium");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("'pentium'"), std::string::npos);
  EXPECT_FALSE(cpuTargetList(""));
  EXPECT_FALSE(cpuTargetList("native,x86-64-v3"));
}

TEST(SelectCpuTarget, BestLevelTheHostRunsOrTheForcedOne) {
  unsetenv(kCpuTargetEnv);
  // Every x86-64 CPU runs the baseline.
  EXPECT_EQ(*selectCpuTarget("x86-64"), "x86-64");
  Expected<std::string> best = selectCpuTarget("x86-64,x86-64-v3,x86-64-v4");
  ASSERT_TRUE(best);
  EXPECT_EQ(*best, hostCpuLevel());
  setenv(kCpuTargetEnv, "x86-64", 1);
  EXPECT_EQ(*selectCpuTarget("x86-64,x86-64-v3"), "x86-64");
  Expected<std::string> missing = selectCpuTarget("x86-64-v3,x86-64-v4");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("x86-64-v3,x86-64-v4 only"), std::string::npos);
  unsetenv(kCpuTargetEnv);
}

TEST(TargetObjects, OneObjectStaysAsItIs) {
  EXPECT_EQ(bundleTargetObjects({{"x86-64-v3", "\x7f" "ELF"}}), "\x7f" "ELF");
  Expected<std::vector<TargetObject>> objects = targetObjects("x86-64-v3", "\x7f" "ELF");
  ASSERT_TRUE(objects);
  ASSERT_EQ(objects->size(), 1u);
  EXPECT_EQ((*objects)[0].object, "\x7f" "ELF");
}

TEST(TargetObjects, ArchiveRoundTripsInTargetOrder) {
  // An odd size: the member is padded to an even length.
  std::string code = bundleTargetObjects({{"x86-64-v3", "abc"}, {"x86-64-v4", "defg"}});
  EXPECT_EQ(code.substr(0, 8), "!<arch>\n");
  EXPECT_EQ(code.size(), 8u + 60 + 4 + 60 + 4);
  Expected<std::vector<TargetObject>> objects = targetObjects("x86-64-v3,x86-64-v4", code);
  ASSERT_TRUE(objects) << objects.error().message();
  ASSERT_EQ(objects->size(), 2u);
  EXPECT_EQ((*objects)[0].target, "x86-64-v3");
  EXPECT_EQ((*objects)[0].object, "abc");
  EXPECT_EQ((*objects)[1].target, "x86-64-v4");
  EXPECT_EQ((*objects)[1].object, "defg");
}

TEST(TargetObjects, MalformedOrMissingMembersAreErrors) {
  std::string code = bundleTargetObjects({{"x86-64-v3", "abc"}, {"x86-64-v4", "defg"}});
  EXPECT_FALSE(targetObjects("x86-64-v3,x86-64-v4", "\x7f" "ELF"));
  EXPECT_FALSE(targetObjects("x86-64-v3,x86-64-v4", code.substr(0, code.size() - 2)));
  Expected<std::vector<TargetObject>> missing = targetObjects("x86-64,x86-64-v3", code);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("no x86-64 object"), std::string::npos);
}

} // namespace
