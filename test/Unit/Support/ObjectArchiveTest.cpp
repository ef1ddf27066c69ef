//===- ObjectArchiveTest.cpp - Kernel objects in one ar archive -----------===//
#include "gc/Support/ObjectArchive.h"

#include <gtest/gtest.h>

using namespace gc;

namespace {

std::vector<std::string> membersOf(const std::string &archive) {
  Expected<std::vector<std::string_view>> members = archivedObjects(archive);
  EXPECT_TRUE(members) << (members ? "" : members.error().message());
  if (!members)
    return {};
  return {members->begin(), members->end()};
}

TEST(ObjectArchive, MembersComeBackInOrderWhateverTheirSizes) {
  // Odd sizes are padded to even offsets; an empty member stays empty.
  std::vector<std::string> objects = {"\177ELF one", "", "three", std::string(1001, 'x')};
  std::string archive = archiveObjects(objects);
  EXPECT_EQ(archive.substr(0, 8), "!<arch>\n");
  EXPECT_EQ(membersOf(archive), objects);
}

TEST(ObjectArchive, SameObjectsSameBytes) {
  std::vector<std::string> objects = {"a", "bc"};
  EXPECT_EQ(archiveObjects(objects), archiveObjects(objects));
  // Headers name b0.o, b1.o and hold no date or owner.
  std::string archive = archiveObjects(objects);
  EXPECT_EQ(archive.substr(8, 16), "b0.o/           ");
  EXPECT_EQ(archive.substr(24, 12), "0           ");
}

TEST(ObjectArchive, OneObjectWithoutArchiveIsItself) {
  EXPECT_EQ(membersOf("\177ELF whole object"), std::vector<std::string>{"\177ELF whole object"});
}

TEST(ObjectArchive, MalformedArchivesAreErrors) {
  std::string archive = archiveObjects(std::vector<std::string>{"abcd", "ef"});
  Expected<std::vector<std::string_view>> truncated =
      archivedObjects(std::string_view(archive).substr(0, archive.size() - 30));
  ASSERT_FALSE(truncated);
  EXPECT_NE(truncated.error().message().find("member 1"), std::string::npos);
  std::string badSize = archive;
  badSize.replace(8 + 48, 10, "99999     ");
  Expected<std::vector<std::string_view>> tooBig = archivedObjects(badSize);
  ASSERT_FALSE(tooBig);
  EXPECT_NE(tooBig.error().message().find("member 0 has a bad size"), std::string::npos);
}

} // namespace
