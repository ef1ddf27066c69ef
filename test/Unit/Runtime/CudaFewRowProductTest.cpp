//===- CudaFewRowProductTest.cpp - The few-row product kernel on GPUs -----===//
//
// planFewRowProduct's decisions (any machine): what it takes and what it
// leaves to cuBLASLt. Then the kernel itself against a product summed in
// double from the same rounded operands: every dtype, 1 to kGpuFewRowsMax
// rows, N and K that are not multiples of the tile or the vector (tails),
// k long enough for several unrolled passes, unaligned rows (the
// element-by-element path), every epilogue, a strided output, and elements
// outside the output left as they were. CudaFewRow* run it on a GPU through
// the call the executor prepares (skipped without one); CudaFewRowOnHost*
// run the same source compiled for the host (FewRowKernelOnHost.h), with
// fewer row counts, wherever the tests run.
//
// Tolerance: |got - want| <= rtol |want| + 1e-5 (magnitude), where the
// magnitude is the sum of the absolute products, bias and residual (float32
// accumulation in another order) and rtol is 1e-3 for float32 and 1e-2 for
// bfloat16 and float16 (the output is rounded once to the type: 2^-9
// relative for bfloat16). A gated pair's magnitude is each side's times
// the other side's value.
//
// Gated pairs (a gated MLP's gate and up products as one, GatedSilu): what
// the planner takes and declines, and the kernel against silu(g) * u of
// the two sums in double, with the same row counts, tails, unaligned rows,
// thread groups and groups of products as the plain products.
//
// RMSNorm prologues (the left rows normalised, times a weight g, as the
// product reads them): the kernel against the sums of a[m, k] g[k] w[n, k]
// in double scaled by 1 / sqrt(mean_k a[m, k]^2 + eps), on plain products
// and gated pairs, with the same row counts, tails and unaligned rows, and
// in groups beside products without one; the planner takes them whatever
// the rule, and declines a norm weight that is not one contiguous value
// per k.
//
// Groups of products (one launch over several weights that share their
// left rows): which consecutive steps fewRowGroupRuns groups and which it
// keeps apart, the blocks planFewRowGroup gives each product, the overlap
// check at run time, and the grouped kernel at the same tolerance, on the
// host and on a GPU.
//
//===----------------------------------------------------------------------===//
#include "Cuda/CudaFewRowProduct.h"
#include "FewRowKernelOnHost.h"
#include "GpuTestKernels.h"
#include "HalfBits.h"

#include "Cuda/CudaDriver.h"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <random>

namespace gc {
namespace {

using test::bits16;
using test::from16;

using cuda::FewRowLaunch;
using cuda::kGpuFewRowsMax;
using cuda::planFewRowProduct;

StridedLayout layout(std::vector<int64_t> sizes, std::vector<int64_t> strides, int64_t offset = 0) {
  StridedLayout l;
  l.sizes = std::move(sizes);
  l.strides = std::move(strides);
  l.offset = offset;
  return l;
}

/// A product out[m, n] = a[m, :] . w[n, :] with its epilogue, as layouts:
/// input 0 the left rows [rows, K], input 1 the weight's [K, N] view of
/// [N, K] rows, then the bias and the residual when present, or the second
/// weight of a gated pair (out[m, n] = silu(a[m, :] . w[n, :]) *
/// a[m, :] . up[n, :]), then an RMSNorm prologue's weight when present.
struct Product {
  int64_t rows, n, k;
  plan::DType type = plan::DType::BFloat16;
  StridedLayout a, w, out, bias, residual, up, norm;
  bool hasBias = false, hasResidual = false, biasInCall = false, gated = false;
  std::optional<float> normEps; ///< set: an RMSNorm prologue
  std::vector<plan::PostOp> postOps;
  plan::DnnlPrimitive primitive = plan::DnnlPrimitive::Matmul;
  std::optional<plan::DType> weightType; ///< none: `type`

  Product(int64_t rows, int64_t n, int64_t k, plan::DType type = plan::DType::BFloat16)
      : rows(rows), n(n), k(k), type(type) {
    a = layout({rows, k}, {k, 1});
    w = layout({k, n}, {1, k});
    out = layout({rows, n}, {n, 1});
  }
  void addBias(bool inCall = false) {
    hasBias = true;
    biasInCall = inCall;
    bias = layout({n}, {1});
    if (!inCall)
      postOps.emplace_back(plan::PostOpKind::AddBias, 2);
  }
  void addResidual() {
    hasResidual = true;
    residual = layout(out.sizes, out.strides);
    postOps.emplace_back(plan::PostOpKind::Add, hasBias ? 3 : 2);
  }
  /// Makes the product a gated pair; `up` takes w's layout at the call.
  void addUp() {
    gated = true;
    up = w;
    postOps.emplace_back(plan::PostOpKind::GatedSilu, uint32_t(inputs().size() - 1));
  }
  /// Normalises the left rows first, with a weight of k values.
  void addNorm(float eps = 1e-5f) {
    normEps = eps;
    norm = layout({k}, {1});
  }
  std::vector<StridedLayout> inputs() const {
    std::vector<StridedLayout> in = {a, w};
    if (hasBias)
      in.push_back(bias);
    if (hasResidual)
      in.push_back(residual);
    if (gated)
      in.push_back(up);
    if (normEps)
      in.push_back(norm);
    return in;
  }
};

/// The one-step plan of `p`: input 0 is buffer 0, input i > 0 buffer
/// `base` + i, the output the buffer after the inputs' (sizes are read from
/// the layouts, not the views).
struct Step {
  flatbuffers::FlatBufferBuilder fbb;
  const plan::OpStep *step = nullptr;

  explicit Step(const Product &p, uint32_t base = 0) {
    size_t inputs = p.inputs().size();
    std::vector<flatbuffers::Offset<plan::View>> ins, outs;
    auto view = [&](uint32_t buffer, plan::DType t) {
      auto none = fbb.CreateVector(std::vector<flatbuffers::Offset<plan::SizeProgram>>{});
      return plan::CreateView(fbb, buffer, t, none, none);
    };
    for (size_t i = 0; i < inputs; ++i)
      ins.push_back(
          view(i == 0 ? 0 : base + uint32_t(i), i == 1 && p.weightType ? *p.weightType : p.type));
    outs.push_back(view(base + uint32_t(inputs), p.type));
    auto postOps = fbb.CreateVectorOfStructs(p.postOps);
    std::optional<plan::RmsNormPrologue> norm;
    if (p.normEps)
      norm = plan::RmsNormPrologue(uint32_t(inputs - 1), *p.normEps);
    auto dnnl = plan::CreateDnnlCall(fbb, p.primitive, 0, 1, p.biasInCall ? 2 : -1, 0, 0, 0, 1,
                                     postOps, 0, 0, 1.f, 0, false, norm ? &*norm : nullptr);
    auto name = fbb.CreateString("aten.mm.default");
    auto insV = fbb.CreateVector(ins), outsV = fbb.CreateVector(outs);
    fbb.Finish(plan::CreateOpStep(fbb, name, insV, outsV, dnnl));
    step = flatbuffers::GetRoot<plan::OpStep>(fbb.GetBufferPointer());
  }
};

/// The H100's and H200's SM count, for the group decisions.
constexpr int kSMs = 132;

FewRowLaunch plan(const Product &p, cuda::FewRowPick pick = cuda::FewRowPick::ByRule) {
  Step s(p);
  return planFewRowProduct(*s.step, p.inputs(), {p.out}, kSMs, pick);
}

TEST(CudaFewRowPlan, TakesAFewRowsByALinearWeight) {
  Product p(1, 2048, 4096);
  FewRowLaunch l = plan(p);
  ASSERT_EQ(l.entry, "gc_fewrow_bf16_r1") << l.declined;
  // 1024 tiles of two rows: two groups a block would leave 512 blocks,
  // under four per SM.
  EXPECT_EQ(l.args.groups, 1);
  EXPECT_EQ(l.blocks, 2048u / cuda::kFewRowTile);
  EXPECT_EQ(l.args.n, 2048);
  EXPECT_EQ(l.args.k, 4096);
  EXPECT_EQ(l.args.wRowStride, 4096);
  EXPECT_EQ(l.args.activation, cuda::kFewRowNoActivation);
  EXPECT_TRUE(l.wideStrides);
  EXPECT_FALSE(l.present[cuda::kFewRowBias]);
  EXPECT_EQ(l.buffers[cuda::kFewRowOut], 2u);

  // Eight rows of float32, rank 3 with a batch of one, an odd N (the last
  // block half full), a bias in the call, a residual and ReLU; offsets in
  // bytes.
  Product q(cuda::kGpuFewRowsExact, 37, 64, plan::DType::Float32);
  q.a = layout({1, 8, 64}, {8 * 64, 64, 1}, 3);
  q.w = layout({1, 64, 37}, {0, 1, 64});
  q.out = layout({1, 8, 37}, {8 * 37, 37, 1});
  q.addBias(/*inCall=*/true);
  q.addResidual();
  q.postOps.emplace_back(plan::PostOpKind::Relu, 0);
  l = plan(q);
  ASSERT_EQ(l.entry, "gc_fewrow_f32_r8") << l.declined;
  EXPECT_EQ(l.args.rows, 8);
  // 16 chunks a row: eight groups of a warp, 19 tiles in 3 blocks.
  EXPECT_EQ(l.args.groups, 8);
  EXPECT_EQ(l.blocks, 3u);
  EXPECT_EQ(l.args.a, 12u);
  EXPECT_EQ(l.args.aRowStride, 64);
  EXPECT_EQ(l.args.activation, cuda::kFewRowRelu);
  EXPECT_TRUE(l.present[cuda::kFewRowBias] && l.present[cuda::kFewRowResidual]);
  EXPECT_EQ(l.buffers[cuda::kFewRowBias], 2u);
  EXPECT_EQ(l.buffers[cuda::kFewRowResidual], 3u);
  EXPECT_EQ(l.args.residualRowStride, 37);

  // Past the exact instances' rows: the instance of kGpuFewRowsMax rows,
  // told the count.
  l = plan(Product(12, 116, 116, plan::DType::Float32));
  ASSERT_EQ(l.entry, "gc_fewrow_f32_r16") << l.declined;
  EXPECT_EQ(l.args.rows, 12);

  // float16 with a bias post-op and tanh GELU; padded weight rows whose
  // stride breaks 16-byte vectors.
  Product h(3, 5, 7, plan::DType::Float16);
  h.w = layout({7, 5}, {1, 9});
  h.addBias();
  h.postOps.emplace_back(plan::PostOpKind::GeluTanh, 0);
  // The rule leaves 16-bit products of more than one row to cuBLASLt's
  // tensor cores (faster there on an H200); the kernel still takes them.
  EXPECT_EQ(plan(h).entry, "");
  l = plan(h, cuda::FewRowPick::WheneverPossible);
  ASSERT_EQ(l.entry, "gc_fewrow_f16_r3") << l.declined;
  EXPECT_EQ(l.args.activation, cuda::kFewRowGeluTanh);
  EXPECT_FALSE(l.wideStrides);
}

TEST(CudaFewRowPlan, GroupsRowsWhileBlocksFillTheSMs) {
  // Llama-3.1-8B's gate projection: 7168 tiles, still 896 blocks in 8
  // groups.
  FewRowLaunch l = plan(Product(1, 14336, 4096));
  ASSERT_FALSE(l.entry.empty()) << l.declined;
  EXPECT_EQ(l.args.groups, 8);
  EXPECT_EQ(l.blocks, 896u);
  // 4096 tiles: 4 groups make 1024 blocks, 8 would make 512 (< 4 x 132).
  l = plan(Product(1, 8192, 2048));
  EXPECT_EQ(l.args.groups, 4);
  EXPECT_EQ(l.blocks, 1024u);
  // Llama-3.2-1B's k projection: 256 tiles, one group.
  l = plan(Product(1, 512, 2048));
  EXPECT_EQ(l.args.groups, 1);
  EXPECT_EQ(l.blocks, 256u);
  // Rows of 64 bfloat16 chunks: four groups of 64 threads, whatever N.
  l = plan(Product(1, 6, 512));
  EXPECT_EQ(l.args.groups, 4);
  EXPECT_EQ(l.blocks, 1u);
  // Another count, as the benchmark sets it: 19 tiles in groups of 4.
  l = plan(Product(1, 37, 512));
  cuda::setFewRowGroups(l, 4);
  EXPECT_EQ(l.args.groups, 4);
  EXPECT_EQ(l.blocks, 5u);
}

TEST(CudaFewRowPlan, DeclinesWhatItLeavesToCuBLASLt) {
  auto declines = [](const Product &p, const char *why) {
    FewRowLaunch l = plan(p, cuda::FewRowPick::WheneverPossible);
    EXPECT_TRUE(l.entry.empty()) << why;
    EXPECT_FALSE(l.declined.empty()) << why;
  };
  declines(Product(kGpuFewRowsMax + 1, 64, 64), "more rows than the kernel takes");
  Product p(2, 64, 32);
  p.w = layout({32, 64}, {64, 1});
  declines(p, "a [K, N] weight (rows along N contiguous)");
  p = Product(2, 64, 32);
  p.a = layout({2, 32}, {1, 2});
  declines(p, "a column-major left operand");
  p = Product(2, 64, 32, plan::DType::Float64);
  declines(p, "float64");
  p = Product(2, 64, 32);
  p.weightType = plan::DType::Float32;
  declines(p, "mixed dtypes");
  p = Product(2, 64, 32);
  p.a = layout({2, 2, 32}, {64, 32, 1});
  p.w = layout({2, 32, 64}, {2048, 1, 32});
  p.out = layout({2, 2, 64}, {128, 64, 1});
  declines(p, "a batch of two products");
  p = Product(2, 64, 32);
  p.primitive = plan::DnnlPrimitive::Convolution;
  declines(p, "a convolution");
  for (plan::PostOpKind k : {plan::PostOpKind::GeluErf, plan::PostOpKind::Swish}) {
    p = Product(2, 64, 32);
    p.postOps.emplace_back(k, 0);
    declines(p, "an activation cuBLASLt does not fuse");
  }
  p = Product(2, 64, 32);
  p.postOps.emplace_back(plan::PostOpKind::Relu, 0);
  p.addResidual();
  declines(p, "a residual added after the activation");
  p = Product(2, 64, 32);
  p.addBias();
  p.bias = layout({2, 64}, {64, 1});
  declines(p, "a bias of the output's sizes");
  p = Product(2, 64, 32);
  p.addResidual();
  p.residual = layout({1, 64}, {64, 1});
  declines(p, "a broadcast residual");
  p = Product(0, 64, 32);
  declines(p, "no rows");
}

TEST(CudaFewRowPlan, TheRuleTakesSixteenRowsOfSmallFloat32Weights) {
  auto taken = [](const Product &p) { return !plan(p).entry.empty(); };
  // One row of any type, float32 up to the exact instances' 8 rows.
  EXPECT_TRUE(taken(Product(1, 4096, 4096)));
  EXPECT_TRUE(taken(Product(cuda::kGpuFewRowsExact, 4096, 4096, plan::DType::Float32)));
  EXPECT_FALSE(taken(Product(2, 64, 64)));
  // 9 to 16 rows: float32 weights up to kFewRowSmallWeight elements.
  EXPECT_TRUE(taken(Product(16, 116, 116, plan::DType::Float32)));
  EXPECT_TRUE(taken(Product(9, 1024, 1024, plan::DType::Float32)));
  EXPECT_FALSE(taken(Product(9, 1025, 1024, plan::DType::Float32)));
  EXPECT_FALSE(taken(Product(16, 2048, 2048, plan::DType::Float32)));
  EXPECT_FALSE(taken(Product(16, 116, 116)));
  // Whatever the rule, the kernel can take them all.
  EXPECT_FALSE(plan(Product(16, 2048, 2048), cuda::FewRowPick::WheneverPossible).entry.empty());
}

TEST(CudaFewRowPlan, TakesGatedPairsWhateverTheRule) {
  // Llama-3.2-1B's gate and up: one output column a tile, so 8192 tiles in
  // 8 groups of rows make 1024 blocks.
  Product p(1, 8192, 2048);
  p.addUp();
  FewRowLaunch l = plan(p);
  ASSERT_EQ(l.entry, "gc_fewrow_bf16_r1") << l.declined;
  EXPECT_TRUE(l.present[cuda::kFewRowUp]);
  EXPECT_EQ(l.buffers[cuda::kFewRowUp], 2u);
  EXPECT_EQ(l.buffers[cuda::kFewRowOut], 3u);
  EXPECT_EQ(l.args.groups, 8);
  EXPECT_EQ(l.blocks, 1024u);
  EXPECT_EQ(l.args.activation, cuda::kFewRowNoActivation);
  // cuBLASLt computes no gated pair: the rule, which leaves four bfloat16
  // rows to it, does not apply.
  Product q(4, 45, 200);
  q.addUp();
  EXPECT_EQ(plan(q).entry, "gc_fewrow_bf16_r4") << plan(q).declined;

  auto declines = [](const Product &p, const char *why) {
    FewRowLaunch l = plan(p, cuda::FewRowPick::WheneverPossible);
    EXPECT_TRUE(l.entry.empty()) << why;
    EXPECT_FALSE(l.declined.empty()) << why;
  };
  p = Product(2, 64, 32);
  p.addUp();
  p.up = layout({32, 64}, {1, 40});
  declines(p, "a second weight of other strides");
  p = Product(2, 64, 32);
  p.addBias(/*inCall=*/true);
  p.addUp();
  declines(p, "a gated pair with a bias");
  p = Product(2, 64, 32);
  p.addUp();
  p.postOps.emplace_back(plan::PostOpKind::Relu, 0);
  declines(p, "a gated pair with another post-op");
  p = Product(kGpuFewRowsMax + 1, 64, 32);
  p.addUp();
  declines(p, "more rows than the kernel takes");
}

TEST(CudaFewRowPlan, TakesRmsNormProloguesWhateverTheRule) {
  // Llama-3.2-1B's q projection after its RMSNorm: the norm's weight is an
  // operand of its own, its epsilon in the argument.
  Product p(1, 2048, 2048);
  p.addNorm(1e-6f);
  FewRowLaunch l = plan(p);
  ASSERT_EQ(l.entry, "gc_fewrow_bf16_r1") << l.declined;
  EXPECT_TRUE(l.present[cuda::kFewRowNorm]);
  EXPECT_EQ(l.buffers[cuda::kFewRowNorm], 2u);
  EXPECT_EQ(l.buffers[cuda::kFewRowOut], 3u);
  EXPECT_EQ(l.args.normEps, 1e-6f);
  EXPECT_FALSE(plan(Product(1, 2048, 2048)).present[cuda::kFewRowNorm]);
  // cuBLASLt normalises no rows: the rule, which leaves four bfloat16 rows
  // to it, does not apply; with a gated pair too.
  Product q(4, 45, 200);
  q.addNorm();
  EXPECT_EQ(plan(q).entry, "gc_fewrow_bf16_r4") << plan(q).declined;
  q = Product(4, 45, 200);
  q.addUp();
  q.addNorm();
  EXPECT_EQ(plan(q).entry, "gc_fewrow_bf16_r4") << plan(q).declined;

  p = Product(2, 64, 32);
  p.addNorm();
  p.norm = layout({32}, {2});
  l = plan(p, cuda::FewRowPick::WheneverPossible);
  EXPECT_TRUE(l.entry.empty()) << "a strided norm weight";
  p.norm = layout({31}, {1});
  l = plan(p, cuda::FewRowPick::WheneverPossible);
  EXPECT_TRUE(l.entry.empty()) << "a norm weight of other than k values";
}

/// `p`'s launch as a step whose operands but the left rows lie in buffers
/// from `base` + 1 on (Step).
FewRowLaunch planAt(const Product &p, uint32_t base) {
  Step s(p, base);
  return planFewRowProduct(*s.step, p.inputs(), {p.out}, kSMs);
}

using Runs = std::vector<std::pair<size_t, size_t>>;
Runs runs(const std::vector<FewRowLaunch> &launches, std::vector<size_t> declined = {}) {
  std::vector<const FewRowLaunch *> ptrs;
  for (const FewRowLaunch &l : launches)
    ptrs.push_back(&l);
  for (size_t i : declined)
    ptrs[i] = nullptr;
  return cuda::fewRowGroupRuns(ptrs);
}

TEST(CudaFewRowGroupPlan, GroupsConsecutiveProductsOfTheSameRows) {
  // Llama-3.2-1B's q, k and v projections, then its gate and up ones.
  std::vector<FewRowLaunch> l = {planAt(Product(1, 2048, 2048), 0),
                                 planAt(Product(1, 512, 2048), 2),
                                 planAt(Product(1, 512, 2048), 4)};
  EXPECT_EQ(runs(l), (Runs{{0, 3}}));
  // 1536 tiles: two groups a block keep 768 blocks (>= 4 x 132), four
  // would not; each product gets its tiles' share.
  cuda::FewRowGroup g = cuda::planFewRowGroup(l, kSMs);
  EXPECT_EQ(g.entry, "gc_fewrow_bf16_r1");
  EXPECT_EQ(g.blocks, 768u);
  ASSERT_EQ(g.products.size(), 3u);
  for (const FewRowLaunch &p : g.products)
    EXPECT_EQ(p.args.groups, 2);
  EXPECT_EQ(g.products[0].blocks, 512u);
  EXPECT_EQ(g.products[2].blocks, 128u);
  // Alone, each would take one group a block.
  EXPECT_EQ(l[1].args.groups, 1);

  l = {planAt(Product(1, 8192, 2048), 0), planAt(Product(1, 8192, 2048), 2)};
  EXPECT_EQ(runs(l), (Runs{{0, 2}}));
  g = cuda::planFewRowGroup(l, kSMs);
  EXPECT_EQ(g.blocks, 1024u); // 8192 tiles in 8 groups
  EXPECT_EQ(g.products[1].args.groups, 8);

  // Five alike: four in a launch, the fifth alone.
  l.clear();
  for (uint32_t i = 0; i < 5; ++i)
    l.push_back(planAt(Product(1, 64, 256), 2 * i));
  EXPECT_EQ(runs(l), (Runs{{0, 4}}));
}

TEST(CudaFewRowGroupPlan, KeepsApartWhatCannotShareALaunch) {
  auto pair = [](const Product &a, const Product &b) {
    return std::vector<FewRowLaunch>{planAt(a, 0), planAt(b, uint32_t(a.inputs().size()))};
  };
  Product p(1, 64, 256);
  EXPECT_EQ(runs(pair(p, p)), (Runs{{0, 2}}));
  // Other left rows: another offset, another buffer.
  Product q(1, 64, 256);
  q.a = layout({1, 256}, {256, 1}, 8);
  EXPECT_EQ(runs(pair(p, q)), Runs{});
  std::vector<FewRowLaunch> l = pair(p, p);
  l[1].buffers[cuda::kFewRowA] = 7;
  EXPECT_EQ(runs(l), Runs{});
  // Another k, another type or row count (another kernel).
  EXPECT_EQ(runs(pair(p, Product(1, 64, 128))), Runs{});
  EXPECT_EQ(runs(pair(p, Product(1, 64, 256, plan::DType::Float16))), Runs{});
  EXPECT_EQ(runs(pair(Product(2, 64, 256, plan::DType::Float32),
                      Product(3, 64, 256, plan::DType::Float32))),
            Runs{});
  // The second reads the first's output (its residual), or writes what the
  // first reads (its weight) or writes.
  Product r(1, 64, 256);
  r.addResidual();
  l = pair(p, r);
  EXPECT_EQ(runs(l), (Runs{{0, 2}}));
  l[1].buffers[cuda::kFewRowResidual] = l[0].buffers[cuda::kFewRowOut];
  EXPECT_EQ(runs(l), Runs{});
  l = pair(p, p);
  l[1].buffers[cuda::kFewRowOut] = l[0].buffers[cuda::kFewRowW];
  EXPECT_EQ(runs(l), Runs{});
  l[1].buffers[cuda::kFewRowOut] = l[0].buffers[cuda::kFewRowOut];
  EXPECT_EQ(runs(l), Runs{});
  // A step the kernel declines splits a run; one left alone is no group.
  l = {planAt(p, 0), planAt(p, 2), planAt(p, 4), planAt(p, 6), planAt(p, 8)};
  EXPECT_EQ(runs(l, {2}), (Runs{{0, 2}, {3, 2}}));
  EXPECT_EQ(runs(l, {1, 3}), Runs{});
  // A dependency ends a run; the next one starts at the step that ended it.
  l[2].buffers[cuda::kFewRowW] = l[1].buffers[cuda::kFewRowOut];
  EXPECT_EQ(runs(l), (Runs{{0, 2}, {2, 3}}));
}

TEST(CudaFewRowGroupPlan, RunsOneByOneWhereOutputsOverlapOperands) {
  std::vector<FewRowLaunch> l = {planAt(Product(1, 64, 256), 0), planAt(Product(1, 32, 256), 2)};
  cuda::FewRowGroup g = cuda::planFewRowGroup(l, kSMs);
  // Buffers 0 (left rows, 512 bytes), 1 and 3 (weights), 2 and 4 (outputs
  // of 128 and 64 bytes).
  uint64_t apart[] = {0x10000, 0x20000, 0x30000, 0x40000, 0x50000};
  std::optional<cuda::FewRowGroupArgs> args = cuda::fewRowGroupArgs(g, apart);
  ASSERT_TRUE(args);
  EXPECT_EQ(args->count, 2);
  EXPECT_EQ(args->firstBlock[1], g.products[0].blocks);
  EXPECT_EQ(args->products[1].out, 0x50000u);
  EXPECT_EQ(args->products[1].n, 32);
  // The second output where the left rows' last bytes lie; then right
  // after them.
  uint64_t over[] = {0x10000, 0x20000, 0x30000, 0x40000, 0x10000 + 510};
  EXPECT_FALSE(cuda::fewRowGroupArgs(g, over));
  over[4] = 0x10000 + 512;
  EXPECT_TRUE(cuda::fewRowGroupArgs(g, over));
  // The first output over the second weight.
  uint64_t onWeight[] = {0x10000, 0x20000, 0x40000 + 4096, 0x40000, 0x50000};
  EXPECT_FALSE(cuda::fewRowGroupArgs(g, onWeight));
  // One product alone never declines.
  EXPECT_TRUE(cuda::fewRowGroupArgs(cuda::fewRowGroupOfOne(l[0]), over));
}

//===----------------------------------------------------------------------===//
// On a GPU
//===----------------------------------------------------------------------===//

bool is16(plan::DType t) { return t != plan::DType::Float32; }

/// Host values of a buffer holding `l` (its extent), rounded to `t`.
std::vector<float> randomValues(const StridedLayout &l, plan::DType t, std::mt19937 &rng) {
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> v(static_cast<size_t>(std::max<int64_t>(l.extent(), 1)));
  for (float &x : v)
    x = is16(t) ? from16(t, bits16(t, dist(rng))) : dist(rng);
  return v;
}

/// The device image of `values`: float32 as is, 16-bit types two to a word.
std::vector<float> image(const std::vector<float> &values, plan::DType t) {
  if (!is16(t))
    return values;
  std::vector<float> words((values.size() + 1) / 2, 0.f);
  auto *h = reinterpret_cast<uint16_t *>(words.data());
  for (size_t i = 0; i < values.size(); ++i)
    h[i] = bits16(t, values[i]);
  return words;
}

double activate(double x, const Product &p) {
  for (const plan::PostOp &op : p.postOps) {
    if (op.kind() == plan::PostOpKind::Relu)
      return x < 0 ? 0 : x;
    if (op.kind() == plan::PostOpKind::GeluTanh)
      return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  }
  return x;
}

/// Where a product runs: on GPU 0 through the call the executor prepares,
/// or the kernel compiled for the host (FewRowKernelOnHost.h), launched as
/// planFewRowProduct says for a GPU of `sms` SMs.
struct On {
  bool gpu = true;
  int sms = 0;
};
constexpr On kGpu{true, 0};
On host(int sms = kSMs) { return {false, sms}; }

std::string describe(const Product &p) {
  return std::string(p.type == plan::DType::Float32    ? "float32"
                     : p.type == plan::DType::BFloat16 ? "bfloat16"
                                                       : "float16") +
         " rows " + std::to_string(p.rows) + " n " + std::to_string(p.n) + " k " +
         std::to_string(p.k);
}

/// Runs `ps` (1 to kFewRowMaxProducts products of the same left rows, as
/// one launch) with random operands and checks every element of each
/// output buffer: the product's against the reference, the others (a
/// strided output's gaps) untouched. Buffer 0 holds the left rows (`ps[0]`'s
/// layout), then each product's other operands and output follow.
void runGroup(const std::vector<Product> &ps, On on = kGpu) {
  std::string what;
  for (const Product &p : ps)
    what += (what.empty() ? "" : " | ") + describe(p);
  SCOPED_TRACE(what + (on.gpu ? "" : ", on the host"));
  const Product &p0 = ps[0];
  for (const Product &p : ps)
    ASSERT_TRUE(p.a.sameMemoryAs(p0.a) && p.type == p0.type) << "not the same left rows";
  std::mt19937 rng(static_cast<uint32_t>(p0.rows * 7919 + p0.n * 31 + p0.k + ps.size()));
  // Host values and buffer images, in buffer order; each product's first
  // buffer after the left rows.
  std::vector<std::vector<float>> host = {randomValues(p0.a, p0.type, rng)};
  std::vector<size_t> base;
  // A value all three types hold exactly.
  constexpr float kUntouched = 1024.f;
  for (const Product &p : ps) {
    base.push_back(host.size() - 1);
    std::vector<StridedLayout> ins = p.inputs();
    for (size_t i = 1; i < ins.size(); ++i)
      host.push_back(randomValues(ins[i], p.type, rng));
    host.emplace_back(static_cast<size_t>(p.out.extent()), kUntouched);
  }
  // On the host, vectors (16-byte aligned, as operator new aligns), on the
  // GPU, device copies.
  std::vector<std::vector<float>> images;
  for (const std::vector<float> &h : host)
    images.push_back(image(h, p0.type));
  std::vector<std::unique_ptr<test::DeviceMemory>> mem;
  std::vector<uint64_t> addresses;
  for (std::vector<float> &im : images) {
    if (on.gpu)
      mem.push_back(std::make_unique<test::DeviceMemory>(im));
    addresses.push_back(reinterpret_cast<uint64_t>(on.gpu ? mem.back()->data() : im.data()));
  }
  std::vector<std::unique_ptr<Step>> steps;
  for (size_t j = 0; j < ps.size(); ++j)
    steps.push_back(std::make_unique<Step>(ps[j], uint32_t(base[j])));
  int sms = on.sms;
  const cuda::Driver *d = nullptr;
  if (on.gpu) {
    d = *cuda::driver();
    cuda::Device device = 0;
    ASSERT_EQ(d->deviceGet(&device, 0), cuda::Success);
    ASSERT_EQ(d->deviceGetAttribute(&sms, cuda::AttrMultiprocessorCount, device), cuda::Success);
  }
  std::vector<FewRowLaunch> launches;
  for (size_t j = 0; j < ps.size(); ++j) {
    launches.push_back(planFewRowProduct(*steps[j]->step, ps[j].inputs(), {ps[j].out}, sms,
                                         cuda::FewRowPick::WheneverPossible));
    ASSERT_FALSE(launches.back().entry.empty())
        << "the kernel declined: " << launches.back().declined;
  }
  if (on.gpu) {
    cuda::CudaFewRowKernels kernels(*d, sms, /*early=*/true);
    // One product through the call the executor prepares for a step.
    Expected<std::unique_ptr<ExternCall>> call =
        ps.size() == 1 ? kernels.prepare(*steps[0]->step, p0.inputs(), {p0.out},
                                         cuda::FewRowPick::WheneverPossible)
                       : kernels.group(launches);
    ASSERT_TRUE(bool(call)) << call.error().message();
    ASSERT_TRUE(*call);
    EXPECT_EQ((*call)->workspaceBytes(), 0u);
    ASSERT_FALSE((*call)->run({.deviceBuffers = addresses.data(), .stream = nullptr}));
    ASSERT_EQ(d->streamSynchronize(nullptr), cuda::Success);
    for (size_t b = 0; b < images.size(); ++b)
      images[b] = mem[b]->read();
  } else {
    cuda::FewRowGroup g = ps.size() == 1 ? cuda::fewRowGroupOfOne(launches[0])
                                         : cuda::planFewRowGroup(launches, sms);
    std::optional<cuda::FewRowGroupArgs> args = cuda::fewRowGroupArgs(g, addresses.data());
    ASSERT_TRUE(args) << "the products' operands overlap";
    ASSERT_TRUE(test::runFewRowKernelOnHost(g.entry, g.blocks, *args));
  }
  for (size_t j = 0; j < ps.size(); ++j) {
    const Product &p = ps[j];
    SCOPED_TRACE("product " + std::to_string(j));
    const std::vector<float> &words = images[base[j] + p.inputs().size()];
    auto got = [&](int64_t i) {
      return is16(p.type) ? from16(p.type, reinterpret_cast<const uint16_t *>(words.data())[i])
                          : words[i];
    };
    auto at = [](const StridedLayout &l, int64_t m, int64_t n) {
      size_t r = l.sizes.size();
      return l.offset + m * l.strides[r - 2] + n * l.strides[r - 1];
    };
    auto operand = [&](size_t input) -> const std::vector<float> & {
      return input == 0 ? host[0] : host[base[j] + input];
    };
    std::vector<bool> written(static_cast<size_t>(p.out.extent()), false);
    double rtol = is16(p.type) ? 1e-2 : 1e-3;
    int failures = 0;
    const std::vector<float> &a = operand(0), &w = operand(1);
    for (int64_t m = 0; m < p.rows; ++m) {
      // Row m as the product takes it: with an RMSNorm prologue, times g
      // and 1 / sqrt(mean square + eps).
      std::vector<double> row(static_cast<size_t>(p.k));
      double squares = 0;
      for (int64_t k = 0; k < p.k; ++k) {
        row[k] = a[at(p.a, m, k)];
        squares += row[k] * row[k];
      }
      if (p.normEps) {
        const std::vector<float> &g = operand(p.inputs().size() - 1);
        double scale = 1 / std::sqrt(squares / double(p.k) + *p.normEps);
        for (int64_t k = 0; k < p.k; ++k)
          row[k] *= g[p.norm.offset + k * p.norm.strides[0]] * scale;
      }
      for (int64_t n = 0; n < p.n; ++n) {
        double sum = 0, magnitude = 0;
        for (int64_t k = 0; k < p.k; ++k) {
          double prod = row[k] * w[at(p.w, k, n)];
          sum += prod;
          magnitude += std::abs(prod);
        }
        if (p.hasBias) {
          double b = operand(2)[p.bias.offset + n * p.bias.strides[0]];
          sum += b;
          magnitude += std::abs(b);
        }
        if (p.hasResidual) {
          double r = operand(p.hasBias ? 3 : 2)[at(p.residual, m, n)];
          sum += r;
          magnitude += std::abs(r);
        }
        double want = activate(sum, p);
        if (p.gated) {
          const std::vector<float> &u = operand(p.inputs().size() - (p.normEps ? 2 : 1));
          double upSum = 0, upMagnitude = 0;
          for (int64_t k = 0; k < p.k; ++k) {
            double prod = row[k] * u[at(p.up, k, n)];
            upSum += prod;
            upMagnitude += std::abs(prod);
          }
          double silu = sum / (1 + std::exp(-sum));
          want = silu * upSum;
          // Each sum's error reaches the result times the other side (SiLU's
          // slope is at most 1.1 in magnitude).
          magnitude = 1.1 * magnitude * std::abs(upSum) + std::abs(silu) * upMagnitude;
        }
        int64_t where = at(p.out, m, n);
        written[where] = true;
        double g = got(where);
        if (!(std::abs(g - want) <= rtol * std::abs(want) + 1e-5 * magnitude) && failures++ < 5)
          ADD_FAILURE() << "(" << m << ", " << n << "): got " << g << ", want " << want;
      }
    }
    for (size_t i = 0; i < written.size(); ++i)
      if (!written[i] && got(int64_t(i)) != kUntouched && failures++ < 5)
        ADD_FAILURE() << "element " << i << " outside the output was written: " << got(int64_t(i));
    EXPECT_EQ(failures, 0);
  }
}

void run(const Product &p, On on = kGpu) { runGroup({p}, on); }

constexpr plan::DType kTypes[] = {plan::DType::Float32, plan::DType::BFloat16,
                                  plan::DType::Float16};

// The cases, each run on the GPU and on the host (with fewer row counts
// there, where each block is 256 threads of the 2-core CI machine).

/// N: one column, an odd count (half a tile at the end), a few blocks; K:
/// one element, under a vector, a tail after whole vectors, exact.
void everyRowCountWithTails(On on, std::vector<int64_t> rowCounts) {
  for (plan::DType t : kTypes)
    for (int64_t rows : rowCounts)
      for (auto [n, k] : {std::pair<int64_t, int64_t>{1, 1}, {3, 5}, {37, 67}, {130, 1000}})
        run(Product(rows, n, k, t), on);
}

/// Over 256 threads x 4 chunks of 16 bytes per pass: several passes, the
/// last one partial, and a tail after the last whole vector.
void longRows(On on, std::vector<int64_t> rowCounts) {
  for (plan::DType t : kTypes)
    for (int64_t rows : rowCounts)
      for (int64_t k : {8200, 8203, 14336})
        run(Product(rows, 9, k, t), on);
}

void unalignedRows(On on) {
  for (plan::DType t : kTypes) {
    // The left rows one element off 16 bytes.
    Product p(3, 21, 130, t);
    p.a = layout({3, 130}, {130, 1}, 1);
    run(p, on);
    // Padded weight rows and left rows whose strides break vectors.
    p = Product(5, 17, 77, t);
    p.w = layout({77, 17}, {1, 81});
    p.a = layout({5, 77}, {79, 1});
    run(p, on);
  }
}

void everyEpilogue(On on) {
  for (plan::DType t : kTypes)
    for (int64_t rows : {1, 2, 7, 11}) {
      Product p(rows, 45, 200, t);
      p.addBias();
      run(p, on);
      p = Product(rows, 45, 200, t);
      p.addBias(/*inCall=*/true);
      run(p, on);
      p = Product(rows, 45, 200, t);
      p.addResidual();
      run(p, on);
      for (plan::PostOpKind act : {plan::PostOpKind::Relu, plan::PostOpKind::GeluTanh}) {
        p = Product(rows, 45, 200, t);
        p.postOps.emplace_back(act, 0);
        run(p, on);
        // All at once, into a column-major output, with a strided bias and
        // a residual of its own strides.
        p = Product(rows, 45, 200, t);
        p.addBias();
        p.bias = layout({45}, {2}, 1);
        p.addResidual();
        p.residual = layout({rows, 45}, {50, 1}, 3);
        p.postOps.emplace_back(act, 0);
        p.out = layout({rows, 45}, {1, rows + 1}, 2);
        run(p, on);
      }
    }
}

/// Gated pairs: the shapes of everyRowCountWithTails (with half the last
/// one's columns, since each output column is a tile here), unaligned and
/// padded rows, a strided output, and a long k.
void gatedPairs(On on, std::vector<int64_t> rowCounts) {
  auto gated = [](Product p) {
    p.addUp();
    return p;
  };
  for (plan::DType t : kTypes) {
    for (int64_t rows : rowCounts)
      for (auto [n, k] : {std::pair<int64_t, int64_t>{1, 1}, {3, 5}, {37, 67}, {65, 1000}})
        run(gated(Product(rows, n, k, t)), on);
    Product p(3, 21, 130, t);
    p.a = layout({3, 130}, {130, 1}, 1);
    p = gated(p);
    p.up = layout({130, 21}, {1, 130}, 5);
    run(p, on);
    p = Product(5, 17, 77, t);
    p.w = layout({77, 17}, {1, 81});
    p.a = layout({5, 77}, {79, 1});
    p = gated(p);
    p.out = layout({5, 17}, {1, 6}, 2);
    run(p, on);
    run(gated(Product(rowCounts[0], 9, 8203, t)), on);
  }
}

/// RMSNorm prologues: the shapes of everyRowCountWithTails on plain
/// products and gated pairs, unaligned left rows and a norm weight off 16
/// bytes, a long k, and every epilogue after the prologue.
void rmsNormPrologues(On on, std::vector<int64_t> rowCounts) {
  auto normed = [](Product p, float eps = 1e-5f) {
    p.addNorm(eps);
    return p;
  };
  for (plan::DType t : kTypes) {
    for (int64_t rows : rowCounts)
      for (auto [n, k] : {std::pair<int64_t, int64_t>{1, 1}, {3, 5}, {37, 67}, {130, 1000}}) {
        run(normed(Product(rows, n, k, t)), on);
        Product gated(rows, n, k, t);
        gated.addUp();
        run(normed(gated, 1e-6f), on);
      }
    Product p(3, 21, 130, t);
    p.a = layout({3, 130}, {130, 1}, 1);
    p = normed(p);
    p.norm = layout({130}, {1}, 3);
    run(p, on);
    p = Product(5, 17, 77, t);
    p.w = layout({77, 17}, {1, 81});
    p.a = layout({5, 77}, {79, 1});
    run(normed(p), on);
    run(normed(Product(rowCounts[0], 9, 8203, t)), on);
    p = Product(rowCounts.back(), 45, 200, t);
    p.addBias();
    p.addResidual();
    p.postOps.emplace_back(plan::PostOpKind::GeluTanh, 0);
    run(normed(p), on);
  }
}

TEST(CudaFewRow, EveryRowCountWithTails) {
  GC_REQUIRE_GPU();
  everyRowCountWithTails(kGpu, {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 15, kGpuFewRowsMax});
}

TEST(CudaFewRow, LongRowsTakeSeveralPasses) {
  GC_REQUIRE_GPU();
  longRows(kGpu, {1, 4, kGpuFewRowsMax});
}

TEST(CudaFewRow, UnalignedRowsLoadElementByElement) {
  GC_REQUIRE_GPU();
  unalignedRows(kGpu);
}

TEST(CudaFewRow, EveryEpilogue) {
  GC_REQUIRE_GPU();
  everyEpilogue(kGpu);
}

TEST(CudaFewRow, GatedPairs) {
  GC_REQUIRE_GPU();
  gatedPairs(kGpu, {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 15, kGpuFewRowsMax});
}

TEST(CudaFewRow, RmsNormPrologues) {
  GC_REQUIRE_GPU();
  rmsNormPrologues(kGpu, {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 15, kGpuFewRowsMax});
}

TEST(CudaFewRowOnHost, EveryRowCountWithTails) { everyRowCountWithTails(host(), {1, 3, 8, 13}); }
TEST(CudaFewRowOnHost, RmsNormPrologues) { rmsNormPrologues(host(), {1, 3, 12}); }
TEST(CudaFewRowOnHost, GatedPairs) { gatedPairs(host(), {1, 3, 12}); }
TEST(CudaFewRowOnHost, LongRowsTakeSeveralPasses) { longRows(host(), {1, 5, 10}); }
TEST(CudaFewRowOnHost, UnalignedRowsLoadElementByElement) { unalignedRows(host()); }
TEST(CudaFewRowOnHost, EveryEpilogue) { everyEpilogue(host()); }

TEST(CudaFewRowOnHost, GroupsOfThreads) {
  // The SM counts make 8, 4 and 2 groups of rows a block, with a partial
  // last group and tile.
  for (plan::DType t : kTypes)
    for (int sms : {1, 2, 4}) {
      run(Product(3, 131, 2056, t), host(sms));
      run(Product(1, 64, 4100, t), host(sms));
      Product gated(1, 67, 520, t);
      gated.addUp();
      run(gated, host(sms));
      gated.addNorm();
      run(gated, host(sms));
      Product normed(3, 131, 2056, t);
      normed.addNorm();
      run(normed, host(sms));
    }
}

// Groups of products in one launch: 2 to 4 products of unequal N, with and
// without bias and residual, 1 to 8 rows, bfloat16 and float32.

void groups(On on, std::vector<int64_t> rowCounts) {
  for (plan::DType t : {plan::DType::BFloat16, plan::DType::Float32})
    for (int64_t rows : rowCounts) {
      runGroup({Product(rows, 37, 1000, t), Product(rows, 130, 1000, t)}, on);
      std::vector<Product> three = {Product(rows, 64, 520, t), Product(rows, 5, 520, t),
                                    Product(rows, 21, 520, t)};
      three[0].addBias();
      three[1].addResidual();
      three[2].addBias(/*inCall=*/true);
      three[2].addResidual();
      three[2].postOps.emplace_back(plan::PostOpKind::Relu, 0);
      runGroup(three, on);
      std::vector<Product> four = {Product(rows, 1, 67, t), Product(rows, 45, 67, t),
                                   Product(rows, 3, 67, t), Product(rows, 90, 67, t)};
      four[1].postOps.emplace_back(plan::PostOpKind::GeluTanh, 0);
      four[3].addBias();
      four[3].bias = layout({90}, {2}, 1);
      four[3].out = layout({rows, 90}, {1, rows + 1}, 2);
      runGroup(four, on);
      // A gated pair beside plain products of the same rows.
      std::vector<Product> mixed = {Product(rows, 37, 1000, t), Product(rows, 130, 1000, t),
                                    Product(rows, 5, 1000, t)};
      mixed[1].addUp();
      mixed[2].addResidual();
      runGroup(mixed, on);
      // RMSNorm prologues beside products without one: a normalised q|k|v,
      // and a normalised gated pair beside a plain product.
      std::vector<Product> qkv = {Product(rows, 64, 520, t), Product(rows, 32, 520, t),
                                  Product(rows, 32, 520, t)};
      for (Product &p : qkv)
        p.addNorm();
      runGroup(qkv, on);
      mixed = {Product(rows, 37, 1000, t), Product(rows, 130, 1000, t)};
      mixed[0].addUp();
      mixed[0].addNorm();
      runGroup(mixed, on);
    }
}

TEST(CudaFewRowOnHost, GroupsOfProductsInOneLaunch) {
  groups(host(), {1, 4, kGpuFewRowsMax});
  // Few SMs: several thread groups a block in each product's blocks.
  for (int sms : {1, 4})
    runGroup({Product(2, 131, 2056, plan::DType::BFloat16),
              Product(2, 64, 2056, plan::DType::BFloat16)},
             host(sms));
}

TEST(CudaFewRow, GroupsOfProductsInOneLaunch) {
  GC_REQUIRE_GPU();
  groups(kGpu, {1, 2, 3, 4, 5, 6, 7, 8, 10, kGpuFewRowsMax});
  // Llama-3.2-1B's q|k|v and gate|up, Llama-3.1-8B's q|k|v, one row.
  for (plan::DType t : {plan::DType::BFloat16, plan::DType::Float32}) {
    runGroup({Product(1, 2048, 2048, t), Product(1, 512, 2048, t), Product(1, 512, 2048, t)});
    runGroup({Product(1, 8192, 2048, t), Product(1, 8192, 2048, t)});
    runGroup({Product(1, 4096, 4096, t), Product(1, 1024, 4096, t), Product(1, 1024, 4096, t)});
  }
}

TEST(CudaFewRow, LlamaDecodeShapes) {
  GC_REQUIRE_GPU();
  // One token through Llama-3.2-1B's k/v projection, its MLP's gate (rows
  // in groups) and down projections, four rows through the 8B's k/v
  // projection, and two through a shape with tails in groups.
  for (plan::DType t : {plan::DType::BFloat16, plan::DType::Float32}) {
    run(Product(1, 512, 2048, t));
    run(Product(1, 8192, 2048, t));
    run(Product(1, 2048, 8192, t));
    run(Product(4, 1024, 4096, t));
    run(Product(2, 4101, 3003, t));
  }
}

} // namespace
} // namespace gc
