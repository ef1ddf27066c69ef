//===- MathLibraryTest.cpp - Kernel math functions against std:: -----------===//
#include "KernelTestUtil.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace gc;
using namespace gc::test;

namespace {

struct UnaryCase {
  ScalarOp op;
  const char *name;
  double (*reference)(double);
  double lo, hi;
  /// Allowed error in units of the dtype's epsilon (relative), with an
  /// absolute floor of the same size for results near zero.
  double epsilons;
};

double sigmoidRef(double x) { return 1 / (1 + std::exp(-x)); }
double rsqrtRef(double x) { return 1 / std::sqrt(x); }

const UnaryCase kUnary[] = {
    {ScalarOp::Exp, "exp", [](double x) { return std::exp(x); }, -110, 88, 4},
    {ScalarOp::Expm1, "expm1", [](double x) { return std::expm1(x); }, -20, 20, 4},
    {ScalarOp::Log, "log", [](double x) { return std::log(x); }, 1e-30, 1e30, 4},
    {ScalarOp::Log1p, "log1p", [](double x) { return std::log1p(x); }, -0.999, 100, 4},
    {ScalarOp::Tanh, "tanh", [](double x) { return std::tanh(x); }, -12, 12, 4},
    {ScalarOp::Erf, "erf", [](double x) { return std::erf(x); }, -5, 5, 4},
    {ScalarOp::Sigmoid, "sigmoid", sigmoidRef, -60, 60, 6},
    {ScalarOp::Sqrt, "sqrt", [](double x) { return std::sqrt(x); }, 0, 1e6, 1},
    {ScalarOp::Rsqrt, "rsqrt", rsqrtRef, 1e-6, 1e6, 2},
    {ScalarOp::Sinh, "sinh", [](double x) { return std::sinh(x); }, -20, 20, 6},
    {ScalarOp::Cosh, "cosh", [](double x) { return std::cosh(x); }, -20, 20, 6},
    {ScalarOp::Asinh, "asinh", [](double x) { return std::asinh(x); }, -1e6, 1e6, 4},
    {ScalarOp::Sin, "sin", [](double x) { return std::sin(x); }, -10, 10, 2},
    {ScalarOp::Cos, "cos", [](double x) { return std::cos(x); }, -10, 10, 2},
    {ScalarOp::Atan, "atan", [](double x) { return std::atan(x); }, -10, 10, 2},
    {ScalarOp::Tan, "tan", [](double x) { return std::tan(x); }, -1.5, 1.5, 2},
    {ScalarOp::Asin, "asin", [](double x) { return std::asin(x); }, -1, 1, 2},
    {ScalarOp::Acos, "acos", [](double x) { return std::acos(x); }, -1, 1, 2},
};

/// Sample points: an even grid over [lo, hi] (geometric when it spans many
/// decades), small magnitudes, and the special values.
std::vector<double> samples(const UnaryCase &c) {
  std::vector<double> xs;
  const int n = 2000;
  bool geometric = c.lo > 0 && c.hi / c.lo > 1e6;
  for (int k = 0; k <= n; ++k) {
    double t = static_cast<double>(k) / n;
    xs.push_back(geometric ? c.lo * std::pow(c.hi / c.lo, t) : c.lo + (c.hi - c.lo) * t);
  }
  for (double tiny : {1e-3, 1e-6, 1e-12, 3e-39})
    if (c.lo <= -tiny)
      xs.push_back(-tiny);
  for (double tiny : {1e-3, 1e-6, 1e-12, 3e-39})
    if (c.hi >= tiny && c.lo <= tiny)
      xs.push_back(tiny);
  return xs;
}

template <typename T>
void checkClose(T got, double want, double epsilons, const std::string &what) {
  double eps = std::numeric_limits<T>::epsilon();
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << what;
    return;
  }
  if (std::isinf(want) || std::fabs(want) > std::numeric_limits<T>::max()) {
    EXPECT_EQ(static_cast<double>(got), static_cast<double>(static_cast<T>(want))) << what;
    return;
  }
  // Results in T's subnormal range have fewer bits.
  double floor =
      std::max(eps * epsilons, static_cast<double>(std::numeric_limits<T>::denorm_min()) * 4);
  double tolerance = std::max(std::fabs(want) * eps * epsilons,
                              std::fabs(want) < 1 ? floor * std::fabs(want) : 0.0);
  tolerance = std::max(tolerance, static_cast<double>(std::numeric_limits<T>::denorm_min()) * 4);
  EXPECT_LE(std::fabs(static_cast<double>(got) - want), tolerance)
      << what << ": got " << static_cast<double>(got) << ", want " << want;
}

class MathLibraryTest : public KernelTest {
protected:
  /// One kernel per unary function: out[i0] = f(in[i0]) over s0 elements.
  template <typename T> void runUnary(DType t) {
    graph.plan.symbols = {"s0"};
    uint32_t in = buffer(t, "in"), out = buffer(t, "out");
    for (const UnaryCase &c : kUnary) {
      BodyBuilder body;
      body.compute(c.op, t, {body.load(in, t, sym("i0"))});
      kernel(std::string("k_") + c.name, {pointwise({sym("s0")}, body.body, out, sym("i0"))}, {});
    }
    ASSERT_NE(compile("k_exp"), nullptr);
    const double inf = std::numeric_limits<double>::infinity();
    for (const UnaryCase &c : kUnary) {
      std::vector<double> xs = samples(c);
      for (double special : {0.0, -0.0, inf, -inf, std::nan("")})
        xs.push_back(special);
      std::vector<T> vin(xs.begin(), xs.end()), vout(xs.size());
      char *buffers[] = {reinterpret_cast<char *>(vin.data()),
                         reinterpret_cast<char *>(vout.data())};
      int64_t count = static_cast<int64_t>(xs.size());
      KernelEntryFn fn = library->lookup(std::string("k_") + c.name);
      ASSERT_NE(fn, nullptr) << c.name;
      fn(buffers, &count, 0, 1);
      for (size_t k = 0; k < xs.size(); ++k) {
        double x = static_cast<double>(vin[k]);
        double want = c.reference(x);
        if (std::isinf(x) &&
            (c.op == ScalarOp::Sin || c.op == ScalarOp::Cos || c.op == ScalarOp::Tan))
          continue;
        checkClose<T>(vout[k], want, c.epsilons,
                      std::string(c.name) + "(" + std::to_string(x) + ")");
      }
    }
  }

  /// One float32 kernel out[i0] = op(in[i0]), run over xs (empty if it
  /// did not compile).
  std::vector<float> runFloat32(ScalarOp op, std::vector<float> xs) {
    graph.plan.symbols = {"s0"};
    uint32_t in = buffer(DType::Float32, "in"), out = buffer(DType::Float32, "out");
    BodyBuilder body;
    body.compute(op, DType::Float32, {body.load(in, DType::Float32, sym("i0"))});
    kernel("k", {pointwise({sym("s0")}, body.body, out, sym("i0"))}, {});
    Kernel fn = compile("k");
    if (fn == nullptr)
      return {};
    std::vector<float> ys(xs.size());
    char *buffers[] = {reinterpret_cast<char *>(xs.data()), reinterpret_cast<char *>(ys.data())};
    int64_t count = static_cast<int64_t>(xs.size());
    fn(buffers, &count, 0, 1);
    return ys;
  }

  template <typename T> void runPow(DType t) {
    graph.plan.symbols = {"s0"};
    uint32_t a = buffer(t, "a"), b = buffer(t, "b"), out = buffer(t, "out");
    BodyBuilder body;
    uint32_t x = body.load(a, t, sym("i0"));
    uint32_t y = body.load(b, t, sym("i0"));
    body.compute(ScalarOp::Pow, t, {x, y});
    kernel("k_pow", {pointwise({sym("s0")}, body.body, out, sym("i0"))}, {});
    auto fn = compile("k_pow");
    ASSERT_NE(fn, nullptr);
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<T> va, vb;
    for (int i = 0; i <= 40; ++i)
      for (int j = 0; j <= 40; ++j) {
        va.push_back(static_cast<T>(0.01 + i * 0.5));
        vb.push_back(static_cast<T>(-5 + j * 0.25));
      }
    for (double base : {-2.5, -1.0, 0.0, -0.0, 1.0, inf, -inf, std::nan("")})
      for (double e : {-3.0, -2.0, -0.5, 0.0, 0.5, 2.0, 3.0, inf, -inf, std::nan("")}) {
        va.push_back(static_cast<T>(base));
        vb.push_back(static_cast<T>(e));
      }
    std::vector<T> vo(va.size());
    char *buffers[] = {reinterpret_cast<char *>(va.data()), reinterpret_cast<char *>(vb.data()),
                       reinterpret_cast<char *>(vo.data())};
    int64_t count = static_cast<int64_t>(va.size());
    fn(buffers, &count, 0, 1);
    for (size_t k = 0; k < va.size(); ++k) {
      double want = std::pow(static_cast<double>(va[k]), static_cast<double>(vb[k]));
      checkClose<T>(vo[k], want, 4,
                    "pow(" + std::to_string(va[k]) + ", " + std::to_string(vb[k]) + ")");
      if (want == 0 || std::isinf(want)) {
        EXPECT_EQ(std::signbit(vo[k]), std::signbit(want)) << va[k] << " ** " << vb[k];
      }
    }
  }
};

TEST_P(MathLibraryTest, Float32Functions) { runUnary<float>(DType::Float32); }
TEST_P(MathLibraryTest, Float64Functions) { runUnary<double>(DType::Float64); }
TEST_P(MathLibraryTest, Float32Pow) { runPow<float>(DType::Float32); }
TEST_P(MathLibraryTest, Float64Pow) { runPow<double>(DType::Float64); }

TEST_P(MathLibraryTest, RoundingAndSign) {
  uint32_t in = buffer(DType::Float32, "in");
  uint32_t round = buffer(DType::Float32, "round"), sign = buffer(DType::Float32, "sign");
  uint32_t floorDiv = buffer(DType::Float32, "floordiv"), rem = buffer(DType::Float32, "rem");
  auto unary = [&](ScalarOp op, uint32_t out) {
    BodyBuilder body;
    body.compute(op, DType::Float32, {body.load(in, DType::Float32, sym("i0"))});
    return pointwise({c(12)}, body.body, out, sym("i0"));
  };
  auto byMinus3 = [&](ScalarOp op, uint32_t out) {
    BodyBuilder body;
    uint32_t x = body.load(in, DType::Float32, sym("i0"));
    body.compute(op, DType::Float32, {x, body.constant(DType::Float32, -3)});
    return pointwise({c(12)}, body.body, out, sym("i0"));
  };
  kernel("k_misc",
         {unary(ScalarOp::Round, round), unary(ScalarOp::Sign, sign),
          byMinus3(ScalarOp::FloorDiv, floorDiv), byMinus3(ScalarOp::Remainder, rem)},
         {});
  auto fn = compile("k_misc");
  ASSERT_NE(fn, nullptr);
  std::vector<float> vi = {0.5f,  1.5f, 2.5f,  -0.5f, -1.5f,   7.0f,
                           -7.0f, 0.0f, 2.49f, -8.0f, 100.25f, std::nanf("")};
  std::vector<float> vr(12), vs(12), vf(12), vm(12);
  char *buffers[] = {reinterpret_cast<char *>(vi.data()), reinterpret_cast<char *>(vr.data()),
                     reinterpret_cast<char *>(vs.data()), reinterpret_cast<char *>(vf.data()),
                     reinterpret_cast<char *>(vm.data())};
  fn(buffers, nullptr, 0, 1);
  for (size_t k = 0; k + 1 < vi.size(); ++k) {
    float x = vi[k];
    EXPECT_EQ(vr[k], std::nearbyint(x)) << x;
    EXPECT_EQ(vs[k], static_cast<float>((0 < x) - (x < 0))) << x;
    EXPECT_EQ(vf[k], std::floor(x / -3.0f)) << x;
    float m = std::fmod(x, -3.0f);
    if (m != 0 && (m < 0) != (-3.0f < 0))
      m += -3.0f;
    EXPECT_EQ(vm[k], m) << x;
  }
  EXPECT_TRUE(std::isnan(vr[11]));
  EXPECT_TRUE(std::isnan(vf[11]));
}

TEST_P(MathLibraryTest, PowByConstantExponents) {
  const double exponents[] = {2, 3, 0.5, -0.5, -1, -2, 1.5};
  uint32_t in = buffer(DType::Float32, "in");
  std::vector<uint32_t> nodes;
  for (double e : exponents) {
    BodyBuilder body;
    uint32_t x = body.load(in, DType::Float32, sym("i0"));
    body.compute(ScalarOp::Pow, DType::Float32, {x, body.constant(DType::Float32, e)});
    nodes.push_back(pointwise({c(64)}, body.body, buffer(DType::Float32, "out"), sym("i0")));
  }
  kernel("k_powc", nodes, {});
  auto fn = compile("k_powc");
  ASSERT_NE(fn, nullptr);
  std::vector<std::vector<float>> outs(std::size(exponents), std::vector<float>(64));
  std::vector<float> vi(64);
  for (int k = 0; k < 64; ++k)
    vi[k] = -3.0f + 0.37f * k;
  std::vector<char *> buffers = {reinterpret_cast<char *>(vi.data())};
  for (auto &o : outs)
    buffers.push_back(reinterpret_cast<char *>(o.data()));
  fn(buffers.data(), nullptr, 0, 1);
  for (size_t e = 0; e < std::size(exponents); ++e)
    for (int k = 0; k < 64; ++k)
      checkClose<float>(outs[e][k], std::pow(static_cast<double>(vi[k]), exponents[e]), 2,
                        std::to_string(vi[k]) + " ** " + std::to_string(exponents[e]));
}

/// Floats spread over the whole range, both signs (every 4099th bit
/// pattern: all exponents, varied mantissas, the tails included), then
/// `specials`.
std::vector<float> floatsOverTheRange(std::initializer_list<float> specials) {
  std::vector<float> xs;
  for (uint32_t bits = 0; bits < 0x7f800000u; bits += 4099)
    for (uint32_t sign : {0u, 0x80000000u}) {
      uint32_t b = bits | sign;
      float x;
      std::memcpy(&x, &b, sizeof x);
      xs.push_back(x);
    }
  xs.insert(xs.end(), specials.begin(), specials.end());
  return xs;
}

/// The largest error of got against want in units of the last place of
/// want rounded to float (the subnormal spacing below the normal range),
/// and where it is; signs must agree.
struct UlpError {
  double worst = 0;
  float at = 0;
  void add(float x, float got, double want, const char *name) {
    const float inf = std::numeric_limits<float>::infinity();
    float rounded = static_cast<float>(want);
    if (std::isinf(rounded) || std::isnan(want)) {
      EXPECT_EQ(std::isnan(got), std::isnan(want)) << name << "(" << x << ")";
      if (!std::isnan(want)) {
        EXPECT_EQ(got, rounded) << name << "(" << x << ")";
      }
      return;
    }
    double ulp = std::nextafter(std::fabs(rounded), inf) - std::fabs(rounded);
    double error = std::fabs(static_cast<double>(got) - want) / ulp;
    if (error > worst) {
      worst = error;
      at = x;
    }
    EXPECT_EQ(std::signbit(got), std::signbit(want)) << name << "(" << x << ")";
  }
};

/// Float erf (GELU's) within 1.5 ulp of double-precision erf over the
/// whole range, and exactly +-1 from 4 on.
TEST_P(MathLibraryTest, Float32ErfOverAllFloats) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> xs = floatsOverTheRange(
      {0.0f, -0.0f, inf, -inf, 1.0f, -1.0f, 4.0f, -4.0f, 3.9f, 100.0f, std::nanf("")});
  std::vector<float> ys = runFloat32(ScalarOp::Erf, xs);
  UlpError error;
  ASSERT_EQ(ys.size(), xs.size());
  for (size_t k = 0; k < xs.size(); ++k) {
    error.add(xs[k], ys[k], std::erf(static_cast<double>(xs[k])), "erf");
    if (std::fabs(xs[k]) >= 4) {
      EXPECT_EQ(ys[k], std::copysign(1.0f, xs[k])) << "erf(" << xs[k] << ")";
    }
  }
  EXPECT_LE(error.worst, 1.5) << "at erf(" << error.at << ")";
}

/// Float exp within 1 ulp (0.92 measured here, 0.99 on every 7th float) of
/// double-precision exp over the whole range, subnormal results, overflow
/// to infinity and NaN included (the kernel's exp has no select for them:
/// its clamp and scaling must get them right).
TEST_P(MathLibraryTest, Float32ExpOverAllFloats) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> xs = floatsOverTheRange({0.0f, -0.0f, inf, -inf, 88.72f, 88.73f, -87.3f,
                                              -103.9f, -104.0f, -200.0f, std::nanf("")});
  // The subnormal and overflow edges, densely.
  for (float x = -104.5f; x < -86.0f; x += 0.0037f)
    xs.push_back(x);
  for (float x = 87.5f; x < 89.5f; x += 0.00037f)
    xs.push_back(x);
  std::vector<float> ys = runFloat32(ScalarOp::Exp, xs);
  ASSERT_EQ(ys.size(), xs.size());
  UlpError error;
  for (size_t k = 0; k < xs.size(); ++k)
    error.add(xs[k], ys[k], std::exp(static_cast<double>(xs[k])), "exp");
  EXPECT_LE(error.worst, 1.0) << "at exp(" << error.at << ")";
}

INSTANTIATE_TEST_SUITE_P(Targets, MathLibraryTest, ::testing::Values("x86-64", "x86-64-v3"));

/// The library compiled natively, as the runtime's attention step uses it.
namespace native {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "MathLibrary.c"
#pragma GCC diagnostic pop
} // namespace native

/// The softmax's exponential, compiled natively (as the runtime's
/// attention step uses it, through the host compiler): within 1 ulp of
/// double-precision exp from -87 to 88, 0 below -87 and at -inf, NaN for
/// NaN; every 61st float of the range, and the cut at -87 densely.
TEST(MathLibraryNative, ExpOfNonPositiveWithin1UlpDownToTheNormalRange) {
  std::vector<float> xs = {0.0f, -0.0f, -87.0f, 88.0f};
  for (uint64_t u = 0; u <= 0xffffffffu; u += 61) {
    float x;
    uint32_t bits = static_cast<uint32_t>(u);
    std::memcpy(&x, &bits, sizeof x);
    if (x <= 88.0f && x >= -87.0f)
      xs.push_back(x);
  }
  for (float x = -87.0f; x < -86.0f; x += 0.0001f)
    xs.push_back(x);
  UlpError error;
  for (float x : xs)
    error.add(x, native::gc_expf_nonpositive(x), std::exp(static_cast<double>(x)), "exp");
  EXPECT_LE(error.worst, 1.0) << "at exp(" << error.at << ")";
  const float inf = std::numeric_limits<float>::infinity();
  for (float x : {-87.0001f, -88.0f, -104.0f, -1e30f, -inf})
    EXPECT_EQ(native::gc_expf_nonpositive(x), 0.0f) << "exp(" << x << ")";
  EXPECT_TRUE(std::isnan(native::gc_expf_nonpositive(std::nanf(""))));
}

} // namespace
