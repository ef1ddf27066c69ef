//===- BuildIdTest.cpp - The running executable's build ID ----------------===//
#include "gc/Support/BuildId.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

namespace {

/// What readelf reports for this test binary.
std::string readelfBuildId() {
  // /proc/self/exe in the command would name readelf; resolve it here.
  std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  std::string cmd = "readelf -n '" + self + "' 2>/dev/null | sed -n 's/.*Build ID: //p'";
  std::unique_ptr<FILE, int (*)(FILE *)> p(popen(cmd.c_str(), "r"), pclose);
  if (!p)
    return "";
  char line[256] = {};
  if (!fgets(line, sizeof line, p.get()))
    return "";
  std::string s(line);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
    s.pop_back();
  return s;
}

TEST(BuildId, IsTheLinkersNoteInHex) {
  std::string_view id = gc::executableBuildId();
  // Debian's GCC links with --build-id: a SHA-1, 20 bytes.
  ASSERT_EQ(id.size(), 40u);
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string_view::npos);
  EXPECT_EQ(gc::executableBuildId().data(), id.data()); // read once
  // binutils comes with the compiler that built this test.
  EXPECT_EQ(id, readelfBuildId());
}

} // namespace
