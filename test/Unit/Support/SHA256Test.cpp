//===- SHA256Test.cpp - SHA-256 known answers -----------------------------===//
#include "gc/Support/SHA256.h"

#include "gc/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>


using namespace gc;

namespace {

std::string hexOf(const std::array<uint8_t, 32> &digest) {
  static constexpr char Hex[] = "0123456789abcdef";
  std::string s;
  for (uint8_t b : digest) {
    s.push_back(Hex[b >> 4]);
    s.push_back(Hex[b & 0xF]);
  }
  return s;
}

/// Runs each test twice: with the CPU's SHA instructions where it has them,
/// and with the portable code.
class SHA256Paths : public ::testing::TestWithParam<bool> {
protected:
  void SetUp() override { SHA256::useShaExtensions(GetParam()); }
  void TearDown() override { SHA256::useShaExtensions(true); }
};

INSTANTIATE_TEST_SUITE_P(BothPaths, SHA256Paths, ::testing::Values(true, false),
                         [](const auto &info) { return info.param ? "ShaExtensions" : "Portable"; });

// Vectors from FIPS 180-4's examples and NIST's SHA-256 test suite.
TEST_P(SHA256Paths, KnownVectors) {
  EXPECT_EQ(sha256Hex(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256Hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(
      sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256Hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_P(SHA256Paths, PaddingBoundaries) {
  // 55 bytes fit one padded block, 56 need a second; 64 is a whole block.
  EXPECT_EQ(sha256Hex(std::string(55, 'a')),
            "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(sha256Hex(std::string(56, 'a')),
            "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(sha256Hex(std::string(64, 'a')),
            "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

TEST_P(SHA256Paths, IncrementalMatchesOneShot) {
  std::string data;
  for (int i = 0; i < 1000; ++i)
    data.push_back(char(i * 131 + 7));
  std::string expected = sha256Hex(data);
  for (size_t chunk : {1u, 3u, 63u, 64u, 65u, 200u}) {
    SHA256 hasher;
    for (size_t pos = 0; pos < data.size(); pos += chunk)
      hasher.update(std::string_view(data).substr(pos, chunk));
    hasher.update("");
    EXPECT_EQ(hexOf(hasher.finish()), expected) << chunk;
  }
}

/// The tree hash as its comment defines it, computed one leaf after another.
std::string treeByDefinition(std::string_view data) {
  SHA256 root;
  root.update("gc sha256-tree, leaves of " + std::to_string(kSha256TreeLeafBytes) + " bytes\n");
  for (int i = 0; i < 8; ++i)
    root.update(std::string(1, char(uint64_t(data.size()) >> (8 * i))));
  for (size_t pos = 0; pos < data.size(); pos += kSha256TreeLeafBytes) {
    SHA256 leaf;
    leaf.update(data.substr(pos, kSha256TreeLeafBytes));
    auto d = leaf.finish();
    root.update(std::string_view(reinterpret_cast<const char *>(d.data()), d.size()));
  }
  return hexOf(root.finish());
}

TEST(SHA256Tree, FollowsItsDefinitionOnAnyThreads) {
  std::string data(2 * kSha256TreeLeafBytes + 12345, '\0');
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = char(i * 2654435761u >> 11);
  for (size_t size : {size_t(0), size_t(1), size_t(kSha256TreeLeafBytes), data.size()}) {
    auto file = MappedFile::fromBuffer("tree", data.substr(0, size));
    std::string expected = treeByDefinition(file->text());
    for (unsigned threads : {0u, 1u, 2u, 5u})
      EXPECT_EQ(hexOf(sha256Tree(*file, threads)), expected) << size << " bytes, " << threads;
  }
}

TEST(SHA256Tree, EveryByteAndTheLengthCount) {
  std::string data(kSha256TreeLeafBytes + 100, 'x');
  std::string base = hexOf(sha256Tree(*MappedFile::fromBuffer("tree", data), 2));
  for (size_t at : {size_t(0), size_t(kSha256TreeLeafBytes - 1), data.size() - 1}) {
    std::string changed = data;
    changed[at] ^= 1;
    EXPECT_NE(hexOf(sha256Tree(*MappedFile::fromBuffer("tree", changed), 2)), base) << at;
  }
  EXPECT_NE(hexOf(sha256Tree(*MappedFile::fromBuffer("tree", data + '\0'), 2)), base);
}

TEST(SHA256Tree, HolesHashAsZeros) {
  // Two whole leaves of hole, then data: the same digest as the bytes
  // written out.
  std::string path = ::testing::TempDir() + "/sha256-tree-sparse.bin";
  std::string tail = "the end of a sparse file";
  {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.seekp(std::streamoff(2 * kSha256TreeLeafBytes + 7));
    f << tail;
  }
  Expected<std::shared_ptr<MappedFile>> sparse = MappedFile::open(path);
  ASSERT_TRUE(sparse);
  std::string dense(2 * kSha256TreeLeafBytes + 7, '\0');
  dense += tail;
  EXPECT_EQ(hexOf(sha256Tree(**sparse, 2)), treeByDefinition(dense));
  EXPECT_EQ(sha256Hex(**sparse, 3, dense.size() - 3), sha256Hex(std::string_view(dense).substr(3)));
  std::remove(path.c_str());
}

} // namespace
