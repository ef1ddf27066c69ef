//===- IndexSimplifyTest.cpp - Tests of range-aware index rewriting -------===//

#include "gc/IR/IndexSimplify.h"

#include <gtest/gtest.h>

#include <functional>
#include <random>

using namespace gc;

namespace {

class IndexSimplifyTest : public ::testing::Test {
protected:
  const SymExpr *parse(std::string_view text) {
    Expected<const SymExpr *> e = ctx.parse(text);
    EXPECT_TRUE(bool(e)) << text << ": " << e.error().message();
    return e ? *e : ctx.constant(0);
  }
  /// The simplified text of `text` under `ranges`.
  std::string simp(std::string_view text) {
    return simplifyIndex(ctx, parse(text), ranges, extents)->str();
  }
  std::string bounds(std::string_view text) {
    std::optional<SymRange> r = boundsOf(parse(text), ranges);
    if (!r)
      return "none";
    return "[" + std::to_string(r->min) + ", " +
           (r->max == SymRange::kUnbounded ? "inf" : std::to_string(r->max)) +
           "]";
  }
  std::string coef(std::string_view text, const std::string &var) {
    const SymExpr *c = affineCoefficient(ctx, parse(text), var);
    return c ? c->str() : "null";
  }
  void range(const std::string &name, int64_t lo, int64_t hi) {
    ranges[name] = SymRange{lo, hi};
  }

  SymContext ctx;
  VarRanges ranges;
  VarExtents extents;
};

TEST_F(IndexSimplifyTest, BoundsOfBasics) {
  range("i0", 0, 9);
  range("i1", 0, 63);
  range("n", -5, 3);
  EXPECT_EQ(bounds("7"), "[7, 7]");
  EXPECT_EQ(bounds("i0"), "[0, 9]");
  EXPECT_EQ(bounds("s0"), "[0, inf]");
  EXPECT_EQ(bounds("64*i0 + i1"), "[0, 639]");
  EXPECT_EQ(bounds("i0 - i1"), "[-63, 9]");
  EXPECT_EQ(bounds("-3*i0 + 2"), "[-25, 2]");
  EXPECT_EQ(bounds("n*i0"), "[-45, 27]");
  EXPECT_EQ(bounds("n*n"), "[-15, 25]");
  EXPECT_EQ(bounds("i0*s0"), "[0, inf]");
  EXPECT_EQ(bounds("-s0"), "none");
}

TEST_F(IndexSimplifyTest, BoundsOfDivModMinMax) {
  range("i0", 0, 9);
  range("i1", 0, 63);
  range("n", -5, 3);
  EXPECT_EQ(bounds("floordiv(i1, 8)"), "[0, 7]");
  EXPECT_EQ(bounds("floordiv(n, 2)"), "[-3, 1]");
  EXPECT_EQ(bounds("mod(i1, 8)"), "[0, 7]");
  EXPECT_EQ(bounds("mod(i0, 16)"), "[0, 9]");
  EXPECT_EQ(bounds("mod(i0 + 16, 32)"), "[16, 25]");
  EXPECT_EQ(bounds("mod(n, 4)"), "[0, 3]");
  EXPECT_EQ(bounds("min(i0, 4)"), "[0, 4]");
  EXPECT_EQ(bounds("max(i0, 4)"), "[4, 9]");
  EXPECT_EQ(bounds("max(n, i0 - 20)"), "[-5, 3]");
  EXPECT_EQ(bounds("floordiv(i1, s0)"), "none");
  range("s0", 1, SymRange::kUnbounded);
  EXPECT_EQ(bounds("floordiv(i1, s0)"), "[0, 63]");
  EXPECT_EQ(bounds("mod(i1, s0)"), "[0, 63]");
}

TEST_F(IndexSimplifyTest, BoundsOverflowIsUnbounded) {
  range("a", 0, int64_t(1) << 40);
  EXPECT_EQ(bounds("a*a"), "[0, inf]");
  EXPECT_EQ(bounds("-a*a"), "none");
  EXPECT_EQ(bounds("a*a - a*a*a"), "none");
}

TEST_F(IndexSimplifyTest, FloorDivByLoopExtent) {
  range("i0", 0, 15);
  range("i1", 0, 63);
  EXPECT_EQ(simp("floordiv(64*i0 + i1, 64)"), "i0");
  EXPECT_EQ(simp("mod(64*i0 + i1, 64)"), "i1");
  EXPECT_EQ(simp("floordiv(i1, 64)"), "0");
  EXPECT_EQ(simp("mod(i1, 64)"), "i1");
  EXPECT_EQ(simp("floordiv(i1, 32)"), "floordiv(i1, 32)");
  EXPECT_EQ(simp("mod(i1, 32)"), "mod(i1, 32)");
  EXPECT_EQ(simp("floordiv(i1 + 64, 64)"), "1");
  EXPECT_EQ(simp("mod(i1 + 64, 64)"), "i1");
}

TEST_F(IndexSimplifyTest, ConstantQuotient) {
  range("i0", 0, 3);
  EXPECT_EQ(simp("floordiv(i0 + 8, 4)"), "2");
  EXPECT_EQ(simp("mod(i0 + 8, 4)"), "i0");
  EXPECT_EQ(simp("floordiv(i0 + 6, 4)"), "floordiv(i0 + 2, 4) + 1");
}

TEST_F(IndexSimplifyTest, PartialFactor) {
  // x = 4*i0 + i1 with i1 < 4: x // 8 is i0 // 2 and x % 8 keeps i1.
  range("i0", 0, 9);
  range("i1", 0, 3);
  EXPECT_EQ(simp("floordiv(4*i0 + i1, 8)"), "floordiv(i0, 2)");
  EXPECT_EQ(simp("mod(4*i0 + i1, 8)"), "i1 + 4*mod(i0, 2)");
  // i1 may reach 4, so nothing splits.
  range("i1", 0, 4);
  EXPECT_EQ(simp("floordiv(4*i0 + i1, 8)"), "floordiv(4*i0 + i1, 8)");
}

TEST_F(IndexSimplifyTest, NestedReshapeSplit) {
  // A flat index 64*i0 + 8*i1 + i2 split back into [., 8, 8].
  range("i0", 0, 4);
  range("i1", 0, 7);
  range("i2", 0, 7);
  const char *flat = "64*i0 + 8*i1 + i2";
  EXPECT_EQ(simp(std::string("floordiv(") + flat + ", 64)"), "i0");
  EXPECT_EQ(simp(std::string("mod(floordiv(") + flat + ", 8), 8)"), "i1");
  EXPECT_EQ(simp(std::string("mod(") + flat + ", 8)"), "i2");
  EXPECT_EQ(simp(std::string("mod(") + flat + ", 64)"), "8*i1 + i2");
}

TEST_F(IndexSimplifyTest, ReshapeOfPermute) {
  // x: [4, 6] permuted to [6, 4] and flattened to [24]; then viewed as
  // [6, 4] again and read: j = 4*i0 + i1, source index (j % 4)*6 + j // 4.
  range("i0", 0, 5);
  range("i1", 0, 3);
  EXPECT_EQ(simp("6*mod(4*i0 + i1, 4) + floordiv(4*i0 + i1, 4)"),
            "i0 + 6*i1");
  // [2, 3, 4] permuted (2, 0, 1) to [4, 2, 3], reshaped to [4, 6]:
  // element (i0, i1) is source (i1 // 3, i1 % 3, i0).
  range("i0", 0, 3);
  range("i1", 0, 5);
  // The two source dims stay adjacent, so the read is contiguous again.
  EXPECT_EQ(simp("12*floordiv(i1, 3) + 4*mod(i1, 3) + i0"), "i0 + 4*i1");
  // [2, 3] permuted to [3, 2] and flattened: no longer affine.
  range("i0", 0, 5);
  EXPECT_EQ(simp("3*mod(i0, 2) + floordiv(i0, 2)"),
            "floordiv(i0, 2) + 3*mod(i0, 2)");
}

TEST_F(IndexSimplifyTest, RecombineDivAndMod) {
  range("i0", 0, 15);
  EXPECT_EQ(simp("4*floordiv(i0, 4) + mod(i0, 4)"), "i0");
  EXPECT_EQ(simp("12*floordiv(i0, 4) + 3*mod(i0, 4) + 1"), "3*i0 + 1");
  EXPECT_EQ(simp("4*floordiv(i0, 4) + 2*mod(i0, 4)"),
            "4*floordiv(i0, 4) + 2*mod(i0, 4)");
  EXPECT_EQ(simp("s1*floordiv(i0, s1) + mod(i0, s1)"), "i0");
  // Two levels: 16*(x // 16) + 4*((x // 4) % 4) + x % 4 is x.
  EXPECT_EQ(simp("16*floordiv(i0, 16) + 4*mod(floordiv(i0, 4), 4) + "
                 "mod(i0, 4)"),
            "i0");
  // The same with the outer quotient not vanishing: a weight [64, 3, 7, 7]
  // viewed as [64, 147] reads 147*i0 + (the three merged dims) = i1 again.
  range("i1", 0, 146);
  EXPECT_EQ(simp("147*i0 + 49*floordiv(i1, 49) + 7*mod(floordiv(i1, 7), 7) + "
                 "mod(i1, 7)"),
            "147*i0 + i1");
  // The remainder must be of the same quotient's parts: 3*7 is not 49.
  EXPECT_EQ(simp("49*floordiv(i1, 49) + 7*mod(floordiv(i1, 7), 3) + mod(i1, 7)"),
            "49*floordiv(i1, 49) + mod(i1, 7) + 7*mod(floordiv(i1, 7), 3)");
}

TEST_F(IndexSimplifyTest, SymbolicStrides) {
  range("s1", 1, SymRange::kUnbounded);
  range("s2", 1, SymRange::kUnbounded);
  range("i0", 0, 7);
  range("i1", 0, 7);
  // Exact multiples of a symbolic divisor come out whatever its value.
  EXPECT_EQ(simp("floordiv(i0*s1*s2, s1*s2)"), "i0");
  EXPECT_EQ(simp("floordiv(i0*s1*s2, s1)"), "i0*s2");
  EXPECT_EQ(simp("mod(i0*s1*s2 + i0*s1, s1)"), "0");
  // i1 < 8 is below s1 only once s1 >= 8 is known.
  EXPECT_EQ(simp("floordiv(i0*s1 + i1, s1)"), "floordiv(i0*s1 + i1, s1)");
  range("s1", 8, SymRange::kUnbounded);
  EXPECT_EQ(simp("floordiv(i0*s1 + i1, s1)"), "i0");
  EXPECT_EQ(simp("mod(i0*s1 + i1, s1)"), "i1");
  EXPECT_EQ(simp("floordiv(i1, s1)"), "0");
  EXPECT_EQ(simp("mod(i1, s1)"), "i1");
  EXPECT_EQ(simp("floordiv(i0*s1*s2 + i1*s2, s1*s2)"), "i0");
  EXPECT_EQ(simp("mod(i0*s1*s2 + i1*s2, s1*s2)"), "i1*s2");
}

TEST_F(IndexSimplifyTest, SymbolicLoopExtents) {
  range("s0", 1, 64);
  range("i0", 0, 63);
  range("i1", 0, 159);
  // Numerically i0 may reach 63 while s0 may be 1: undecided.
  EXPECT_EQ(simp("mod(i0, s0)"), "mod(i0, s0)");
  // In a loop over s0, i0 < s0 whatever s0 is.
  extents = {{"i0", parse("s0")}, {"i1", parse("160")}};
  EXPECT_EQ(simp("mod(i0, s0)"), "i0");
  EXPECT_EQ(simp("floordiv(i0, s0)"), "0");
  EXPECT_EQ(simp("i1 + 160*mod(i0, s0)"), "160*i0 + i1");
  // A reshape of [s0, 4, 16] into [4*s0, 16] and back: the rows' digits.
  EXPECT_EQ(simp("floordiv(s0*floordiv(i1, 16) + i0, s0)"), "floordiv(i1, 16)");
  EXPECT_EQ(simp("mod(s0*floordiv(i1, 16) + i0, s0)"), "i0");
  // Only where the variable's largest value decides: i0 + 1 reaches s0.
  EXPECT_EQ(simp("mod(i0 + 1, s0)"), "mod(i0 + 1, s0)");
  // A decreasing term is not replaced by its largest value (conservative:
  // s0 - i0 - 1 is below s0 too, but only the increasing terms are tried).
  EXPECT_EQ(simp("mod(s0 - i0 - 1, s0)"), "mod(-i0 + s0 - 1, s0)");
}

TEST_F(IndexSimplifyTest, SymbolicDivisorNeedsPositiveBound) {
  range("i0", 0, 7);
  // s3 might be 0, so nothing is decided.
  EXPECT_EQ(simp("floordiv(i0*s3, s3)"), "floordiv(i0*s3, s3)");
  range("s3", 1, 100);
  EXPECT_EQ(simp("floordiv(i0*s3, s3)"), "i0");
  EXPECT_EQ(simp("mod(i0*s3, s3)"), "0");
}

TEST_F(IndexSimplifyTest, MinMax) {
  range("i0", 0, 9);
  range("i1", 0, 63);
  EXPECT_EQ(simp("min(i0, 10)"), "i0");
  EXPECT_EQ(simp("max(i0, 10)"), "10");
  EXPECT_EQ(simp("min(i0, 5)"), "min(i0, 5)");
  EXPECT_EQ(simp("max(i0 + 1, i0)"), "i0 + 1");
  EXPECT_EQ(simp("min(i0 + 1, i0)"), "i0");
  EXPECT_EQ(simp("min(i1, i0)"), "min(i0, i1)");
  EXPECT_EQ(simp("max(i0, -1, i1 - 100)"), "i0");
  EXPECT_EQ(simp("min(floordiv(64*i0 + i1, 64), 20)"), "i0");
}

TEST_F(IndexSimplifyTest, SimplifiesInsideLargerExpressions) {
  range("i0", 0, 3);
  range("i1", 0, 15);
  EXPECT_EQ(simp("2*floordiv(16*i0 + i1, 16) + mod(16*i0 + i1, 16)*s0"),
            "2*i0 + i1*s0");
  EXPECT_EQ(simp("floordiv(floordiv(16*i0 + i1, 4), 4)"), "i0");
}

TEST_F(IndexSimplifyTest, NegativeValuesAreNotSplit) {
  range("n", -3, 3);
  range("i0", 0, 9);
  EXPECT_EQ(simp("floordiv(8*i0 + n, 8)"), "i0 + floordiv(n, 8)");
  EXPECT_EQ(simp("mod(n, 8)"), "mod(n, 8)");
}

TEST_F(IndexSimplifyTest, AffineCoefficient) {
  EXPECT_EQ(coef("64*i0 + i1", "i0"), "64");
  EXPECT_EQ(coef("64*i0 + i1", "i1"), "1");
  EXPECT_EQ(coef("64*i0 + i1", "i2"), "0");
  EXPECT_EQ(coef("i0*s1*s2 + i1*s2 + i2", "i0"), "s1*s2");
  EXPECT_EQ(coef("i0*s1 + 3*i0 + 2", "i0"), "s1 + 3");
  EXPECT_EQ(coef("i0*i0", "i0"), "null");
  EXPECT_EQ(coef("i0*i1", "i0"), "i1");
  EXPECT_EQ(coef("floordiv(i0, 2)", "i0"), "null");
  EXPECT_EQ(coef("floordiv(i1, 2) + i0", "i0"), "1");
  EXPECT_EQ(coef("min(i0, 3)", "i0"), "null");
  EXPECT_EQ(coef("7", "i0"), "0");
}

TEST_F(IndexSimplifyTest, Substitute) {
  std::map<std::string, const SymExpr *> values = {
      {"i0", parse("i1")}, {"i1", parse("i0")}};
  EXPECT_EQ(substitute(ctx, parse("64*i0 + i1"), values)->str(), "i0 + 64*i1");
  values = {{"i0", parse("floordiv(i2, 8)")}, {"i1", parse("mod(i2, 8)")}};
  EXPECT_EQ(substitute(ctx, parse("8*i0 + i1"), values)->str(),
            "8*floordiv(i2, 8) + mod(i2, 8)");
  ranges["i2"] = SymRange{0, 63};
  EXPECT_EQ(simplifyIndex(ctx, substitute(ctx, parse("8*i0 + i1"), values),
                          ranges)
                ->str(),
            "i2");
  values = {{"s0", ctx.constant(4)}};
  EXPECT_EQ(substitute(ctx, parse("max(i0, s0) + floordiv(i0, s0)"), values)
                ->str(),
            "floordiv(i0, 4) + max(i0, 4)");
}

/// Random expressions over ranged variables: the simplified form agrees
/// with the original at random points of the ranges.
TEST_F(IndexSimplifyTest, RandomExpressionsKeepTheirValue) {
  std::mt19937 rng(12345);
  const int64_t hi[] = {3, 7, 15, 4};
  const char *names[] = {"i0", "i1", "i2", "n"};
  range("i0", 0, hi[0]);
  range("i1", 0, hi[1]);
  range("i2", 0, hi[2]);
  range("n", -4, hi[3]);
  auto pick = [&rng](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  std::function<const SymExpr *(int)> gen = [&](int depth) -> const SymExpr * {
    int choice = depth == 0 ? static_cast<int>(pick(0, 1))
                            : static_cast<int>(pick(0, 6));
    switch (choice) {
    case 0:
      return ctx.constant(pick(-3, 9));
    case 1:
      return ctx.symbol(names[pick(0, 3)]);
    case 2:
      return ctx.add(gen(depth - 1), gen(depth - 1));
    case 3:
      return ctx.mul(ctx.constant(pick(1, 16)), gen(depth - 1));
    case 4:
      return ctx.floorDiv(gen(depth - 1), ctx.constant(pick(1, 16)));
    case 5:
      return ctx.mod(gen(depth - 1), ctx.constant(pick(1, 16)));
    default:
      return pick(0, 1) ? ctx.min(gen(depth - 1), gen(depth - 1))
                        : ctx.max(gen(depth - 1), gen(depth - 1));
    }
  };
  int changed = 0;
  for (int iter = 0; iter < 2000; ++iter) {
    const SymExpr *e = gen(4);
    const SymExpr *s = simplifyIndex(ctx, e, ranges);
    changed += s != e;
    for (int p = 0; p < 20; ++p) {
      std::map<std::string, int64_t> values = {{"i0", pick(0, hi[0])},
                                               {"i1", pick(0, hi[1])},
                                               {"i2", pick(0, hi[2])},
                                               {"n", pick(-4, hi[3])}};
      ASSERT_EQ(evaluate(e, values), evaluate(s, values))
          << e->str() << " simplified to " << s->str();
    }
    std::optional<SymRange> b = boundsOf(e, ranges);
    ASSERT_TRUE(b.has_value()) << e->str();
    for (int p = 0; p < 20; ++p) {
      std::map<std::string, int64_t> values = {{"i0", pick(0, hi[0])},
                                               {"i1", pick(0, hi[1])},
                                               {"i2", pick(0, hi[2])},
                                               {"n", pick(-4, hi[3])}};
      int64_t v = *evaluate(e, values);
      ASSERT_LE(b->min, v) << e->str();
      ASSERT_GE(b->max, v) << e->str();
    }
  }
  // The generator makes plenty of decidable divisions and min/max.
  EXPECT_GT(changed, 200);
}

/// The same with symbolic divisors and loop variables whose extents are
/// symbolic (i0 < s, i1 < 2*s): simplified forms agree at random points.
TEST_F(IndexSimplifyTest, RandomExpressionsOverSymbolicExtents) {
  std::mt19937 rng(54321);
  range("s", 1, 12);
  range("i0", 0, 11);
  range("i1", 0, 23);
  extents = {{"i0", parse("s")}, {"i1", parse("2*s")}};
  auto pick = [&rng](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  const SymExpr *divisors[] = {parse("s"), parse("2*s"), parse("4"), parse("s + 1")};
  const char *names[] = {"i0", "i1", "s"};
  std::function<const SymExpr *(int)> gen = [&](int depth) -> const SymExpr * {
    int choice = depth == 0 ? static_cast<int>(pick(0, 1)) : static_cast<int>(pick(0, 5));
    switch (choice) {
    case 0:
      return ctx.constant(pick(0, 5));
    case 1:
      return ctx.symbol(names[pick(0, 2)]);
    case 2:
      return ctx.add(gen(depth - 1), gen(depth - 1));
    case 3:
      return ctx.mul(pick(0, 1) ? ctx.symbol("s") : ctx.constant(pick(1, 4)), gen(depth - 1));
    case 4:
      return ctx.floorDiv(gen(depth - 1), divisors[pick(0, 3)]);
    default:
      return ctx.mod(gen(depth - 1), divisors[pick(0, 3)]);
    }
  };
  int changed = 0;
  for (int iter = 0; iter < 2000; ++iter) {
    const SymExpr *e = gen(4);
    const SymExpr *simplified = simplifyIndex(ctx, e, ranges, extents);
    changed += simplified != e;
    for (int p = 0; p < 20; ++p) {
      int64_t size = pick(1, 12);
      std::map<std::string, int64_t> values = {
          {"s", size}, {"i0", pick(0, size - 1)}, {"i1", pick(0, 2 * size - 1)}};
      ASSERT_EQ(evaluate(e, values), evaluate(simplified, values))
          << e->str() << " simplified to " << simplified->str() << " at s = " << size;
    }
  }
  EXPECT_GT(changed, 200);
}

} // namespace
