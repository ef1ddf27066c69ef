//===- SymExprTest.cpp - Tests of symbolic expressions --------------------===//

#include "gc/IR/SymExpr.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using namespace gc;

namespace {

class SymExprTest : public ::testing::Test {
protected:
  const SymExpr *c(int64_t v) { return ctx.constant(v); }
  const SymExpr *s(std::string_view name) { return ctx.symbol(name); }
  const SymExpr *parse(std::string_view text) {
    Expected<const SymExpr *> e = ctx.parse(text);
    EXPECT_TRUE(bool(e)) << text << ": " << e.error().message();
    return e ? *e : nullptr;
  }
  std::string parseError(std::string_view text) {
    Expected<const SymExpr *> e = ctx.parse(text);
    EXPECT_FALSE(bool(e)) << text << " parsed as " << (*e)->str();
    return e ? "" : e.error().message();
  }

  SymContext ctx;
};

TEST_F(SymExprTest, Uniquing) {
  EXPECT_EQ(c(3), c(3));
  EXPECT_NE(c(3), c(4));
  EXPECT_EQ(s("s0"), s("s0"));
  EXPECT_NE(s("s0"), s("s1"));
  EXPECT_EQ(ctx.floorDiv(s("s0"), s("s1")), ctx.floorDiv(s("s0"), s("s1")));
  EXPECT_EQ(s("s0")->symbolName(), "s0");
  EXPECT_EQ(c(-7)->constant(), -7);
}

TEST_F(SymExprTest, AddIsCanonical) {
  const SymExpr *x = s("x"), *y = s("y");
  EXPECT_EQ(ctx.add(x, y), ctx.add(y, x));
  EXPECT_EQ(ctx.add(ctx.add(x, c(1)), y), ctx.add(x, ctx.add(c(1), y)));
  EXPECT_EQ(ctx.add(ctx.mul(c(2), s("s0")), ctx.mul(c(3), s("s0"))),
            ctx.mul(c(5), s("s0")));
  EXPECT_EQ(ctx.sub(s("s0"), s("s0")), c(0));
  EXPECT_EQ(ctx.add(x, c(0)), x);
  EXPECT_EQ(ctx.add(c(2), c(3)), c(5));
  EXPECT_EQ(ctx.add(ctx.add(x, c(1)), c(-1)), x);

  const SymExpr *sum = ctx.add(ctx.add(c(1), y), ctx.mul(c(2), x));
  ASSERT_EQ(sum->kind(), SymExpr::Kind::Add);
  ASSERT_EQ(sum->operands().size(), 3u);
  // Terms sorted by their factors, the constant last.
  EXPECT_EQ(sum->str(), "2*x + y + 1");
}

TEST_F(SymExprTest, MulIsCanonical) {
  const SymExpr *x = s("x"), *y = s("y");
  EXPECT_EQ(ctx.mul(x, y), ctx.mul(y, x));
  EXPECT_EQ(ctx.mul(ctx.mul(c(2), x), ctx.mul(y, c(3))),
            ctx.mul(c(6), ctx.mul(x, y)));
  EXPECT_EQ(ctx.mul(x, c(0)), c(0));
  EXPECT_EQ(ctx.mul(c(1), x), x);
  EXPECT_EQ(ctx.mul(c(4), c(-3)), c(-12));
  const SymExpr *m = ctx.mul(y, ctx.mul(c(3), x));
  ASSERT_EQ(m->kind(), SymExpr::Kind::Mul);
  EXPECT_EQ(m->operands()[0], c(3)); // coefficient first
  EXPECT_EQ(m->str(), "3*x*y");
  EXPECT_EQ(ctx.mul(x, x)->str(), "x*x");
  EXPECT_EQ(ctx.mul(c(-1), x)->str(), "-x");
}

// The chosen rule: products distribute over sums (see SymExpr.h).
TEST_F(SymExprTest, ProductsDistribute) {
  const SymExpr *s0 = s("s0"), *s1 = s("s1");
  const SymExpr *a = ctx.add(s0, c(1)), *b = ctx.add(s1, c(1));
  const SymExpr *twice = ctx.mul(a, c(2));
  EXPECT_EQ(twice->kind(), SymExpr::Kind::Add);
  EXPECT_EQ(twice->str(), "2*s0 + 2");
  EXPECT_EQ(ctx.mul(a, b)->str(), "s0 + s0*s1 + s1 + 1");
  // So multiplication is associative on the canonical form.
  EXPECT_EQ(ctx.mul(ctx.mul(c(2), a), b), ctx.mul(c(2), ctx.mul(a, b)));
  EXPECT_EQ(ctx.sub(ctx.mul(a, b), ctx.mul(s0, s1)),
            ctx.add(ctx.add(s0, s1), c(1)));
  EXPECT_EQ(ctx.sub(c(0), a)->str(), "-s0 - 1");
}

TEST_F(SymExprTest, Printing) {
  const SymExpr *s0 = s("s0"), *s1 = s("s1");
  EXPECT_EQ(c(-5)->str(), "-5");
  EXPECT_EQ(ctx.add(ctx.mul(c(2), s0), c(1))->str(), "2*s0 + 1");
  EXPECT_EQ(ctx.sub(s0, ctx.mul(c(2), s1))->str(), "s0 - 2*s1");
  EXPECT_EQ(ctx.sub(s1, ctx.mul(c(2), s0))->str(), "-2*s0 + s1");
  EXPECT_EQ(ctx.sub(s0, c(1))->str(), "s0 - 1");
  EXPECT_EQ(ctx.sub(s0, ctx.mul(s0, s1))->str(), "s0 - s0*s1");
  EXPECT_EQ(ctx.floorDiv(s0, c(2))->str(), "floordiv(s0, 2)");
  EXPECT_EQ(ctx.mod(ctx.add(s0, s1), s1)->str(), "mod(s0 + s1, s1)");
  EXPECT_EQ(ctx.max(c(4), s0)->str(), "max(s0, 4)");
  EXPECT_EQ(ctx.min(ctx.min(s1, c(3)), ctx.min(s0, c(-2)))->str(),
            "min(s0, s1, -2)");
  EXPECT_EQ(ctx.mul(c(3), ctx.floorDiv(s0, s1))->str(), "3*floordiv(s0, s1)");
}

TEST_F(SymExprTest, FoldConstants) {
  EXPECT_EQ(ctx.floorDiv(c(7), c(2)), c(3));
  EXPECT_EQ(ctx.floorDiv(c(-7), c(2)), c(-4));
  EXPECT_EQ(ctx.floorDiv(c(7), c(-2)), c(-4));
  EXPECT_EQ(ctx.floorDiv(c(-7), c(-2)), c(3));
  EXPECT_EQ(ctx.floorDiv(c(-8), c(2)), c(-4));
  EXPECT_EQ(ctx.mod(c(7), c(2)), c(1));
  EXPECT_EQ(ctx.mod(c(-7), c(2)), c(1));
  EXPECT_EQ(ctx.mod(c(7), c(-2)), c(-1));
  EXPECT_EQ(ctx.mod(c(-7), c(-2)), c(-1));
  EXPECT_EQ(ctx.mod(c(-8), c(2)), c(0));
  EXPECT_EQ(ctx.min(c(3), c(5)), c(3));
  EXPECT_EQ(ctx.max(c(3), c(5)), c(5));
  // Division by zero is left for evaluation to report.
  EXPECT_EQ(ctx.floorDiv(c(1), c(0))->kind(), SymExpr::Kind::FloorDiv);
  EXPECT_EQ(ctx.mod(c(1), c(0))->kind(), SymExpr::Kind::Mod);
  // Wrapping, never undefined behaviour.
  int64_t lo = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(ctx.floorDiv(c(lo), c(-1)), c(lo));
  EXPECT_EQ(ctx.mod(c(lo), c(-1)), c(0));
  EXPECT_EQ(ctx.add(c(std::numeric_limits<int64_t>::max()), c(1)), c(lo));
}

TEST_F(SymExprTest, FoldTrivial) {
  const SymExpr *x = s("x"), *y = s("y");
  EXPECT_EQ(ctx.floorDiv(x, c(1)), x);
  EXPECT_EQ(ctx.mod(x, c(1)), c(0));
  EXPECT_EQ(ctx.mod(x, c(-1)), c(0));
  EXPECT_EQ(ctx.min(x, x), x);
  EXPECT_EQ(ctx.max(x, x), x);
  EXPECT_EQ(ctx.min(ctx.min(x, y), x), ctx.min(y, x));
  EXPECT_EQ(ctx.max(ctx.max(x, c(2)), c(5)), ctx.max(x, c(5)));
  // Min inside max stays an operand.
  EXPECT_EQ(ctx.max(ctx.min(x, y), x)->str(), "max(x, min(x, y))");
}

TEST_F(SymExprTest, FloorDivNormalization) {
  const SymExpr *s0 = s("s0"), *s1 = s("s1");
  auto fd = [&](const SymExpr *a, int64_t d) {
    return ctx.floorDiv(a, c(d))->str();
  };
  EXPECT_EQ(fd(ctx.add(ctx.mul(c(2), s0), s1), 2), "s0 + floordiv(s1, 2)");
  EXPECT_EQ(fd(ctx.add(ctx.mul(c(2), s0), c(1)), 2), "s0");
  EXPECT_EQ(fd(ctx.add(s0, c(3)), 2), "floordiv(s0 + 1, 2) + 1");
  EXPECT_EQ(fd(ctx.sub(s0, c(3)), 2), "floordiv(s0 + 1, 2) - 2");
  EXPECT_EQ(fd(ctx.mul(c(2), s0), 4), "floordiv(s0, 2)");
  EXPECT_EQ(fd(ctx.floorDiv(s0, c(2)), 3), "floordiv(s0, 6)");
  EXPECT_EQ(fd(s0, -2), "floordiv(-s0, 2)");
  EXPECT_EQ(fd(ctx.mul(c(6), ctx.mul(s0, s1)), 3), "2*s0*s1");
}

TEST_F(SymExprTest, ModNormalization) {
  const SymExpr *s0 = s("s0"), *s1 = s("s1");
  auto md = [&](const SymExpr *a, int64_t d) {
    return ctx.mod(a, c(d))->str();
  };
  EXPECT_EQ(md(ctx.add(ctx.mul(c(2), s0), c(3)), 2), "1");
  EXPECT_EQ(md(ctx.add(ctx.mul(c(4), s0), s1), 2), "mod(s1, 2)");
  EXPECT_EQ(md(ctx.add(ctx.mul(c(2), s0), c(2)), 4), "2*mod(s0 + 1, 2)");
  EXPECT_EQ(md(ctx.mod(s0, c(6)), 3), "mod(s0, 3)");
  EXPECT_EQ(md(ctx.mod(s0, c(3)), 3), "mod(s0, 3)");
  EXPECT_EQ(md(ctx.mod(s0, c(3)), 6), "mod(mod(s0, 3), 6)");
  EXPECT_EQ(md(s0, -3), "-mod(-s0, 3)");
}

TEST_F(SymExprTest, StructuralOrderIgnoresCreationOrder) {
  SymContext other;
  // Create symbols in the opposite order, so addresses differ in order.
  const SymExpr *b1 = other.symbol("b"), *a1 = other.symbol("a");
  const SymExpr *e1 = other.add(other.mul(b1, a1), other.min(b1, a1));
  const SymExpr *a2 = s("a"), *b2 = s("b");
  const SymExpr *e2 = ctx.add(ctx.min(a2, b2), ctx.mul(a2, b2));
  EXPECT_EQ(e1->str(), e2->str());
  EXPECT_EQ(e1->str(), "a*b + min(a, b)");
}

TEST_F(SymExprTest, Ranges) {
  EXPECT_FALSE(ctx.range("s0"));
  ctx.setRange("s0", {2, 64});
  ctx.setRange("s1", {0, SymRange::kUnbounded});
  ASSERT_TRUE(ctx.range("s0"));
  EXPECT_EQ(*ctx.range("s0"), (SymRange{2, 64}));
  EXPECT_EQ(ctx.ranges().size(), 2u);
  EXPECT_EQ(ctx.ranges().begin()->first, "s0");
}

TEST_F(SymExprTest, Evaluate) {
  const SymExpr *e = parse("2*s0*s1 - floordiv(s0, 3) + mod(s1, -4) + "
                           "max(s0, s1, 7) - min(s0, 1)");
  std::map<std::string, int64_t> vals{{"s0", -7}, {"s1", 5}};
  // 2*-7*5 - (-7 // 3) + (5 % -4) + max(-7, 5, 7) - min(-7, 1)
  EXPECT_EQ(evaluate(e, vals), -70 + 3 + -3 + 7 + 7);
  EXPECT_EQ(evaluate(e, {{"s0", 1}}), std::nullopt);
  EXPECT_EQ(evaluate(parse("floordiv(s0, s1)"), {{"s0", 1}, {"s1", 0}}),
            std::nullopt);
  EXPECT_EQ(evaluate(parse("mod(s0, s1)"), {{"s0", 1}, {"s1", 0}}),
            std::nullopt);
  EXPECT_EQ(evaluate(c(12), {}), 12);
}

TEST_F(SymExprTest, ParseSyntax) {
  const SymExpr *s0 = s("s0"), *s1 = s("s1");
  EXPECT_EQ(parse("  2 *s0+\t1 "), ctx.add(ctx.mul(c(2), s0), c(1)));
  EXPECT_EQ(parse("-s0"), ctx.mul(c(-1), s0));
  EXPECT_EQ(parse("--s0"), s0);
  EXPECT_EQ(parse("-(s0 + 1)"), ctx.sub(c(-1), s0));
  EXPECT_EQ(parse("s0 - -2"), ctx.add(s0, c(2)));
  EXPECT_EQ(parse("(s0 + 1)*(s1 + 1)"),
            ctx.mul(ctx.add(s0, c(1)), ctx.add(s1, c(1))));
  EXPECT_EQ(parse("max(s0, s1, 3, s0)"), ctx.max(ctx.max(s0, s1), c(3)));
  EXPECT_EQ(parse("floordiv ( s0 , 2 )"), ctx.floorDiv(s0, c(2)));
  EXPECT_EQ(parse("_x1"), s("_x1"));
  EXPECT_EQ(parse("modx"), s("modx"));
  EXPECT_EQ(parse("-9223372036854775808"),
            c(std::numeric_limits<int64_t>::min()));
  EXPECT_EQ(parse("9223372036854775807"),
            c(std::numeric_limits<int64_t>::max()));
}

TEST_F(SymExprTest, ParseErrors) {
  EXPECT_EQ(parseError(""),
            "at column 1: expected an expression, got the end of the "
            "expression");
  EXPECT_EQ(parseError("s0 +"), "at column 5: expected an expression, got "
                                "the end of the expression");
  EXPECT_EQ(parseError("s0 s1"), "at column 4: expected an operator or the "
                                 "end of the expression, got 's'");
  EXPECT_EQ(parseError("(s0 + 1"), "at column 8: expected ')', got the end "
                                   "of the expression");
  EXPECT_EQ(parseError("s0 + foo(1)"),
            "at column 6: unknown function 'foo'");
  EXPECT_EQ(parseError("floordiv(s0)"),
            "at column 1: 'floordiv' takes 2 arguments, got 1");
  EXPECT_EQ(parseError("min(s0)"),
            "at column 1: 'min' takes at least 2 arguments, got 1");
  EXPECT_EQ(parseError("mod + 1"),
            "at column 5: expected '(' after 'mod', got '+'");
  EXPECT_EQ(parseError("max(s0; 1)"),
            "at column 7: expected ',' or ')', got ';'");
  EXPECT_EQ(parseError("9223372036854775808"),
            "at column 1: integer out of range");
  EXPECT_EQ(parseError("1 + 99999999999999999999"),
            "at column 5: integer out of range");
  EXPECT_EQ(parseError("s0 # 1"), "at column 4: expected an operator or the "
                                  "end of the expression, got '#'");
  std::string product;
  for (int i = 0; i < 11; ++i)
    product += (i ? "*(s" : "(s") + std::to_string(i) + " + 1)";
  EXPECT_EQ(parseError("2 + " + product),
            "at column 5: expression too large to expand");
  std::string deep(100000, '(');
  EXPECT_NE(parseError(deep).find("nested too deeply"), std::string::npos);
  std::string minuses(100000, '-');
  EXPECT_NE(parseError(minuses).find("expected an expression"),
            std::string::npos);
}

// Reference arithmetic for the random tests: wrapping like SymExpr's, and
// Python's floor division and modulo, written out plainly.
int64_t refAdd(int64_t a, int64_t b) { return int64_t(uint64_t(a) + uint64_t(b)); }
int64_t refSub(int64_t a, int64_t b) { return int64_t(uint64_t(a) - uint64_t(b)); }
int64_t refMul(int64_t a, int64_t b) { return int64_t(uint64_t(a) * uint64_t(b)); }
int64_t refFloorDiv(int64_t a, int64_t b) {
  if (b == -1)
    return refSub(0, a);
  int64_t q = a / b;
  if (q * b != a && ((a < 0) != (b < 0)))
    --q;
  return q;
}
int64_t refMod(int64_t a, int64_t b) {
  return refSub(a, refMul(b, refFloorDiv(a, b)));
}

/// Builds random expressions through the builders, and computes their
/// values directly from the same random choices, so that every rewrite the
/// builders make is checked against plain arithmetic.
class RandomExprs {
public:
  RandomExprs(SymContext &ctx, uint32_t seed) : ctx_(ctx), rng_(seed) {}

  struct Sample {
    const SymExpr *expr;
    /// The value under each assignment, or nullopt after a division by 0.
    std::vector<std::optional<int64_t>> values;
  };

  static constexpr int kNumSymbols = 3;
  std::vector<std::map<std::string, int64_t>> assignments;

  void makeAssignments(int n) {
    for (int i = 0; i < n; ++i) {
      std::map<std::string, int64_t> a;
      for (int k = 0; k < kNumSymbols; ++k)
        a["s" + std::to_string(k)] = pick(-20, 20);
      assignments.push_back(std::move(a));
    }
  }

  Sample make(int depth) {
    int choice = depth <= 0 ? pick(0, 1) : pick(0, 9);
    Sample out;
    if (choice == 0) {
      int64_t v = pick(-6, 6);
      out.expr = ctx_.constant(v);
      out.values.assign(assignments.size(), v);
      return out;
    }
    if (choice == 1) {
      std::string name = "s" + std::to_string(pick(0, kNumSymbols - 1));
      out.expr = ctx_.symbol(name);
      for (auto &a : assignments)
        out.values.push_back(a.at(name));
      return out;
    }
    Sample l = make(depth - 1);
    // Small constant divisors exercise the FloorDiv/Mod rewrites most.
    Sample r = (choice == 6 || choice == 7) && pick(0, 2) != 0
                   ? constantSample(pick(-6, 6))
                   : make(depth - 1);
    for (size_t i = 0; i < assignments.size(); ++i) {
      std::optional<int64_t> a = l.values[i], b = r.values[i];
      if (!a || !b || ((choice == 6 || choice == 7) && *b == 0)) {
        out.values.push_back(std::nullopt);
        continue;
      }
      switch (choice) {
      case 2:
      case 3:
        out.values.push_back(refAdd(*a, *b));
        break;
      case 4:
        out.values.push_back(refSub(*a, *b));
        break;
      case 5:
        out.values.push_back(refMul(*a, *b));
        break;
      case 6:
        out.values.push_back(refFloorDiv(*a, *b));
        break;
      case 7:
        out.values.push_back(refMod(*a, *b));
        break;
      case 8:
        out.values.push_back(std::min(*a, *b));
        break;
      default:
        out.values.push_back(std::max(*a, *b));
        break;
      }
    }
    switch (choice) {
    case 2:
    case 3:
      out.expr = ctx_.add(l.expr, r.expr);
      break;
    case 4:
      out.expr = ctx_.sub(l.expr, r.expr);
      break;
    case 5:
      out.expr = ctx_.mul(l.expr, r.expr);
      break;
    case 6:
      out.expr = ctx_.floorDiv(l.expr, r.expr);
      break;
    case 7:
      out.expr = ctx_.mod(l.expr, r.expr);
      break;
    case 8:
      out.expr = ctx_.min(l.expr, r.expr);
      break;
    default:
      out.expr = ctx_.max(l.expr, r.expr);
      break;
    }
    return out;
  }

private:
  Sample constantSample(int64_t v) {
    return {ctx_.constant(v), std::vector<std::optional<int64_t>>(
                                  assignments.size(), v)};
  }
  int pick(int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng_);
  }

  SymContext &ctx_;
  std::mt19937 rng_;
};

TEST_F(SymExprTest, RandomExpressionsKeepTheirValue) {
  RandomExprs gen(ctx, 1234);
  gen.makeAssignments(8);
  for (int i = 0; i < 5000; ++i) {
    RandomExprs::Sample sample = gen.make(4);
    for (size_t k = 0; k < gen.assignments.size(); ++k) {
      if (!sample.values[k])
        continue;
      ASSERT_EQ(evaluate(sample.expr, gen.assignments[k]), sample.values[k])
          << sample.expr->str();
    }
  }
}

TEST_F(SymExprTest, RandomExpressionsRoundTrip) {
  RandomExprs gen(ctx, 99);
  for (int i = 0; i < 5000; ++i) {
    const SymExpr *e = gen.make(5).expr;
    std::string text = e->str();
    Expected<const SymExpr *> back = ctx.parse(text);
    ASSERT_TRUE(bool(back)) << text << ": " << back.error().message();
    ASSERT_EQ(*back, e) << text << " read back as " << (*back)->str();
    // A fresh context reads the same text to the same text.
    SymContext fresh;
    Expected<const SymExpr *> other = fresh.parse(text);
    ASSERT_TRUE(bool(other));
    ASSERT_EQ((*other)->str(), text);
  }
}

TEST_F(SymExprTest, LongSumsAndProducts) {
  std::string sum, product;
  for (int i = 0; i < 20000; ++i) {
    sum += (i ? " + " : "") + std::to_string(i % 7 + 1) + "*s" +
           std::to_string(i % 5000);
    product += (i ? "*" : "") + std::string("s") + std::to_string(i % 3);
  }
  const SymExpr *e = parse(sum);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->operands().size(), 5000u);
  EXPECT_EQ(parse(e->str()), e);
  const SymExpr *p = parse(product);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->operands().size(), 20000u);
  // s1 is 6667 of the factors.
  EXPECT_EQ(evaluate(p, {{"s0", 1}, {"s1", -1}, {"s2", 1}}), -1);
}

TEST_F(SymExprTest, ExtremeConstantsRoundTrip) {
  int64_t lo = std::numeric_limits<int64_t>::min();
  int64_t hi = std::numeric_limits<int64_t>::max();
  const SymExpr *s0 = s("s0");
  for (const SymExpr *e :
       {c(lo), c(hi), ctx.add(s0, c(lo)), ctx.add(s0, c(hi)),
        ctx.mul(c(lo), s0), ctx.sub(s("s1"), ctx.mul(c(lo), s0)),
        ctx.floorDiv(s0, c(lo)), ctx.mod(s0, c(lo)), ctx.min(s0, c(lo))}) {
    Expected<const SymExpr *> back = ctx.parse(e->str());
    ASSERT_TRUE(bool(back)) << e->str() << ": " << back.error().message();
    EXPECT_EQ(*back, e) << e->str();
  }
}

TEST_F(SymExprTest, SumOrderDoesNotMatter) {
  std::vector<const SymExpr *> terms;
  for (int i = 0; i < 6; ++i)
    terms.push_back(
        ctx.mul(c(i + 1), ctx.mul(s("s" + std::to_string(i % 3)),
                                  s("s" + std::to_string(i / 2)))));
  terms.push_back(c(5));
  terms.push_back(ctx.floorDiv(s("s0"), c(3)));
  const SymExpr *expected = nullptr;
  std::mt19937 rng(7);
  for (int round = 0; round < 50; ++round) {
    std::shuffle(terms.begin(), terms.end(), rng);
    const SymExpr *sum = c(0);
    for (const SymExpr *t : terms)
      sum = ctx.add(sum, t);
    if (!expected)
      expected = sum;
    EXPECT_EQ(sum, expected);
  }
}

} // namespace
