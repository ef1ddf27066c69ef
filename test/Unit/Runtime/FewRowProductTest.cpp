//===- FewRowProductTest.cpp - The few-row product's kernel against a reference -===//
//
// The kernel: every level the host runs, float32 and bfloat16 weights, 1
// to kFewRowsMax left rows, N and K that are not multiples of the tiles or
// the vectors (tails), padded row strides, and a range of columns that
// starts and ends inside a tile, against a product summed in double.
// The step: which matrix products it takes (few rows, a constant weight
// in [N, K] layout), and its post-ops against the reference.
//
//===----------------------------------------------------------------------===//
#include "HalfBits.h"
#include "LoopGraphMaker.h"

#include "Cpu/FewRowProduct.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <random>

using namespace gc;
using namespace gc::test;

namespace {

/// The levels this CPU runs, highest first.
std::vector<std::string> hostLevels() {
  __builtin_cpu_init();
  std::vector<std::string> levels;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
    levels.push_back("x86-64-v4");
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    levels.push_back("x86-64-v3");
  levels.push_back("x86-64");
  return levels;
}

uint16_t truncateToBFloat16(float f) {
  return static_cast<uint16_t>(std::bit_cast<uint32_t>(f) >> 16);
}
float bfloat16Value(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

struct Case {
  int64_t rows, n, k;
  bool bf16;
};

/// Runs the kernel of `level` on random operands over columns
/// [nBegin, nEnd) and checks them against the reference: rtol 1e-5 and an
/// atol of 1e-6 times the sum of the products' magnitudes (float32
/// accumulation in another order). Columns outside the range stay as they
/// were.
/// The kernel's operands for `c`: random values, bfloat16 ones for a
/// bfloat16 weight and its left rows (as the step gives them).
struct Operands {
  int64_t lda, ldw, ldo;
  std::vector<float> a, wf;
  std::vector<uint16_t> wh;

  explicit Operands(const Case &c) : lda(c.k + 3), ldw(c.k + 5), ldo(c.n + 2) {
    std::mt19937 rng(static_cast<uint32_t>(c.rows * 1000003 + c.n * 1009 + c.k));
    std::uniform_real_distribution<float> dist(-1, 1);
    a.resize(c.rows * lda);
    wf.resize(c.n * ldw);
    wh.resize(c.n * ldw);
    for (float &x : a)
      x = c.bf16 ? bfloat16Value(truncateToBFloat16(dist(rng))) : dist(rng);
    for (int64_t i = 0; i < c.n * ldw; ++i) {
      // The same values either way: bfloat16 ones, widened for float32.
      wh[i] = truncateToBFloat16(dist(rng));
      wf[i] = bfloat16Value(wh[i]);
    }
  }
  /// The output of `kernel` over columns [nBegin, nEnd), `unwritten` elsewhere.
  std::vector<float> run(FewRowKernel kernel, const Case &c, int64_t nBegin, int64_t nEnd,
                         float unwritten) const {
    std::vector<float> out(c.rows * ldo, unwritten), left(c.rows * c.k);
    kernel->prepare(a.data(), lda, c.rows, c.k, c.bf16, left.data());
    kernel->run(left.data(), c.rows, c.k, c.bf16 ? static_cast<const void *>(wh.data()) : wf.data(),
                ldw, c.bf16, out.data(), ldo, nBegin, nEnd);
    return out;
  }
};

void check(const std::string &level, const Case &c, int64_t nBegin, int64_t nEnd) {
  FewRowKernel kernel = fewRowKernel(level);
  ASSERT_NE(kernel, nullptr) << level;
  Operands ops(c);
  const std::vector<float> &a = ops.a, &wf = ops.wf;
  int64_t lda = ops.lda, ldw = ops.ldw, ldo = ops.ldo;
  constexpr float kUnwritten = 12345.f;
  std::vector<float> out = ops.run(kernel, c, nBegin, nEnd, kUnwritten);
  for (int64_t m = 0; m < c.rows; ++m)
    for (int64_t j = 0; j < c.n; ++j) {
      float got = out[m * ldo + j];
      if (j < nBegin || j >= nEnd) {
        EXPECT_EQ(got, kUnwritten) << level << " row " << m << " column " << j;
        continue;
      }
      double want = 0, magnitude = 0;
      for (int64_t i = 0; i < c.k; ++i) {
        double p = static_cast<double>(a[m * lda + i]) * wf[j * ldw + i];
        want += p;
        magnitude += std::fabs(p);
      }
      EXPECT_NEAR(got, want, 1e-5 * std::fabs(want) + 1e-6 * magnitude)
          << level << (c.bf16 ? " bf16" : " f32") << " rows " << c.rows << " n " << c.n << " k "
          << c.k << " at (" << m << ", " << j << ")";
    }
}

TEST(FewRowProduct, MatchesReferenceWithTails) {
  for (const std::string &level : hostLevels())
    for (bool bf16 : {false, true})
      for (int64_t rows = 1; rows <= kFewRowsMax; ++rows)
        for (int64_t n : {1, 3, 4, 9, 16, 37})
          for (int64_t k : {1, 5, 16, 17, 32, 67, 300})
            check(level, {rows, n, k, bf16}, 0, n);
}

// The x86-64-v4 kernel's two bfloat16 forms add the same products in the
// same order: equal bits (no product here is subnormal). On a host
// without AVX-512 BF16 both are the split form.
TEST(FewRowProduct, DotFormEqualsSplitForm) {
  std::vector<std::string> levels = hostLevels();
  if (levels.front() != "x86-64-v4")
    GTEST_SKIP() << "the host runs no x86-64-v4 code";
  FewRowKernel best = fewRowKernel("x86-64-v4"),
               split = fewRowKernel("x86-64-v4", FewRowForm::Split);
  for (int64_t rows = 1; rows <= kFewRowsMax; ++rows)
    for (int64_t n : {3, 16, 37})
      for (int64_t k : {5, 32, 67, 300, 1000}) {
        Case c{rows, n, k, true};
        Operands ops(c);
        std::vector<float> want = ops.run(split, c, 0, n, 0), got = ops.run(best, c, 0, n, 0);
        for (size_t i = 0; i < want.size(); ++i)
          ASSERT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(want[i]))
              << "rows " << rows << " n " << n << " k " << k << " element " << i;
      }
}

TEST(FewRowProduct, WritesOnlyItsColumns) {
  for (const std::string &level : hostLevels())
    for (bool bf16 : {false, true}) {
      check(level, {3, 23, 41, bf16}, 5, 18);
      check(level, {kFewRowsMax, 11, 33, bf16}, 2, 3);
    }
}

/// mm(in0 [M, K], in1 [N, K] seen as [K, N]) + in2 [N] (bias), then SiLU,
/// then + in3 [M, N]: the step prepared for it (null: declined), with
/// in1 constant or not and in1's view transposed (Linear layout) or not.
struct StepCase {
  int64_t m, k, n;
  bool constantWeight = true, linearLayout = true;
};

struct Prepared {
  LoopGraphMaker g;
  std::shared_ptr<const RuntimePlan> plan;
  const plan::OpStep *step = nullptr;
  std::unique_ptr<CpuCall> call;
};

std::unique_ptr<Prepared> prepare(const StepCase &c, const ThreadPool &pool) {
  auto p = std::make_unique<Prepared>();
  LoopGraphMaker &g = p->g;
  std::vector<BufferView> ins;
  std::vector<std::vector<int64_t>> shapes = {{c.m, c.k}, {c.n, c.k}, {c.n}, {c.m, c.n}};
  for (size_t i = 0; i < shapes.size(); ++i)
    ins.push_back(g.whole(g.input("in" + std::to_string(i), DType::Float32, g.ks(shapes[i]))));
  uint32_t out = g.buffer("out", BufferKind::Output, DType::Float32, g.ks({c.m, c.n}));
  LoopNode &node = g.callNode(LoopNode::Kind::Extern, ops::aten_mm_default, ins, {g.whole(out)});
  node.inputs[1].type = c.linearLayout ? g.view(DType::Float32, g.ks({c.k, c.n}), g.ks({1, c.k}))
                                       : g.view(DType::Float32, g.ks({c.k, c.n}), g.ks({c.n, 1}));
  node.args = {tensorArg("self", 0), tensorArg("mat2", 1)};
  node.postOps = {{PostOp::Kind::AddBias, 2}, {PostOp::Kind::Swish, 0}, {PostOp::Kind::Add, 3}};
  g.output("out", out, g.whole(out).type);
  Expected<std::shared_ptr<const RuntimePlan>> plan = g.runtimePlan();
  EXPECT_TRUE(bool(plan)) << (plan ? "" : plan.error().message());
  if (!plan)
    return p;
  p->plan = *plan;
  p->step = p->plan->root().graphs()->Get(0)->steps()->Get(0)->detail_as_OpStep();
  const plan::OpStep &step = *p->step;
  std::vector<StridedLayout> layouts;
  for (const BufferView &v : node.inputs) {
    StridedLayout l;
    for (const SymExpr *e : v.type.sizes)
      l.sizes.push_back(e->constant());
    for (const SymExpr *e : v.type.strides)
      l.strides.push_back(e->constant());
    layouts.push_back(l);
  }
  StridedLayout o{{c.m, c.n}, {c.n, 1}, 0};
  Expected<std::unique_ptr<CpuCall>> call =
      prepareFewRowProduct(step, layouts, {o}, {false, c.constantWeight, false, false}, "", pool);
  EXPECT_TRUE(bool(call)) << (call ? "" : call.error().message());
  if (call)
    p->call = call.take();
  return p;
}

TEST(FewRowProduct, TakesFewRowsByAConstantLinearWeight) {
  ThreadPool pool(2);
  EXPECT_NE(prepare({1, 7, 5}, pool)->call, nullptr);
  EXPECT_NE(prepare({kFewRowsMax, 7, 5}, pool)->call, nullptr);
  EXPECT_EQ(prepare({kFewRowsMax + 1, 7, 5}, pool)->call, nullptr);
  EXPECT_EQ(prepare({1, 7, 5, /*constantWeight=*/false}, pool)->call, nullptr);
  EXPECT_EQ(prepare({1, 7, 5, true, /*linearLayout=*/false}, pool)->call, nullptr);
}

TEST(FewRowProduct, PostOpsMatchReference) {
  ThreadPool pool(2);
  for (int64_t m : {1, 3, 8}) {
    int64_t k = 19, n = 13;
    std::unique_ptr<Prepared> p = prepare({m, k, n}, pool);
    ASSERT_NE(p->call, nullptr);
    std::vector<float> a = randomFloats(m * k, 1), w = randomFloats(n * k, 2),
                       bias = randomFloats(n, 3), residual = randomFloats(m * n, 4),
                       out(m * n, NAN);
    // Each plan buffer's address, through the step's views.
    std::vector<char *> buffers(16, nullptr);
    float *data[] = {a.data(), w.data(), bias.data(), residual.data()};
    for (uint32_t i = 0; i < 4; ++i)
      buffers.at(p->step->inputs()->Get(i)->buffer()) = reinterpret_cast<char *>(data[i]);
    buffers.at(p->step->outputs()->Get(0)->buffer()) = reinterpret_cast<char *>(out.data());
    ASSERT_FALSE(p->call->run({.hostBuffers = buffers.data()}));
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double x = bias[j];
        for (int64_t q = 0; q < k; ++q)
          x += double(a[i * k + q]) * w[j * k + q];
        x = x / (1 + std::exp(-x)) + residual[i * n + j];
        EXPECT_NEAR(out[i * n + j], x, 1e-5 * std::fabs(x) + 1e-5)
            << "m " << m << " at " << i << ", " << j;
      }
  }
}

/// A bfloat16 product whose epilogue was widened (lib/Schedule/PostOps.cpp):
/// bfloat16 operands, a float32 bias and a float32 or bfloat16 result, each
/// read and written in its own type.
TEST(FewRowProduct, WidenedBfloat16ResultAndFloatBias) {
  ThreadPool pool(2);
  const int64_t m = 3, k = 40, n = 11;
  for (DType stored : {DType::Float32, DType::BFloat16}) {
    LoopGraphMaker g;
    std::vector<BufferView> ins = {g.whole(g.input("a", DType::BFloat16, g.ks({m, k}))),
                                   g.whole(g.input("w", DType::BFloat16, g.ks({n, k}))),
                                   g.whole(g.input("bias", DType::Float32, g.ks({n})))};
    uint32_t out = g.buffer("out", BufferKind::Output, stored, g.ks({m, n}));
    LoopNode &node = g.callNode(LoopNode::Kind::Extern, ops::aten_mm_default, ins, {g.whole(out)});
    node.inputs[1].type = g.view(DType::BFloat16, g.ks({k, n}), g.ks({1, k}));
    node.args = {tensorArg("self", 0), tensorArg("mat2", 1)};
    node.postOps = {{PostOp::Kind::AddBias, 2}, {PostOp::Kind::Relu, 0}};
    g.output("out", out, g.whole(out).type);
    Expected<std::shared_ptr<const RuntimePlan>> plan = g.runtimePlan();
    ASSERT_TRUE(bool(plan)) << plan.error().message();
    const plan::OpStep &step = *(*plan)->root().graphs()->Get(0)->steps()->Get(0)->detail_as_OpStep();
    std::vector<StridedLayout> layouts = {{{m, k}, {k, 1}, 0}, {{k, n}, {1, k}, 0}, {{n}, {1}, 0}};
    Expected<std::unique_ptr<CpuCall>> call =
        prepareFewRowProduct(step, layouts, {{{m, n}, {n, 1}, 0}}, {false, true, false}, "", pool);
    ASSERT_TRUE(bool(call)) << call.error().message();
    ASSERT_NE(*call, nullptr) << dtypeName(stored);
    std::vector<float> a = randomFloats(m * k, 1), w = randomFloats(n * k, 2), bias = randomFloats(n, 3);
    std::vector<uint16_t> a16, w16, out16(m * n);
    for (float &x : a)
      a16.push_back(toBf16(x)), x = fromBf16(a16.back());
    for (float &x : w)
      w16.push_back(toBf16(x)), x = fromBf16(w16.back());
    std::vector<float> out32(m * n, NAN);
    std::vector<char *> buffers(16, nullptr);
    void *data[] = {a16.data(), w16.data(), bias.data()};
    for (uint32_t i = 0; i < 3; ++i)
      buffers.at(step.inputs()->Get(i)->buffer()) = static_cast<char *>(data[i]);
    buffers.at(step.outputs()->Get(0)->buffer()) = stored == DType::Float32
                                                       ? reinterpret_cast<char *>(out32.data())
                                                       : reinterpret_cast<char *>(out16.data());
    ASSERT_FALSE((*call)->run({.hostBuffers = buffers.data()}));
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double x = bias[j];
        for (int64_t q = 0; q < k; ++q)
          x += double(a[i * k + q]) * w[j * k + q];
        x = std::max(x, 0.0);
        float got = stored == DType::Float32 ? out32[i * n + j] : fromBf16(out16[i * n + j]);
        double tolerance = stored == DType::Float32 ? 1e-5 : 4e-3 * std::fabs(x) + 1e-6;
        EXPECT_NEAR(got, x, tolerance) << dtypeName(stored) << " at " << i << ", " << j;
      }
  }
}

TEST(FewRowProduct, UnknownLevelHasNoKernel) { EXPECT_EQ(fewRowKernel("x86-64-v9"), nullptr); }

} // namespace
