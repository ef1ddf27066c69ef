//===- PackageTest.cpp - Writing, reading and running packages ------------===//
//
// A hand-built Kernels-level module: y = x + w (w a weight), and z = x * s0
// where x is f32[s0] with s0 in [1, 64]. Its kernel is C compiled with the
// system compiler, standing in for gc-codegen's object code.
//
//===----------------------------------------------------------------------===//
#include "gc/IR/LoopIR.h"
#include "gc/Package/Compression.h"
#include "gc/Package/PackageReader.h"
#include "gc/PackageWriter/PackageWriter.h"
#include "gc/Support/SHA256.h"
#include "gc/Support/Zip.h"
#include "gcrt/gcrt.h"

#include "GpuTestKernels.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

using namespace gc;

namespace {

constexpr const char *kKernelSource = R"(
#include <stdint.h>
void gc_test_kernel(char *const *buffers, const int64_t *symbols, int64_t begin, int64_t end) {
  const float *x = (const float *)buffers[0], *w = (const float *)buffers[1];
  float *y = (float *)buffers[2], *z = (float *)buffers[3];
  for (int64_t i = begin; i < end; ++i) {
    y[i] = x[i] + w[i % 4];
    z[i] = x[i] * (float)symbols[0];
  }
}
)";

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class PackageTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("gc-package-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "k.c") << kKernelSource;
    std::string cmd = "cc -c -fPIC -O1 -o '" + (dir_ / "k.o").string() + "' '" +
                      (dir_ / "k.c").string() + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    objectCode_ = readFile(dir_ / "k.o");
    // The weight w (f32[4] = 10, 20, 30, 40) lives at offset 8 of a blob.
    float w[4] = {10, 20, 30, 40};
    std::string blob(8, 'x');
    blob.append(reinterpret_cast<const char *>(w), sizeof w);
    std::ofstream(dir_ / "w.bin", std::ios::binary) << blob;
    buildModule();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  TensorType tensor(std::vector<const SymExpr *> sizes) {
    TensorType t;
    t.sizes = sizes;
    t.strides = contiguousStrides(m_.syms(), sizes);
    t.storageOffset = m_.syms().constant(0);
    return t;
  }

  void buildModule() {
    SymContext &s = m_.syms();
    m_.setLevel(Level::Kernels);
    s.setRange("s0", SymRange{1, 64});
    const SymExpr *s0 = s.symbol("s0"), *four = s.constant(4), *i0 = s.symbol("i0");
    m_.weightSources().push_back({WeightSource::Kind::Blob, (dir_ / "w.bin").string()});
    std::string wBytes = readFile(dir_ / "w.bin").substr(8);
    m_.weights().push_back(Weight{"w", tensor({four}), 0, 8, 16, sha256Hex(wBytes)});

    LoopGraph &g = m_.addLoopGraph("forward");
    g.buffers = {Buffer{"x", BufferKind::Input, DType::Float32, {s0}, {s.constant(1)}, false},
                 Buffer{"w", BufferKind::Input, DType::Float32, {four}, {s.constant(1)}, false},
                 Buffer{"y", BufferKind::Output, DType::Float32, {s0}, {s.constant(1)}, false},
                 Buffer{"z", BufferKind::Output, DType::Float32, {s0}, {s.constant(1)}, false}};
    g.inputs = {LoopBinding{"x", 0, tensor({s0})}, LoopBinding{"w", 1, tensor({four})}};
    g.inputSpecs = {InputSpec{InputKind::UserInput, "x"}, InputSpec{InputKind::Parameter, "w"}};
    g.outputs = {LoopBinding{"y", 2, tensor({s0})}, LoopBinding{"z", 3, tensor({s0})}};
    g.outputSpecs = {OutputSpec{OutputKind::UserOutput, "", ""},
                     OutputSpec{OutputKind::UserOutput, "", ""}};
    // What gc_test_kernel computes, so that the kernel's buffers (the
    // order its entry receives them) are x, w, y, z.
    LoopNode n;
    n.name = "add";
    n.ranges = {s0};
    n.output = 2;
    n.storeIndex = i0;
    n.body.ops = {BodyOp{BodyOp::Kind::Load, DType::Float32, ScalarOp::Add, {}, 0, i0},
                  BodyOp{BodyOp::Kind::Load, DType::Float32, ScalarOp::Add, {}, 1, i0}};
    g.nodes.push_back(n);
    n.name = "scale";
    n.output = 3;
    n.body.ops.pop_back();
    g.nodes.push_back(n);
    g.plan.kernels = {KernelGroup{"gc_test_kernel", {0, 1}, {s0}}};
    g.plan.steps = {PlanStep{PlanStep::Kind::Kernel, 0, {}, {}}};
    g.plan.symbols = {"s0"};
    g.plan.target = "x86-64";
    g.plan.objectCode = objectCode_;
    g.plan.objectHash = sha256Hex(objectCode_);
  }

  std::string build(const PackageOptions &options = {}) {
    Expected<std::string> bytes = buildPackage(options);
    EXPECT_TRUE(bool(bytes)) << (bytes ? "" : bytes.error().message());
    return bytes ? *bytes : std::string();
  }

  /// The package's bytes, written in memory.
  Expected<std::string> buildPackage(const PackageOptions &options) {
    StringSink sink;
    if (Error e = writePackage(m_, options, sink))
      return e;
    return std::move(sink.bytes);
  }

  /// The package build() makes, loaded from memory as "m.gcpkg"; null (and
  /// a failure naming the error) if it does not load.
  gcrt_package *loadBuilt() {
    built_ = build();
    gcrt_package *pkg = nullptr;
    EXPECT_EQ(gcrt_package_load_memory(built_.data(), built_.size(), "m.gcpkg", &pkg), GCRT_OK)
        << gcrt_last_error();
    return pkg;
  }

  static Expected<std::unique_ptr<LoadedPackage>> open(std::string bytes) {
    return openPackage(MappedFile::fromBuffer("m.gcpkg", std::move(bytes)));
  }

  /// `bytes` rebuilt with entry `name` replaced by `data`.
  static std::string withEntry(const std::string &bytes, const std::string &name,
                               const std::string &data) {
    Expected<ZipArchive> zip = ZipArchive::open(MappedFile::fromBuffer("p", bytes));
    EXPECT_TRUE(bool(zip));
    ZipBuffer out(64);
    for (const ZipEntry &e : zip->entries())
      out.add(e.name, e.name == name ? std::string_view(data) : *zip->read(e));
    return out.finish();
  }

  std::filesystem::path dir_;
  std::string objectCode_;
  Module m_;
  std::string built_; ///< what loadBuilt() loaded (the package may map it)
};

TEST_F(PackageTest, RunsWithWeightsInPlace) {
  Expected<std::unique_ptr<LoadedPackage>> pkg = open(build());
  ASSERT_TRUE(bool(pkg)) << pkg.error().message();
  std::shared_ptr<const LoadedPackage> shared = pkg.take();
  std::optional<size_t> wi = shared->findWeight("w");
  ASSERT_TRUE(wi.has_value());
  const plan::Weight &w = *shared->plan().weights()->Get(*wi);
  EXPECT_EQ(w.offset() % 64, 0u);
  EXPECT_EQ(shared->weightBytes(*wi).data(), shared->file().bytes().data() + w.offset());

  auto exec = PackageExecutor::create(shared, 0, RuntimeOptions{1});
  ASSERT_TRUE(bool(exec)) << exec.error().message();
  std::vector<float> x = {1, 2, 3, 4, 5, 6}, y(6), z(6);
  std::vector<TensorRef> in = {TensorRef{x.data(), DType::Float32, {6}, {1}}};
  auto sizes = (*exec)->outputSizes(in);
  ASSERT_TRUE(bool(sizes)) << sizes.error().message();
  EXPECT_EQ((*sizes)[0], std::vector<int64_t>{6});
  std::vector<TensorRef> out = {TensorRef{y.data(), DType::Float32, {6}, {1}},
                                TensorRef{z.data(), DType::Float32, {6}, {1}}};
  Error e = (*exec)->run(in, out);
  ASSERT_FALSE(bool(e)) << e.message();
  EXPECT_EQ(y, (std::vector<float>{11, 22, 33, 44, 15, 26}));
  EXPECT_EQ(z, (std::vector<float>{6, 12, 18, 24, 30, 36}));
}

TEST_F(PackageTest, SameModuleGivesSameBytes) {
  std::string a = build(), b = build();
  ASSERT_FALSE(a.empty());
  EXPECT_EQ(a, b);
}

TEST_F(PackageTest, EntriesAreStoredAlignedAndCompressed) {
  std::string bytes = build();
  Expected<ZipArchive> zip = ZipArchive::open(MappedFile::fromBuffer("p", bytes));
  ASSERT_TRUE(bool(zip));
  std::vector<std::string> names;
  for (const ZipEntry &e : zip->entries()) {
    names.push_back(e.name);
    EXPECT_EQ(e.method, 0) << e.name;
    EXPECT_EQ(e.dataOffset % 64, 0u) << e.name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"archive_format", "version", "weights",
                                             "metadata.json.zst", "plan.gcpl.zst",
                                             "kernels/0.so.zst"}));
  // zstd's magic number starts each compressed section.
  EXPECT_EQ(zip->read(*zip->find("plan.gcpl.zst"))->substr(0, 4), "\x28\xb5\x2f\xfd");
  EXPECT_EQ(*zip->read(*zip->find("archive_format")), "gc-package");
}

TEST_F(PackageTest, RefusesOtherModules) {
  m_.setLevel(Level::Loops);
  Expected<std::string> bytes = buildPackage({});
  ASSERT_FALSE(bool(bytes));
  EXPECT_NE(bytes.error().message().find("kernels level"), std::string::npos);
}

TEST_F(PackageTest, ChangedWeightSourceIsAnError) {
  std::ofstream(dir_ / "w.bin", std::ios::binary) << std::string(24, 'y');
  Expected<std::string> bytes = buildPackage({});
  ASSERT_FALSE(bool(bytes));
  EXPECT_NE(bytes.error().message().find("SHA-256"), std::string::npos)
      << bytes.error().message();
}

TEST_F(PackageTest, MissingLinkerIsAnError) {
  Expected<std::string> bytes = buildPackage(PackageOptions{"/nonexistent/ld"});
  ASSERT_FALSE(bool(bytes));
  EXPECT_NE(bytes.error().message().find("cannot run the linker '/nonexistent/ld'"),
            std::string::npos)
      << bytes.error().message();
}

TEST_F(PackageTest, CorruptOrTruncatedPackagesAreErrors) {
  std::string good = build();
  for (size_t cut : {size_t(0), size_t(10), good.size() / 2, good.size() - 1}) {
    auto pkg = open(good.substr(0, cut));
    EXPECT_FALSE(bool(pkg)) << "cut at " << cut;
  }
  // A flipped byte inside each entry, the weights too, fails its CRC-32.
  Expected<ZipArchive> zip = ZipArchive::open(MappedFile::fromBuffer("p", good));
  for (const char *name : {"weights", "metadata.json.zst", "plan.gcpl.zst", "kernels/0.so.zst"}) {
    std::string bad = good;
    bad[zip->find(name)->dataOffset + 5] ^= 0x40;
    auto pkg = open(bad);
    ASSERT_FALSE(bool(pkg)) << name;
    EXPECT_NE(pkg.error().message().find(std::string("'m.gcpkg': entry '") + name),
              std::string::npos)
        << pkg.error().message();
  }
  // Valid zip, valid CRC, but not zstd or not a plan inside.
  auto notZstd = open(withEntry(good, "plan.gcpl.zst", "garbage"));
  ASSERT_FALSE(bool(notZstd));
  EXPECT_NE(notZstd.error().message().find("entry 'plan.gcpl.zst': not a zstd frame"),
            std::string::npos)
      << notZstd.error().message();
  auto notFormat = open(withEntry(good, "archive_format", "something-else"));
  ASSERT_FALSE(bool(notFormat));
  EXPECT_NE(notFormat.error().message().find("is not a gc package"), std::string::npos);
}

TEST_F(PackageTest, OtherVersionsAreErrorsNamingBoth) {
  std::string good = build();
  // 1.x packages held the compiler's graph file, which libgcrt no longer reads.
  for (const char *v : {"3.0\n", "2.3\n", "1.1\n", "1.0\n"}) {
    auto pkg = open(withEntry(good, "version", v));
    ASSERT_FALSE(bool(pkg));
    std::string want = std::string("is a version ") + std::string(v, 3) +
                       " package; this gc reads version 2.0 to 2.2";
    EXPECT_NE(pkg.error().message().find(want), std::string::npos) << pkg.error().message();
  }
  auto garbled = open(withEntry(good, "version", "one"));
  ASSERT_FALSE(bool(garbled));
  EXPECT_NE(garbled.error().message().find("not a version"), std::string::npos);
}

TEST_F(PackageTest, ComputedWeightWithoutConstantProgramIsRefused) {
  // A weight of a Program source is computed by graph @constant_program,
  // which this module lacks: the plan marks it computed and names no
  // program, and the reader refuses it, naming the weight.
  m_.weightSources().push_back({WeightSource::Kind::Program, ""});
  m_.weights()[0].source = 1;
  std::string bytes = build();
  ASSERT_FALSE(bytes.empty());
  Expected<std::unique_ptr<LoadedPackage>> pkg = open(bytes);
  ASSERT_FALSE(bool(pkg));
  EXPECT_NE(pkg.error().message().find(
                "weight 'w' is computed, but the plan has no constant program"),
            std::string::npos)
      << pkg.error().message();
}

TEST_F(PackageTest, WrongInputsAreErrors) {
  auto pkg = open(build());
  ASSERT_TRUE(bool(pkg));
  auto exec = PackageExecutor::create(pkg.take(), 0, RuntimeOptions{1});
  ASSERT_TRUE(bool(exec));
  std::vector<float> x(100);
  std::vector<TensorRef> none;
  auto count = (*exec)->outputSizes(none);
  ASSERT_FALSE(bool(count));
  EXPECT_NE(count.error().message().find("takes 1 user input, but 0 were given"),
            std::string::npos)
      << count.error().message();
  // s0 is at most 64.
  std::vector<TensorRef> big = {TensorRef{x.data(), DType::Float32, {100}, {1}}};
  EXPECT_FALSE(bool((*exec)->outputSizes(big)));
  std::vector<TensorRef> rank2 = {TensorRef{x.data(), DType::Float32, {2, 3}, {3, 1}}};
  EXPECT_FALSE(bool((*exec)->outputSizes(rank2)));
  std::vector<TensorRef> dtype = {TensorRef{x.data(), DType::Int32, {4}, {1}}};
  EXPECT_FALSE(bool((*exec)->outputSizes(dtype)));
}

/// Through the C API: load from memory, describe, run with outputs the
/// runtime allocates and with the caller's, from two contexts at once.
TEST_F(PackageTest, CApi) {
  std::string bytes = build();
  gcrt_package *pkg = nullptr;
  ASSERT_EQ(gcrt_package_load_memory(bytes.data(), bytes.size(), "m.gcpkg", &pkg), GCRT_OK)
      << gcrt_last_error();
  ASSERT_EQ(gcrt_graph_count(pkg), 1u);
  EXPECT_STREQ(gcrt_graph_name(pkg, 0), "forward");
  ASSERT_EQ(gcrt_input_count(pkg, 0), 1u);
  ASSERT_EQ(gcrt_output_count(pkg, 0), 2u);
  gcrt_tensor_info info;
  ASSERT_EQ(gcrt_input_info(pkg, 0, 0, &info), GCRT_OK);
  EXPECT_STREQ(info.name, "x");
  EXPECT_EQ(info.dtype, GCRT_FLOAT32);
  ASSERT_EQ(info.rank, 1u);
  EXPECT_EQ(info.sizes[0], -1);
  EXPECT_EQ(info.min_sizes[0], 1);
  EXPECT_EQ(info.max_sizes[0], 64);
  EXPECT_EQ(gcrt_input_info(pkg, 0, 1, &info), GCRT_ERROR_INVALID_ARGUMENT);
  // A hand-made graph records no call structure: every path is "".
  const char *path = nullptr;
  ASSERT_EQ(gcrt_input_path(pkg, 0, 0, &path), GCRT_OK);
  EXPECT_STREQ(path, "");
  ASSERT_EQ(gcrt_output_path(pkg, 0, 1, &path), GCRT_OK);
  EXPECT_STREQ(path, "");
  EXPECT_EQ(gcrt_input_path(pkg, 0, 1, &path), GCRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(gcrt_output_path(pkg, 0, 2, &path), GCRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(gcrt_output_path(pkg, 0, 0, nullptr), GCRT_ERROR_INVALID_ARGUMENT);

  auto work = [&](int n, float *firstY) {
    gcrt_context *ctx = nullptr;
    ASSERT_EQ(gcrt_context_create(pkg, 0, 1, &ctx), GCRT_OK) << gcrt_last_error();
    for (int round = 0; round < 50; ++round) {
      std::vector<float> x(n, float(n));
      int64_t size = n;
      gcrt_tensor in{x.data(), GCRT_FLOAT32, 1, &size, nullptr};
      std::vector<float> z(n);
      gcrt_tensor out[2] = {{nullptr, GCRT_FLOAT32, 0, nullptr, nullptr},
                            {z.data(), GCRT_FLOAT32, 1, &size, nullptr}};
      ASSERT_EQ(gcrt_run(ctx, &in, 1, out, 2), GCRT_OK) << gcrt_last_error();
      ASSERT_EQ(out[0].rank, 1u);
      ASSERT_EQ(out[0].sizes[0], n);
      *firstY = static_cast<float *>(out[0].data)[0];
      EXPECT_EQ(z[n - 1], float(n * n));
    }
    gcrt_context_free(ctx);
  };
  float y5 = 0, y7 = 0;
  std::thread a(work, 5, &y5), b(work, 7, &y7);
  a.join();
  b.join();
  EXPECT_EQ(y5, 15.0f);
  EXPECT_EQ(y7, 17.0f);

  // The context keeps the memory it gave an output for the next run, but
  // not when that output comes back as an input: y = x + w fed to itself.
  {
    gcrt_context *loop = nullptr;
    ASSERT_EQ(gcrt_context_create(pkg, 0, 1, &loop), GCRT_OK);
    float x0[4] = {1, 2, 3, 4};
    int64_t four = 4;
    gcrt_tensor in{x0, GCRT_FLOAT32, 1, &four, nullptr};
    gcrt_tensor out[2] = {};
    ASSERT_EQ(gcrt_run(loop, &in, 1, out, 2), GCRT_OK) << gcrt_last_error();
    void *first = out[0].data;
    gcrt_tensor again[2] = {};
    ASSERT_EQ(gcrt_run(loop, &in, 1, again, 2), GCRT_OK) << gcrt_last_error();
    EXPECT_EQ(again[0].data, first);
    in.data = again[0].data;
    gcrt_tensor fed[2] = {};
    ASSERT_EQ(gcrt_run(loop, &in, 1, fed, 2), GCRT_OK) << gcrt_last_error();
    EXPECT_NE(fed[0].data, first);
    for (int i = 0; i < 4; ++i)
      EXPECT_EQ(static_cast<float *>(fed[0].data)[i], x0[i] + 20.0f * (i + 1));
    gcrt_context_free(loop);
  }

  gcrt_context *ctx = nullptr;
  ASSERT_EQ(gcrt_context_create(pkg, 0, 1, &ctx), GCRT_OK);
  float x[3] = {1, 2, 3};
  int64_t wrong[2] = {3, 1};
  gcrt_tensor in{x, GCRT_FLOAT32, 2, wrong, nullptr};
  gcrt_tensor out[2] = {};
  EXPECT_EQ(gcrt_run(ctx, &in, 1, out, 2), GCRT_ERROR_INPUT);
  EXPECT_NE(std::string(gcrt_last_error()), "");
  EXPECT_EQ(gcrt_run(ctx, &in, 0, out, 2), GCRT_ERROR_INPUT);
  EXPECT_NE(std::string(gcrt_last_error()).find("takes 1 user input, but 0"), std::string::npos);
  int64_t three = 3;
  in = gcrt_tensor{x, GCRT_FLOAT32, 1, &three, nullptr};
  EXPECT_EQ(gcrt_run(ctx, &in, 1, out, 1), GCRT_ERROR_INPUT);
  int64_t sizes[4];
  size_t rank = 0;
  ASSERT_EQ(gcrt_output_sizes(ctx, &in, 1, 1, sizes, 4, &rank), GCRT_OK);
  EXPECT_EQ(rank, 1u);
  EXPECT_EQ(sizes[0], 3);
  gcrt_context_free(ctx);
  gcrt_package_free(pkg);

  std::string truncated = bytes.substr(0, bytes.size() / 2);
  EXPECT_EQ(gcrt_package_load_memory(truncated.data(), truncated.size(), "t.gcpkg", &pkg),
            GCRT_ERROR_PACKAGE);
  EXPECT_NE(std::string(gcrt_last_error()).find("t.gcpkg"), std::string::npos);
}

/// A user input the graph writes (z, x * s0, stands for x's new value) is
/// copied back into the caller's memory after each run; if it shares memory
/// with another user input (w, made one here), the run is refused.
TEST_F(PackageTest, MutatedUserInputIsCopiedBackAndAliasesRefused) {
  LoopGraph &g = *m_.loopGraphs()[0];
  g.inputSpecs[1] = InputSpec{InputKind::UserInput, "w"};
  g.outputSpecs[1] = OutputSpec{OutputKind::UserInputMutation, "x", ""};
  gcrt_package *pkg = loadBuilt();
  ASSERT_NE(pkg, nullptr);
  gcrt_context *ctx = nullptr;
  ASSERT_EQ(gcrt_context_create(pkg, 0, 1, &ctx), GCRT_OK) << gcrt_last_error();
  float mem[8] = {1, 2, 3, 4, 10, 20, 30, 40};
  int64_t four = 4;
  gcrt_tensor in[2] = {{mem, GCRT_FLOAT32, 1, &four, nullptr},
                       {mem + 4, GCRT_FLOAT32, 1, &four, nullptr}};
  for (float scale : {4.0f, 16.0f}) {
    gcrt_tensor out[2] = {};
    ASSERT_EQ(gcrt_run(ctx, in, 2, out, 2), GCRT_OK) << gcrt_last_error();
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(mem[i], (i + 1) * scale);
      EXPECT_EQ(mem[i + 4], 10 * (i + 1)); // w is read, not written
    }
  }
  gcrt_tensor out[2] = {};
  in[1].data = mem + 2;
  EXPECT_EQ(gcrt_run(ctx, in, 2, out, 2), GCRT_ERROR_INPUT);
  EXPECT_NE(std::string(gcrt_last_error()).find("user inputs 'x' and 'w' share memory"),
            std::string::npos)
      << gcrt_last_error();
  EXPECT_EQ(mem[0], 16); // refused before anything ran

  // This graph has no state; the buffer calls say so.
  gcrt_tensor t{mem, GCRT_FLOAT32, 1, &four, nullptr};
  EXPECT_EQ(gcrt_context_read_buffer(ctx, "w", &t), GCRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gcrt_last_error()).find("mutates no buffer 'w' (it mutates none)"),
            std::string::npos)
      << gcrt_last_error();
  EXPECT_EQ(gcrt_context_write_buffer(ctx, "w", &t), GCRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(gcrt_context_read_buffer(nullptr, "w", &t), GCRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(gcrt_context_reset_buffers(ctx), GCRT_OK);
  EXPECT_EQ(gcrt_context_reset_buffers(nullptr), GCRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(gcrt_context_give_buffers(nullptr, 0), GCRT_ERROR_INVALID_ARGUMENT);
  // Without buffers to keep, turning their return off changes nothing.
  ASSERT_EQ(gcrt_context_give_buffers(ctx, 0), GCRT_OK);
  gcrt_tensor kept[2] = {};
  in[1].data = mem + 4;
  ASSERT_EQ(gcrt_run(ctx, in, 2, kept, 2), GCRT_OK) << gcrt_last_error();
  EXPECT_NE(kept[0].data, nullptr);
  gcrt_context_free(ctx);
  gcrt_package_free(pkg);
}

/// A mutated buffer is a plain input of the plan, not a Weight. Its new
/// value must have the buffer's type, since the runtime copies it over the
/// old one: y (f32[s0]) as the new w (f32[4]) is refused when the context
/// is made, naming both.
TEST_F(PackageTest, BufferMutationOfAnotherTypeIsRefused) {
  LoopGraph &g = *m_.loopGraphs()[0];
  g.inputSpecs[1] = InputSpec{InputKind::Buffer, "w"};
  g.outputSpecs[0] = OutputSpec{OutputKind::BufferMutation, "w", ""};
  Expected<std::unique_ptr<LoadedPackage>> pkg = open(build());
  ASSERT_TRUE(bool(pkg)) << pkg.error().message();
  // A buffer that changes between runs is no Weight, whose derived data
  // oneDNN would keep.
  EXPECT_EQ((*pkg)->plan().graphs()->Get(0)->buffers()->Get(1)->kind(), plan::BufferKind::Input);
  Expected<std::unique_ptr<PackageExecutor>> exec =
      PackageExecutor::create(std::shared_ptr<const LoadedPackage>(pkg.take()), 0, {});
  ASSERT_FALSE(bool(exec));
  EXPECT_NE(exec.error().message().find("output 'y' gives buffer 'w' a new value of type f32[s0], "
                                        "but the buffer is f32[4]"),
            std::string::npos)
      << exec.error().message();
}

/// The runtime recognizes state by role names it cannot take from the IR
/// library (libgcrt does not link it); they must be the IR's.
TEST(PlanRoles, AreTheIRNames) {
  EXPECT_EQ(kBufferRole, inputKindName(InputKind::Buffer));
  EXPECT_EQ(kBufferMutationRole, outputKindName(OutputKind::BufferMutation));
  EXPECT_EQ(kUserInputMutationRole, outputKindName(OutputKind::UserInputMutation));
}

TEST(CApi, DTypes) {
  EXPECT_EQ(gcrt_dtype_size(GCRT_BOOL), 1u);
  EXPECT_EQ(gcrt_dtype_size(GCRT_BFLOAT16), 2u);
  EXPECT_EQ(gcrt_dtype_size(GCRT_FLOAT64), 8u);
  EXPECT_STREQ(gcrt_dtype_name(GCRT_FLOAT32), "f32");
  EXPECT_STREQ(gcrt_dtype_name(GCRT_INT64), "i64");
  EXPECT_EQ(gcrt_dtype_size(static_cast<gcrt_dtype>(10)), 0u);
  EXPECT_STREQ(gcrt_dtype_name(static_cast<gcrt_dtype>(10)), "?");
}

TEST_F(PackageTest, CApiProfile) {
  gcrt_package *pkg = loadBuilt();
  ASSERT_NE(pkg, nullptr);
  gcrt_context *ctx = nullptr;
  EXPECT_EQ(gcrt_context_create_with_flags(pkg, 0, 1, 1u << 7, &ctx), GCRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gcrt_last_error()).find("unknown flags 128"), std::string::npos);
  // The GPU's flags are accepted by a CPU graph, which ignores them.
  ASSERT_EQ(gcrt_context_create_with_flags(
                pkg, 0, 1,
                GCRT_CONTEXT_NO_CUDA_GRAPHS | GCRT_CONTEXT_ALLOW_TF32 | GCRT_CONTEXT_NO_EARLY_LAUNCH,
                &ctx),
            GCRT_OK)
      << gcrt_last_error();
  gcrt_context_free(ctx);
  ctx = nullptr;

  // Without the flag there is nothing to report.
  size_t count = 99;
  ASSERT_EQ(gcrt_context_create(pkg, 0, 1, &ctx), GCRT_OK) << gcrt_last_error();
  ASSERT_EQ(gcrt_context_profile(ctx, nullptr, 0, &count), GCRT_OK);
  EXPECT_EQ(count, 0u);
  gcrt_context_free(ctx);

  // With it, the one kernel step is named and counted once per run after
  // its first (gcrt.h: the first holds one-time set-up).
  ASSERT_EQ(gcrt_context_create_with_flags(pkg, 0, 1, GCRT_CONTEXT_PROFILE, &ctx), GCRT_OK);
  float x[4] = {1, 2, 3, 4};
  int64_t size = 4;
  gcrt_tensor in{x, GCRT_FLOAT32, 1, &size, nullptr};
  for (int run = 0; run < 3; ++run) {
    gcrt_tensor out[2] = {};
    ASSERT_EQ(gcrt_run(ctx, &in, 1, out, 2), GCRT_OK) << gcrt_last_error();
  }
  ASSERT_EQ(gcrt_context_profile(ctx, nullptr, 0, &count), GCRT_OK);
  ASSERT_EQ(count, 1u);
  gcrt_step_profile step;
  ASSERT_EQ(gcrt_context_profile(ctx, &step, 1, &count), GCRT_OK);
  EXPECT_STREQ(step.kind, "kernel");
  EXPECT_STREQ(step.name, "gc_test_kernel");
  EXPECT_EQ(step.runs, 2);
  EXPECT_GE(step.total_us, step.min_us);
  EXPECT_EQ(gcrt_context_profile(ctx, nullptr, 1, &count), GCRT_ERROR_INVALID_ARGUMENT);
  // The roofline (API version 7) against given peaks names each step.
  EXPECT_EQ(gcrt_context_set_peaks(ctx, "100"), GCRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gcrt_last_error()).find("'100' is not GFLOPS,GBPS"), std::string::npos);
  ASSERT_EQ(gcrt_context_set_peaks(ctx, "100,10"), GCRT_OK);
  const char *roofline = nullptr;
  ASSERT_EQ(gcrt_context_roofline(ctx, &roofline), GCRT_OK) << gcrt_last_error();
  std::string text = roofline;
  EXPECT_EQ(text.find("peaks: 100.0 GFLOP/s, 10.0 GB/s, ridge 10.00 FLOP/byte"), 0u) << text;
  EXPECT_NE(text.find("\n    0 gc_test_kernel "), std::string::npos) << text;
  EXPECT_NE(text.find("\nroofline total: "), std::string::npos) << text;
  EXPECT_EQ(gcrt_context_roofline(ctx, nullptr), GCRT_ERROR_INVALID_ARGUMENT);
  gcrt_context_free(ctx);
  gcrt_package_free(pkg);
}

/// The generator state of a context (API version 4): seed 0 and offset 0
/// at creation, set_seed resets the offset, and a graph that draws no
/// random numbers leaves the offset where it was. (Packages that draw are
/// checked through gc-run and gcrt-run: test/Models/random-*.test.)
TEST_F(PackageTest, CApiGeneratorState) {
  gcrt_package *pkg = loadBuilt();
  ASSERT_NE(pkg, nullptr);
  gcrt_context *ctx = nullptr;
  ASSERT_EQ(gcrt_context_create(pkg, 0, 1, &ctx), GCRT_OK) << gcrt_last_error();
  uint64_t seed = 99, offset = 99;
  ASSERT_EQ(gcrt_context_get_seed(ctx, &seed), GCRT_OK);
  ASSERT_EQ(gcrt_context_get_offset(ctx, &offset), GCRT_OK);
  EXPECT_EQ(seed, 0u);
  EXPECT_EQ(offset, 0u);

  ASSERT_EQ(gcrt_context_set_offset(ctx, 1000), GCRT_OK);
  ASSERT_EQ(gcrt_context_set_seed(ctx, UINT64_MAX), GCRT_OK);
  ASSERT_EQ(gcrt_context_get_seed(ctx, &seed), GCRT_OK);
  ASSERT_EQ(gcrt_context_get_offset(ctx, &offset), GCRT_OK);
  EXPECT_EQ(seed, UINT64_MAX);
  EXPECT_EQ(offset, 0u);

  ASSERT_EQ(gcrt_context_set_offset(ctx, 1000), GCRT_OK);
  float x[4] = {1, 2, 3, 4};
  int64_t size = 4;
  gcrt_tensor in{x, GCRT_FLOAT32, 1, &size, nullptr};
  gcrt_tensor out[2] = {};
  ASSERT_EQ(gcrt_run(ctx, &in, 1, out, 2), GCRT_OK) << gcrt_last_error();
  ASSERT_EQ(gcrt_context_get_offset(ctx, &offset), GCRT_OK);
  EXPECT_EQ(offset, 1000u);

  EXPECT_EQ(gcrt_context_set_seed(nullptr, 1), GCRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gcrt_last_error()).find("gcrt_context_set_seed: null context"),
            std::string::npos);
  EXPECT_EQ(gcrt_context_get_seed(ctx, nullptr), GCRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(gcrt_context_get_offset(nullptr, &offset), GCRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(gcrt_context_set_offset(nullptr, 0), GCRT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gcrt_last_error()).find("gcrt_context_set_offset"), std::string::npos);
  gcrt_context_free(ctx);
  gcrt_package_free(pkg);
}

} // namespace

namespace {

/// A .pt2-like archive whose one entry holds w's four floats.
std::string archiveWith(const std::vector<float> &w) {
  ZipBuffer zip(64);
  zip.add("other", "padding before the weight");
  zip.add("data/w", std::string_view(reinterpret_cast<const char *>(w.data()),
                                     w.size() * sizeof(float)));
  return zip.finish();
}

std::vector<float> runOnce(PackageExecutor &exec) {
  std::vector<float> x = {1, 2, 3, 4}, y(4), z(4);
  std::vector<TensorRef> in = {TensorRef{x.data(), DType::Float32, {4}, {1}}};
  std::vector<TensorRef> out = {TensorRef{y.data(), DType::Float32, {4}, {1}},
                                TensorRef{z.data(), DType::Float32, {4}, {1}}};
  Error e = exec.run(in, out);
  EXPECT_FALSE(bool(e)) << e.message();
  return y;
}

} // namespace

TEST_F(PackageTest, ExternalWeightsAreMappedCheckedAndSwapped) {
  std::string archive = archiveWith({10, 20, 30, 40});
  std::ofstream(dir_ / "a.pt2", std::ios::binary) << archive;
  std::ofstream(dir_ / "b.pt2", std::ios::binary) << archiveWith({1, 2, 3, 4});
  Expected<ZipArchive> zip = ZipArchive::open(MappedFile::fromBuffer("a", archive));
  ASSERT_TRUE(bool(zip));
  m_.weightSources()[0] = {WeightSource::Kind::Archive, (dir_ / "a.pt2").string()};
  m_.weights()[0].offset = zip->find("data/w")->dataOffset;

  Target target;
  target.weights = WeightsMode::External;
  m_.setTarget(target);
  PackageOptions options;
  options.outputDir = dir_.string();
  std::string bytes = build(options);
  ASSERT_FALSE(bytes.empty());
  EXPECT_EQ(bytes, build(options));
  std::ofstream(dir_ / "m.gcpkg", std::ios::binary) << bytes;

  Expected<std::unique_ptr<LoadedPackage>> pkg = openPackage((dir_ / "m.gcpkg").string());
  ASSERT_TRUE(bool(pkg)) << pkg.error().message();
  std::shared_ptr<const LoadedPackage> shared = pkg.take();
  ASSERT_EQ(shared->externalWeights().size(), 1u);
  EXPECT_EQ(shared->externalWeights()[0].entry, "data/w");
  // Checked once: the package's weights entry, then the archive's.
  const std::vector<VerifiedEntry> &verified = shared->weights()->verified();
  ASSERT_EQ(verified.size(), 2u);
  EXPECT_EQ(verified[0].entry, "weights");
  EXPECT_EQ(verified[1].entry, "data/w");
  char crc[24];
  std::snprintf(crc, sizeof crc, "CRC-32 %08x", zip->find("data/w")->crc32);
  EXPECT_EQ(verified[1].check, crc);
  auto first = PackageExecutor::create(shared, 0, RuntimeOptions{1});
  ASSERT_TRUE(bool(first)) << first.error().message();
  EXPECT_EQ(runOnce(**first), (std::vector<float>{11, 22, 33, 44}));

  // Another archive: contexts made afterwards see it, the first one not.
  auto swapped = bindWeightsFile(*shared, (dir_ / "b.pt2").string());
  ASSERT_TRUE(bool(swapped)) << swapped.error().message();
  auto second = PackageExecutor::create(shared, 0, RuntimeOptions{1}, *swapped);
  ASSERT_TRUE(bool(second)) << second.error().message();
  EXPECT_EQ(runOnce(**second), (std::vector<float>{2, 4, 6, 8}));
  EXPECT_EQ(runOnce(**first), (std::vector<float>{11, 22, 33, 44}));

  // One weight, copied in; the wrong shape is an error naming it.
  std::vector<float> w = {0, 0, 0, 100};
  auto one = bindWeight(*shared, **swapped, "w", TensorRef{w.data(), DType::Float32, {4}, {}});
  ASSERT_TRUE(bool(one)) << one.error().message();
  w[3] = -1;
  auto third = PackageExecutor::create(shared, 0, RuntimeOptions{1}, *one);
  ASSERT_TRUE(bool(third));
  EXPECT_EQ(runOnce(**third), (std::vector<float>{1, 2, 3, 104}));
  auto bad = bindWeight(*shared, **one, "w", TensorRef{w.data(), DType::Float32, {2, 2}, {}});
  ASSERT_FALSE(bool(bad));
  EXPECT_NE(bad.error().message().find("weight 'w' must be f32[4], got f32[2, 2]"),
            std::string::npos)
      << bad.error().message();

  // A changed archive: the package, the archive and the weight are named.
  std::ofstream(dir_ / "a.pt2", std::ios::binary) << archiveWith({10, 20, 30, 41});
  Expected<std::unique_ptr<LoadedPackage>> stale = openPackage((dir_ / "m.gcpkg").string());
  ASSERT_FALSE(bool(stale));
  EXPECT_NE(stale.error().message().find(
                "weight 'w': entry 'data/w' of the archive '" + (dir_ / "a.pt2").string() +
                "' does not match the CRC-32 the package recorded"),
            std::string::npos)
      << stale.error().message();
  EXPECT_NE(stale.error().message().find("m.gcpkg"), std::string::npos);
  // Unchecked, it loads (and would run with the changed weight).
  OpenOptions unchecked;
  unchecked.verifyWeights = false;
  Expected<std::unique_ptr<LoadedPackage>> trusted =
      openPackage((dir_ / "m.gcpkg").string(), unchecked);
  ASSERT_TRUE(bool(trusted)) << trusted.error().message();
  EXPECT_TRUE((*trusted)->weights()->verified().empty());
  // A package from before entry CRCs were recorded: each weight's SHA-256.
  {
    Expected<ZipArchive> pkgZip = ZipArchive::open(MappedFile::fromBuffer("m", bytes));
    ASSERT_TRUE(bool(pkgZip));
    Expected<std::string> json = decompressZstd(
        *pkgZip->read(*pkgZip->find("external_weights.json.zst")), 1 << 20, "external");
    ASSERT_TRUE(bool(json));
    size_t at = json->find(",\n      \"entry_crc32\"");
    ASSERT_NE(at, std::string::npos) << *json;
    json->erase(at, json->find('\n', at + 2) - at);
    std::ofstream(dir_ / "old.gcpkg", std::ios::binary)
        << withEntry(bytes, "external_weights.json.zst", compressZstd(*json));
    Expected<std::unique_ptr<LoadedPackage>> old = openPackage((dir_ / "old.gcpkg").string());
    ASSERT_FALSE(bool(old));
    EXPECT_NE(old.error().message().find("weight 'w': its bytes in '"), std::string::npos)
        << old.error().message();
    std::ofstream(dir_ / "a.pt2", std::ios::binary) << archive;
    old = openPackage((dir_ / "old.gcpkg").string());
    ASSERT_TRUE(bool(old)) << old.error().message();
    EXPECT_EQ((*old)->weights()->verified().back().check, "SHA-256 of weight 'w'");
  }
  std::filesystem::remove(dir_ / "a.pt2");
  Expected<std::unique_ptr<LoadedPackage>> missing = openPackage((dir_ / "m.gcpkg").string());
  ASSERT_FALSE(bool(missing));
  EXPECT_NE(missing.error().message().find("a.pt2"), std::string::npos)
      << missing.error().message();

  // Through the C API: the same rules, as statuses.
  gcrt_package *c = nullptr;
  ASSERT_EQ(gcrt_package_load_file_with_weights((dir_ / "m.gcpkg").c_str(),
                                                (dir_ / "b.pt2").c_str(), &c),
            GCRT_OK)
      << gcrt_last_error();
  int64_t five = 5;
  float data[5] = {};
  gcrt_tensor t{data, GCRT_FLOAT32, 1, &five, nullptr};
  EXPECT_EQ(gcrt_package_set_weight(c, "w", &t), GCRT_ERROR_INPUT);
  EXPECT_EQ(gcrt_package_set_weight(c, "nope", &t), GCRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(gcrt_package_set_weights_file(c, (dir_ / "a.pt2").c_str()), GCRT_ERROR_PACKAGE);
  EXPECT_NE(std::string(gcrt_last_error()).find("a.pt2"), std::string::npos);
  EXPECT_EQ(gcrt_package_set_weights_file(c, (dir_ / "b.pt2").c_str()), GCRT_OK);
  ASSERT_EQ(gcrt_package_verified_count(c), 2u);
  gcrt_verified_entry v;
  ASSERT_EQ(gcrt_package_verified(c, 1, &v), GCRT_OK);
  EXPECT_EQ(std::string(v.file), (dir_ / "b.pt2").string());
  EXPECT_EQ(std::string(v.entry), "data/w");
  EXPECT_EQ(v.bytes, 16u);
  EXPECT_EQ(gcrt_package_verified(c, 2, &v), GCRT_ERROR_INVALID_ARGUMENT);
  // Another archive, damaged: checked against its own CRC-32.
  std::string damaged = archiveWith({1, 2, 3, 4});
  damaged[zip->find("data/w")->dataOffset] ^= 1;
  std::ofstream(dir_ / "b.pt2", std::ios::binary) << damaged;
  EXPECT_EQ(gcrt_package_set_weights_file(c, (dir_ / "b.pt2").c_str()), GCRT_ERROR_PACKAGE);
  EXPECT_NE(std::string(gcrt_last_error()).find("entry 'data/w' of the archive '" +
                                                (dir_ / "b.pt2").string() +
                                                "' fails its CRC-32 check"),
            std::string::npos)
      << gcrt_last_error();
  gcrt_package_free(c);
  EXPECT_EQ(gcrt_package_load_file_with_flags((dir_ / "m.gcpkg").c_str(), nullptr, 2, &c),
            GCRT_ERROR_INVALID_ARGUMENT);
}

/// The module of PackageTest compiled for CUDA: its kernel is the
/// hand-written PTX kernel gc_test_kernel (test/Unit/Runtime/Inputs), one
/// thread a point.
class CudaPackageTest : public PackageTest {
protected:
  void SetUp() override {
    PackageTest::SetUp();
    fatbin_ = test::gpuTestKernels();
    if (fatbin_.empty())
      GTEST_SKIP() << "the build found no ptxas and fatbinary for the test kernels";
    Plan &plan = m_.loopGraphs()[0]->plan;
    plan.target = "cuda:sm_80,sm_90";
    plan.kernels[0].mapping = GpuMapping::ThreadPerPoint;
    plan.kernels[0].blockThreads = 32;
    plan.objectCode = fatbin_;
    plan.objectHash = sha256Hex(fatbin_);
  }
  std::string fatbin_;
};

TEST_F(CudaPackageTest, CarriesTheFatbinary) {
  std::string bytes = build();
  Expected<ZipArchive> zip = ZipArchive::open(MappedFile::fromBuffer("p", bytes));
  ASSERT_TRUE(bool(zip));
  EXPECT_NE(zip->find("kernels/0.fatbin.zst"), nullptr);
  // It opens anywhere: the driver only loads the code for an executor.
  Expected<std::unique_ptr<LoadedPackage>> pkg = open(bytes);
  ASSERT_TRUE(bool(pkg)) << pkg.error().message();
  EXPECT_EQ((*pkg)->kernels(0).gpuImage(), fatbin_);
  EXPECT_EQ((*pkg)->plan().graphs()->Get(0)->kernel_library()->str(), "kernels/0.fatbin.zst");
}

TEST_F(CudaPackageTest, WithoutGpuContextsFailNamingTheGraph) {
  Expected<std::vector<CudaDevice>> devices = cudaDevices();
  if (devices)
    GTEST_SKIP() << "this machine has a GPU";
  std::string why = devices.error().message();
  Expected<std::unique_ptr<LoadedPackage>> pkg = open(build());
  ASSERT_TRUE(bool(pkg)) << pkg.error().message();
  auto exec = PackageExecutor::create(pkg.take(), 0, RuntimeOptions{});
  ASSERT_FALSE(bool(exec));
  EXPECT_EQ(exec.error().message(),
            "graph @forward: needs an NVIDIA GPU (cuda:sm_80,sm_90): " + why);

  gcrt_package *c = loadBuilt();
  ASSERT_NE(c, nullptr);
  const char *device = nullptr;
  EXPECT_EQ(gcrt_package_device(c, &device), GCRT_ERROR_RUNTIME);
  EXPECT_EQ(std::string(gcrt_last_error()), "'m.gcpkg' runs on an NVIDIA GPU: " + why);
  size_t count = 7;
  EXPECT_EQ(gcrt_cuda_device_count(&count), GCRT_ERROR_RUNTIME);
  EXPECT_EQ(count, 0u);
  EXPECT_EQ(std::string(gcrt_last_error()), why);
  gcrt_context *ctx = nullptr;
  EXPECT_EQ(gcrt_context_create(c, 0, 1, &ctx), GCRT_ERROR_PACKAGE);
  EXPECT_EQ(std::string(gcrt_last_error()),
            "graph @forward: needs an NVIDIA GPU (cuda:sm_80,sm_90): " + why);
  gcrt_package_free(c);
}

TEST_F(PackageTest, CpuPackagesRunOnTheCpu) {
  gcrt_package *c = loadBuilt();
  ASSERT_NE(c, nullptr);
  const char *device = nullptr;
  ASSERT_EQ(gcrt_package_device(c, &device), GCRT_OK) << gcrt_last_error();
  EXPECT_STREQ(device, "cpu");
  gcrt_context *ctx = nullptr;
  ASSERT_EQ(gcrt_context_create(c, 0, 1, &ctx), GCRT_OK) << gcrt_last_error();
  float x[3] = {1, 2, 3}, y[3], z[3];
  int64_t three = 3;
  gcrt_tensor in{x, GCRT_FLOAT32, 1, &three, nullptr};
  gcrt_tensor out[2] = {{y, GCRT_FLOAT32, 1, &three, nullptr},
                        {z, GCRT_FLOAT32, 1, &three, nullptr}};
  EXPECT_EQ(gcrt_run_device(ctx, &in, 1, out, 2), GCRT_ERROR_INPUT);
  EXPECT_STREQ(gcrt_last_error(),
               "graph @forward runs on the CPU: gcrt_run_device takes GPU memory for CUDA "
               "packages only");
  EXPECT_EQ(gcrt_run_device_async(ctx, &in, 1, out, 2, nullptr), GCRT_ERROR_INPUT);
  EXPECT_STREQ(gcrt_last_error(),
               "graph @forward runs on the CPU: gcrt_run_device_async takes GPU memory for CUDA "
               "packages only");
  // The outputs' own layout: row-major here.
  int64_t strides[2] = {-7, -7};
  size_t rank = 0;
  ASSERT_EQ(gcrt_output_strides(ctx, &in, 1, 1, strides, 2, &rank), GCRT_OK) << gcrt_last_error();
  EXPECT_EQ(rank, 1u);
  EXPECT_EQ(strides[0], 1);
  EXPECT_EQ(gcrt_output_strides(ctx, &in, 1, 2, strides, 2, &rank), GCRT_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(gcrt_last_error(), "no output 2");
  EXPECT_EQ(gcrt_output_strides(ctx, &in, 1, 0, strides, 0, &rank), GCRT_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(gcrt_last_error(), "output 0 has rank 1, room for 0");
  EXPECT_EQ(gcrt_output_strides(ctx, &in, 1, 0, strides, 2, nullptr),
            GCRT_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(gcrt_last_error(), "gcrt_output_strides: null argument");
  gcrt_context_free(ctx);
  gcrt_package_free(c);
}

TEST_F(CudaPackageTest, RunsOnTheGpu) {
  GC_REQUIRE_GPU();
  gcrt_package *c = loadBuilt();
  ASSERT_NE(c, nullptr);
  const char *device = nullptr;
  ASSERT_EQ(gcrt_package_device(c, &device), GCRT_OK) << gcrt_last_error();
  EXPECT_EQ(std::string(device).rfind("cuda:sm_", 0), 0u) << device;
  gcrt_context *ctx = nullptr;
  ASSERT_EQ(gcrt_context_create(c, 0, 1, &ctx), GCRT_OK) << gcrt_last_error();
  // Runs of several sizes on one context: the weight is uploaded once.
  for (int n : {6, 64, 1, 33}) {
    std::vector<float> x(n), z(n);
    for (int i = 0; i < n; ++i)
      x[i] = float(i + 1);
    int64_t size = n;
    gcrt_tensor in{x.data(), GCRT_FLOAT32, 1, &size, nullptr};
    gcrt_tensor out[2] = {{nullptr, GCRT_FLOAT32, 0, nullptr, nullptr},
                          {z.data(), GCRT_FLOAT32, 1, &size, nullptr}};
    ASSERT_EQ(gcrt_run(ctx, &in, 1, out, 2), GCRT_OK) << gcrt_last_error();
    const float *y = static_cast<const float *>(out[0].data);
    const float w[4] = {10, 20, 30, 40};
    for (int i = 0; i < n; ++i) {
      EXPECT_EQ(y[i], x[i] + w[i % 4]) << n << ": y[" << i << "]";
      EXPECT_EQ(z[i], x[i] * float(n)) << n << ": z[" << i << "]";
    }
  }
  gcrt_context_free(ctx);

  // Tensors already in GPU memory, through gcrt_run_device.
  {
    std::vector<float> x = {1, 2, 3, 4, 5};
    test::DeviceMemory dx{x}, dy{std::vector<float>(5)}, dz{std::vector<float>(5)};
    ASSERT_EQ(gcrt_context_create(c, 0, 1, &ctx), GCRT_OK) << gcrt_last_error();
    int64_t five = 5;
    gcrt_tensor in{dx.data(), GCRT_FLOAT32, 1, &five, nullptr};
    gcrt_tensor out[2] = {{nullptr, GCRT_FLOAT32, 1, &five, nullptr},
                          {dz.data(), GCRT_FLOAT32, 1, &five, nullptr}};
    EXPECT_EQ(gcrt_run_device(ctx, &in, 1, out, 2), GCRT_ERROR_INPUT);
    EXPECT_STREQ(gcrt_last_error(),
                 "output 0 ('y'): gcrt_run_device writes only into the caller's GPU memory (or, "
                 "for a mutated buffer, the buffer's own)");
    out[0].data = dy.data();
    ASSERT_EQ(gcrt_run_device(ctx, &in, 1, out, 2), GCRT_OK) << gcrt_last_error();
    EXPECT_EQ(dy.read(), (std::vector<float>{11, 22, 33, 44, 15}));
    EXPECT_EQ(dz.read(), (std::vector<float>{5, 10, 15, 20, 25}));
    int64_t strides[1] = {0};
    size_t rank = 0;
    ASSERT_EQ(gcrt_output_strides(ctx, &in, 1, 0, strides, 1, &rank), GCRT_OK)
        << gcrt_last_error();
    EXPECT_EQ(strides[0], 1);
    // Enqueued on the default stream, then a strided input: x[::2] of ten.
    std::vector<float> x10 = {1, 0, 2, 0, 3, 0, 4, 0, 5, 0};
    test::DeviceMemory dx10{x10}, dz2{std::vector<float>(10, -1)};
    int64_t two = 2;
    gcrt_tensor strided{dx10.data(), GCRT_FLOAT32, 1, &five, &two};
    gcrt_tensor out2[2] = {{dy.data(), GCRT_FLOAT32, 1, &five, nullptr},
                           {dz2.data(), GCRT_FLOAT32, 1, &five, &two}};
    ASSERT_EQ(gcrt_run_device_async(ctx, &strided, 1, out2, 2, nullptr), GCRT_OK)
        << gcrt_last_error();
    // DeviceMemory reads on the default stream, after the run enqueued there.
    EXPECT_EQ(dy.read(), (std::vector<float>{11, 22, 33, 44, 15}));
    EXPECT_EQ(dz2.read(), (std::vector<float>{5, -1, 10, -1, 15, -1, 20, -1, 25, -1}));
    gcrt_context_free(ctx);
  }

  // A weight set through the API reaches contexts made afterwards.
  float w2[4] = {1, 2, 3, 4};
  int64_t four = 4;
  gcrt_tensor wt{w2, GCRT_FLOAT32, 1, &four, nullptr};
  ASSERT_EQ(gcrt_package_set_weight(c, "w", &wt), GCRT_OK) << gcrt_last_error();
  ASSERT_EQ(gcrt_context_create(c, 0, 1, &ctx), GCRT_OK) << gcrt_last_error();
  std::vector<float> x = {0, 0, 0, 0, 0}, y(5), z(5);
  int64_t five = 5;
  gcrt_tensor in{x.data(), GCRT_FLOAT32, 1, &five, nullptr};
  gcrt_tensor out[2] = {{y.data(), GCRT_FLOAT32, 1, &five, nullptr},
                        {z.data(), GCRT_FLOAT32, 1, &five, nullptr}};
  ASSERT_EQ(gcrt_run(ctx, &in, 1, out, 2), GCRT_OK) << gcrt_last_error();
  EXPECT_EQ(y, (std::vector<float>{1, 2, 3, 4, 1}));
  gcrt_context_free(ctx);
  gcrt_package_free(c);
}
