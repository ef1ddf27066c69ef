//===- KernelEmitterTest.cpp - Kernels compiled, loaded and run ------------===//
#include "KernelTestUtil.h"

#include "gc/Tensor/Tensor.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace gc;
using namespace gc::test;

namespace {

using KernelEmitterTest = KernelTest;

char *ptr(auto &v) { return reinterpret_cast<char *>(v.data()); }

TEST_P(KernelEmitterTest, PointwiseAddWithBroadcast) {
  const int64_t rows = 3, cols = 37;
  uint32_t a = buffer(DType::Float32, "a"), b = buffer(DType::Float32, "b");
  uint32_t out = buffer(DType::Float32, "out");
  const SymExpr *flat = add(mul(sym("i0"), c(cols)), sym("i1"));
  BodyBuilder body;
  uint32_t x = body.load(a, DType::Float32, flat);
  uint32_t y = body.load(b, DType::Float32, sym("i1"));
  body.compute(ScalarOp::Add, DType::Float32, {x, y});
  uint32_t n = pointwise({c(rows), c(cols)}, body.body, out, flat);
  kernel("k_add", {n}, {c(rows)});
  auto fn = compile("k_add");
  ASSERT_NE(fn, nullptr);

  std::vector<float> va(rows * cols), vb(cols), vo(rows * cols, -1);
  for (size_t k = 0; k < va.size(); ++k)
    va[k] = 0.5f * k;
  for (size_t k = 0; k < vb.size(); ++k)
    vb[k] = 100.0f + k;
  char *buffers[] = {ptr(va), ptr(vb), ptr(vo)};
  fn(buffers, nullptr, 0, rows);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < cols; ++k)
      EXPECT_EQ(vo[r * cols + k], va[r * cols + k] + vb[k]);
}

TEST_P(KernelEmitterTest, TransposeCopy) {
  const int64_t rows = 5, cols = 19;
  uint32_t in = buffer(DType::Float64, "in"), out = buffer(DType::Float64, "out");
  // out[j][i] = in[i][j], iterating over out's layout (i0 = j, i1 = i).
  BodyBuilder body;
  body.load(in, DType::Float64, add(mul(sym("i1"), c(cols)), sym("i0")));
  uint32_t n =
      pointwise({c(cols), c(rows)}, body.body, out, add(mul(sym("i0"), c(rows)), sym("i1")));
  kernel("k_t", {n}, {c(cols)});
  auto fn = compile("k_t");
  ASSERT_NE(fn, nullptr);
  std::vector<double> vi(rows * cols), vo(rows * cols);
  for (size_t k = 0; k < vi.size(); ++k)
    vi[k] = static_cast<double>(k);
  char *buffers[] = {ptr(vi), ptr(vo)};
  fn(buffers, nullptr, 0, cols);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      EXPECT_EQ(vo[j * rows + i], vi[i * cols + j]);
}

TEST_P(KernelEmitterTest, SymbolicSizeAndSubRange) {
  uint32_t in = buffer(DType::Float32, "in"), out = buffer(DType::Float32, "out");
  graph.plan.symbols = {"s1", "s0"};
  // out[i0, i1] = in[i0, i1] * 2 over [s0, s1], row-major with s1 columns.
  const SymExpr *flat = add(mul(sym("i0"), sym("s1")), sym("i1"));
  BodyBuilder body;
  uint32_t x = body.load(in, DType::Float32, flat);
  uint32_t two = body.constant(DType::Float32, 2);
  body.compute(ScalarOp::Mul, DType::Float32, {x, two});
  uint32_t n = pointwise({sym("s0"), sym("s1")}, body.body, out, flat);
  kernel("k_sym", {n}, {sym("s0")});
  auto fn = compile("k_sym");
  ASSERT_NE(fn, nullptr);
  const int64_t s0 = 6, s1 = 1001;
  std::vector<float> vi(s0 * s1), vo(s0 * s1, -7.0f);
  for (size_t k = 0; k < vi.size(); ++k)
    vi[k] = static_cast<float>(k % 97);
  char *buffers[] = {ptr(vi), ptr(vo)};
  int64_t symbols[] = {s1, s0};
  fn(buffers, symbols, 2, 4);
  for (int64_t r = 0; r < s0; ++r)
    for (int64_t k = 0; k < s1; ++k) {
      float expected = (r >= 2 && r < 4) ? vi[r * s1 + k] * 2 : -7.0f;
      ASSERT_EQ(vo[r * s1 + k], expected) << r << "," << k;
    }
}

TEST_P(KernelEmitterTest, RowSumAndRowMax) {
  const int64_t rows = 4, cols = 67;
  uint32_t in = buffer(DType::Float32, "in");
  uint32_t sum = buffer(DType::Float32, "sum"), max = buffer(DType::Float32, "max");
  uint32_t min = buffer(DType::Int32, "imin");
  const SymExpr *flat = add(mul(sym("i0"), c(cols)), sym("r0"));
  BodyBuilder body;
  body.load(in, DType::Float32, flat);
  BodyBuilder asInt = body;
  asInt.cast(DType::Int32, body.body.result);
  uint32_t ns = reduction({c(rows)}, {c(cols)}, ReduceKind::Sum, body.body, sum, sym("i0"));
  uint32_t nm = reduction({c(rows)}, {c(cols)}, ReduceKind::Max, body.body, max, sym("i0"));
  uint32_t ni = reduction({c(rows)}, {c(cols)}, ReduceKind::Min, asInt.body, min, sym("i0"));
  kernel("k_red", {ns, nm, ni}, {c(rows)});
  auto fn = compile("k_red");
  ASSERT_NE(fn, nullptr);
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> vi(rows * cols), vs(rows), vm(rows);
  std::vector<int32_t> vn(rows);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < cols; ++k)
      vi[r * cols + k] = static_cast<float>((k * 7 + r * 3) % 23) - 11.0f;
  vi[1 * cols + 40] = std::nanf("");
  for (int64_t k = 0; k < cols; ++k)
    vi[2 * cols + k] = -inf;
  char *buffers[] = {ptr(vi), ptr(vs), ptr(vm), ptr(vn)};
  fn(buffers, nullptr, 0, rows);
  for (int64_t r = 0; r < rows; ++r) {
    float s = 0, m = -inf;
    int32_t lo = std::numeric_limits<int32_t>::max();
    for (int64_t k = 0; k < cols; ++k) {
      float v = vi[r * cols + k];
      s += v;
      m = std::isnan(v) || v > m ? v : m;
      if (!std::isnan(v) && !std::isinf(v))
        lo = std::min(lo, static_cast<int32_t>(v));
    }
    if (std::isnan(s))
      EXPECT_TRUE(std::isnan(vs[r])) << r;
    else
      EXPECT_FLOAT_EQ(vs[r], s) << r;
    if (std::isnan(m))
      EXPECT_TRUE(std::isnan(vm[r])) << r;
    else
      EXPECT_EQ(vm[r], m) << r;
    if (r != 1 && r != 2) {
      EXPECT_EQ(vn[r], lo) << r;
    }
  }
}

TEST_P(KernelEmitterTest, SoftmaxGroupOfThreeNodes) {
  const int64_t rows = 3, cols = 50;
  uint32_t in = buffer(DType::Float32, "in"), mx = buffer(DType::Float32, "mx");
  uint32_t sm = buffer(DType::Float32, "sm"), out = buffer(DType::Float32, "out");
  auto flat = [&](const char *inner) { return add(mul(sym("i0"), c(cols)), sym(inner)); };
  BodyBuilder maxBody;
  maxBody.load(in, DType::Float32, flat("r0"));
  BodyBuilder sumBody;
  {
    uint32_t x = sumBody.load(in, DType::Float32, flat("r0"));
    uint32_t m = sumBody.load(mx, DType::Float32, sym("i0"));
    uint32_t d = sumBody.compute(ScalarOp::Sub, DType::Float32, {x, m});
    sumBody.compute(ScalarOp::Exp, DType::Float32, {d});
  }
  BodyBuilder outBody;
  {
    uint32_t x = outBody.load(in, DType::Float32, flat("i1"));
    uint32_t m = outBody.load(mx, DType::Float32, sym("i0"));
    uint32_t d = outBody.compute(ScalarOp::Sub, DType::Float32, {x, m});
    uint32_t e = outBody.compute(ScalarOp::Exp, DType::Float32, {d});
    uint32_t s = outBody.load(sm, DType::Float32, sym("i0"));
    outBody.compute(ScalarOp::Div, DType::Float32, {e, s});
  }
  uint32_t n0 = reduction({c(rows)}, {c(cols)}, ReduceKind::Max, maxBody.body, mx, sym("i0"));
  uint32_t n1 = reduction({c(rows)}, {c(cols)}, ReduceKind::Sum, sumBody.body, sm, sym("i0"));
  uint32_t n2 = pointwise({c(rows), c(cols)}, outBody.body, out, flat("i1"));
  kernel("k_softmax", {n0, n1, n2}, {c(rows)});
  auto fn = compile("k_softmax");
  ASSERT_NE(fn, nullptr);
  std::vector<float> vi(rows * cols), vmx(rows), vsm(rows), vo(rows * cols);
  for (size_t k = 0; k < vi.size(); ++k)
    vi[k] = std::sin(0.37f * k) * 5.0f;
  vi[cols + 3] = -std::numeric_limits<float>::infinity();
  char *buffers[] = {ptr(vi), ptr(vmx), ptr(vsm), ptr(vo)};
  fn(buffers, nullptr, 0, rows);
  for (int64_t r = 0; r < rows; ++r) {
    double m = -INFINITY, s = 0;
    for (int64_t k = 0; k < cols; ++k)
      m = std::max(m, static_cast<double>(vi[r * cols + k]));
    for (int64_t k = 0; k < cols; ++k)
      s += std::exp(vi[r * cols + k] - m);
    for (int64_t k = 0; k < cols; ++k)
      EXPECT_NEAR(vo[r * cols + k], std::exp(vi[r * cols + k] - m) / s, 1e-6) << r << "," << k;
  }
}

TEST_P(KernelEmitterTest, ArgMaxAndArgMin) {
  const int64_t rows = 4, cols = 9;
  uint32_t in = buffer(DType::Float32, "in");
  uint32_t amax = buffer(DType::Int64, "amax"), amin = buffer(DType::Int64, "amin");
  BodyBuilder body;
  // Two reduction loops (3 x 3) flattened to one position.
  body.load(in, DType::Float32, add(add(mul(sym("i0"), c(cols)), mul(sym("r0"), c(3))), sym("r1")));
  uint32_t n0 = reduction({c(rows)}, {c(3), c(3)}, ReduceKind::ArgMax, body.body, amax, sym("i0"));
  uint32_t n1 = reduction({c(rows)}, {c(3), c(3)}, ReduceKind::ArgMin, body.body, amin, sym("i0"));
  kernel("k_arg", {n0, n1}, {c(rows)});
  auto fn = compile("k_arg");
  ASSERT_NE(fn, nullptr);
  const float nan = std::nanf(""), inf = std::numeric_limits<float>::infinity();
  std::vector<float> vi = {
      1,    5,    3,    5,    -2,   0,    -2,   4,    1,    // ties: first max 1, first min 4
      0,    0,    nan,  9,    nan,  -9,   0,    0,    0,    // first NaN wins both
      -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, // all lowest
      3,    2,    1,    0,    -1,   -2,   -3,   -4,   -5};
  std::vector<int64_t> vmax(rows, -1), vmin(rows, -1);
  char *buffers[] = {ptr(vi), ptr(vmax), ptr(vmin)};
  fn(buffers, nullptr, 0, rows);
  EXPECT_EQ(vmax, (std::vector<int64_t>{1, 2, 0, 0}));
  EXPECT_EQ(vmin, (std::vector<int64_t>{4, 2, 0, 8}));
}

TEST_P(KernelEmitterTest, MaskedLoadPads) {
  const int64_t n = 13, pad = 2;
  uint32_t in = buffer(DType::Float32, "in"), out = buffer(DType::Float32, "out");
  BodyBuilder body;
  uint32_t pos = body.index(DType::Int64, add(sym("i0"), c(-pad)));
  uint32_t zero = body.constant(DType::Int64, 0);
  uint32_t size = body.constant(DType::Int64, n);
  uint32_t ge = body.compute(ScalarOp::Ge, DType::Bool, {pos, zero});
  uint32_t lt = body.compute(ScalarOp::Lt, DType::Bool, {pos, size});
  uint32_t inside = body.compute(ScalarOp::LogicalAnd, DType::Bool, {ge, lt});
  uint32_t x = body.load(in, DType::Float32, add(sym("i0"), c(-pad)));
  body.body.ops[x].mask = static_cast<int32_t>(inside);
  body.body.ops[x].constant = -1.5;
  uint32_t node = pointwise({c(n + 2 * pad)}, body.body, out, sym("i0"));
  kernel("k_pad", {node}, {});
  auto fn = compile("k_pad");
  ASSERT_NE(fn, nullptr);
  std::vector<float> vi(n), vo(n + 2 * pad);
  for (int64_t k = 0; k < n; ++k)
    vi[k] = 10.0f + k;
  char *buffers[] = {ptr(vi), ptr(vo)};
  fn(buffers, nullptr, 0, 1);
  for (int64_t k = 0; k < n + 2 * pad; ++k)
    EXPECT_EQ(vo[k], (k < pad || k >= n + pad) ? -1.5f : vi[k - pad]) << k;
}

TEST_P(KernelEmitterTest, IndirectLoadGathers) {
  const int64_t rows = 7, dim = 11, vocab = 5;
  uint32_t table = buffer(DType::Float32, "table"), idx = buffer(DType::Int64, "idx");
  uint32_t out = buffer(DType::Float32, "out");
  BodyBuilder body;
  uint32_t t = body.load(idx, DType::Int64, sym("i0"));
  uint32_t g = body.load(table, DType::Float32, add(mul(sym("t0"), c(dim)), sym("i1")));
  body.body.ops[g].indirect = {t};
  uint32_t node =
      pointwise({c(rows), c(dim)}, body.body, out, add(mul(sym("i0"), c(dim)), sym("i1")));
  kernel("k_gather", {node}, {c(rows)});
  auto fn = compile("k_gather");
  ASSERT_NE(fn, nullptr);
  std::vector<float> vt(vocab * dim), vo(rows * dim);
  for (size_t k = 0; k < vt.size(); ++k)
    vt[k] = static_cast<float>(k);
  std::vector<int64_t> vidx = {4, 0, 2, 2, 1, 3, 0};
  char *buffers[] = {ptr(vt), ptr(vidx), ptr(vo)};
  fn(buffers, nullptr, 0, rows);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < dim; ++k)
      EXPECT_EQ(vo[r * dim + k], vt[vidx[r] * dim + k]);
}

TEST_P(KernelEmitterTest, IntegerAndBoolOpsAndCasts) {
  const int64_t n = 16;
  uint32_t a = buffer(DType::Int64, "a"), b = buffer(DType::Int64, "b"),
           f = buffer(DType::Float32, "f");
  uint32_t qOut = buffer(DType::Int64, "q"), rOut = buffer(DType::Int64, "r");
  uint32_t castOut = buffer(DType::Int32, "cast"), boolOut = buffer(DType::Bool, "flag");
  uint32_t whereOut = buffer(DType::UInt8, "where");
  auto node = [&](auto build, uint32_t out) {
    BodyBuilder body;
    build(body);
    return pointwise({c(n)}, body.body, out, sym("i0"));
  };
  auto loadAB = [&](BodyBuilder &body) {
    return std::pair{body.load(a, DType::Int64, sym("i0")), body.load(b, DType::Int64, sym("i0"))};
  };
  uint32_t n0 = node(
      [&](BodyBuilder &body) {
        auto [x, y] = loadAB(body);
        body.compute(ScalarOp::FloorDiv, DType::Int64, {x, y});
      },
      qOut);
  uint32_t n1 = node(
      [&](BodyBuilder &body) {
        auto [x, y] = loadAB(body);
        body.compute(ScalarOp::Remainder, DType::Int64, {x, y});
      },
      rOut);
  uint32_t n2 = node(
      [&](BodyBuilder &body) { body.cast(DType::Int32, body.load(f, DType::Float32, sym("i0"))); },
      castOut);
  uint32_t n3 = node(
      [&](BodyBuilder &body) {
        auto [x, y] = loadAB(body);
        uint32_t isNonzero = body.cast(DType::Bool, x);
        uint32_t less = body.compute(ScalarOp::Lt, DType::Bool, {x, y});
        body.compute(ScalarOp::LogicalAnd, DType::Bool,
                     {isNonzero, body.compute(ScalarOp::LogicalNot, DType::Bool, {less})});
      },
      boolOut);
  uint32_t n4 = node(
      [&](BodyBuilder &body) {
        auto [x, y] = loadAB(body);
        uint32_t cond = body.compute(ScalarOp::Gt, DType::Bool, {x, y});
        uint32_t fx = body.cast(DType::UInt8, body.load(f, DType::Float32, sym("i0")));
        uint32_t k = body.constant(DType::UInt8, 200);
        body.compute(ScalarOp::Where, DType::UInt8, {cond, fx, k});
      },
      whereOut);
  kernel("k_int", {n0, n1, n2, n3, n4}, {});
  auto fn = compile("k_int");
  ASSERT_NE(fn, nullptr);
  std::vector<int64_t> va(n), vb(n), vq(n), vr(n);
  std::vector<float> vf(n);
  std::vector<int32_t> vc(n);
  std::vector<uint8_t> vflag(n, 7), vw(n);
  for (int64_t k = 0; k < n; ++k) {
    va[k] = (k - 8) * 7;
    vb[k] = (k % 4 == 0) ? -3 : (k % 4) + 1;
    vf[k] = (k - 8) * 1.75f;
  }
  char *buffers[] = {ptr(va), ptr(vb), ptr(vf), ptr(vq), ptr(vr), ptr(vc), ptr(vflag), ptr(vw)};
  fn(buffers, nullptr, 0, 1);
  for (int64_t k = 0; k < n; ++k) {
    int64_t x = va[k], y = vb[k];
    int64_t q = x / y - ((x % y != 0) && ((x < 0) != (y < 0)));
    int64_t r = x - q * y;
    EXPECT_EQ(vq[k], q) << k;
    EXPECT_EQ(vr[k], r) << k;
    EXPECT_EQ(vc[k], static_cast<int32_t>(vf[k])) << k;
    EXPECT_EQ(vflag[k], (x != 0 && !(x < y)) ? 1 : 0) << k;
    uint8_t fx = static_cast<uint8_t>(static_cast<int32_t>(vf[k]));
    EXPECT_EQ(vw[k], x > y ? fx : 200) << k;
  }
}

TEST_P(KernelEmitterTest, BoolReductionsCountAndAny) {
  const int64_t rows = 3, cols = 21;
  uint32_t in = buffer(DType::Bool, "in");
  uint32_t count = buffer(DType::Int64, "count"), any = buffer(DType::Bool, "any");
  BodyBuilder body;
  body.load(in, DType::Bool, add(mul(sym("i0"), c(cols)), sym("r0")));
  uint32_t n0 = reduction({c(rows)}, {c(cols)}, ReduceKind::Sum, body.body, count, sym("i0"));
  uint32_t n1 = reduction({c(rows)}, {c(cols)}, ReduceKind::Any, body.body, any, sym("i0"));
  kernel("k_bool", {n0, n1}, {c(rows)});
  auto fn = compile("k_bool");
  ASSERT_NE(fn, nullptr);
  std::vector<uint8_t> vi(rows * cols, 0), vany(rows, 9);
  std::vector<int64_t> vcount(rows, -1);
  for (int64_t k = 0; k < cols; k += 3)
    vi[k] = 1;
  vi[2 * cols + 20] = 1;
  char *buffers[] = {ptr(vi), ptr(vcount), ptr(vany)};
  fn(buffers, nullptr, 0, rows);
  EXPECT_EQ(vcount, (std::vector<int64_t>{7, 0, 1}));
  EXPECT_EQ(vany, (std::vector<uint8_t>{1, 0, 1}));
}

TEST_P(KernelEmitterTest, InplaceOutputMaySharePointer) {
  const int64_t n = 100;
  uint32_t in = buffer(DType::Float32, "in"), out = buffer(DType::Float32, "out");
  BodyBuilder body;
  uint32_t x = body.load(in, DType::Float32, sym("i0"));
  body.compute(ScalarOp::Mul, DType::Float32, {x, x});
  kernel("k_sq", {pointwise({c(n)}, body.body, out, sym("i0"))}, {c(n)});
  graph.plan.steps[0].inplace = {InplacePair{out, in}};
  auto fn = compile("k_sq");
  ASSERT_NE(fn, nullptr);
  std::vector<float> v(n);
  for (int64_t k = 0; k < n; ++k)
    v[k] = 0.5f * k;
  char *buffers[] = {ptr(v), ptr(v)};
  fn(buffers, nullptr, 0, n);
  for (int64_t k = 0; k < n; ++k)
    EXPECT_EQ(v[k], 0.25f * k * k);
}

TEST_P(KernelEmitterTest, SameInputGivesSameObject) {
  uint32_t in = buffer(DType::Float32, "in"), out = buffer(DType::Float32, "out");
  BodyBuilder body;
  body.compute(ScalarOp::Tanh, DType::Float32, {body.load(in, DType::Float32, sym("i0"))});
  kernel("k_tanh", {pointwise({c(100)}, body.body, out, sym("i0"))}, {c(100)});
  EmitOptions options;
  options.target = GetParam();
  auto first = emitKernels(module, graph, options);
  auto second = emitKernels(module, graph, options);
  ASSERT_TRUE(first && second);
  EXPECT_EQ(*first, *second);
}

// Half precision: a float32 value stored as f16 and as bf16 rounds to
// nearest even (as gc's Tensor conversions), NaN stays NaN; on the portable
// target too, where f16 has no F16C instructions.
TEST_P(KernelEmitterTest, HalfPrecisionStoresRoundToNearestEven) {
  uint32_t in = buffer(DType::Float32, "in");
  uint32_t half = buffer(DType::Float16, "half"), bf16 = buffer(DType::BFloat16, "bf16");
  std::vector<uint32_t> nodes;
  for (uint32_t out : {half, bf16}) {
    BodyBuilder body;
    body.load(in, DType::Float32, sym("i0"));
    nodes.push_back(pointwise({c(8)}, body.body, out, sym("i0")));
  }
  kernel("k_half", nodes, {c(8)});
  auto fn = compile("k_half");
  ASSERT_NE(fn, nullptr);
  std::vector<float> vi = {1.0f, 1.00390625f, 1.01171875f, -2.5f, 1e-30f, 70000.0f,
                           std::numeric_limits<float>::quiet_NaN(),
                           -std::numeric_limits<float>::infinity()};
  std::vector<uint16_t> vh(8), vb(8);
  char *buffers[] = {ptr(vi), ptr(vh), ptr(vb)};
  fn(buffers, nullptr, 0, 8);
  for (size_t k = 0; k < vi.size(); ++k) {
    EXPECT_EQ(vh[k], floatToHalf(vi[k])) << vi[k];
    EXPECT_EQ(vb[k], floatToBFloat16(vi[k])) << vi[k];
  }
}

TEST_P(KernelEmitterTest, UnboundSymbolIsAnErrorNamingTheNode) {
  uint32_t in = buffer(DType::Float32, "in"), out = buffer(DType::Float32, "out");
  BodyBuilder body;
  body.load(in, DType::Float32, add(sym("i0"), sym("s9")));
  kernel("k_unbound", {pointwise({c(4)}, body.body, out, sym("i0"))}, {});
  EmitOptions options;
  options.target = GetParam();
  auto object = emitKernels(module, graph, options);
  ASSERT_FALSE(object);
  EXPECT_NE(object.error().message().find("kernel 'k_unbound', node 'n0'"), std::string::npos)
      << object.error().message();
  EXPECT_NE(object.error().message().find("'s9'"), std::string::npos) << object.error().message();
}

INSTANTIATE_TEST_SUITE_P(Targets, KernelEmitterTest, ::testing::Values("x86-64", "x86-64-v3"));

class VectorizationTest : public KernelTest {};

TEST_P(VectorizationTest, ExpLoopUsesEightFloatLanes) {
  uint32_t in = buffer(DType::Float32, "in"), out = buffer(DType::Float32, "out");
  graph.plan.symbols = {"s0"};
  BodyBuilder body;
  body.compute(ScalarOp::Exp, DType::Float32, {body.load(in, DType::Float32, sym("i0"))});
  kernel("k_exp", {pointwise({sym("s0")}, body.body, out, sym("i0"))}, {});
  std::string ir;
  ASSERT_NE(compile("k_exp", &ir), nullptr);
  EXPECT_NE(ir.find("<8 x float>"), std::string::npos);
  // The math call was inlined, not left as a call.
  EXPECT_EQ(ir.find("call float @gc_expf"), std::string::npos);
}

/// The text of function `name` in `ir`.
std::string functionText(const std::string &ir, const std::string &name) {
  size_t start = ir.find("define void @" + name + "(");
  if (start == std::string::npos)
    return "";
  return ir.substr(start, ir.find("\n}\n", start) - start);
}

TEST_P(VectorizationTest, MathFunctionsVectorize) {
  graph.plan.symbols = {"s0"};
  // Every op the math library computes, and those the emitter writes out
  // around its functions.
  std::vector<ScalarOp> ops = {ScalarOp::Erf, ScalarOp::Sigmoid, ScalarOp::Rsqrt, ScalarOp::Pow};
#define GC_SCALAR_OP(ID, NAME, ARITY, CPU, EVAL)                                                  \
  if (std::string_view(#CPU) == "LIBRARY")                                                        \
    ops.push_back(ScalarOp::ID);
#include "gc/IR/ScalarOps.def"
#undef GC_SCALAR_OP
  for (DType t : {DType::Float32, DType::Float64}) {
    uint32_t in = buffer(t, "in"), out = buffer(t, "out");
    for (ScalarOp op : ops) {
      // Double erf and pow call libm.
      if (t == DType::Float64 && (op == ScalarOp::Erf || op == ScalarOp::Pow))
        continue;
      BodyBuilder body;
      uint32_t x = body.load(in, t, sym("i0"));
      std::vector<uint32_t> operands(scalarOpArity(op), x);
      body.compute(op, t, operands);
      kernel("k_" + std::string(scalarOpName(op)) + std::string(dtypeName(t)),
             {pointwise({sym("s0")}, body.body, out, sym("i0"))}, {});
    }
  }
  std::string ir;
  ASSERT_NE(compile("k_" + std::string(scalarOpName(ScalarOp::Exp)) + "f32", &ir), nullptr);
  for (const KernelGroup &g : graph.plan.kernels) {
    std::string text = functionText(ir, g.name);
    ASSERT_FALSE(text.empty()) << g.name;
    // Float pow works in double, so it gets half as many lanes.
    std::string lanes = !g.name.ends_with("f32")      ? "<4 x double>"
                        : g.name.starts_with("k_pow") ? "<4 x float>"
                                                      : "<8 x float>";
    EXPECT_NE(text.find(lanes), std::string::npos) << g.name;
  }
}

TEST_P(VectorizationTest, RowSumAndMaxVectorize) {
  uint32_t in = buffer(DType::Float32, "in");
  uint32_t sum = buffer(DType::Float32, "sum"), max = buffer(DType::Float32, "max");
  graph.plan.symbols = {"s0"};
  const SymExpr *flat = add(mul(sym("i0"), sym("s0")), sym("r0"));
  BodyBuilder body;
  body.load(in, DType::Float32, flat);
  uint32_t ns = reduction({c(8)}, {sym("s0")}, ReduceKind::Sum, body.body, sum, sym("i0"));
  kernel("k_sum", {ns}, {c(8)});
  uint32_t nm = reduction({c(8)}, {sym("s0")}, ReduceKind::Max, body.body, max, sym("i0"));
  kernel("k_max", {nm}, {c(8)});
  std::string ir;
  ASSERT_NE(compile("k_sum", &ir), nullptr);
  auto kmax = ir.find("define void @k_max");
  ASSERT_NE(kmax, std::string::npos);
  EXPECT_NE(ir.substr(0, kmax).find("fadd reassoc nsz contract <8 x float>"), std::string::npos);
  EXPECT_NE(ir.substr(kmax).find("<8 x float>"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(AVX2, VectorizationTest, ::testing::Values("x86-64-v3"));

TEST(CpuTargets, UnknownTargetIsAnError) {
  Module module;
  LoopGraph graph;
  EmitOptions options;
  options.target = "pentium";
  auto object = emitKernels(module, graph, options);
  ASSERT_FALSE(object);
  EXPECT_NE(object.error().message().find("pentium"), std::string::npos);
}

} // namespace
