//===- gcrt-concurrency.cpp - One package run from many threads at once ---===//
//
// Runs one package's forward graph from several threads at the same time, in
// three ways, and checks every output of every run against a run made
// before on one thread, bit for bit:
//   contexts   one package, one context per thread, many runs each
//   fresh      one package, a new context for every run (create and free race)
//   packages   each thread loads the package itself (concurrent dlopen)
// The inputs are made up from the graph's signature, so any package will do.
// It uses gcrt.h alone, so that the ThreadSanitizer build needs no more than
// libgcrt (docs/package.md, "Threads").
//
//   gcrt-concurrency MODEL.gcpkg [--threads N] [--runs R] [--context-threads T]
//
//===----------------------------------------------------------------------===//
#include "gcrt/gcrt.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace gc {
namespace {

struct Options {
  const char *package = nullptr;
  unsigned threads = 4, runs = 20, contextThreads = 1;
};

/// A tensor with its own memory.
struct Buffer {
  gcrt_dtype dtype = GCRT_FLOAT32;
  std::vector<int64_t> sizes;
  std::vector<char> bytes;
  gcrt_tensor view() { return {bytes.data(), dtype, sizes.size(), sizes.data(), nullptr}; }
};

/// Deterministic inputs of a valid shape: a symbolic size takes its
/// smallest value of at least 2, integers are small (valid indices for
/// embeddings), floats lie in [-1, 1).
Buffer makeInput(const gcrt_tensor_info &info, size_t index) {
  Buffer b;
  b.dtype = info.dtype;
  size_t n = 1;
  for (size_t d = 0; d < info.rank; ++d) {
    int64_t s = info.sizes[d];
    if (s < 0) {
      s = std::max<int64_t>(info.min_sizes[d], 2);
      if (info.max_sizes[d] >= 0)
        s = std::min(s, info.max_sizes[d]);
    }
    b.sizes.push_back(s);
    n *= static_cast<size_t>(s);
  }
  b.bytes.resize(std::max<size_t>(n * gcrt_dtype_size(info.dtype), 1));
  uint32_t state = 12345 + static_cast<uint32_t>(index);
  for (size_t i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    char *p = b.bytes.data() + i * gcrt_dtype_size(info.dtype);
    auto put = [&](auto v) { std::memcpy(p, &v, sizeof v); };
    switch (info.dtype) {
    case GCRT_FLOAT32:
      put(static_cast<float>(state >> 8) / (1 << 23) - 1.0f);
      break;
    case GCRT_FLOAT64:
      put(static_cast<double>(state >> 8) / (1 << 23) - 1.0);
      break;
    case GCRT_INT64:
      put(static_cast<int64_t>(state >> 16) % 4);
      break;
    case GCRT_INT32:
      put(static_cast<int32_t>(state >> 16) % 4);
      break;
    default: // bool, bytes, halves: a small bit pattern of one byte
      *p = static_cast<char>((state >> 16) & 1);
    }
  }
  return b;
}

int fail(const std::string &what) {
  std::fprintf(stderr, "gcrt-concurrency: error: %s\n", what.c_str());
  return 1;
}

/// A package's inputs and the outputs of one run, kept as the reference.
struct Reference {
  std::vector<Buffer> inputs;
  std::vector<gcrt_tensor> inputViews;
  std::vector<std::vector<char>> outputs;
};

/// Runs `ctx` once; returns "" and the outputs' bytes, or what went wrong.
std::string runOnce(gcrt_context *ctx, Reference &ref, size_t numOutputs,
                    std::vector<std::vector<char>> &got) {
  std::vector<gcrt_tensor> out(numOutputs);
  if (gcrt_run(ctx, ref.inputViews.data(), ref.inputViews.size(), out.data(), numOutputs) !=
      GCRT_OK)
    return gcrt_last_error();
  got.resize(numOutputs);
  for (size_t i = 0; i < numOutputs; ++i) {
    size_t n = gcrt_dtype_size(out[i].dtype);
    for (size_t d = 0; d < out[i].rank; ++d)
      n *= static_cast<size_t>(out[i].sizes[d]);
    const char *p = static_cast<const char *>(out[i].data);
    got[i].assign(p, p + n);
  }
  return "";
}

/// One way of running from many threads: `body(thread)` runs and checks
/// and returns "" or what went wrong; the first failure is reported.
int race(const char *name, const Options &o, const std::function<std::string(unsigned)> &body) {
  std::vector<std::thread> threads;
  std::vector<std::string> errors(o.threads);
  std::atomic<bool> go{false};
  for (unsigned t = 0; t < o.threads; ++t)
    threads.emplace_back([&, t] {
      while (!go.load())
        std::this_thread::yield();
      errors[t] = body(t);
    });
  go = true;
  for (std::thread &t : threads)
    t.join();
  for (unsigned t = 0; t < o.threads; ++t)
    if (!errors[t].empty())
      return fail(std::string(name) + ": thread " + std::to_string(t) + ": " + errors[t]);
  std::printf("%s: %u threads x %u runs: every output matches\n", name, o.threads, o.runs);
  return 0;
}

std::string check(const std::vector<std::vector<char>> &got, const Reference &ref, unsigned run) {
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != ref.outputs[i])
      return "run " + std::to_string(run) + ": output " + std::to_string(i) +
             " differs from the single-threaded reference";
  return "";
}

int runAll(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    unsigned *value = a == "--threads"           ? &o.threads
                      : a == "--runs"            ? &o.runs
                      : a == "--context-threads" ? &o.contextThreads
                                                 : nullptr;
    if (value && i + 1 < argc)
      *value = static_cast<unsigned>(std::strtoul(argv[++i], nullptr, 10));
    else if (!value && !o.package)
      o.package = argv[i];
    else
      return fail("usage: gcrt-concurrency MODEL.gcpkg [--threads N] [--runs R] "
                  "[--context-threads T]");
  }
  if (!o.package || !o.threads || !o.runs)
    return fail("usage: gcrt-concurrency MODEL.gcpkg [--threads N] [--runs R] "
                "[--context-threads T]");

  gcrt_package *pkg = nullptr;
  if (gcrt_package_load_file(o.package, &pkg) != GCRT_OK)
    return fail(gcrt_last_error());
  std::unique_ptr<gcrt_package, void (*)(gcrt_package *)> owner(pkg, gcrt_package_free);
  Reference ref;
  for (size_t i = 0; i < gcrt_input_count(pkg, 0); ++i) {
    gcrt_tensor_info info;
    gcrt_input_info(pkg, 0, i, &info);
    ref.inputs.push_back(makeInput(info, i));
  }
  for (Buffer &b : ref.inputs)
    ref.inputViews.push_back(b.view());
  size_t numOutputs = gcrt_output_count(pkg, 0);
  gcrt_context *ctx = nullptr;
  if (gcrt_context_create(pkg, 0, o.contextThreads, &ctx) != GCRT_OK)
    return fail(gcrt_last_error());
  std::string e = runOnce(ctx, ref, numOutputs, ref.outputs);
  gcrt_context_free(ctx);
  if (!e.empty())
    return fail("the reference run: " + e);

  int status = race("contexts", o, [&](unsigned) -> std::string {
    gcrt_context *c = nullptr;
    if (gcrt_context_create(pkg, 0, o.contextThreads, &c) != GCRT_OK)
      return gcrt_last_error();
    std::vector<std::vector<char>> got;
    std::string error;
    for (unsigned r = 0; r < o.runs && error.empty(); ++r) {
      error = runOnce(c, ref, numOutputs, got);
      if (error.empty())
        error = check(got, ref, r);
    }
    gcrt_context_free(c);
    return error;
  });
  status |= race("fresh", o, [&](unsigned) -> std::string {
    std::vector<std::vector<char>> got;
    for (unsigned r = 0; r < o.runs; ++r) {
      gcrt_context *c = nullptr;
      if (gcrt_context_create(pkg, 0, o.contextThreads, &c) != GCRT_OK)
        return gcrt_last_error();
      std::string error = runOnce(c, ref, numOutputs, got);
      gcrt_context_free(c);
      if (error.empty())
        error = check(got, ref, r);
      if (!error.empty())
        return error;
    }
    return "";
  });
  status |= race("packages", o, [&](unsigned) -> std::string {
    gcrt_package *own = nullptr;
    gcrt_context *c = nullptr;
    if (gcrt_package_load_file(o.package, &own) != GCRT_OK)
      return gcrt_last_error();
    std::string error;
    if (gcrt_context_create(own, 0, o.contextThreads, &c) != GCRT_OK)
      error = gcrt_last_error();
    std::vector<std::vector<char>> got;
    for (unsigned r = 0; r < o.runs && error.empty(); ++r) {
      error = runOnce(c, ref, numOutputs, got);
      if (error.empty())
        error = check(got, ref, r);
    }
    gcrt_context_free(c);
    gcrt_package_free(own);
    return error;
  });
  return status;
}

} // namespace
} // namespace gc

int main(int argc, char **argv) { return gc::runAll(argc, argv); }
