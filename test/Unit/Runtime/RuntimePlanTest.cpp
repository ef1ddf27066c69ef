//===- RuntimePlanTest.cpp - Plans: size programs, checks, determinism ----===//
#include "LoopGraphMaker.h"

#include <gtest/gtest.h>

using namespace gc;
using namespace gc::test;

namespace {

/// x: f32[s0] in, neg(x) out, on the fallback component; tests change the
/// output buffer's size.
struct SizedGraph : LoopGraphMaker {
  SizedGraph() {
    module.syms().setRange("s0", {0, 1000});
    uint32_t x = input("x", DType::Float32, {sym("s0")});
    uint32_t out = buffer("out", BufferKind::Output, DType::Float32, {sym("s0")});
    callNode(LoopNode::Kind::Fallback, ops::aten_neg_default, {whole(x)}, {whole(out)}).args = {
        tensorArg("self", 0)};
    output("out", out, whole(out).type);
  }
  /// The plan's bytes, to damage.
  std::string bytes() {
    Expected<std::string> b = buildRuntimePlan(module);
    EXPECT_TRUE(bool(b)) << (b ? "" : b.error().message());
    return b ? *b : "";
  }
};

plan::Plan &mutablePlan(std::string &bytes) { return *plan::GetMutablePlan(bytes.data()); }

plan::Step *firstStep(std::string &bytes) {
  return mutablePlan(bytes).mutable_graphs()->GetMutableObject(0)->mutable_steps()->GetMutableObject(0);
}

std::string readError(std::string bytes) {
  Expected<std::shared_ptr<const RuntimePlan>> p = RuntimePlan::read(std::move(bytes), "'p'");
  return p ? "" : p.error().message();
}

TEST(RuntimePlan, SizeProgramsEvaluateAsTheirExpressions) {
  auto exprs = [](SymContext &c) {
    const SymExpr *s0 = c.symbol("s0");
    return std::vector<const SymExpr *>{
        c.add(c.mul(c.constant(3), s0), c.constant(-7)),
        c.floorDiv(c.sub(s0, c.constant(9)), c.constant(4)),
        c.mod(c.sub(s0, c.constant(9)), c.constant(4)),
        c.floorDiv(s0, c.constant(-3)),
        c.max(c.min(s0, c.constant(10)), c.constant(2)),
        c.mul(s0, c.mul(s0, c.constant(1ll << 40))), // wraps around, as SymExpr does
    };
  };
  for (size_t i = 0; i < 6; ++i) {
    SizedGraph g;
    const SymExpr *e = exprs(g.module.syms())[i];
    g.graph.buffers[1].sizes[0] = e;
    Expected<std::shared_ptr<const RuntimePlan>> p = g.runtimePlan();
    ASSERT_TRUE(bool(p)) << p.error().message();
    const plan::Plan &root = (*p)->root();
    const plan::SizeProgram &prog = *root.graphs()->Get(0)->buffers()->Get(1)->sizes()->Get(0);
    EXPECT_EQ(sizeText(prog, root), e->str());
    for (int64_t v : {0, 1, 5, 9, 13, 1000, -11}) {
      std::vector<int64_t> symbols(root.symbols()->size(), 0);
      symbols[*boundSymbol(*root.graphs()->Get(0)->inputs()->Get(0)->view()->sizes()->Get(0))] = v;
      Expected<int64_t> got = evaluate(prog, symbols);
      ASSERT_TRUE(bool(got)) << got.error().message();
      EXPECT_EQ(*got, *gc::evaluate(e, {{"s0", v}})) << e->str() << " at s0 = " << v;
    }
  }
}

TEST(RuntimePlan, GpuGridsKeepSmallRunsSpreadOverTheGpu) {
  // silu(gate) * up of a bf16 prefill over [8192*s0] points, s0 the
  // prompt's length: vectors of 8 points, 4 a thread, 256 threads a block.
  LoopGraphMaker g;
  g.module.syms().setRange("s0", {1, 2048});
  const SymExpr *points = g.module.syms().mul(g.k(8192), g.sym("s0"));
  uint32_t x = g.input("x", DType::BFloat16, {points});
  uint32_t y = g.buffer("y", BufferKind::Output, DType::BFloat16, {points});
  LoopNode n;
  n.kind = LoopNode::Kind::Pointwise;
  n.name = "neg";
  n.ranges = {points};
  BodyOp load;
  load.kind = BodyOp::Kind::Load;
  load.dtype = DType::BFloat16;
  load.buffer = x;
  load.index = g.sym("i0");
  n.body.ops = {load};
  n.output = y;
  n.storeIndex = g.sym("i0");
  g.graph.nodes.push_back(n);
  KernelGroup k{"k0", {0}, {points}, GpuMapping::ThreadPerPoint, 256, 4, 8};
  g.graph.plan.kernels = {k};
  g.graph.plan.steps = {{PlanStep::Kind::Kernel, 0}};
  g.output("y", y, g.whole(y).type);
  Expected<std::shared_ptr<const RuntimePlan>> p = g.runtimePlan();
  ASSERT_TRUE(bool(p)) << p.error().message();
  const plan::Plan &root = (*p)->root();
  const plan::Graph &graph = *root.graphs()->Get(0);
  const plan::SizeProgram &grid = *graph.steps()->Get(0)->detail_as_KernelStep()->grid();
  auto blocks = [&](int64_t s0) {
    std::vector<int64_t> symbols;
    for (const plan::Symbol *s : *root.symbols())
      symbols.push_back(s->name()->str() == "s0" ? s0 : 0);
    Expected<int64_t> v = evaluate(grid, symbols);
    EXPECT_TRUE(bool(v)) << v.error().message();
    return v ? *v : -1;
  };
  // A thread takes one vector while that leaves at most 1024 blocks ...
  EXPECT_EQ(blocks(1), 4);
  EXPECT_EQ(blocks(64), 256);
  EXPECT_EQ(blocks(128), 512);
  // ... then 1024 blocks, up to 4 vectors a thread ...
  EXPECT_EQ(blocks(512), 1024);
  EXPECT_EQ(blocks(1024), 1024);
  // ... and 4 vectors a thread beyond.
  EXPECT_EQ(blocks(2048), 2048);
}

TEST(RuntimePlan, DivisionByZeroIsAnError) {
  SizedGraph g;
  SymContext &c = g.module.syms();
  g.graph.buffers[1].sizes[0] = c.floorDiv(c.constant(8), c.sub(c.symbol("s0"), c.constant(3)));
  Expected<std::shared_ptr<const RuntimePlan>> p = g.runtimePlan();
  ASSERT_TRUE(bool(p)) << p.error().message();
  const plan::SizeProgram &prog =
      *(*p)->root().graphs()->Get(0)->buffers()->Get(1)->sizes()->Get(0);
  Expected<int64_t> bad = evaluate(prog, std::vector<int64_t>{3});
  ASSERT_FALSE(bool(bad));
  EXPECT_EQ(bad.error().message(), "a size divides by zero");
  EXPECT_EQ(*evaluate(prog, std::vector<int64_t>{5}), 4);
}

TEST(RuntimePlan, SameModuleGivesSameBytes) {
  SizedGraph a, b;
  std::string bytes = a.bytes();
  ASSERT_FALSE(bytes.empty());
  EXPECT_EQ(bytes, b.bytes());
  EXPECT_EQ(readError(bytes), "");
}

TEST(RuntimePlan, CorruptPlansAreErrors) {
  SizedGraph g;
  std::string good = g.bytes();
  EXPECT_EQ(readError("garbage, not a plan"), "'p': not a gc runtime plan");
  std::string cut = good.substr(0, good.size() / 2);
  EXPECT_NE(readError(cut), "");
  std::string flipped = good;
  flipped[flipped.size() / 2] ^= 0x55;
  flipped[flipped.size() / 3] ^= 0x55;
  // Either the structure or a check catches it; nothing crashes.
  (void)readError(flipped);
}

TEST(RuntimePlan, OtherMajorVersionsAreErrorsNamingBoth) {
  SizedGraph g;
  std::string bytes = g.bytes();
  auto *version = const_cast<plan::PlanVersion *>(mutablePlan(bytes).version());
  version->mutate_major_version(3);
  version->mutate_minor_version(0);
  EXPECT_EQ(readError(bytes), "'p': runtime plan version 3.0; this gc reads 2.0 to 2.10");
  // A 1.x plan's kernels take the whole buffer table: not this runtime's.
  version->mutate_major_version(1);
  version->mutate_minor_version(3);
  EXPECT_EQ(readError(bytes), "'p': runtime plan version 1.3; this gc reads 2.0 to 2.10");
}

TEST(RuntimePlan, OlderMinorVersionsAreRead) {
  // 2.0 plans have no work per step (2.1's Step.flops and bytes).
  SizedGraph g;
  std::string bytes = g.bytes();
  const_cast<plan::PlanVersion *>(mutablePlan(bytes).version())->mutate_minor_version(0);
  EXPECT_TRUE(bool(RuntimePlan::read(bytes, "p")));
}

/// x f32[1, 4] times weights w and u ([3, 4] seen as [4, 3]) as a gated
/// pair: silu(x w) * (x u).
struct GatedPairGraph : LoopGraphMaker {
  GatedPairGraph() {
    uint32_t x = input("x", DType::Float32, ks({1, 4}));
    uint32_t w = input("w", DType::Float32, ks({3, 4}));
    uint32_t u = input("u", DType::Float32, ks({3, 4}));
    uint32_t out = buffer("out", BufferKind::Output, DType::Float32, ks({1, 3}));
    TensorType weight = view(DType::Float32, ks({4, 3}), ks({1, 4}));
    LoopNode &n = callNode(LoopNode::Kind::Extern, ops::aten_mm_default,
                           {whole(x), {w, weight}, {u, weight}}, {whole(out)});
    n.args = {tensorArg("self", 0), tensorArg("mat2", 1)};
    n.postOps = {{PostOp::Kind::GatedSilu, 2}};
    output("out", out, whole(out).type);
  }
};

TEST(RuntimePlan, GatedPairsNeedTheirMinorVersion) {
  Expected<std::string> bytes = buildRuntimePlan(GatedPairGraph().module);
  ASSERT_TRUE(bool(bytes)) << bytes.error().message();
  EXPECT_EQ(readError(*bytes), "");
  // A plan that says it is older cannot hold one: its post-op kinds end
  // before GatedSilu.
  const_cast<plan::PlanVersion *>(mutablePlan(*bytes).version())
      ->mutate_minor_version(kPlanMinorGatedSilu - 1);
  EXPECT_EQ(readError(*bytes), "'p': graph @g: step 0 ('n0') has a gated SiLU post-op, which "
                               "plans have from 2.9 on; this plan is 2.8");
}

TEST(RuntimePlan, OutOfRangeIndicesAreErrors) {
  SizedGraph g;
  std::string bytes = g.bytes();
  // (Only fields that differ from their defaults are stored, and so mutable.)
  plan::Graph &graph = *mutablePlan(bytes).mutable_graphs()->GetMutableObject(0);
  ASSERT_TRUE(graph.mutable_outputs()->GetMutableObject(0)->mutable_view()->mutate_buffer(9));
  EXPECT_EQ(readError(bytes), "'p': graph @g: output 0 views missing buffer 9 of 2");

  bytes = g.bytes();
  plan::Step &step = *firstStep(bytes);
  step.mutable_uses()->Mutate(0, 7); // a required vector: always stored
  EXPECT_EQ(readError(bytes), "'p': graph @g: step 0 ('n0') uses missing buffer 7");

  bytes = g.bytes();
  auto &op = *static_cast<plan::OpStep *>(firstStep(bytes)->mutable_detail());
  ASSERT_TRUE(op.mutable_outputs()->GetMutableObject(0)->mutate_buffer(5));
  EXPECT_EQ(readError(bytes), "'p': graph @g: step 0 ('n0') views missing buffer 5 of 2");
}

TEST(RuntimePlan, BadSizeProgramsAreErrors) {
  SizedGraph g;
  auto firstInsn = [](std::string &bytes) {
    return const_cast<plan::SizeInsn *>(mutablePlan(bytes)
                                            .mutable_graphs()
                                            ->GetMutableObject(0)
                                            ->mutable_buffers()
                                            ->GetMutableObject(0)
                                            ->mutable_sizes()
                                            ->GetMutableObject(0)
                                            ->code()
                                            ->Get(0));
  };
  std::string bytes = g.bytes();
  firstInsn(bytes)->mutate_op(plan::SizeOp::Add); // structs are always stored
  EXPECT_EQ(readError(bytes), "'p': graph @g: buffer 0: a size program pops an empty stack");
  bytes = g.bytes();
  firstInsn(bytes)->mutate_arg(5);
  EXPECT_EQ(readError(bytes), "'p': graph @g: buffer 0: a size program reads missing symbol 5");
  bytes = g.bytes();
  firstInsn(bytes)->mutate_op(static_cast<plan::SizeOp>(42));
  EXPECT_EQ(readError(bytes), "'p': graph @g: buffer 0: a size program has unknown operation 42");
}

TEST(RuntimePlan, FallbackComponentMissingNamesTheOps) {
  SizedGraph g;
  FakeLibrary lib;
  RuntimeOptions options;
  options.fallback = []() -> Expected<const FallbackComponent *> {
    return makeError() << "'libgcrt_fallback.so' cannot be loaded";
  };
  Expected<std::unique_ptr<Executor>> e = g.executor(lib, options);
  ASSERT_FALSE(bool(e));
  EXPECT_EQ(e.error().message(), "1 step runs on the fallback component (aten.neg.default): "
                                 "'libgcrt_fallback.so' cannot be loaded");
}

TEST(RuntimePlan, FallbackPayloadMustMatchItsViews) {
  SizedGraph g;
  std::string bytes = g.bytes();
  auto &op = *static_cast<plan::OpStep *>(firstStep(bytes)->mutable_detail());
  ASSERT_TRUE(op.mutable_inputs()->GetMutableObject(0)->mutate_dtype(plan::DType::Float64));
  Expected<std::shared_ptr<const RuntimePlan>> p = RuntimePlan::read(bytes, "'p'");
  ASSERT_TRUE(bool(p)) << p.error().message();
  FakeLibrary lib;
  RuntimeOptions options;
  options.fallback = []() -> Expected<const FallbackComponent *> {
    return &linkedFallbackComponent();
  };
  Expected<std::unique_ptr<Executor>> e = Executor::create(p.take(), 0, lib, options);
  ASSERT_FALSE(bool(e));
  EXPECT_EQ(e.error().message(), "node 'n0': its fallback payload does not match the step's views");
}

TEST(RuntimePlan, PlansWithoutFallbacksNeverAskForTheComponent) {
  LoopGraphMaker g;
  uint32_t x = g.input("x", DType::Float32, g.ks({2, 3}));
  g.output("xt", x, g.view(DType::Float32, g.ks({3, 2}), g.ks({1, 3})));
  FakeLibrary lib;
  RuntimeOptions options;
  bool asked = false;
  options.fallback = [&]() -> Expected<const FallbackComponent *> {
    asked = true;
    return makeError() << "absent";
  };
  Expected<std::unique_ptr<Executor>> e = g.executor(lib, options);
  ASSERT_TRUE(bool(e)) << e.error().message();
  EXPECT_FALSE(asked);
}

/// u = gc.rand([3, 5], rng_seed, rng_offset): the plan marks the two
/// generator inputs and records the 15 numbers a run draws.
struct RandomGraph : LoopGraphMaker {
  explicit RandomGraph(DType seedType = DType::Int64) {
    uint32_t seed = input("rng_seed", seedType, {});
    graph.inputSpecs.back().kind = InputKind::RngSeed;
    uint32_t offset = input("rng_offset", DType::Int64, {});
    graph.inputSpecs.back().kind = InputKind::RngOffset;
    uint32_t u = buffer("u", BufferKind::Output, DType::Float32, ks({3, 5}));
    callNode(LoopNode::Kind::Fallback, ops::gc_rand_default, {whole(seed), whole(offset)},
             {whole(u)})
        .args = {intsArg("size", {3, 5}), tensorArg("seed", 0), tensorArg("offset", 1)};
    output("u", u, whole(u).type);
  }
};

TEST(RuntimePlan, GeneratorInputsAndDrawsAreRecorded) {
  RandomGraph g;
  Expected<std::string> bytes = buildRuntimePlan(g.module);
  ASSERT_TRUE(bool(bytes)) << bytes.error().message();
  const plan::Graph &graph = *plan::GetPlan(bytes->data())->graphs()->Get(0);
  EXPECT_EQ(graph.inputs()->Get(0)->generator(), plan::GeneratorPart::Seed);
  EXPECT_EQ(graph.inputs()->Get(1)->generator(), plan::GeneratorPart::Offset);
  EXPECT_EQ(graph.inputs()->Get(0)->role()->str(), "rng_seed");
  EXPECT_EQ(graph.random_draws(), 15);
  EXPECT_EQ(readError(*bytes), "");
}

TEST(RuntimePlan, BadGeneratorInputsAreErrors) {
  RandomGraph g(DType::Float32);
  Expected<std::string> bytes = buildRuntimePlan(g.module);
  ASSERT_TRUE(bool(bytes)) << bytes.error().message();
  EXPECT_EQ(readError(*bytes), "'p': graph @g: input 0 ('rng_seed') is a bad generator input: it "
                               "must be an input i64[] of no weight");
}

} // namespace

namespace {

/// Two fallback steps whose nodes carry source locations.
struct LocatedGraph : LoopGraphMaker {
  LocatedGraph(std::vector<SourceLoc> locs) {
    uint32_t x = input("x", DType::Float32, {k(4)});
    uint32_t mid = buffer("mid", BufferKind::Intermediate, DType::Float32, {k(4)});
    uint32_t out = buffer("out", BufferKind::Output, DType::Float32, {k(4)});
    LoopNode &a = callNode(LoopNode::Kind::Fallback, ops::aten_neg_default, {whole(x)}, {whole(mid)});
    a.args = {tensorArg("self", 0)};
    a.loc = module.locations().intern(locs.at(0));
    LoopNode &b = callNode(LoopNode::Kind::Fallback, ops::aten_neg_default, {whole(mid)}, {whole(out)});
    b.args = {tensorArg("self", 0)};
    b.loc = module.locations().intern(locs.at(1));
    output("out", out, whole(out).type);
  }
};

TEST(RuntimePlan, StepsNameTheirSources) {
  LocatedGraph g({{"/src/m.py", 42, "forward", "layers.3.attn", "Attention"},
                  {"", 0, "", "layers.10", "Block"}});
  Expected<std::shared_ptr<const RuntimePlan>> p = g.runtimePlan();
  ASSERT_TRUE(bool(p)) << p.error().message();
  const auto &steps = *(*p)->root().graphs()->Get(0)->steps();
  EXPECT_EQ(stepSourceSuffix(*steps.Get(0)), " at /src/m.py:42 in forward (layers.3.attn: Attention)");
  EXPECT_EQ(stepModulePath(*steps.Get(0)), "layers.3.attn");
  EXPECT_EQ(stepSourceSuffix(*steps.Get(1)), " at (layers.10: Block)");
}

TEST(RuntimePlan, AStepWithoutSourcesNamesNone) {
  SizedGraph g;
  Expected<std::shared_ptr<const RuntimePlan>> p = g.runtimePlan();
  ASSERT_TRUE(bool(p)) << p.error().message();
  const plan::Step &s = *(*p)->root().graphs()->Get(0)->steps()->Get(0);
  EXPECT_EQ(stepSourceSuffix(s), "");
  EXPECT_EQ(stepModulePath(s), "");
}

} // namespace

TEST(RuntimePlan, ModulePathsShareWholeComponents) {
  EXPECT_EQ(commonModulePath("layers.3.attn", "layers.3.mlp"), "layers.3");
  EXPECT_EQ(commonModulePath("layers.1", "layers.10"), "layers");
  EXPECT_EQ(commonModulePath("layers.10.fc", "layers.1"), "layers");
  EXPECT_EQ(commonModulePath("head", "head"), "head");
  EXPECT_EQ(commonModulePath("head", "head.fc"), "head");
  EXPECT_EQ(commonModulePath("head", "body"), "");
  EXPECT_EQ(commonModulePath("", "body"), "");
}
