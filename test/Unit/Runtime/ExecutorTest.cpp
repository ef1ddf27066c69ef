//===- ExecutorTest.cpp - Running plans of hand-built loop graphs ---------===//
#include "LoopGraphMaker.h"

#include <gtest/gtest.h>

#include <atomic>

using namespace gc;
using namespace gc::test;

namespace {

constexpr int64_t kCols = 4;

/// out[i, j] = x[i, j] + y[i, j] for rows [begin, end); its buffers: x, y, out.
std::atomic<int64_t> addRowsSeen{0};
void addKernel(char *const *bufs, const int64_t *syms, int64_t begin, int64_t end) {
  auto *x = reinterpret_cast<const float *>(bufs[0]);
  auto *y = reinterpret_cast<const float *>(bufs[1]);
  auto *out = reinterpret_cast<float *>(bufs[2]);
  EXPECT_LE(end, syms[0]);
  for (int64_t i = begin * kCols; i < end * kCols; ++i)
    out[i] = x[i] + y[i];
  addRowsSeen += end - begin;
}

/// t[i] = sum_j x[i, j] (its buffers: x, t), then out[i] = 2 * t[i] (t, out).
void rowSumKernel(char *const *bufs, const int64_t *, int64_t begin, int64_t end) {
  auto *x = reinterpret_cast<const float *>(bufs[0]);
  auto *t = reinterpret_cast<float *>(bufs[1]);
  for (int64_t i = begin; i < end; ++i) {
    t[i] = 0;
    for (int64_t j = 0; j < kCols; ++j)
      t[i] += x[i * kCols + j];
  }
}
void doubleKernel(char *const *bufs, const int64_t *, int64_t begin, int64_t end) {
  auto *t = reinterpret_cast<const float *>(bufs[0]);
  auto *out = reinterpret_cast<float *>(bufs[1]);
  for (int64_t i = begin; i < end; ++i)
    out[i] = 2 * t[i];
}

/// x, y: f32[s0, 4] -> x + y, one kernel split over rows.
struct AddGraph : LoopGraphMaker {
  AddGraph() {
    const SymExpr *s0 = sym("s0");
    module.syms().setRange("s0", {2, 1 << 20});
    Exprs sizes = {s0, k(kCols)};
    input("x", DType::Float32, sizes);
    input("y", DType::Float32, sizes);
    uint32_t out = buffer("out", BufferKind::Output, DType::Float32, sizes);
    LoopNode n;
    n.name = "add";
    n.ranges = sizes;
    n.output = out;
    // The kernel's buffers: x, y, out.
    n.body.ops.push_back({BodyOp::Kind::Load, DType::Float32, ScalarOp::Add, {}, 0});
    n.body.ops.push_back({BodyOp::Kind::Load, DType::Float32, ScalarOp::Add, {}, 1});
    graph.nodes.push_back(n);
    graph.plan.kernels.push_back({"add_kernel", {0}, {s0}});
    graph.plan.steps.push_back({PlanStep::Kind::Kernel, 0, {}, {}});
    graph.plan.symbols = {"s0"};
    output("out", out, contiguous(DType::Float32, sizes));
    lib.fns["add_kernel"] = addKernel;
  }
  std::unique_ptr<Executor> make(unsigned threads = 2) {
    auto e = executor(lib, {threads});
    EXPECT_TRUE(bool(e)) << (e ? "" : e.error().message());
    return e ? e.take() : nullptr;
  }
  FakeLibrary lib;
};

void expectAdded(const std::vector<float> &x, const std::vector<float> &y,
                 const std::vector<float> &out) {
  ASSERT_EQ(out.size(), x.size());
  for (size_t i = 0; i < x.size(); ++i)
    ASSERT_EQ(out[i], x[i] + y[i]) << i;
}

TEST(Executor, ElementwiseKernelWithSymbolicRows) {
  AddGraph g;
  auto exec = g.make();
  ASSERT_TRUE(exec);
  for (int64_t rows : {3, 5, 3, 40000}) {
    std::vector<float> x = randomFloats(rows * kCols, 1), y = randomFloats(rows * kCols, 2);
    std::vector<float> out(rows * kCols, -7.f);
    std::vector<TensorRef> ins = {ref(x, {rows, kCols}), ref(y, {rows, kCols})};
    auto sizes = exec->outputSizes(ins);
    ASSERT_TRUE(bool(sizes)) << sizes.error().message();
    EXPECT_EQ(*sizes, (std::vector<std::vector<int64_t>>{{rows, kCols}}));
    addRowsSeen = 0;
    Error err = exec->run(ins, std::vector<TensorRef>{ref(out, {rows, kCols})});
    ASSERT_FALSE(err) << err.message();
    EXPECT_EQ(addRowsSeen.load(), rows);
    expectAdded(x, y, out);
  }
}

TEST(Executor, StridedCallerTensorsAreCopied) {
  AddGraph g;
  auto exec = g.make();
  ASSERT_TRUE(exec);
  int64_t rows = 3;
  // x is given transposed in memory: element (i, j) at j * rows + i.
  std::vector<float> xt = randomFloats(rows * kCols, 3), y = randomFloats(rows * kCols, 4);
  std::vector<float> x(rows * kCols);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < kCols; ++j)
      x[i * kCols + j] = xt[j * rows + i];
  // The output also goes out transposed.
  std::vector<float> outT(rows * kCols);
  Error err = exec->run(std::vector<TensorRef>{ref(xt, {rows, kCols}, {1, rows}),
                                               ref(y, {rows, kCols})},
                        std::vector<TensorRef>{ref(outT, {rows, kCols}, {1, rows})});
  ASSERT_FALSE(err) << err.message();
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < kCols; ++j)
      EXPECT_EQ(outT[j * rows + i], x[i * kCols + j] + y[i * kCols + j]);
}

TEST(Executor, InputErrorsNameTheInput) {
  AddGraph g;
  auto exec = g.make();
  ASSERT_TRUE(exec);
  std::vector<float> a(40), b(40), c(40);
  std::vector<double> d(40);
  auto message = [&](std::vector<TensorRef> ins) {
    auto sizes = exec->outputSizes(ins);
    Error err = exec->run(ins, std::vector<TensorRef>{ref(c, {3, kCols})});
    EXPECT_TRUE(bool(err));
    EXPECT_FALSE(bool(sizes));
    return sizes ? std::string() : sizes.error().message();
  };
  EXPECT_EQ(message({ref(a, {3, kCols})}), "expected 2 inputs, got 1");
  TensorRef f64{d.data(), DType::Float64, {3, kCols}, {}};
  EXPECT_EQ(message({ref(a, {3, kCols}), f64}),
            "input 'y': expected f32[s0, 4], got f64[3, 4]");
  EXPECT_EQ(message({ref(a, {3, kCols}), ref(b, {3, 5})}),
            "input 'y': expected f32[s0, 4], got f32[3, 5]");
  EXPECT_EQ(message({ref(a, {3, kCols}), ref(b, {3})}), "input 'y': expected f32[s0, 4], got f32[3]");
  EXPECT_EQ(message({ref(a, {3, kCols}), ref(b, {2, kCols})}),
            "input 'y': dimension 0 is 2, but s0 is already 3");
  EXPECT_EQ(message({ref(a, {1, kCols}), ref(b, {1, kCols})}),
            "input 'x': dimension 0 is 1, outside the range [2, 1048576] of s0");
}

TEST(Executor, OutputErrors) {
  AddGraph g;
  auto exec = g.make();
  ASSERT_TRUE(exec);
  std::vector<float> a(12), b(12), c(12);
  std::vector<TensorRef> ins = {ref(a, {3, kCols}), ref(b, {3, kCols})};
  Error wrongShape = exec->run(ins, std::vector<TensorRef>{ref(c, {4, 3})});
  ASSERT_TRUE(bool(wrongShape));
  EXPECT_EQ(wrongShape.message(), "output 'out': expected f32[3, 4], got f32[4, 3]");
  Error wrongCount = exec->run(ins, std::vector<TensorRef>{});
  ASSERT_TRUE(bool(wrongCount));
  EXPECT_EQ(wrongCount.message(), "expected 1 outputs, got 0");
}

TEST(Executor, MissingKernelIsNamed) {
  AddGraph g;
  g.lib.fns.clear();
  auto e = g.executor(g.lib, {});
  ASSERT_FALSE(bool(e));
  EXPECT_EQ(e.error().message(), "kernel 'add_kernel' is not in the kernel library");
}

/// x: f32[s0, 4] -> t = rowsum(x) (an intermediate) -> out = 2 * t, and out
/// also given as a view: its elements 1, 3, 5, ... (a strided output).
struct RowSumGraph : LoopGraphMaker {
  RowSumGraph() {
    const SymExpr *s0 = sym("s0");
    input("x", DType::Float32, {s0, k(kCols)});
    uint32_t t = buffer("t", BufferKind::Intermediate, DType::Float32, {s0});
    uint32_t out = buffer("out", BufferKind::Output, DType::Float32, {s0});
    LoopNode sum;
    sum.kind = LoopNode::Kind::Reduction;
    sum.name = "sum";
    sum.ranges = {s0};
    sum.reductionRanges = {k(kCols)};
    sum.output = t;
    sum.body.ops.push_back({BodyOp::Kind::Load, DType::Float32, ScalarOp::Add, {}, 0});
    LoopNode twice;
    twice.name = "twice";
    twice.ranges = {s0};
    twice.output = out;
    twice.body.ops.push_back({BodyOp::Kind::Load, DType::Float32, ScalarOp::Add, {}, t});
    graph.nodes = {sum, twice};
    graph.plan.kernels = {{"rowsum", {0}, {s0}}, {"double", {1}, {s0}}};
    graph.plan.steps = {{PlanStep::Kind::Kernel, 0, {}, {}}, {PlanStep::Kind::Kernel, 1, {t}, {}}};
    graph.plan.symbols = {"s0"};
    output("out", out, contiguous(DType::Float32, {s0}));
    const SymExpr *half = module.syms().floorDiv(s0, k(2));
    output("odd", out, view(DType::Float32, {half}, {k(2)}, 1));
    lib.fns = {{"rowsum", rowSumKernel}, {"double", doubleKernel}};
  }
  FakeLibrary lib;
};

TEST(Executor, IntermediateInTheArenaAndAnOutputView) {
  RowSumGraph g;
  auto e = g.executor(g.lib, {1});
  ASSERT_TRUE(bool(e)) << e.error().message();
  auto exec = e.take();
  for (int64_t rows : {6, 9, 50000}) {
    std::vector<float> x = randomFloats(rows * kCols, 5);
    std::vector<float> out(rows), odd(rows / 2);
    Error err = exec->run(std::vector<TensorRef>{ref(x, {rows, kCols})},
                          std::vector<TensorRef>{ref(out, {rows}), ref(odd, {rows / 2})});
    ASSERT_FALSE(err) << err.message();
    for (int64_t i = 0; i < rows; ++i) {
      float sum = 0;
      for (int64_t j = 0; j < kCols; ++j)
        sum += x[i * kCols + j];
      ASSERT_EQ(out[i], 2 * sum) << i;
    }
    for (int64_t i = 0; i < rows / 2; ++i)
      ASSERT_EQ(odd[i], out[2 * i + 1]) << i;
  }
}

TEST(Executor, RunsWithThePlansPlacements) {
  // With static sizes and the plan's placement, the run still computes.
  RowSumGraph g;
  g.graph.plan.placements = {{1, 128, 64}};
  g.graph.plan.arenaBytes = 256;
  for (LoopBinding *b : {&g.graph.inputs[0], &g.graph.outputs[0]})
    b->type.sizes[0] = g.k(8);
  g.graph.outputs.pop_back();
  g.graph.outputSpecs.pop_back();
  for (Buffer &b : g.graph.buffers)
    b.sizes[0] = g.k(8);
  g.graph.plan.symbols.clear();
  for (KernelGroup &k : g.graph.plan.kernels)
    k.parallelRanges = {g.k(8)};
  for (LoopNode &n : g.graph.nodes)
    for (const SymExpr *&r : n.ranges)
      r = r->isConst() ? r : g.k(8);
  auto e = g.executor(g.lib, {1});
  ASSERT_TRUE(bool(e)) << e.error().message();
  std::vector<float> x = randomFloats(8 * kCols, 6), out(8);
  Error err = (*e)->run(std::vector<TensorRef>{ref(x, {8, kCols})},
                        std::vector<TensorRef>{ref(out, {8})});
  ASSERT_FALSE(err) << err.message();
  for (int64_t i = 0; i < 8; ++i)
    EXPECT_FLOAT_EQ(out[i], 2 * (x[4 * i] + x[4 * i + 1] + x[4 * i + 2] + x[4 * i + 3]));
}

TEST(Executor, OutputAliasingAnInput) {
  // No step at all: the output is a transposed view of the input's buffer.
  LoopGraphMaker g;
  uint32_t x = g.input("x", DType::Float32, g.ks({2, 3}));
  g.output("xt", x, g.view(DType::Float32, g.ks({3, 2}), g.ks({1, 3})));
  FakeLibrary lib;
  auto e = g.executor(lib, {});
  ASSERT_TRUE(bool(e)) << e.error().message();
  std::vector<float> in = {1, 2, 3, 4, 5, 6}, out(6);
  Error err = (*e)->run(std::vector<TensorRef>{ref(in, {2, 3})},
                        std::vector<TensorRef>{ref(out, {3, 2})});
  ASSERT_FALSE(err) << err.message();
  EXPECT_EQ(out, (std::vector<float>{1, 4, 2, 5, 3, 6}));
}

TEST(Executor, FallbackStepRunsTheReferenceKernel) {
  LoopGraphMaker g;
  uint32_t x = g.input("x", DType::Float32, g.ks({3, 5}));
  uint32_t out = g.buffer("out", BufferKind::Output, DType::Float32, g.ks({3, 5}));
  LoopNode &n = g.callNode(LoopNode::Kind::Fallback, ops::aten_cumsum_default, {g.whole(x)},
                           {g.whole(out)});
  n.args = {tensorArg("self", 0), intArg("dim", 1)};
  g.output("out", out, g.whole(out).type);
  FakeLibrary lib;
  auto e = g.executor(lib, {});
  ASSERT_TRUE(bool(e)) << e.error().message();
  std::vector<float> in = randomFloats(15, 7), result(15);
  Error err = (*e)->run(std::vector<TensorRef>{ref(in, {3, 5})},
                        std::vector<TensorRef>{ref(result, {3, 5})});
  ASSERT_FALSE(err) << err.message();
  for (int64_t i = 0; i < 3; ++i) {
    float acc = 0;
    for (int64_t j = 0; j < 5; ++j) {
      acc += in[i * 5 + j];
      EXPECT_NEAR(result[i * 5 + j], acc, 1e-6) << i << "," << j;
    }
  }
}

TEST(Executor, ViewPastItsBufferIsRefused) {
  LoopGraphMaker g;
  uint32_t x = g.input("x", DType::Float32, g.ks({4}));
  uint32_t out = g.buffer("out", BufferKind::Output, DType::Float32, g.ks({4}));
  BufferView tooFar = g.whole(x);
  tooFar.type.storageOffset = g.k(1);
  LoopNode &n = g.callNode(LoopNode::Kind::Fallback, ops::aten_neg_default, {tooFar}, {g.whole(out)});
  n.args = {tensorArg("self", 0)};
  g.output("out", out, g.whole(out).type);
  FakeLibrary lib;
  auto e = g.executor(lib, {});
  ASSERT_TRUE(bool(e)) << e.error().message();
  std::vector<float> in(4), result(4);
  Error err = (*e)->run(std::vector<TensorRef>{ref(in, {4})}, std::vector<TensorRef>{ref(result, {4})});
  ASSERT_TRUE(bool(err));
  EXPECT_EQ(err.message(), "node 'n0': its view f32[4] reaches past buffer 'x'");
}

TEST(Executor, TensorsInGpuMemoryAreRefused) {
  LoopGraphMaker g;
  uint32_t x = g.input("x", DType::Float32, g.ks({4}));
  uint32_t out = g.buffer("out", BufferKind::Output, DType::Float32, g.ks({4}));
  LoopNode &n = g.callNode(LoopNode::Kind::Fallback, ops::aten_neg_default, {g.whole(x)},
                           {g.whole(out)});
  n.args = {tensorArg("self", 0)};
  g.output("out", out, g.whole(out).type);
  FakeLibrary lib;
  auto e = g.executor(lib, {});
  ASSERT_TRUE(bool(e)) << e.error().message();
  std::vector<float> in(4), result(4);
  TensorRef onDevice = ref(in, {4});
  onDevice.onDevice = true;
  Error err = (*e)->run(std::vector<TensorRef>{onDevice}, std::vector<TensorRef>{ref(result, {4})});
  ASSERT_TRUE(bool(err));
  EXPECT_EQ(err.message(), "input 'x' is in GPU memory, but graph @g runs on the CPU");
}

TEST(Executor, FallbackWithoutReferenceKernelFailsAtCreate) {
  LoopGraphMaker g;
  uint32_t x = g.input("x", DType::Float32, g.ks({3}));
  g.callNode(LoopNode::Kind::Fallback, ops::aten_copy__default, {g.whole(x)}, {g.whole(x)});
  FakeLibrary lib;
  auto e = g.executor(lib, {});
  ASSERT_FALSE(bool(e));
  EXPECT_EQ(e.error().message(),
            "node 'n0' (aten.copy_.default): no reference kernel for aten.copy_.default");
}

} // namespace
