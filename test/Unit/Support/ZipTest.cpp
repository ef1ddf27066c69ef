//===- ZipTest.cpp - ZipArchive and ZipBuffer -----------------------------===//
#include "gc/Support/Zip.h"

#include <gtest/gtest.h>

#include <random>

using namespace gc;

namespace {

std::shared_ptr<MappedFile> buffer(std::string bytes) {
  return MappedFile::fromBuffer("test.zip", std::move(bytes));
}

std::string sampleArchive() {
  ZipBuffer w;
  w.add("model/data/weights/weight_0", std::string(1000, 'w'));
  w.add("model/byteorder", "little");
  w.add("empty", "");
  return w.finish();
}

/// Asserts that opening `bytes` fails and returns the message.
std::string openError(std::string bytes) {
  Expected<ZipArchive> z = ZipArchive::open(buffer(std::move(bytes)));
  EXPECT_FALSE(z);
  return z ? std::string() : z.error().message();
}

TEST(Crc32, KnownValues) {
  EXPECT_EQ(crc32(""), 0u);
  EXPECT_EQ(crc32("a"), 0xE8B7BE43u);
  EXPECT_EQ(crc32("123456789"), 0xCBF43926u);
  EXPECT_EQ(crc32("The quick brown fox jumps over the lazy dog"), 0x414FA339u);
}

TEST(Crc32, SlicedAndBytewisePathsAgree) {
  // Lengths around multiples of 8 exercise both loops and their seam.
  std::string data;
  for (int i = 0; i < 40; ++i)
    data.push_back(char(i * 37 + 11));
  for (size_t n = 0; n <= data.size(); ++n) {
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; ++i) {
      c ^= uint8_t(data[i]);
      for (int bit = 0; bit < 8; ++bit)
        c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
    }
    EXPECT_EQ(crc32(std::string_view(data).substr(0, n)), ~c) << n;
  }
}

TEST(Zip, RoundTripIsAligned) {
  Expected<ZipArchive> z = ZipArchive::open(buffer(sampleArchive()));
  ASSERT_TRUE(z) << z.error().message();
  ASSERT_EQ(z->entries().size(), 3u);
  EXPECT_EQ(z->entries()[0].name, "model/data/weights/weight_0");
  EXPECT_EQ(z->entries()[1].name, "model/byteorder");
  for (const ZipEntry &e : z->entries()) {
    EXPECT_EQ(e.dataOffset % 64, 0u) << e.name;
    EXPECT_EQ(e.method, 0);
    Expected<std::string_view> data = z->read(e, /*checkCrc=*/true);
    ASSERT_TRUE(data) << data.error().message();
  }
  const ZipEntry *order = z->find("model/byteorder");
  ASSERT_NE(order, nullptr);
  EXPECT_EQ(*z->read(*order), "little");
  EXPECT_EQ(z->read(*z->find("model/data/weights/weight_0"))->size(), 1000u);
  EXPECT_EQ(z->read(*z->find("empty"))->size(), 0u);
  EXPECT_EQ(z->find("model"), nullptr);
  EXPECT_EQ(z->find("nope"), nullptr);
}

TEST(Zip, WriterIsDeterministic) {
  EXPECT_EQ(sampleArchive(), sampleArchive());
}

TEST(Zip, OtherAlignments) {
  for (uint32_t alignment : {1u, 4u, 4096u}) {
    ZipBuffer w(alignment);
    w.add("a", "x");
    w.add("bb", "yy");
    Expected<ZipArchive> z = ZipArchive::open(buffer(w.finish()));
    ASSERT_TRUE(z) << z.error().message();
    for (const ZipEntry &e : z->entries())
      EXPECT_EQ(e.dataOffset % alignment, 0u) << e.name << " " << alignment;
    EXPECT_EQ(*z->read(*z->find("bb"), true), "yy");
  }
}

TEST(Zip, TrailingCommentIsAllowed) {
  std::string bytes = sampleArchive();
  // Comment length lives in the last two bytes of a comment-free archive.
  std::string comment = "built by a test";
  bytes[bytes.size() - 2] = char(comment.size());
  bytes += comment;
  Expected<ZipArchive> z = ZipArchive::open(buffer(bytes));
  ASSERT_TRUE(z) << z.error().message();
  EXPECT_EQ(z->entries().size(), 3u);
}

TEST(Zip, ReadsTorchExportArchive) {
  Expected<std::shared_ptr<MappedFile>> file =
      MappedFile::open(GC_TEST_INPUTS "/mlp.pt2");
  ASSERT_TRUE(file) << file.error().message();
  Expected<ZipArchive> z = ZipArchive::open(*file);
  ASSERT_TRUE(z) << z.error().message();
  EXPECT_EQ(z->entries().size(), 13u);

  const ZipEntry *w0 = z->find("model/data/weights/weight_0");
  ASSERT_NE(w0, nullptr);
  EXPECT_EQ(w0->dataOffset % 64, 0u);
  EXPECT_EQ(w0->compressedSize, 65536u);
  EXPECT_EQ(w0->uncompressedSize, 65536u);
  for (const ZipEntry &e : z->entries()) {
    Expected<std::string_view> data = z->read(e, /*checkCrc=*/true);
    EXPECT_TRUE(data) << data.error().message();
  }
  Expected<std::string_view> order = z->read(*z->find("model/byteorder"));
  ASSERT_TRUE(order);
  EXPECT_EQ(*order, "little");
}

TEST(Zip, CompressedEntryIsAnError) {
  std::string bytes = sampleArchive();
  // Mark the last central directory entry as deflated.
  size_t cd = bytes.rfind(std::string("PK\x01\x02", 4));
  ASSERT_NE(cd, std::string::npos);
  bytes[cd + 10] = 8;
  Expected<ZipArchive> z = ZipArchive::open(buffer(bytes));
  ASSERT_TRUE(z) << z.error().message();
  Expected<std::string_view> data = z->read(z->entries().back());
  ASSERT_FALSE(data);
  EXPECT_EQ(data.error().message(), "'test.zip': entry 'empty' is compressed "
                                    "(method 8); gc needs stored entries");
}

TEST(Zip, CrcMismatchIsAnError) {
  std::string bytes = sampleArchive();
  Expected<ZipArchive> z = ZipArchive::open(buffer(bytes));
  ASSERT_TRUE(z);
  bytes[z->find("model/byteorder")->dataOffset] = 'L';
  z = ZipArchive::open(buffer(bytes));
  ASSERT_TRUE(z);
  const ZipEntry &e = *z->find("model/byteorder");
  EXPECT_TRUE(z->read(e));
  Expected<std::string_view> data = z->read(e, /*checkCrc=*/true);
  ASSERT_FALSE(data);
  EXPECT_NE(data.error().message().find("'model/byteorder' fails its CRC-32"),
            std::string::npos)
      << data.error().message();
}

TEST(Zip, NotAZip) {
  EXPECT_EQ(openError(""), "'test.zip': not a zip archive (empty file)");
  EXPECT_EQ(openError("hello"),
            "'test.zip': not a zip archive (no end-of-central-directory "
            "record)");
  EXPECT_EQ(openError(std::string(100000, 'x')),
            "'test.zip': not a zip archive (no end-of-central-directory "
            "record)");
}

TEST(Zip, EveryTruncationIsAnError) {
  std::string bytes = sampleArchive();
  for (size_t n = 0; n < bytes.size(); n += 97)
    openError(bytes.substr(0, n));
  // Cuts inside the final records, byte by byte.
  for (size_t n = bytes.size() - 100; n < bytes.size(); ++n)
    openError(bytes.substr(0, n));
}

TEST(Zip, EveryTorchArchiveTruncationIsAnError) {
  Expected<std::shared_ptr<MappedFile>> file =
      MappedFile::open(GC_TEST_INPUTS "/mlp.pt2");
  ASSERT_TRUE(file);
  std::string bytes((*file)->text());
  for (size_t n = 0; n < bytes.size(); n += 97)
    openError(bytes.substr(0, n));
}

TEST(Zip, EntryOffsetPastTheEnd) {
  std::string bytes = sampleArchive();
  size_t cd = bytes.rfind(std::string("PK\x01\x02", 4));
  for (int i = 0; i < 4; ++i)
    bytes[cd + 42 + i] = char(0x7F);
  EXPECT_EQ(openError(bytes), "'test.zip': truncated zip archive: entry "
                              "'empty' runs past the end of the file");
}

TEST(Zip, EntrySizePastTheEnd) {
  std::string bytes = sampleArchive();
  size_t cd = bytes.find(std::string("PK\x01\x02", 4));
  // Both sizes, so that the entry still looks like a valid stored one.
  for (int i = 0; i < 8; ++i)
    bytes[cd + 20 + i] = i % 4 == 2 ? char(0x10) : 0;
  EXPECT_EQ(openError(bytes), "'test.zip': truncated zip archive: entry "
                              "'model/data/weights/weight_0' runs past the "
                              "end of the file");
}

TEST(Zip, BadLocalHeader) {
  std::string bytes = sampleArchive();
  bytes[0] = 'X';
  EXPECT_EQ(openError(bytes), "'test.zip': corrupt zip archive: bad local "
                              "header for entry 'model/data/weights/weight_0'");
}

TEST(Zip, DuplicateEntries) {
  ZipBuffer w;
  w.add("a", "1");
  w.add("a", "2");
  EXPECT_EQ(openError(w.finish()),
            "'test.zip': corrupt zip archive: duplicate entry 'a'");
}

TEST(Zip, HostileNamesAreEscaped) {
  ZipBuffer w;
  w.add(std::string("a\nb\xff", 4), "1");
  std::string bytes = w.finish();
  bytes[0] = 'X';
  EXPECT_EQ(openError(bytes), "'test.zip': corrupt zip archive: bad local "
                              "header for entry 'a\\x0Ab\\xFF'");
}

TEST(Zip, ReadsZip64Records) {
  // Rewrite a small archive the way a zip64 writer would: sizes and offset
  // in the central directory moved to a zip64 extra field, and a zip64
  // end-of-central-directory record and locator before the classic one.
  ZipBuffer w;
  w.add("a", "hello");
  std::string bytes = w.finish();
  size_t cd = bytes.find(std::string("PK\x01\x02", 4));
  std::string local = bytes.substr(0, cd);
  std::string entry = bytes.substr(cd, 46 + 1);
  auto put = [](std::string &s, uint64_t v, int n) {
    for (int i = 0; i < n; ++i)
      s.push_back(char(v >> (8 * i)));
  };
  for (int i = 20; i < 28; ++i)
    entry[i] = char(0xFF);
  for (int i = 42; i < 46; ++i)
    entry[i] = char(0xFF);
  entry[30] = 4 + 24; // extra field length
  put(entry, 0x0001, 2);
  put(entry, 24, 2);
  put(entry, 5, 8); // uncompressed
  put(entry, 5, 8); // compressed
  put(entry, 0, 8); // local header offset

  std::string out = local + entry;
  uint64_t zip64Eocd = out.size();
  put(out, 0x06064b50, 4);
  put(out, 44, 8);
  put(out, 45, 2);
  put(out, 45, 2);
  put(out, 0, 4);
  put(out, 0, 4);
  put(out, 1, 8);
  put(out, 1, 8);
  put(out, entry.size(), 8);
  put(out, cd, 8);
  put(out, 0x07064b50, 4);
  put(out, 0, 4);
  put(out, zip64Eocd, 8);
  put(out, 1, 4);
  put(out, 0x06054b50, 4);
  put(out, 0, 4);
  put(out, 0xFFFF, 2);
  put(out, 0xFFFF, 2);
  put(out, 0xFFFFFFFF, 4);
  put(out, 0xFFFFFFFF, 4);
  put(out, 0, 2);

  Expected<ZipArchive> z = ZipArchive::open(buffer(out));
  ASSERT_TRUE(z) << z.error().message();
  ASSERT_EQ(z->entries().size(), 1u);
  EXPECT_EQ(z->entries()[0].uncompressedSize, 5u);
  EXPECT_EQ(*z->read(z->entries()[0], true), "hello");

  // A zip64 extra field too short for the values it must hold.
  std::string shortExtra = out;
  shortExtra[cd + 46 + 1 + 2] = 16;
  EXPECT_NE(openError(shortExtra).find("corrupt zip archive"),
            std::string::npos);
}

TEST(Zip, CorruptingAnyByteNeverCrashes) {
  // A poor man's fuzzer: every byte set to values that stress lengths and
  // offsets. Each open must either fail or give entries inside the file.
  std::string good = sampleArchive();
  for (size_t i = 0; i < good.size(); ++i)
    for (char v : {char(0x00), char(0x7F), char(0xFF)}) {
      std::string bytes = good;
      bytes[i] = v;
      Expected<ZipArchive> z = ZipArchive::open(buffer(bytes));
      if (!z)
        continue;
      for (const ZipEntry &e : z->entries()) {
        ASSERT_LE(e.dataOffset + e.compressedSize, bytes.size());
        (void)z->read(e, true);
      }
    }
}

} // namespace

namespace {

TEST(Crc32, ContinuesAndSkipsZeros) {
  std::string data = "The quick brown fox jumps over the lazy dog";
  EXPECT_EQ(crc32(data.substr(9), crc32(data.substr(0, 9))), crc32(data));
  for (uint64_t n : {0u, 1u, 7u, 64u, 1000u, 65537u}) {
    std::string zeros(n, '\0');
    EXPECT_EQ(crc32Zeros(crc32(data), n), crc32(data + zeros)) << n;
    EXPECT_EQ(crc32Zeros(0, n), crc32(zeros)) << n;
  }
}

TEST(Zip, WriterCopiesPiecesOfMappedFiles) {
  // Entries from pieces of a mapped file and from memory read back whole,
  // and a small archive keeps the classic records (no zip64 signature).
  std::string path = ::testing::TempDir() + "/zip-pieces.bin";
  ASSERT_FALSE(writeFileAtomic(path, "0123456789abcdef"));
  Expected<std::shared_ptr<MappedFile>> file = MappedFile::open(path);
  ASSERT_TRUE(bool(file));
  std::string_view text = (*file)->text();
  ZipPiece pieces[] = {{text.substr(2, 3), file->get()}, {"--"}, {text.substr(10), file->get()}};
  StringSink sink;
  ZipWriter w(sink);
  ASSERT_FALSE(w.add("joined", pieces));
  ASSERT_FALSE(w.finish());
  EXPECT_EQ(sink.bytes.find(std::string("PK\x06\x06", 4)), std::string::npos);
  Expected<ZipArchive> z = ZipArchive::open(buffer(sink.bytes));
  ASSERT_TRUE(bool(z));
  Expected<std::string_view> joined = z->read(z->entries()[0], /*checkCrc=*/true);
  ASSERT_TRUE(bool(joined)) << joined.error().message();
  EXPECT_EQ(*joined, "234--abcdef");
  std::remove(path.c_str());
}

} // namespace

namespace {

TEST(Crc32, CarrylessMatchesTable) {
  // Every length from 0 to 300 (the folding path starts at 64 bytes; 16-byte
  // blocks and odd tails follow the 64-byte steps) at every alignment of a
  // 16-byte load, from a zero and from a running CRC, then a few long ones.
  std::mt19937 random(17);
  std::string data(3 << 20, '\0');
  for (char &c : data)
    c = char(random());
  auto both = [](std::string_view bytes, uint32_t crc) {
    useCarrylessCrc32(false);
    uint32_t table = crc32(bytes, crc);
    useCarrylessCrc32(true);
    return std::pair(table, crc32(bytes, crc));
  };
  for (size_t offset = 0; offset < 16; ++offset)
    for (size_t n = 0; n <= 300; ++n)
      for (uint32_t crc : {0u, 0x9E3779B9u}) {
        auto [table, carryless] = both(std::string_view(data).substr(offset, n), crc);
        ASSERT_EQ(table, carryless) << "offset " << offset << ", length " << n << ", crc " << crc;
      }
  for (size_t n : {size_t(4095), size_t(65536 + 13), data.size() - 3}) {
    auto [table, carryless] = both(std::string_view(data).substr(3, n), 0);
    EXPECT_EQ(table, carryless) << n;
  }
}

TEST(Crc32, LongKnownValues) {
  // Values from zlib.crc32, on whichever path this CPU takes.
  EXPECT_EQ(crc32(std::string(1 << 20, 'a')), 0xD7CD5672u);
  std::string counting;
  for (int i = 0; i < 5 * 256; ++i)
    counting.push_back(char(i));
  EXPECT_EQ(crc32(counting), 0x1E7A6D24u);
}

} // namespace
