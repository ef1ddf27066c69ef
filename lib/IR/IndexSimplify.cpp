//===- IndexSimplify.cpp - Range-aware index expression rewriting ---------===//
//
// Bounds come from interval arithmetic over 128-bit endpoints, so that sums
// and products of int64 values cannot overflow; an endpoint beyond int64 is
// treated as infinite. Simplification rebuilds an expression bottom-up
// through the SymContext (which keeps it canonical) and removes a division,
// a remainder or a min/max wherever the bounds of the operands decide it.
//
//===----------------------------------------------------------------------===//

#include "gc/IR/IndexSimplify.h"

#include <algorithm>
#include <numeric>
#include <vector>

namespace gc {

namespace {

using Kind = SymExpr::Kind;
using Wide = __int128;

/// Anything at or beyond this magnitude is infinite; every int64 is below it.
constexpr Wide kInf = Wide(1) << 64;

Wide clampWide(Wide v) { return v >= kInf ? kInf : v <= -kInf ? -kInf : v; }

/// A closed interval whose endpoints may be -kInf / kInf.
struct Interval {
  Wide lo;
  Wide hi;
};

Wide mulWide(Wide a, Wide b) {
  if (a == 0 || b == 0)
    return 0;
  Wide r;
  if (__builtin_mul_overflow(a, b, &r))
    return (a < 0) != (b < 0) ? -kInf : kInf;
  return clampWide(r);
}

/// floor(a / d) for d > 0; infinities stay infinite.
Wide floorDivWide(Wide a, Wide d) {
  if (a <= -kInf || a >= kInf)
    return a;
  Wide q = a / d;
  if (a % d != 0 && a < 0)
    --q;
  return q;
}

Interval addIntervals(Interval a, Interval b) {
  return {clampWide(a.lo + b.lo), clampWide(a.hi + b.hi)};
}

Interval mulIntervals(Interval a, Interval b) {
  Wide p[] = {mulWide(a.lo, b.lo), mulWide(a.lo, b.hi), mulWide(a.hi, b.lo),
              mulWide(a.hi, b.hi)};
  return {*std::min_element(std::begin(p), std::end(p)),
          *std::max_element(std::begin(p), std::end(p))};
}

Interval floorDivInterval(Interval a, Interval d) {
  if (d.lo <= 0)
    return {-kInf, kInf};
  // With a positive divisor, floor(a/d) is monotone in a, and for a fixed
  // a its extremes are at the divisor's ends.
  Wide p[] = {floorDivWide(a.lo, d.lo), floorDivWide(a.hi, d.lo),
              d.hi >= kInf ? Wide(a.lo < 0 ? -1 : 0) : floorDivWide(a.lo, d.hi),
              d.hi >= kInf ? Wide(a.hi < 0 ? -1 : 0) : floorDivWide(a.hi, d.hi)};
  return {*std::min_element(std::begin(p), std::end(p)),
          *std::max_element(std::begin(p), std::end(p))};
}

Interval modInterval(Interval a, Interval d) {
  if (d.lo <= 0)
    return {-kInf, kInf};
  // A remainder takes the divisor's sign: 0 <= a % d < d.
  Interval r{0, d.hi >= kInf ? kInf : d.hi - 1};
  if (a.lo >= 0)
    r.hi = std::min(r.hi, a.hi);
  // A single constant divisor that no multiple of lies inside [lo, hi]
  // leaves the remainder monotone.
  if (d.lo == d.hi && a.lo > -kInf && a.hi < kInf &&
      floorDivWide(a.lo, d.lo) == floorDivWide(a.hi, d.lo)) {
    Wide base = floorDivWide(a.lo, d.lo) * d.lo;
    r = {a.lo - base, a.hi - base};
  }
  return r;
}

Interval intervalOf(const SymExpr *e, const VarRanges &ranges) {
  switch (e->kind()) {
  case Kind::Const:
    return {e->constant(), e->constant()};
  case Kind::Symbol: {
    auto it = ranges.find(e->symbolName());
    if (it == ranges.end())
      return {0, kInf};
    const SymRange &r = it->second;
    return {r.min, r.max == SymRange::kUnbounded ? kInf : Wide(r.max)};
  }
  case Kind::Add:
  case Kind::Mul: {
    auto ops = e->operands();
    Interval acc = intervalOf(ops[0], ranges);
    for (const SymExpr *op : ops.subspan(1)) {
      Interval v = intervalOf(op, ranges);
      acc = e->kind() == Kind::Add ? addIntervals(acc, v)
                                   : mulIntervals(acc, v);
    }
    return acc;
  }
  case Kind::FloorDiv:
    return floorDivInterval(intervalOf(e->operands()[0], ranges),
                            intervalOf(e->operands()[1], ranges));
  case Kind::Mod:
    return modInterval(intervalOf(e->operands()[0], ranges),
                       intervalOf(e->operands()[1], ranges));
  case Kind::Min:
  case Kind::Max: {
    auto ops = e->operands();
    Interval acc = intervalOf(ops[0], ranges);
    for (const SymExpr *op : ops.subspan(1)) {
      Interval v = intervalOf(op, ranges);
      if (e->kind() == Kind::Min)
        acc = {std::min(acc.lo, v.lo), std::min(acc.hi, v.hi)};
      else
        acc = {std::max(acc.lo, v.lo), std::max(acc.hi, v.hi)};
    }
    return acc;
  }
  }
  return {-kInf, kInf};
}

/// A term of a polynomial: coefficient times atom factors (see SymExpr.cpp).
struct Term {
  int64_t coef;
  std::vector<const SymExpr *> factors;
};

std::vector<Term> termsOf(const SymExpr *e) {
  std::vector<Term> terms;
  auto addTerm = [&terms](const SymExpr *t) {
    if (t->isConst()) {
      terms.push_back({t->constant(), {}});
    } else if (t->kind() == Kind::Mul) {
      auto ops = t->operands();
      bool hasCoef = ops[0]->isConst();
      terms.push_back({hasCoef ? ops[0]->constant() : 1,
                       {ops.begin() + (hasCoef ? 1 : 0), ops.end()}});
    } else {
      terms.push_back({1, {t}});
    }
  };
  if (e->kind() == Kind::Add)
    for (const SymExpr *t : e->operands())
      addTerm(t);
  else
    addTerm(e);
  return terms;
}

const SymExpr *buildTerm(SymContext &ctx, int64_t coef,
                         const std::vector<const SymExpr *> &factors) {
  const SymExpr *e = ctx.constant(coef);
  for (const SymExpr *f : factors)
    e = ctx.mul(e, f);
  return e;
}

const SymExpr *buildSum(SymContext &ctx, const std::vector<Term> &terms) {
  const SymExpr *e = ctx.constant(0);
  for (const Term &t : terms)
    e = ctx.add(e, buildTerm(ctx, t.coef, t.factors));
  return e;
}

/// `factors` with one occurrence of each factor of `divisor` removed, or
/// nullopt if some factor of `divisor` is missing. Both lists are sorted.
std::optional<std::vector<const SymExpr *>>
removeFactors(const std::vector<const SymExpr *> &factors,
              const std::vector<const SymExpr *> &divisor) {
  std::vector<const SymExpr *> rest;
  size_t j = 0;
  for (const SymExpr *f : factors) {
    if (j < divisor.size() && f == divisor[j])
      ++j;
    else
      rest.push_back(f);
  }
  if (j != divisor.size())
    return std::nullopt;
  return rest;
}

class Simplifier {
public:
  Simplifier(SymContext &ctx, const VarRanges &ranges, const VarExtents &extents)
      : ctx_(ctx), ranges_(ranges), extents_(extents) {}

  const SymExpr *simplify(const SymExpr *e) {
    switch (e->kind()) {
    case Kind::Const:
    case Kind::Symbol:
      return e;
    case Kind::Add: {
      const SymExpr *acc = ctx_.constant(0);
      for (const SymExpr *op : e->operands())
        acc = ctx_.add(acc, simplify(op));
      return recombine(acc);
    }
    case Kind::Mul: {
      const SymExpr *acc = ctx_.constant(1);
      for (const SymExpr *op : e->operands())
        acc = ctx_.mul(acc, simplify(op));
      return acc;
    }
    case Kind::FloorDiv:
    case Kind::Mod:
      return divMod(e->kind(), simplify(e->operands()[0]),
                    simplify(e->operands()[1]));
    case Kind::Min:
    case Kind::Max:
      return minMax(e);
    }
    return e;
  }

private:
  Interval bounds(const SymExpr *e) const { return intervalOf(e, ranges_); }

  /// Whether 0 <= r < d for every assignment within the ranges and
  /// extents.
  bool inUnitRange(const SymExpr *r, const SymExpr *d) {
    if (bounds(r).lo < 0)
      return false;
    const SymExpr *one = ctx_.constant(1);
    return bounds(ctx_.sub(ctx_.sub(d, r), one)).lo >= 0 ||
           bounds(ctx_.sub(ctx_.sub(d, largestValue(r)), one)).lo >= 0;
  }

  /// An expression at least as large as `e` everywhere: each variable with
  /// an extent that `e` grows with (a nonnegative coefficient) at its
  /// largest value, extent - 1. In a loop over s0, i0 % s0 is then i0,
  /// since s0 - (s0 - 1) - 1 >= 0 whatever s0 is.
  const SymExpr *largestValue(const SymExpr *e) {
    for (const auto &[var, extent] : extents_) {
      const SymExpr *coef = affineCoefficient(ctx_, e, var);
      if (coef && coef != ctx_.constant(0) && bounds(coef).lo >= 0)
        e = substitute(ctx_, e, {{var, ctx_.sub(extent, ctx_.constant(1))}});
    }
    return e;
  }

  const SymExpr *build(Kind k, const SymExpr *x, const SymExpr *d) {
    return k == Kind::FloorDiv ? ctx_.floorDiv(x, d) : ctx_.mod(x, d);
  }

  /// x // d or x % d, with x and d already simplified.
  const SymExpr *divMod(Kind k, const SymExpr *x, const SymExpr *d) {
    Interval dv = bounds(d);
    if (dv.lo <= 0)
      return build(k, x, d);
    // The same quotient everywhere: x // d is that constant.
    if (d->isConst()) {
      Interval xv = bounds(x);
      if (xv.lo > -kInf && xv.hi < kInf &&
          floorDivWide(xv.lo, dv.lo) == floorDivWide(xv.hi, dv.lo)) {
        int64_t q = static_cast<int64_t>(floorDivWide(xv.lo, dv.lo));
        return k == Kind::FloorDiv
                   ? ctx_.constant(q)
                   : ctx_.sub(x, ctx_.constant(q * d->constant()));
      }
    } else if (inUnitRange(x, d)) {
      return k == Kind::FloorDiv ? ctx_.constant(0) : x;
    }
    if (const SymExpr *split = splitByFactor(k, x, d))
      return split;
    return build(k, x, d);
  }

  /// Candidate factors g of the divisor d for writing x = g*y + r with
  /// 0 <= r < g: d itself, then the common factors of d with each term of
  /// x (constant ones largest first).
  std::vector<Term> candidateFactors(const Term &d,
                                     const std::vector<Term> &terms) {
    std::vector<Term> out = {d};
    std::vector<Term> common;
    for (const Term &t : terms) {
      Term g{std::gcd(d.coef, t.coef), {}};
      std::set_intersection(t.factors.begin(), t.factors.end(),
                            d.factors.begin(), d.factors.end(),
                            std::back_inserter(g.factors),
                            [](const SymExpr *a, const SymExpr *b) {
                              return SymExpr::compare(a, b) < 0;
                            });
      bool isOne = g.coef == 1 && g.factors.empty();
      bool isD = g.coef == d.coef && g.factors == d.factors;
      if (!isOne && !isD)
        common.push_back(std::move(g));
    }
    std::stable_sort(common.begin(), common.end(),
                     [](const Term &a, const Term &b) {
                       if (a.factors.size() != b.factors.size())
                         return a.factors.size() > b.factors.size();
                       return a.coef > b.coef;
                     });
    for (Term &g : common) {
      bool seen = std::any_of(out.begin(), out.end(), [&g](const Term &o) {
        return o.coef == g.coef && o.factors == g.factors;
      });
      if (!seen)
        out.push_back(std::move(g));
    }
    return out;
  }

  /// x = g*y + r with 0 <= r < g and g dividing d gives
  /// x // d = y // (d/g) and x % d = g*(y % (d/g)) + r.
  const SymExpr *splitByFactor(Kind k, const SymExpr *x, const SymExpr *d) {
    std::vector<Term> terms = termsOf(x);
    std::vector<Term> dTerms = termsOf(d);
    if (dTerms.size() != 1 || dTerms[0].coef <= 0)
      return nullptr;
    for (const Term &g : candidateFactors(dTerms[0], terms)) {
      std::vector<Term> multiples, rest;
      for (const Term &t : terms) {
        auto left = removeFactors(t.factors, g.factors);
        if (left && t.coef % g.coef == 0)
          multiples.push_back({t.coef / g.coef, std::move(*left)});
        else
          rest.push_back(t);
      }
      if (multiples.empty())
        continue;
      const SymExpr *gExpr = buildTerm(ctx_, g.coef, g.factors);
      const SymExpr *r = buildSum(ctx_, rest);
      if (!inUnitRange(r, gExpr))
        continue;
      const SymExpr *y = buildSum(ctx_, multiples);
      auto dRest = removeFactors(dTerms[0].factors, g.factors);
      const SymExpr *dOverG =
          buildTerm(ctx_, dTerms[0].coef / g.coef, *dRest);
      if (k == Kind::FloorDiv)
        return dOverG == ctx_.constant(1) ? y : divMod(k, y, dOverG);
      if (dOverG == ctx_.constant(1))
        return r;
      return ctx_.add(ctx_.mul(gExpr, divMod(k, y, dOverG)), r);
    }
    return nullptr;
  }

  /// The remainders that pair with the quotient x // d: x % d itself, and
  /// (x // e) % m for constants with e*m = d, since x // d = (x // e) // m.
  /// Each comes with what it is the remainder of (x, or x // e) and by what.
  struct Remainder {
    const SymExpr *mod, *of, *by;
  };
  std::vector<Remainder> remaindersFor(const SymExpr *x, const SymExpr *d,
                                       const std::vector<Term> &terms) {
    std::vector<Remainder> out = {{ctx_.mod(x, d), x, d}};
    if (!d->isConst())
      return out;
    for (const Term &t : terms)
      for (const SymExpr *f : t.factors) {
        if (f->kind() != Kind::Mod || !f->operands()[1]->isConst())
          continue;
        const SymExpr *q = f->operands()[0], *m = f->operands()[1];
        if (q->kind() == Kind::FloorDiv && q->operands()[0] == x &&
            q->operands()[1]->isConst() &&
            q->operands()[1]->constant() * m->constant() == d->constant())
          out.push_back({f, q, m});
      }
    return out;
  }

  /// Folds c*d*(x // d) + c*(x % d) back into c*x, which reshaping a
  /// reshaped view produces; likewise c*m*(x // (e*m)) + c*((x // e) % m)
  /// into c*(x // e), which merging three or more dimensions leaves.
  const SymExpr *recombine(const SymExpr *sum) {
    std::vector<Term> terms = termsOf(sum);
    for (size_t i = 0; i < terms.size(); ++i) {
      for (size_t fi = 0; fi < terms[i].factors.size(); ++fi) {
        const SymExpr *div = terms[i].factors[fi];
        if (div->kind() != Kind::FloorDiv)
          continue;
        const SymExpr *x = div->operands()[0], *d = div->operands()[1];
        std::vector<const SymExpr *> divCof = terms[i].factors;
        divCof.erase(divCof.begin() + fi);
        const SymExpr *divPart = buildTerm(ctx_, terms[i].coef, divCof);
        for (const Remainder &r : remaindersFor(x, d, terms)) {
          for (size_t j = 0; j < terms.size(); ++j) {
            auto modCof = removeFactors(terms[j].factors, {r.mod});
            if (j == i || !modCof)
              continue;
            const SymExpr *modPart = buildTerm(ctx_, terms[j].coef, *modCof);
            if (ctx_.mul(modPart, r.by) != divPart)
              continue;
            const SymExpr *folded = ctx_.add(
                ctx_.sub(sum, ctx_.add(ctx_.mul(divPart, div),
                                       ctx_.mul(modPart, r.mod))),
                ctx_.mul(modPart, r.of));
            return recombine(folded);
          }
        }
      }
    }
    return sum;
  }

  /// Drops each operand that another operand always beats; the bounds of
  /// their difference decide.
  const SymExpr *minMax(const SymExpr *e) {
    bool isMin = e->kind() == Kind::Min;
    std::vector<const SymExpr *> ops;
    for (const SymExpr *op : e->operands())
      ops.push_back(simplify(op));
    std::vector<bool> dropped(ops.size(), false);
    for (size_t i = 0; i < ops.size(); ++i) {
      for (size_t j = 0; j < ops.size() && !dropped[i]; ++j) {
        if (i == j || dropped[j])
          continue;
        // For min, ops[i] is never needed when ops[i] - ops[j] >= 0.
        Interval diff = bounds(ctx_.sub(ops[i], ops[j]));
        if (isMin ? diff.lo >= 0 : diff.hi <= 0)
          dropped[i] = true;
      }
    }
    const SymExpr *acc = nullptr;
    for (size_t i = 0; i < ops.size(); ++i) {
      if (dropped[i])
        continue;
      acc = !acc ? ops[i] : isMin ? ctx_.min(acc, ops[i]) : ctx_.max(acc, ops[i]);
    }
    return acc;
  }

  SymContext &ctx_;
  const VarRanges &ranges_;
  const VarExtents &extents_;
};

} // namespace

std::optional<SymRange> boundsOf(const SymExpr *e, const VarRanges &ranges) {
  Interval v = intervalOf(e, ranges);
  if (v.lo <= -kInf || v.hi <= -kInf)
    return std::nullopt;
  if (v.lo >= kInf)
    return std::nullopt;
  // int64's maximum doubles as "no upper bound".
  return SymRange{static_cast<int64_t>(v.lo),
                  v.hi >= kInf ? SymRange::kUnbounded
                               : static_cast<int64_t>(v.hi)};
}

const SymExpr *simplifyIndex(SymContext &ctx, const SymExpr *e,
                             const VarRanges &ranges, const VarExtents &extents) {
  return Simplifier(ctx, ranges, extents).simplify(e);
}

const SymExpr *affineCoefficient(SymContext &ctx, const SymExpr *e,
                                 const std::string &var) {
  const SymExpr *coef = ctx.constant(0);
  for (const Term &t : termsOf(e)) {
    const SymExpr *rest = ctx.constant(t.coef);
    bool found = false;
    for (const SymExpr *f : t.factors) {
      if (f->isSymbol() && f->symbolName() == var && !found) {
        found = true;
        continue;
      }
      if (mentions(f, var))
        return nullptr;
      rest = ctx.mul(rest, f);
    }
    if (found)
      coef = ctx.add(coef, rest);
  }
  return coef;
}

const SymExpr *substitute(SymContext &ctx, const SymExpr *e,
                          const std::map<std::string, const SymExpr *> &values) {
  switch (e->kind()) {
  case Kind::Const:
    return e;
  case Kind::Symbol: {
    auto it = values.find(e->symbolName());
    return it == values.end() ? e : it->second;
  }
  default:
    break;
  }
  auto ops = e->operands();
  const SymExpr *acc = substitute(ctx, ops[0], values);
  for (const SymExpr *op : ops.subspan(1)) {
    const SymExpr *v = substitute(ctx, op, values);
    switch (e->kind()) {
    case Kind::Add:
      acc = ctx.add(acc, v);
      break;
    case Kind::Mul:
      acc = ctx.mul(acc, v);
      break;
    case Kind::FloorDiv:
      acc = ctx.floorDiv(acc, v);
      break;
    case Kind::Mod:
      acc = ctx.mod(acc, v);
      break;
    case Kind::Min:
      acc = ctx.min(acc, v);
      break;
    case Kind::Max:
      acc = ctx.max(acc, v);
      break;
    default:
      break;
    }
  }
  return acc;
}

} // namespace gc
