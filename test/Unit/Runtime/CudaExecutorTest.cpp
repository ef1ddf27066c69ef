//===- CudaExecutorTest.cpp - Plan graphs on an NVIDIA GPU ----------------===//
//
// Hand-built CUDA plan graphs whose kernels are the hand-written PTX of
// Inputs/gpu-kernels.ptx. Where there is no GPU, only the errors that say so
// are checked; the rest skips.
//
//===----------------------------------------------------------------------===//
#include "Cuda/CudaDriver.h"
#include "Cuda/CudaFewRowProduct.h"
#include "GpuTestKernels.h"
#include "LoopGraphMaker.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>

using namespace gc;
using namespace gc::test;

namespace {

constexpr const char *kTarget = "cuda:sm_80,sm_90";

/// x: f32[s0] -> t = 2x + 1 (kernel gc_affine, t in the arena), then
/// c = cumsum(t) (a fallback step, on the host), then d = 3c (kernel
/// gc_triple); outputs c and d. Each kernel receives the buffers its node
/// loads and writes, in that order (KernelCode.h): gc_affine x and t,
/// gc_triple c and d, as Inputs/gpu-kernels.ptx reads them.
struct AffineGraph : LoopGraphMaker {
  /// For graphs of other shapes, made by derived classes.
  struct Skip {};
  explicit AffineGraph(Skip) {}
  explicit AffineGraph(const std::string &firstKernel = "gc_affine") {
    const SymExpr *s0 = sym("s0");
    module.syms().setRange("s0", {1, 1 << 22});
    Exprs sizes = {s0};
    input("x", DType::Float32, sizes);
    uint32_t t = buffer("t", BufferKind::Intermediate, DType::Float32, sizes);
    uint32_t c = buffer("c", BufferKind::Output, DType::Float32, sizes);
    uint32_t d = buffer("d", BufferKind::Output, DType::Float32, sizes);
    kernel(firstKernel, 0, t, s0);
    LoopNode &n = callNode(LoopNode::Kind::Fallback, ops::aten_cumsum_default, {whole(t)},
                           {whole(c)});
    n.args = {tensorArg("self", 0), intArg("dim", 0)};
    kernel("gc_triple", c, d, s0);
    graph.plan.symbols = {"s0"};
    graph.plan.target = kTarget;
    output("c", c, whole(c).type);
    output("d", d, whole(d).type);
  }
  /// A kernel over [0, s0) reading `in` and writing `out`, one thread a
  /// point.
  void kernel(const std::string &name, uint32_t in, uint32_t out, const SymExpr *s0) {
    LoopNode n;
    n.name = name;
    n.ranges = {s0};
    n.output = out;
    const SymExpr *i0 = sym("i0");
    n.storeIndex = i0;
    n.body.ops = {BodyOp{BodyOp::Kind::Load, DType::Float32, ScalarOp::Add, {}, in, i0}};
    graph.nodes.push_back(n);
    KernelGroup k{name, {static_cast<uint32_t>(graph.nodes.size() - 1)}, {s0}};
    k.mapping = GpuMapping::ThreadPerPoint;
    k.blockThreads = 128;
    graph.plan.kernels.push_back(k);
    graph.plan.steps.push_back(
        {PlanStep::Kind::Kernel, static_cast<uint32_t>(graph.plan.kernels.size() - 1), {}, {}});
  }
};

/// t = 2x + 1 and d = 3c, x and c inputs of f32[s0]: kernels alone, which
/// a CUDA graph can capture.
struct TwoKernels : AffineGraph {
  TwoKernels() : AffineGraph(Skip{}) {
    const SymExpr *s0 = sym("s0");
    module.syms().setRange("s0", {1, 1 << 22});
    input("x", DType::Float32, {s0});
    uint32_t t = buffer("t", BufferKind::Output, DType::Float32, {s0});
    input("c", DType::Float32, {s0});
    uint32_t d = buffer("d", BufferKind::Output, DType::Float32, {s0});
    kernel("gc_affine", 0, t, s0);
    kernel("gc_triple", 2, d, s0);
    graph.plan.symbols = {"s0"};
    graph.plan.target = kTarget;
    output("t", t, whole(t).type);
    output("d", d, whole(d).type);
  }
};

/// Small integers, so that every sum below is exact in float.
std::vector<float> smallInts(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(static_cast<int>(i % 7) - 3);
  return v;
}

/// Checks c and d of AffineGraph for input x; element i of c is at
/// c[i * cStride].
void expectAffine(const std::vector<float> &x, const std::vector<float> &c,
                  const std::vector<float> &d, size_t cStride = 1) {
  float acc = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    acc += 2 * x[i] + 1;
    ASSERT_EQ(c[i * cStride], acc) << i;
    ASSERT_EQ(d[i], 3 * acc) << i;
  }
}

/// y_i = x w_i^T for three weights [n_i, 64] read in Linear layout (one
/// launch: CudaFewRowProduct.h), then z = x w_3^T + y_1, which reads y_1
/// and so runs after them, alone. All float32, one row; every tensor an
/// input or output of its own.
struct SharedRowProducts : LoopGraphMaker {
  static constexpr int64_t kK = 64;
  std::vector<int64_t> ns = {64, 40, 24, 40};

  SharedRowProducts() {
    uint32_t x = input("x", DType::Float32, ks({1, kK}));
    std::vector<uint32_t> w, y;
    for (size_t i = 0; i < ns.size(); ++i)
      w.push_back(input("w" + std::to_string(i), DType::Float32, ks({ns[i], kK})));
    for (size_t i = 0; i < ns.size(); ++i)
      y.push_back(buffer(i < 3 ? "y" + std::to_string(i) : "z", BufferKind::Output,
                         DType::Float32, ks({1, ns[i]})));
    for (size_t i = 0; i < ns.size(); ++i) {
      std::vector<BufferView> ins = {whole(x), whole(w[i])};
      if (i == 3)
        ins.push_back(whole(y[1]));
      LoopNode &n = callNode(LoopNode::Kind::Extern, ops::aten_mm_default, ins, {whole(y[i])});
      n.inputs[1].type = view(DType::Float32, ks({kK, ns[i]}), ks({1, kK}));
      n.args = {tensorArg("self", 0), tensorArg("mat2", 1)};
      if (i == 3)
        n.postOps = {{PostOp::Kind::Add, 2}};
    }
    graph.plan.target = kTarget;
    for (size_t i = 0; i < ns.size(); ++i)
      output(graph.buffers[y[i]].name, y[i], whole(y[i]).type);
  }
};

TEST(CudaExecutor, ProductsOfTheSameRowsGroupInThePlan) {
  // What the executor groups, from the plan gc-package makes (no GPU
  // needed): the three products of x, not the fourth, which reads y_1.
  SharedRowProducts g;
  Expected<std::shared_ptr<const RuntimePlan>> plan = g.runtimePlan();
  ASSERT_TRUE(bool(plan)) << plan.error().message();
  const plan::Graph &graph = *(*plan)->root().graphs()->Get(0);
  ASSERT_EQ(graph.steps()->size(), 4u);
  std::vector<cuda::FewRowLaunch> launches;
  for (size_t s = 0; s < 4; ++s) {
    const LoopNode &node = g.graph.nodes[s];
    auto layout = [](const TensorType &t) {
      StridedLayout l;
      for (const SymExpr *e : t.sizes)
        l.sizes.push_back(e->constant());
      for (const SymExpr *e : t.strides)
        l.strides.push_back(e->constant());
      return l;
    };
    std::vector<StridedLayout> ins;
    for (const BufferView &v : node.inputs)
      ins.push_back(layout(v.type));
    launches.push_back(cuda::planFewRowProduct(*graph.steps()->Get(s)->detail_as_OpStep(), ins,
                                               {layout(node.outputs[0].type)}, 132));
    ASSERT_FALSE(launches.back().entry.empty()) << launches.back().declined;
  }
  std::vector<const cuda::FewRowLaunch *> ptrs;
  for (const cuda::FewRowLaunch &l : launches)
    ptrs.push_back(&l);
  EXPECT_EQ(cuda::fewRowGroupRuns(ptrs), (std::vector<std::pair<size_t, size_t>>{{0, 3}}));
}

TEST(CudaExecutor, ProductsOfTheSameRowsRunAsOneLaunch) {
  GC_REQUIRE_GPU();
  SharedRowProducts g;
  GpuKernelImage kernels(gpuTestKernels());
  auto e = g.executor(kernels);
  ASSERT_TRUE(bool(e)) << e.error().message();
  const int64_t k = SharedRowProducts::kK;
  std::vector<std::vector<float>> in = {randomFloats(size_t(k), 1)}, out;
  for (size_t i = 0; i < g.ns.size(); ++i) {
    in.push_back(randomFloats(size_t(g.ns[i] * k), unsigned(i + 2)));
    out.emplace_back(size_t(g.ns[i]), NAN);
  }
  std::vector<TensorRef> inputs = {ref(in[0], {1, k})}, outputs;
  for (size_t i = 0; i < g.ns.size(); ++i) {
    inputs.push_back(ref(in[i + 1], {g.ns[i], k}));
    outputs.push_back(ref(out[i], {1, g.ns[i]}));
  }
  // Twice: step by step, then (where allowed) through a CUDA graph.
  for (int run = 0; run < 2; ++run) {
    Error err = (*e)->run(inputs, outputs);
    ASSERT_FALSE(err) << err.message();
    // |got - want| <= 1e-3 |want| + 1e-5 (the sum of the absolute terms).
    for (size_t i = 0; i < g.ns.size(); ++i)
      for (int64_t n = 0; n < g.ns[i]; ++n) {
        double want = 0, magnitude = 0;
        for (int64_t q = 0; q < k; ++q) {
          double term = double(in[0][q]) * in[i + 1][n * k + q];
          want += term;
          magnitude += std::abs(term);
        }
        if (i == 3) {
          want += out[1][n];
          magnitude += std::abs(out[1][n]);
        }
        EXPECT_LE(std::abs(out[i][n] - want), 1e-3 * std::abs(want) + 1e-5 * magnitude)
            << "run " << run << ", output " << i << ", column " << n;
      }
  }
}

TEST(CudaDriver, MissingDriverIsNamed) {
  Expected<std::unique_ptr<cuda::Driver>> d = cuda::loadDriver("libgc-no-such-driver.so.1");
  ASSERT_FALSE(bool(d));
  EXPECT_EQ(d.error().message(), "no NVIDIA driver: libgc-no-such-driver.so.1 not found");
}

TEST(CudaExecutor, WithoutGpuOneClearError) {
  Expected<std::vector<CudaDevice>> devices = cudaDevices();
  if (devices)
    GTEST_SKIP() << "this machine has a GPU";
  AffineGraph g;
  GpuKernelImage kernels(gpuTestKernels());
  auto e = g.executor(kernels);
  ASSERT_FALSE(bool(e));
  EXPECT_EQ(e.error().message(),
            std::string("needs an NVIDIA GPU (") + kTarget + "): " + devices.error().message());
}

TEST(CudaExecutor, KernelsFallbackAndSymbolicSizes) {
  GC_REQUIRE_GPU();
  AffineGraph g;
  GpuKernelImage kernels(gpuTestKernels());
  auto e = g.executor(kernels);
  ASSERT_TRUE(bool(e)) << e.error().message();
  // Several sizes in turn, the largest in the middle, so that the device
  // memory grows and is then reused; 300000 points take many blocks.
  for (size_t n : {5, 1000, 300000, 7, 1000}) {
    std::vector<float> x = smallInts(n), c(n), d(n);
    auto sizes = (*e)->outputSizes(std::vector<TensorRef>{ref(x, {int64_t(n)})});
    ASSERT_TRUE(bool(sizes)) << sizes.error().message();
    EXPECT_EQ((*sizes)[1], std::vector<int64_t>{int64_t(n)});
    Error err = (*e)->run(std::vector<TensorRef>{ref(x, {int64_t(n)})},
                          std::vector<TensorRef>{ref(c, {int64_t(n)}), ref(d, {int64_t(n)})});
    ASSERT_FALSE(err) << err.message();
    expectAffine(x, c, d);
  }
}

TEST(CudaExecutor, StridedCallerTensorsAreStaged) {
  GC_REQUIRE_GPU();
  AffineGraph g;
  GpuKernelImage kernels(gpuTestKernels());
  auto e = g.executor(kernels);
  ASSERT_TRUE(bool(e)) << e.error().message();
  const size_t n = 513;
  std::vector<float> dense = smallInts(n), x(2 * n, 1e9f), c(3 * n, -1), d(n);
  for (size_t i = 0; i < n; ++i)
    x[2 * i] = dense[i];
  Error err = (*e)->run(std::vector<TensorRef>{ref(x, {int64_t(n)}, {2})},
                        std::vector<TensorRef>{ref(c, {int64_t(n)}, {3}), ref(d, {int64_t(n)})});
  ASSERT_FALSE(err) << err.message();
  expectAffine(dense, c, d, 3);
  for (size_t i = 0; i < n; ++i)
    ASSERT_EQ(c[3 * i + 1], -1) << "a gap of the caller's output was written";
}

TEST(CudaExecutor, CapturedRunsMatchStepByStep) {
  GC_REQUIRE_GPU();
  TwoKernels g;
  GpuKernelImage kernels(gpuTestKernels());
  RuntimeOptions stepByStep;
  stepByStep.cudaGraphs = false;
  auto captured = g.executor(kernels), plain = g.executor(kernels, stepByStep);
  ASSERT_TRUE(bool(captured)) << captured.error().message();
  ASSERT_TRUE(bool(plain)) << plain.error().message();
  // Repeated sizes are captured (from the second run of a size on), new
  // ones run step by step; every run has inputs of its own.
  int round = 0;
  for (int64_t n : {1000, 1000, 1000, 50, 50, 1000, 1000}) {
    for (Executor *e : {captured->get(), plain->get()}) {
      std::vector<float> x = smallInts(n), c(n), t(n, -1), d(n, -1);
      for (int64_t i = 0; i < n; ++i)
        c[i] = float(i + round);
      Error err = e->run(std::vector<TensorRef>{ref(x, {n}), ref(c, {n})},
                         std::vector<TensorRef>{ref(t, {n}), ref(d, {n})});
      ASSERT_FALSE(err) << err.message();
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(t[i], 2 * x[i] + 1) << "round " << round << ", t[" << i << "]";
        ASSERT_EQ(d[i], 3 * c[i]) << "round " << round << ", d[" << i << "]";
      }
    }
    ++round;
  }
}

TEST(CudaExecutor, TensorsInGpuMemory) {
  GC_REQUIRE_GPU();
  TwoKernels g;
  GpuKernelImage kernels(gpuTestKernels());
  auto e = g.executor(kernels);
  ASSERT_TRUE(bool(e)) << e.error().message();
  const int64_t n = 777;
  std::vector<float> x = smallInts(n), c(n);
  for (int64_t i = 0; i < n; ++i)
    c[i] = float(i);
  DeviceMemory dx{x}, dc{c}, dt{std::vector<float>(n)}, dd{std::vector<float>(n)};
  auto device = [&](const DeviceMemory &m, std::vector<int64_t> strides = {}) {
    return TensorRef{m.data(), DType::Float32, {n}, std::move(strides), true};
  };
  // Twice: the second run replays the captured graph.
  for (int round = 0; round < 2; ++round) {
    Error err = (*e)->run(std::vector<TensorRef>{device(dx), device(dc)},
                          std::vector<TensorRef>{device(dt), device(dd)});
    ASSERT_FALSE(err) << err.message();
    std::vector<float> t = dt.read(), d = dd.read();
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(t[i], 2 * x[i] + 1) << i;
      ASSERT_EQ(d[i], 3 * c[i]) << i;
    }
  }
  // Host and GPU tensors mix.
  std::vector<float> t(n);
  Error err = (*e)->run(std::vector<TensorRef>{ref(x, {n}), device(dc)},
                        std::vector<TensorRef>{ref(t, {n}), device(dd)});
  ASSERT_FALSE(err) << err.message();
  EXPECT_EQ(t[5], 2 * x[5] + 1);
  // An output whose elements would overlap is refused before any work.
  err = (*e)->run(std::vector<TensorRef>{device(dx), device(dc)},
                  std::vector<TensorRef>{device(dt, {0}), device(dd)});
  ASSERT_TRUE(bool(err));
  EXPECT_EQ(err.message(), "output 't' has stride 0 in dimension 0: its elements would overlap");
}

TEST(CudaExecutor, GpuTensorsMovingBetweenCalls) {
  // Tensors read and written where they lie (CallerMemory.h): the kernels'
  // tables follow the caller's tensors from call to call, through the
  // captured graph, and an output given in an input's memory still sees
  // the input as it was.
  GC_REQUIRE_GPU();
  TwoKernels g;
  GpuKernelImage kernels(gpuTestKernels());
  auto e = g.executor(kernels);
  ASSERT_TRUE(bool(e)) << e.error().message();
  const int64_t n = 513;
  auto device = [&](const DeviceMemory &m) {
    return TensorRef{m.data(), DType::Float32, {n}, {}, true};
  };
  std::vector<std::unique_ptr<DeviceMemory>> xs, cs, ts, ds;
  for (int k = 0; k < 2; ++k) {
    std::vector<float> x = smallInts(n), c(n);
    for (int64_t i = 0; i < n; ++i) {
      x[i] += float(k);
      c[i] = float(i + k);
    }
    xs.push_back(std::make_unique<DeviceMemory>(x));
    cs.push_back(std::make_unique<DeviceMemory>(c));
    ts.push_back(std::make_unique<DeviceMemory>(std::vector<float>(n)));
    ds.push_back(std::make_unique<DeviceMemory>(std::vector<float>(n)));
  }
  for (int round = 0; round < 6; ++round) {
    int k = round % 2;
    Error err = (*e)->run(std::vector<TensorRef>{device(*xs[k]), device(*cs[k])},
                          std::vector<TensorRef>{device(*ts[k]), device(*ds[k])});
    ASSERT_FALSE(err) << err.message();
    std::vector<float> x = xs[k]->read(), c = cs[k]->read(), t = ts[k]->read(),
                       d = ds[k]->read();
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(t[i], 2 * x[i] + 1) << "round " << round << ", " << i;
      ASSERT_EQ(d[i], 3 * c[i]) << "round " << round << ", " << i;
    }
  }
  // t written into x's own memory, d into c's.
  std::vector<float> x = xs[0]->read(), c = cs[0]->read();
  Error err = (*e)->run(std::vector<TensorRef>{device(*xs[0]), device(*cs[0])},
                        std::vector<TensorRef>{device(*xs[0]), device(*cs[0])});
  ASSERT_FALSE(err) << err.message();
  std::vector<float> t = xs[0]->read(), d = cs[0]->read();
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(t[i], 2 * x[i] + 1) << i;
    ASSERT_EQ(d[i], 3 * c[i]) << i;
  }
}

/// Runs TwoKernels on GPU tensors of other layouts than the buffers':
/// x every other element of a longer array, c one element broadcast (stride
/// 0), t written every third element; on the executor's stream, or
/// enqueued on a stream of the test's.
void runStrided(bool onCallersStream) {
  TwoKernels g;
  GpuKernelImage kernels(gpuTestKernels());
  auto e = g.executor(kernels);
  ASSERT_TRUE(bool(e)) << e.error().message();
  const int64_t n = 1000;
  std::vector<float> x2 = smallInts(2 * n);
  DeviceMemory dx{x2}, dc{std::vector<float>{5}}, dt{std::vector<float>(3 * n, -1)},
      dd{std::vector<float>(n)};
  auto device = [&](const DeviceMemory &m, std::vector<int64_t> strides) {
    return TensorRef{m.data(), DType::Float32, {n}, std::move(strides), true};
  };
  const cuda::Driver *d = *cuda::driver();
  cuda::Stream stream = nullptr;
  if (onCallersStream) {
    ASSERT_EQ(d->streamCreate(&stream, cuda::StreamNonBlocking), cuda::Success);
    ASSERT_FALSE((*e)->setStream(stream));
  }
  // Twice: the second run replays the captured graph.
  for (int round = 0; round < 2; ++round) {
    Error err = (*e)->run(std::vector<TensorRef>{device(dx, {2}), device(dc, {0})},
                          std::vector<TensorRef>{device(dt, {3}), device(dd, {1})});
    ASSERT_FALSE(err) << err.message();
  }
  if (onCallersStream) {
    ASSERT_EQ(d->streamSynchronize(stream), cuda::Success);
    ASSERT_FALSE((*e)->setStream(std::nullopt));
  }
  std::vector<float> t = dt.read(), dv = dd.read();
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(t[3 * i], 2 * x2[2 * i] + 1) << i;
    ASSERT_EQ(t[3 * i + 1], -1) << "the gaps stay as they were: " << i;
    ASSERT_EQ(dv[i], 15) << i;
  }
  (*e).reset();
  if (stream)
    d->streamDestroy(stream);
}

TEST(CudaExecutor, GpuTensorsOfAnyStrides) {
  GC_REQUIRE_GPU();
  runStrided(false);
}

TEST(CudaExecutor, RunsEnqueuedOnTheCallersStream) {
  GC_REQUIRE_GPU();
  runStrided(true);
}

TEST(CudaExecutor, ProfileTimesEveryStep) {
  GC_REQUIRE_GPU();
  AffineGraph g;
  GpuKernelImage kernels(gpuTestKernels());
  RuntimeOptions options;
  options.profile = true;
  auto e = g.executor(kernels, options);
  ASSERT_TRUE(bool(e)) << e.error().message();
  std::vector<float> x = smallInts(64), c(64), d(64);
  for (int run = 0; run < 2; ++run) {
    Error err = (*e)->run(std::vector<TensorRef>{ref(x, {64})},
                          std::vector<TensorRef>{ref(c, {64}), ref(d, {64})});
    ASSERT_FALSE(err) << err.message();
  }
  std::vector<StepProfile> profile = (*e)->profile();
  ASSERT_EQ(profile.size(), 3u);
  EXPECT_EQ(profile[0].name, "gc_affine");
  EXPECT_EQ(profile[1].kind, plan::StepKind::Fallback);
  // The second run counts; the first (module loads, cuBLASLt plans) apart.
  for (const StepProfile &p : profile) {
    EXPECT_EQ(p.runs, 1);
    EXPECT_GT(p.seconds, 0);
    EXPECT_GT(p.firstSeconds, 0);
  }
}

TEST(CudaExecutor, MissingKernelIsNamed) {
  GC_REQUIRE_GPU();
  AffineGraph g("gc_no_such_kernel");
  GpuKernelImage kernels(gpuTestKernels());
  auto e = g.executor(kernels);
  ASSERT_FALSE(bool(e));
  EXPECT_EQ(e.error().message(), "kernel 'gc_no_such_kernel' is not in the graph's GPU module");
}

TEST(CudaExecutor, NoCodeForThisGpuNamesBoth) {
  GC_REQUIRE_GPU();
  Expected<CudaDevice> device = cudaDeviceFor({});
  ASSERT_TRUE(bool(device)) << device.error().message();
  if (device->arch / 10 == 8)
    GTEST_SKIP() << "an sm_8x GPU runs sm_80 code";
  AffineGraph g;
  g.graph.plan.target = "cuda:sm_80";
  GpuKernelImage kernels(gpuTestKernelsSm80());
  auto e = g.executor(kernels);
  ASSERT_FALSE(bool(e));
  EXPECT_EQ(e.error().message(), "the package has kernels for sm_80; this GPU is sm_" +
                                     std::to_string(device->arch) + " (" + device->name + ")");
}

TEST(CudaExecutor, UnknownDeviceIsNamed) {
  GC_REQUIRE_GPU();
  Expected<std::vector<CudaDevice>> devices = cudaDevices();
  ASSERT_TRUE(bool(devices));
  AffineGraph g;
  GpuKernelImage kernels(gpuTestKernels());
  RuntimeOptions options;
  options.cudaDevice = static_cast<int>(devices->size());
  auto e = g.executor(kernels, options);
  ASSERT_FALSE(bool(e));
  EXPECT_NE(e.error().message().find("device " + std::to_string(devices->size()) +
                                     ": the NVIDIA driver shows"),
            std::string::npos)
      << e.error().message();
}

} // namespace
