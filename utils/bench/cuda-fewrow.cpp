//===- cuda-fewrow.cpp - gc's few-row kernel beside cuBLASLt on a GPU -----===//
//
// Times the products of a Llama decode step (Llama-3.2-1B's and
// Llama-3.1-8B's shapes, bfloat16 and float32, 1 and 4 rows) two ways,
// each prepared through the code the CUDA executor uses: gc's few-row
// kernel (CudaFewRowKernels) and cuBLASLt (CudaLibraries). Beside them, a
// 1 GiB device-to-device copy gives the bandwidth the memory delivers.
//
//   cuda-fewrow-bench [--launches N] [--groups-only | --conv-shapes]
//
// Each product is timed alone (CUDA events around each of N launches,
// after 20 warm-up ones; the median) and inside a CUDA graph of 20
// back-to-back launches (more for small weights: one per copy), as a decode
// step replays them (the median of 50 graph launches, over the launches).
// Every launch reads another copy of the weight, the copies together at
// least 512 MB, so that no launch finds its weight in the L2 cache, as
// none does in a step whose weights are gigabytes.
// GB/s counts the weight, left rows and output once (1e9 bytes); % is of
// the copy's rate (bytes read plus written). The `rule` column is what
// planFewRowProduct picks (the kernel is timed either way), `grp` the
// kernel's thread groups a block; `diff` the largest difference between
// the two outputs over the largest output magnitude; g1 to g8 the kernel's
// graph time (us) with 1, 2, 4 and 8 groups a block, whatever the plan's.
// Then, per model, dtype and row count, the step's products summed (each
// layer's q, k, v, o, gate, up and down, and the LM head) from the graph
// times: each way alone, the rule's choice, and the kernel with the best
// groups for each product.
//
// Last, the products that share their left rows (q|k|v and gate|up of each
// model, bfloat16, one row) in a CUDA graph two ways: as the separate
// launches of each product, and as the one launch of the group
// (CudaFewRowKernels::group, as the executor runs them); the weights'
// megabytes, the blocks of each, microseconds and % of the copy's rate,
// the difference between the two outputs, and the time a decode step
// saves (per layer, times the layers). --groups-only prints only this
// table.
//
// --conv-shapes prints the first table alone, for float32 products of 8 to
// 16 rows: the 1x1 convolutions of the zoo's conv nets at 16 rows (their
// 4x4 resolution at 64x64 inputs; one copy of each weight, warm in the L2
// cache as a small model's are), and Llama's shapes at 8, 12 and 16 rows,
// where the instance of kGpuFewRowsMax rows takes over from the exact
// ones.
//
//===----------------------------------------------------------------------===//
#include "Cuda/CudaDriver.h"
#include "Cuda/CudaFewRowProduct.h"
#include "Cuda/CudaLibraries.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace gc;

namespace {

const cuda::Driver *d = nullptr;

[[noreturn]] void fail(const std::string &what) {
  std::fprintf(stderr, "cuda-fewrow-bench: %s\n", what.c_str());
  std::exit(1);
}

void check(cuda::Result r, const char *doing) {
  if (r != cuda::Success)
    fail(std::string(doing) + ": " + d->describe(r));
}

void check(Error e) {
  if (e)
    fail(e.message());
}

struct Memory {
  cuda::DevicePtr p = 0;
  explicit Memory(size_t bytes) {
    check(d->memAlloc(&p, std::max<size_t>(bytes, 256)), "cuMemAlloc");
  }
  ~Memory() { d->memFree(p); }
  Memory(const Memory &) = delete;
  Memory &operator=(const Memory &) = delete;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// Times `launch(i)` alone: the median over `count` launches, in
/// microseconds.
template <typename Launch>
double timeAlone(cuda::Stream s, int count, const Launch &launch) {
  for (int i = 0; i < 20; ++i)
    launch(i);
  std::vector<cuda::Event> events(count + 1);
  for (cuda::Event &e : events)
    check(d->eventCreate(&e, 0), "cuEventCreate");
  check(d->eventRecord(events[0], s), "cuEventRecord");
  for (int i = 0; i < count; ++i) {
    launch(i);
    check(d->eventRecord(events[i + 1], s), "cuEventRecord");
  }
  check(d->streamSynchronize(s), "cuStreamSynchronize");
  std::vector<double> us;
  for (int i = 0; i < count; ++i) {
    float ms = 0;
    check(d->eventElapsedTime(&ms, events[i], events[i + 1]),
          "cuEventElapsedTime");
    us.push_back(ms * 1e3);
  }
  for (cuda::Event e : events)
    d->eventDestroy(e);
  return median(us);
}

/// Times `launch(i)` for i < `count` captured in one CUDA graph: the
/// median of 50 graph launches over `count`, in microseconds.
template <typename Launch>
double timeInGraph(cuda::Stream s, int count, const Launch &launch) {
  check(d->streamBeginCapture(s, cuda::CaptureModeThreadLocal),
        "cuStreamBeginCapture");
  for (int i = 0; i < count; ++i)
    launch(i);
  cuda::Graph graph = nullptr;
  check(d->streamEndCapture(s, &graph), "cuStreamEndCapture");
  cuda::GraphExec exec = nullptr;
  check(d->graphInstantiate(&exec, graph, 0), "cuGraphInstantiate");
  double us = timeAlone(
      s, 50, [&](int) { check(d->graphLaunch(exec, s), "cuGraphLaunch"); });
  d->graphExecDestroy(exec);
  d->graphDestroy(graph);
  return us / count;
}

uint16_t toBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7fff + ((u >> 16) & 1);
  return static_cast<uint16_t>(u >> 16);
}

/// `bytes` of values uniform in [-1, 1] of the type at `p`, written from a
/// repeated 16 MB host block.
void fillRandom(cuda::DevicePtr p, size_t bytes, bool bf16, cuda::Stream s) {
  static std::vector<uint32_t> block32, block16;
  std::vector<uint32_t> &block = bf16 ? block16 : block32;
  if (block.empty()) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-1, 1);
    block.resize((16u << 20) / 4);
    for (uint32_t &w : block) {
      float x = dist(rng), y = dist(rng);
      if (bf16)
        w = uint32_t(toBf16(x)) | uint32_t(toBf16(y)) << 16;
      else
        std::memcpy(&w, &x, 4);
    }
  }
  for (size_t at = 0; at < bytes; at += block.size() * 4)
    check(d->memcpyHtoDAsync(p + at, block.data(),
                             std::min(bytes - at, block.size() * 4), s),
          "cuMemcpyHtoD");
  check(d->streamSynchronize(s), "cuStreamSynchronize");
}

struct Shape {
  const char *name;
  int64_t n, k;
};

/// One product: a one-step plan (input 0 the left rows in buffer 0, input
/// 1 the weight's [K, N] view of [N, K] rows in buffer `base` + 1, the
/// output in buffer `base` + 2).
struct Product {
  flatbuffers::FlatBufferBuilder fbb;
  const plan::OpStep *step = nullptr;
  std::vector<StridedLayout> inputs, outputs;

  Product(int64_t rows, int64_t n, int64_t k, plan::DType t,
          uint32_t base = 0) {
    auto view = [&](uint32_t buffer) {
      auto none = fbb.CreateVector(
          std::vector<flatbuffers::Offset<plan::SizeProgram>>{});
      return plan::CreateView(fbb, buffer, t, none, none);
    };
    std::vector<flatbuffers::Offset<plan::View>> ins = {view(0),
                                                        view(base + 1)},
                                                 outs = {view(base + 2)};
    auto dnnl = plan::CreateDnnlCall(fbb, plan::DnnlPrimitive::Matmul, 0, 1);
    auto name = fbb.CreateString("aten.mm.default");
    auto insV = fbb.CreateVector(ins), outsV = fbb.CreateVector(outs);
    fbb.Finish(plan::CreateOpStep(fbb, name, insV, outsV, dnnl));
    step = flatbuffers::GetRoot<plan::OpStep>(fbb.GetBufferPointer());
    StridedLayout a, w, o;
    a.sizes = {rows, k}, a.strides = {k, 1};
    w.sizes = {k, n}, w.strides = {1, k};
    o.sizes = {rows, n}, o.strides = {n, 1};
    inputs = {a, w};
    outputs = {o};
  }
};

/// The largest |x - y| over the largest |y| of two device outputs.
double difference(cuda::DevicePtr x, cuda::DevicePtr y, int64_t count,
                  bool bf16, cuda::Stream s) {
  size_t bytes = size_t(count) * (bf16 ? 2 : 4);
  std::vector<uint8_t> hx(bytes), hy(bytes);
  check(d->memcpyDtoHAsync(hx.data(), x, bytes, s), "cuMemcpyDtoH");
  check(d->memcpyDtoHAsync(hy.data(), y, bytes, s), "cuMemcpyDtoH");
  check(d->streamSynchronize(s), "cuStreamSynchronize");
  auto value = [&](const std::vector<uint8_t> &h, int64_t i) {
    float f;
    if (bf16) {
      uint32_t u = uint32_t(reinterpret_cast<const uint16_t *>(h.data())[i])
                   << 16;
      std::memcpy(&f, &u, 4);
    } else {
      std::memcpy(&f, h.data() + 4 * i, 4);
    }
    return double(f);
  };
  double diff = 0, scale = 0;
  for (int64_t i = 0; i < count; ++i) {
    diff = std::max(diff, std::abs(value(hx, i) - value(hy, i)));
    scale = std::max(scale, std::abs(value(hy, i)));
  }
  return scale > 0 ? diff / scale : diff;
}

/// The table of grouped launches (see the top of the file).
void groupTable(cuda::Stream s, int sms, double copyGBs) {
  struct GroupShape {
    const char *name;
    std::vector<int64_t> n;
    int64_t k;
    int layers;
  };
  const GroupShape shapes[] = {{"1b q|k|v", {2048, 512, 512}, 2048, 16},
                               {"1b gate|up", {8192, 8192}, 2048, 16},
                               {"8b q|k|v", {4096, 1024, 1024}, 4096, 32},
                               {"8b gate|up", {14336, 14336}, 4096, 32}};
  std::printf(
      "\nproducts of the same rows, one launch (bf16, 1 row, CUDA graph):\n");
  std::printf("%-11s %-20s %6s %7s %7s %9s %5s %9s %5s %8s %9s\n", "group",
              "N x K", "MB", "blocks", "grouped", "apart us", "%", "group us",
              "%", "diff", "step -us");
  const plan::DType t = plan::DType::BFloat16;
  const int64_t rows = 1, eb = 2;
  for (const GroupShape &g : shapes) {
    size_t groupBytes = 0;
    for (int64_t n : g.n)
      groupBytes += size_t(n * g.k * eb);
    size_t copies = std::max<size_t>(1, ((size_t(512) << 20) + groupBytes - 1) /
                                            groupBytes);
    Memory a(size_t(rows * g.k * eb));
    fillRandom(a.p, size_t(rows * g.k * eb), true, s);
    std::vector<std::unique_ptr<Memory>> weights, outApart, outGroup;
    std::vector<std::unique_ptr<Product>> products;
    std::vector<cuda::FewRowLaunch> launches;
    cuda::CudaFewRowKernels kernels(*d, sms, /*early=*/true);
    std::vector<std::unique_ptr<ExternCall>> apart;
    unsigned apartBlocks = 0;
    for (size_t j = 0; j < g.n.size(); ++j) {
      size_t wb = size_t(g.n[j] * g.k * eb);
      weights.push_back(std::make_unique<Memory>(wb * copies));
      fillRandom(weights.back()->p, wb, true, s);
      for (size_t c = 1; c < copies; ++c)
        check(d->memcpyDtoDAsync(weights.back()->p + c * wb, weights.back()->p,
                                 wb, s),
              "cuMemcpyDtoD");
      outApart.push_back(std::make_unique<Memory>(size_t(rows * g.n[j] * eb)));
      outGroup.push_back(std::make_unique<Memory>(size_t(rows * g.n[j] * eb)));
      products.push_back(
          std::make_unique<Product>(rows, g.n[j], g.k, t, uint32_t(2 * j)));
      const Product &p = *products.back();
      launches.push_back(
          cuda::planFewRowProduct(*p.step, p.inputs, p.outputs, sms));
      if (launches.back().entry.empty())
        fail(std::string("the few-row kernel declined a product of ") + g.name +
             ": " + launches.back().declined);
      apartBlocks += launches.back().blocks;
      Expected<std::unique_ptr<ExternCall>> call =
          kernels.call(launches.back());
      if (!call)
        fail(call.error().message());
      apart.push_back(call.take());
    }
    std::vector<const cuda::FewRowLaunch *> ptrs;
    for (const cuda::FewRowLaunch &l : launches)
      ptrs.push_back(&l);
    if (cuda::fewRowGroupRuns(ptrs) !=
        std::vector<std::pair<size_t, size_t>>{{0, g.n.size()}})
      fail(std::string("the products of ") + g.name + " do not make one group");
    unsigned groupBlocks = cuda::planFewRowGroup(launches, sms).blocks;
    Expected<std::unique_ptr<ExternCall>> group = kernels.group(launches);
    if (!group || !*group)
      fail(group ? "no grouped call" : group.error().message());
    // Buffer 0 the left rows, then each product's weight copy and output.
    auto buffers = [&](size_t copy,
                       const std::vector<std::unique_ptr<Memory>> &outs) {
      std::vector<uint64_t> b = {a.p};
      for (size_t j = 0; j < g.n.size(); ++j) {
        b.push_back(weights[j]->p + copy % copies * size_t(g.n[j] * g.k * eb));
        b.push_back(outs[j]->p);
      }
      return b;
    };
    auto runApart = [&](int i) {
      std::vector<uint64_t> b = buffers(size_t(i), outApart);
      for (auto &c : apart)
        check(c->run({.deviceBuffers = b.data(), .stream = s}));
    };
    auto runGroup = [&](int i) {
      std::vector<uint64_t> b = buffers(size_t(i), outGroup);
      check((*group)->run({.deviceBuffers = b.data(), .stream = s}));
    };
    int inGraph = static_cast<int>(std::max<size_t>(20, copies));
    double apartUs = timeInGraph(s, inGraph, runApart);
    double groupUs = timeInGraph(s, inGraph, runGroup);
    runApart(0);
    runGroup(0);
    double diff = 0;
    for (size_t j = 0; j < g.n.size(); ++j)
      diff = std::max(diff, difference(outGroup[j]->p, outApart[j]->p,
                                       rows * g.n[j], true, s));
    std::string ns;
    for (int64_t n : g.n)
      ns += (ns.empty() ? "" : "+") + std::to_string(n);
    double moved =
        double(groupBytes) + double(rows * g.k * eb) * double(g.n.size());
    for (int64_t n : g.n)
      moved += double(rows * n * eb);
    auto pct = [&](double us) { return 100 * moved / (us * 1e3) / copyGBs; };
    std::printf(
        "%-11s %-20s %6.1f %7u %7u %9.2f %5.1f %9.2f %5.1f %8.1e %9.1f\n",
        g.name, (ns + "x" + std::to_string(g.k)).c_str(), groupBytes / 1e6,
        apartBlocks, groupBlocks, apartUs, pct(apartUs), groupUs, pct(groupUs),
        diff, (apartUs - groupUs) * g.layers);
  }
}

} // namespace

int main(int argc, char **argv) {
  int launches = 200;
  bool groupsOnly = false, convShapes = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--launches") == 0 && i + 1 < argc)
      launches = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--groups-only") == 0)
      groupsOnly = true;
    else if (std::strcmp(argv[i], "--conv-shapes") == 0)
      convShapes = true;
    else
      fail("usage: cuda-fewrow-bench [--launches N (default 200)] "
           "[--groups-only | "
           "--conv-shapes]");
  }
  if (launches < 1)
    fail("--launches must be positive");
  Expected<const cuda::Driver *> loaded = cuda::driver();
  if (!loaded)
    fail(loaded.error().message());
  d = *loaded;
  cuda::Device device = 0;
  cuda::Context ctx = nullptr;
  check(d->deviceGet(&device, 0), "cuDeviceGet");
  check(d->primaryCtxRetain(&ctx, device), "cuDevicePrimaryCtxRetain");
  check(d->ctxSetCurrent(ctx), "cuCtxSetCurrent");
  int sms = 0;
  check(d->deviceGetAttribute(&sms, cuda::AttrMultiprocessorCount, device),
        "cuDeviceGetAttribute");
  char name[256] = {};
  d->deviceGetName(name, sizeof name, device);
  cuda::Stream s = nullptr;
  check(d->streamCreate(&s, cuda::StreamNonBlocking), "cuStreamCreate");
  if (!cuda::haveFewRowKernels())
    fail("this libgcrt was built without the few-row kernels (no nvcc at build "
         "time)");

  // The copy's rate: bytes read plus written.
  double copyGBs = 0;
  {
    const size_t bytes = size_t(1) << 30;
    Memory src(bytes), dst(bytes);
    check(d->memsetD8Async(src.p, 1, bytes, s), "cuMemsetD8");
    double us = timeAlone(s, 10, [&](int) {
      check(d->memcpyDtoDAsync(dst.p, src.p, bytes, s), "cuMemcpyDtoD");
    });
    copyGBs = 2.0 * bytes / (us * 1e3);
  }
  CudaLibraries libraries;
  std::printf(
      "%s; %s; device-to-device copy of 1 GiB: %.0f GB/s (read + written)\n",
      name, libraries.describe().c_str(), copyGBs);
  if (groupsOnly) {
    groupTable(s, sms, copyGBs);
    d->streamDestroy(s);
    return 0;
  }
  std::printf("%-11s %-12s %-5s %4s %8s %4s %3s %9s %9s %7s %7s %5s %5s %9s "
              "%9s %5s %5s %8s %7s %7s "
              "%7s %7s\n",
              "product", "N x K", "dtype", "rows", "MB", "rule", "grp", "gc us",
              "cublas us", "gc GB/s", "cb GB/s", "gc %", "cb %", "gc graph",
              "cb graph", "gc %", "cb %", "diff", "g1", "g2", "g4", "g8");

  const Shape shapes[] = {
      {"1b q/o", 2048, 2048},       {"1b k/v", 512, 2048},
      {"1b gate/up", 8192, 2048},   {"1b down", 2048, 8192},
      {"1b lm_head", 128256, 2048}, {"8b q/o", 4096, 4096},
      {"8b k/v", 1024, 4096},       {"8b gate/up", 14336, 4096},
      {"8b down", 4096, 14336},     {"8b lm_head", 128256, 4096}};
  // Graph times by (shape, dtype, rows): gc's, cuBLASLt's, the rule's.
  struct Times {
    double gc = 0, lt = 0, rule = 0, bestGroups = 0;
  };
  std::map<std::string, Times> graphTimes;
  struct Case {
    Shape sh;
    plan::DType t;
    int64_t rows;
    /// One copy of the weight, which stays in the L2 cache from launch to
    /// launch, as a small model's weights do from run to run.
    bool warm = false;
  };
  std::vector<Case> cases;
  if (convShapes) {
    // The 1x1 convolutions (products of the positions by the channels) of
    // the zoo's conv nets at 64x64 inputs, at the 16 rows of their 4x4
    // resolution, then Llama's shapes past the exact instances' 8 rows.
    const Shape convs[] = {{"shufflenet", 116, 116},  {"regnet", 208, 208},
                           {"convnext up", 640, 160}, {"convnext dn", 160, 640},
                           {"mnv3 up", 240, 40},      {"effnet dn", 112, 672},
                           {"effnet up", 672, 112}};
    for (const Shape &sh : convs)
      cases.push_back({sh, plan::DType::Float32, 16, /*warm=*/true});
    for (int64_t rows : {8, 12, 16})
      for (const Shape &sh : shapes)
        cases.push_back({sh, plan::DType::Float32, rows});
  } else {
    for (plan::DType t : {plan::DType::BFloat16, plan::DType::Float32})
      for (int64_t rows : {1, 4})
        for (const Shape &sh : shapes)
          cases.push_back({sh, t, rows});
  }
  for (const Case &c : cases) {
    const Shape &sh = c.sh;
    plan::DType t = c.t;
    int64_t rows = c.rows;
    bool bf16 = t == plan::DType::BFloat16;
    int64_t eb = bf16 ? 2 : 4;
    size_t weightBytes = size_t(sh.n * sh.k * eb);
    size_t copies =
        c.warm ? 1 : std::max<size_t>(1, ((size_t(512) << 20) + weightBytes - 1) / weightBytes);
    Memory weights(weightBytes * copies), a(size_t(rows * sh.k * eb)),
        outGc(size_t(rows * sh.n * eb)), outLt(size_t(rows * sh.n * eb));
    fillRandom(weights.p, weightBytes, bf16, s);
    for (size_t c = 1; c < copies; ++c)
      check(d->memcpyDtoDAsync(weights.p + c * weightBytes, weights.p,
                               weightBytes, s),
            "cuMemcpyDtoD");
    fillRandom(a.p, size_t(rows * sh.k * eb), bf16, s);
    Product p(rows, sh.n, sh.k, t);
    cuda::CudaFewRowKernels kernels(*d, sms, /*early=*/true);
    Expected<std::unique_ptr<ExternCall>> gc = kernels.prepare(
        *p.step, p.inputs, p.outputs, cuda::FewRowPick::WheneverPossible);
    if (!gc)
      fail(gc.error().message());
    if (!*gc)
      fail(std::string("the few-row kernel declined ") + sh.name + ": " +
           cuda::planFewRowProduct(*p.step, p.inputs, p.outputs, sms,
                                   cuda::FewRowPick::WheneverPossible)
               .declined);
    Expected<std::unique_ptr<CudaLibraryCall>> lt =
        libraries.prepare(*p.step, p.inputs, p.outputs);
    if (!lt)
      fail(lt.error().message());
    std::unique_ptr<Memory> workspace;
    if (*lt)
      workspace = std::make_unique<Memory>((*lt)->workspaceBytes());
    auto run = [&](ExternCall &call, cuda::DevicePtr out, int i) {
      uint64_t buffers[3] = {a.p, weights.p + size_t(i) % copies * weightBytes,
                             out};
      check(call.run({.deviceBuffers = buffers,
                      .stream = s,
                      .workspace = workspace ? workspace->p : 0}));
    };
    double gcUs = timeAlone(s, launches, [&](int i) { run(**gc, outGc.p, i); });
    // A graph of 20 launches, or one per copy where there are more, so
    // that replays do not find their weights in the L2 cache either.
    int inGraph = static_cast<int>(std::max<size_t>(20, copies));
    double gcGraph =
        timeInGraph(s, inGraph, [&](int i) { run(**gc, outGc.p, i); });
    double ltUs = NAN, ltGraph = NAN, diff = NAN;
    if (*lt) {
      ltUs = timeAlone(s, launches, [&](int i) { run(**lt, outLt.p, i); });
      ltGraph = timeInGraph(s, inGraph, [&](int i) { run(**lt, outLt.p, i); });
      // Both on the first copy, then compared.
      run(**gc, outGc.p, 0);
      run(**lt, outLt.p, 0);
      diff = difference(outGc.p, outLt.p, rows * sh.n, bf16, s);
    }
    // The kernel in a graph with each count of thread groups a block,
    // for tuning the plan's choice.
    double byGroups[4] = {};
    for (int g = 0; g < 4; ++g) {
      cuda::FewRowLaunch swept =
          cuda::planFewRowProduct(*p.step, p.inputs, p.outputs, sms,
                                  cuda::FewRowPick::WheneverPossible);
      cuda::setFewRowGroups(swept, 1 << g);
      Expected<std::unique_ptr<ExternCall>> call =
          kernels.call(std::move(swept));
      if (!call)
        fail(call.error().message());
      byGroups[g] =
          timeInGraph(s, inGraph, [&](int i) { run(**call, outGc.p, i); });
    }
    // The rule as the executor applies it, and the kernel's groups.
    cuda::FewRowLaunch planned =
        cuda::planFewRowProduct(*p.step, p.inputs, p.outputs, sms);
    bool rule = !planned.entry.empty();
    double moved = double(weightBytes + size_t(rows * (sh.k + sh.n) * eb));
    auto rate = [&](double us) { return moved / (us * 1e3); };
    std::printf("%-11s %-12s %-5s %4lld %8.1f %4s %3d %9.2f %9.2f %7.0f %7.0f "
                "%5.1f %5.1f %9.2f "
                "%9.2f %5.1f %5.1f %8.1e %7.2f %7.2f %7.2f %7.2f\n",
                sh.name,
                (std::to_string(sh.n) + "x" + std::to_string(sh.k)).c_str(),
                bf16 ? "bf16" : "f32", (long long)rows, weightBytes / 1e6,
                rule ? "gc" : "cb",
                cuda::planFewRowProduct(*p.step, p.inputs, p.outputs, sms,
                                        cuda::FewRowPick::WheneverPossible)
                    .args.groups,
                gcUs, ltUs, rate(gcUs), rate(ltUs), 100 * rate(gcUs) / copyGBs,
                100 * rate(ltUs) / copyGBs, gcGraph, ltGraph,
                100 * rate(gcGraph) / copyGBs, 100 * rate(ltGraph) / copyGBs,
                diff, byGroups[0], byGroups[1], byGroups[2], byGroups[3]);
    std::string key = std::string(sh.name) + (bf16 ? " bf16 " : " f32 ") +
                      std::to_string(rows);
    graphTimes[key] = {gcGraph, ltGraph, rule ? gcGraph : ltGraph,
                       *std::min_element(byGroups, byGroups + 4)};
  }
  if (convShapes) {
    d->streamDestroy(s);
    return 0;
  }

  // The decode step's products: per layer q, k, v, o, gate, up, down.
  std::printf("\ndecode step products (graph times; %% of the copy's rate):\n");
  struct Model {
    const char *prefix;
    int layers;
  };
  for (Model m : {Model{"1b", 16}, Model{"8b", 32}})
    for (const char *dtype : {"bf16", "f32"})
      for (int rows : {1, 4}) {
        auto key = [&](const char *product) {
          return std::string(m.prefix) + " " + product + " " + dtype + " " +
                 std::to_string(rows);
        };
        struct Use {
          const char *product;
          int perLayer;
        };
        double bytes = 0;
        Times sum;
        int64_t eb = std::strcmp(dtype, "bf16") == 0 ? 2 : 4;
        for (Use u : {Use{"q/o", 2}, Use{"k/v", 2}, Use{"gate/up", 2},
                      Use{"down", 1}, Use{"lm_head", 0}}) {
          const Times &t = graphTimes[key(u.product)];
          int times = u.perLayer ? u.perLayer * m.layers : 1;
          for (const Shape &sh : shapes)
            if (std::string(sh.name) == std::string(m.prefix) + " " + u.product)
              bytes += double(times) * double(sh.n * sh.k * eb);
          sum.gc += times * t.gc;
          sum.lt += times * t.lt;
          sum.rule += times * t.rule;
          sum.bestGroups += times * t.bestGroups;
        }
        auto pct = [&](double us) {
          return 100 * bytes / (us * 1e3) / copyGBs;
        };
        std::printf("  %s %-4s rows %d: %.2f GB of weights; gc %.0f us "
                    "(%.1f%%), cuBLASLt %.0f us "
                    "(%.1f%%), the rule's %.0f us (%.1f%%), gc with each "
                    "product's best groups "
                    "%.0f us (%.1f%%)\n",
                    m.prefix, dtype, rows, bytes / 1e9, sum.gc, pct(sum.gc),
                    sum.lt, pct(sum.lt), sum.rule, pct(sum.rule),
                    sum.bestGroups, pct(sum.bestGroups));
      }
  groupTable(s, sms, copyGBs);
  d->streamDestroy(s);
  return 0;
}
