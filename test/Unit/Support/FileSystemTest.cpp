//===- FileSystemTest.cpp - MappedFile, atomic writes, paths --------------===//
#include "gc/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace gc;
namespace fs = std::filesystem;

namespace {

/// A fresh empty directory for one test, removed afterwards.
class FileSystemTest : public ::testing::Test {
protected:
  void SetUp() override {
    const auto *info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("gc-support-" + std::to_string(::getpid()) + "-" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string &name) const {
    return (dir_ / name).string();
  }

  std::vector<std::string> listing() const {
    std::vector<std::string> names;
    for (const auto &e : fs::directory_iterator(dir_))
      names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

  fs::path dir_;
};

TEST_F(FileSystemTest, WriteThenMap) {
  std::string bytes("abc\0def", 7);
  ASSERT_FALSE(writeFileAtomic(path("f.bin"), bytes));
  Expected<std::shared_ptr<MappedFile>> f = MappedFile::open(path("f.bin"));
  ASSERT_TRUE(f) << f.error().message();
  EXPECT_EQ((*f)->text(), bytes);
  EXPECT_EQ((*f)->bytes().size(), 7u);
  EXPECT_EQ((*f)->path(), path("f.bin"));
  EXPECT_EQ(listing(), std::vector<std::string>{"f.bin"});
}

TEST_F(FileSystemTest, OverwriteReplacesContent) {
  ASSERT_FALSE(writeFileAtomic(path("f"), "a long first version"));
  ASSERT_FALSE(writeFileAtomic(path("f"), "short"));
  Expected<std::shared_ptr<MappedFile>> f = MappedFile::open(path("f"));
  ASSERT_TRUE(f);
  EXPECT_EQ((*f)->text(), "short");
}

TEST_F(FileSystemTest, EmptyFile) {
  ASSERT_FALSE(writeFileAtomic(path("empty"), ""));
  Expected<std::shared_ptr<MappedFile>> f = MappedFile::open(path("empty"));
  ASSERT_TRUE(f) << f.error().message();
  EXPECT_EQ((*f)->bytes().size(), 0u);
  EXPECT_EQ((*f)->text(), "");
}

TEST_F(FileSystemTest, OpenErrors) {
  Expected<std::shared_ptr<MappedFile>> missing =
      MappedFile::open(path("nope"));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message(),
            "cannot open '" + path("nope") + "': no such file or directory");
  Expected<std::shared_ptr<MappedFile>> dir = MappedFile::open(dir_.string());
  ASSERT_FALSE(dir);
  EXPECT_EQ(dir.error().message(),
            "cannot open '" + dir_.string() + "': is a directory");
}

TEST_F(FileSystemTest, NonRegularFileIsRead) {
  // /dev/null is a character device: not mappable, read to its (empty) end.
  Expected<std::shared_ptr<MappedFile>> f = MappedFile::open("/dev/null");
  ASSERT_TRUE(f) << f.error().message();
  EXPECT_EQ((*f)->bytes().size(), 0u);
}

TEST_F(FileSystemTest, PipeIsWrittenInPlace) {
  // A write to a FIFO (as to -o /dev/null) goes into it: renaming a
  // temporary file over it would replace the node with a regular file.
  std::string fifo = path("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  Error e = writeFileAtomic(fifo, "abc");
  ASSERT_FALSE(e) << e.message();
  struct stat st;
  ASSERT_EQ(::stat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  char got[8] = {};
  EXPECT_EQ(::read(reader, got, sizeof got), 3);
  EXPECT_EQ(std::string(got), "abc");
  ::close(reader);
}

TEST_F(FileSystemTest, FromBuffer) {
  std::shared_ptr<MappedFile> f = MappedFile::fromBuffer("mem", "xyz");
  EXPECT_EQ(f->path(), "mem");
  EXPECT_EQ(f->text(), "xyz");
}

TEST_F(FileSystemTest, MissingDirectoryLeavesNothing) {
  std::string target = path("out") + "/x.gcm";
  Error e = writeFileAtomic(target, "data");
  ASSERT_TRUE(e);
  EXPECT_EQ(e.message(), "cannot write '" + target + "': directory '" +
                             path("out") + "' does not exist");
  EXPECT_TRUE(listing().empty());
}

TEST_F(FileSystemTest, RelativeMissingDirectoryMessage) {
  // The message quotes the paths as the user spelled them.
  fs::path old = fs::current_path();
  fs::current_path(dir_);
  Error e = writeFileAtomic("out/x.gcm", "data");
  fs::current_path(old);
  ASSERT_TRUE(e);
  EXPECT_EQ(e.message(),
            "cannot write 'out/x.gcm': directory 'out' does not exist");
}

TEST_F(FileSystemTest, FailedRenameRemovesTemporary) {
  // A directory in the way makes the final rename fail after the write.
  fs::create_directory(path("taken"));
  fs::create_directory(path("taken") + "/child");
  Error e = writeFileAtomic(path("taken"), "data");
  ASSERT_TRUE(e);
  EXPECT_EQ(e.message().rfind("cannot write '" + path("taken") + "': ", 0), 0u)
      << e.message();
  EXPECT_EQ(listing(), std::vector<std::string>{"taken"});
}

TEST_F(FileSystemTest, ParentOfAFileIsNotADirectory) {
  ASSERT_FALSE(writeFileAtomic(path("file"), "x"));
  Error e = writeFileAtomic(path("file") + "/y", "data");
  ASSERT_TRUE(e);
  EXPECT_EQ(e.message(), "cannot write '" + path("file") + "/y': '" +
                             path("file") + "' is not a directory");
}

TEST_F(FileSystemTest, CopyKeepsHolesAndUncommittedLeavesNothing) {
  // A sparse source: 1 MiB hole, 5 bytes, 1 MiB hole.
  {
    std::ofstream f(path("sparse"), std::ios::binary);
    f.seekp(1 << 20);
    f << "hello";
  }
  ASSERT_EQ(::truncate(path("sparse").c_str(), (2 << 20) + 5), 0);
  Expected<std::shared_ptr<MappedFile>> src = MappedFile::open(path("sparse"));
  ASSERT_TRUE(src);
  {
    Expected<std::unique_ptr<OutputFile>> out = OutputFile::create(path("abandoned"));
    ASSERT_TRUE(out);
    ASSERT_FALSE((*out)->write("partial"));
  }
  EXPECT_EQ(listing(), std::vector<std::string>{"sparse"});

  Expected<std::unique_ptr<OutputFile>> out = OutputFile::create(path("copy"));
  ASSERT_TRUE(out);
  ASSERT_FALSE((*out)->write("head"));
  ASSERT_FALSE((*out)->copyFrom(**src, 0, (*src)->text().size()));
  EXPECT_EQ((*out)->size(), 4 + (*src)->text().size());
  ASSERT_FALSE((*out)->commit());
  Expected<std::shared_ptr<MappedFile>> copy = MappedFile::open(path("copy"));
  ASSERT_TRUE(copy);
  EXPECT_EQ((*copy)->text(), "head" + std::string((*src)->text()));
  // Where the file system reports holes, the copy has them too: it takes
  // far less disk than its 2 MiB.
  std::vector<FileExtent> holes = fileExtents(**src, 0, (*src)->text().size());
  if (holes.size() > 1) {
    struct stat st;
    ASSERT_EQ(::stat(path("copy").c_str(), &st), 0);
    EXPECT_LT(st.st_blocks * 512, 1 << 20);
  }
}

TEST_F(FileSystemTest, OutputFileInPieces) {
  {
    Expected<std::unique_ptr<OutputFile>> f = OutputFile::create(path("f"));
    ASSERT_TRUE(f) << f.error().message();
    ASSERT_FALSE((*f)->write("abc"));
    ASSERT_FALSE((*f)->write("def"));
    // Nothing is visible before the commit but the temporary file.
    ASSERT_EQ(listing().size(), 1u);
    EXPECT_EQ(listing()[0].rfind("f.tmp-", 0), 0u) << listing()[0];
    ASSERT_FALSE((*f)->commit());
  }
  Expected<std::shared_ptr<MappedFile>> f = MappedFile::open(path("f"));
  ASSERT_TRUE(f);
  EXPECT_EQ((*f)->text(), "abcdef");
  EXPECT_EQ(listing(), std::vector<std::string>{"f"});
}

TEST_F(FileSystemTest, UncommittedOutputFileLeavesNothing) {
  ASSERT_FALSE(writeFileAtomic(path("f"), "old"));
  {
    Expected<std::unique_ptr<OutputFile>> f = OutputFile::create(path("f"));
    ASSERT_TRUE(f);
    ASSERT_FALSE((*f)->write("new and longer"));
  }
  Expected<std::shared_ptr<MappedFile>> f = MappedFile::open(path("f"));
  ASSERT_TRUE(f);
  EXPECT_EQ((*f)->text(), "old");
  EXPECT_EQ(listing(), std::vector<std::string>{"f"});
}

TEST_F(FileSystemTest, UnchangedBytesKeepTheFile) {
  // The same bytes in other pieces: the file (its inode, so its timestamp)
  // stays; a prefix, an extension or one changed byte replaces it.
  ASSERT_FALSE(writeFileAtomic(path("f"), "0123456789"));
  struct stat before;
  ASSERT_EQ(::stat(path("f").c_str(), &before), 0);
  auto rewrite = [&](std::vector<std::string> pieces) {
    Expected<std::unique_ptr<OutputFile>> f = OutputFile::create(path("f"));
    EXPECT_TRUE(f);
    for (const std::string &p : pieces)
      EXPECT_FALSE((*f)->write(p));
    EXPECT_FALSE((*f)->commit());
    struct stat after;
    EXPECT_EQ(::stat(path("f").c_str(), &after), 0);
    Expected<std::shared_ptr<MappedFile>> m = MappedFile::open(path("f"));
    std::string all;
    for (const std::string &p : pieces)
      all += p;
    EXPECT_EQ((*m)->text(), all);
    return after.st_ino == before.st_ino;
  };
  EXPECT_TRUE(rewrite({"0123", "456789"}));
  EXPECT_TRUE(rewrite({"0123456789", ""}));
  EXPECT_FALSE(rewrite({"0123", "45678"}));
  ASSERT_FALSE(writeFileAtomic(path("f"), "0123456789"));
  ASSERT_EQ(::stat(path("f").c_str(), &before), 0);
  EXPECT_FALSE(rewrite({"0123456789", "x"}));
  ASSERT_FALSE(writeFileAtomic(path("f"), "0123456789"));
  ASSERT_EQ(::stat(path("f").c_str(), &before), 0);
  EXPECT_FALSE(rewrite({"0123", "4X6789"}));
  EXPECT_EQ(listing(), std::vector<std::string>{"f"});
}

TEST_F(FileSystemTest, UnchangedLargeFileKeepsTheFile) {
  // Compared piece by piece: equal in every piece, or different in the last
  // byte of the last one.
  std::string data(3 << 20, '\0');
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = char(i * 131 >> 7);
  ASSERT_FALSE(writeFileAtomic(path("f"), data));
  auto inode = [&] {
    struct stat st;
    EXPECT_EQ(::stat(path("f").c_str(), &st), 0);
    return st.st_ino;
  };
  ino_t before = inode();
  ASSERT_FALSE(writeFileAtomic(path("f"), data));
  EXPECT_EQ(inode(), before);
  data.back() ^= 1;
  ASSERT_FALSE(writeFileAtomic(path("f"), data));
  EXPECT_NE(inode(), before);
  Expected<std::shared_ptr<MappedFile>> f = MappedFile::open(path("f"));
  ASSERT_TRUE(f);
  EXPECT_EQ((*f)->text(), data);
}

/// This process's resident file-backed memory, in KiB.
uint64_t residentFileKiB() {
  std::ifstream status("/proc/self/status");
  std::string key;
  uint64_t kib = 0;
  while (status >> key) {
    if (key == "RssFile:") {
      status >> kib;
      break;
    }
  }
  return kib;
}

TEST_F(FileSystemTest, ScanReadsInPiecesAndReleasesThem) {
  std::string data(24 << 20, '\0');
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = char(i * 2654435761u >> 13);
  ASSERT_FALSE(writeFileAtomic(path("big"), data));
  Expected<std::shared_ptr<MappedFile>> f = MappedFile::open(path("big"));
  ASSERT_TRUE(f);
  const MappedFile &file = **f;
  const uint64_t before = residentFileKiB();
  unsigned sum = 0;
  for (size_t i = 0; i < data.size(); i += 4096)
    sum += uint8_t(file.text()[i]);
  EXPECT_NE(sum, 0u);
  EXPECT_GE(residentFileKiB(), before + (16 << 10)) << "reading maps the pages";
  file.release(0, data.size());
  EXPECT_LT(residentFileKiB(), before + (8 << 10)) << "release unmaps them";
  // The bytes stay readable after a release.
  EXPECT_EQ(file.text().substr(1000, 100), std::string_view(data).substr(1000, 100));
  file.release(0, data.size());

  std::string seen;
  uint64_t holes = 0;
  scanFile(
      file, 5, data.size() - 10,
      [&](std::string_view piece) {
        EXPECT_LE(piece.size(), kScanPieceBytes);
        seen += piece;
      },
      [&](uint64_t n) { holes += n; });
  EXPECT_EQ(holes, 0u);
  EXPECT_TRUE(seen == std::string_view(data).substr(5, data.size() - 10));
  EXPECT_LT(residentFileKiB(), before + (8 << 10)) << "a scan leaves nothing mapped";
}

TEST_F(FileSystemTest, ScanReportsHoles) {
  // 1 MiB of hole, "data", 1 MiB of hole: whatever the file system reports
  // as holes, data and holes together are the file.
  {
    std::ofstream f(path("sparse"), std::ios::binary);
    f.seekp(1 << 20);
    f << "data";
  }
  ASSERT_EQ(::truncate(path("sparse").c_str(), (2 << 20) + 4), 0);
  Expected<std::shared_ptr<MappedFile>> f = MappedFile::open(path("sparse"));
  ASSERT_TRUE(f);
  std::string rebuilt;
  scanFile(
      **f, 0, (*f)->text().size(), [&](std::string_view piece) { rebuilt += piece; },
      [&](uint64_t n) { rebuilt.append(n, '\0'); });
  EXPECT_TRUE(rebuilt == (*f)->text());
}

TEST_F(FileSystemTest, EightThreadsWriteOnePath) {
  // Each writer has a temporary file of its own; the path ends up holding
  // one writer's bytes whole.
  std::vector<std::string> versions;
  for (int t = 0; t < 8; ++t)
    versions.push_back(std::string(100000 + t, char('a' + t)));
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < 10; ++r)
        failures += bool(writeFileAtomic(path("f"), versions[t]));
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(failures.load(), 0);
  Expected<std::shared_ptr<MappedFile>> f = MappedFile::open(path("f"));
  ASSERT_TRUE(f);
  EXPECT_NE(std::find(versions.begin(), versions.end(), std::string((*f)->text())),
            versions.end());
  EXPECT_EQ(listing(), std::vector<std::string>{"f"});
}

TEST(Paths, ParentDirectory) {
  EXPECT_EQ(parentDirectory("a/b/c.pt2"), "a/b");
  EXPECT_EQ(parentDirectory("c.pt2"), ".");
  EXPECT_EQ(parentDirectory("/c.pt2"), "/");
  EXPECT_EQ(parentDirectory("/a/c.pt2"), "/a");
}

TEST(Paths, RelativePath) {
  EXPECT_EQ(relativePath("/a/b/c.pt2", "/a/d"), "../b/c.pt2");
  EXPECT_EQ(relativePath("/a/b/c.pt2", "/a/d/"), "../b/c.pt2");
  EXPECT_EQ(relativePath("/a/b/c.pt2", "/a/b"), "c.pt2");
  EXPECT_EQ(relativePath("/a/b/../b/./c.pt2", "/a/b/x/.."), "c.pt2");
  EXPECT_EQ(relativePath("/a/b", "/a/b"), ".");
  EXPECT_EQ(relativePath("/x/y", "/a/b"), "../../x/y");
  // Relative inputs are taken from the current directory.
  EXPECT_EQ(relativePath("m/w.bin", "m"), "w.bin");
  EXPECT_EQ(relativePath("w.bin", "out"), "../w.bin");
}

TEST(Paths, ResolvePath) {
  EXPECT_EQ(resolvePath("w.bin", "out"), "out/w.bin");
  EXPECT_EQ(resolvePath("../w.bin", "out/sub"), "out/w.bin");
  EXPECT_EQ(resolvePath("/abs/w.bin", "out"), "/abs/w.bin");
  EXPECT_EQ(resolvePath("w.bin", "."), "w.bin");
  EXPECT_EQ(resolvePath("w.bin", ""), "w.bin");
  EXPECT_EQ(resolvePath("-", "out"), "-");
}

} // namespace
