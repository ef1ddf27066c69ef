//===- Random.cpp - Decompositions of random ops --------------------------===//
//
// Every random op becomes arithmetic on gc.rand, uniform numbers on [0, 1)
// keyed by the graph's generator inputs (rng_seed, rng_offset), which the
// runner binds and advances, so the graph itself stays a function. Each
// gc.rand call starts its counter after the numbers the calls before it
// draw, so no two calls of one run share a number (docs/random.md).
//
//===----------------------------------------------------------------------===//
#include "gc/Ops/Emit.h"

#include "gc/IR/Random.h"
#include "gc/Ops/ShapeInference.h"

#include <numbers>

namespace gc {

namespace {

using namespace decompose;

/// The graph's generator input of kind `k` (an i64[]), added if missing.
Value *generatorInput(GraphBuilder &b, InputKind k) {
  Graph &g = b.graph();
  for (size_t i = 0; i < g.inputs().size(); ++i)
    if (g.inputSpecs()[i].kind == k)
      return g.inputs()[i];
  TensorType t = contiguousType(b.syms(), DType::Int64, {});
  std::string name(inputKindName(k));
  return g.addInput(b.uniqueName(name), Type::makeTensor(std::move(t)), InputSpec{k, name});
}

/// Uniform numbers on [0, 1) of dtype `t` (floating) and static `sizes`:
/// gc.rand at the counter after every gc.rand the graph has so far.
Value *uniform(RewriteContext &ctx, Emit &e, const Sizes &sizes, DType t) {
  GraphBuilder &b = ctx.builder();
  Value *seed = generatorInput(b, InputKind::RngSeed);
  Value *offset = generatorInput(b, InputKind::RngOffset);
  Expected<int64_t> drawn = randomDraws(b.graph());
  if (!drawn)
    rewriteFail(drawn.error().message());
  if (*drawn)
    offset = e.add(offset, *drawn);
  Dims dims;
  for (const SymExpr *s : sizes)
    dims.push_back(staticSize(s, "the result of a random op"));
  return e.op(ops::gc_rand_default,
              {{"size", dims}, {"seed", seed}, {"offset", offset}, {"dtype", t}});
}

const Sizes &resultSizes(RewriteContext &ctx) { return ctx.resultType().sizes; }
/// The floating dtype random numbers for a result of dtype `t` are drawn in.
DType drawDType(DType t) { return isFloatingPoint(t) ? t : DType::Float32; }

/// rand, rand_like: gc.rand in the result's dtype.
Results decomposeRand(RewriteContext &ctx) {
  Emit e(ctx);
  return finish(ctx, {uniform(ctx, e, resultSizes(ctx), drawDType(ctx.resultType().dtype))});
}

/// randn, randn_like: Box-Muller from two uniform numbers per element,
/// z = sqrt(-2 log(1 - u1)) cos(2 pi u2), where 1 - u1 is in (0, 1].
Results decomposeRandn(RewriteContext &ctx) {
  Emit e(ctx);
  Sizes pair = resultSizes(ctx);
  pair.insert(pair.begin(), e.syms().constant(2));
  DType t = computeDType(drawDType(ctx.resultType().dtype));
  Value *u = uniform(ctx, e, pair, t);
  Value *radius = e.unary(ops::aten_sqrt_default,
                          e.mul(e.unary(ops::aten_log1p_default, e.mul(e.select(u, 0, 0), -1.0)),
                                -2.0));
  Value *angle = e.mul(e.select(u, 0, 1), 2 * std::numbers::pi);
  return finish(ctx, {e.mul(radius, e.unary(ops::aten_cos_default, angle))});
}

/// randint and randint_like: low + floor(u * (high - low)) for u uniform in
/// float64, whose 53 bits keep every integer of the range reachable and
/// u * range below range.
Results randint(RewriteContext &ctx, int64_t low, int64_t high) {
  Emit e(ctx);
  if (high <= low)
    rewriteFail("randint needs low < high, got low " + std::to_string(low) + " and high " +
                std::to_string(high));
  int64_t range = high - low;
  if (range > (int64_t(1) << 52))
    rewriteFail("randint draws from a range of at most 2^52 integers, got " +
                std::to_string(range));
  Value *u = uniform(ctx, e, resultSizes(ctx), DType::Float64);
  // u * range >= 0, so truncating toward zero is the floor.
  Value *k = e.cast(e.mul(u, static_cast<double>(range)), DType::Int64);
  return finish(ctx, {low ? e.add(k, low) : k});
}
Results decomposeRandint(RewriteContext &ctx) { return randint(ctx, 0, ctx.integer("high")); }
Results decomposeRandintLow(RewriteContext &ctx) {
  return randint(ctx, ctx.integer("low"), ctx.integer("high"));
}

/// bernoulli: 1 where u < p (p a tensor of probabilities or a number), in
/// self's dtype.
Results decomposeBernoulli(RewriteContext &ctx) {
  Emit e(ctx);
  Value *p = ctx.value("self");
  Value *u = uniform(ctx, e, resultSizes(ctx), computeDType(drawDType(typeOf(p).dtype)));
  return finish(ctx, {e.cast(e.compare(Cmp::Lt, u, p), ctx.resultType().dtype)});
}
Results decomposeBernoulliP(RewriteContext &ctx) {
  Emit e(ctx);
  DType t = drawDType(ctx.resultType().dtype);
  Value *u = uniform(ctx, e, resultSizes(ctx), computeDType(t));
  return finish(ctx,
                {e.cast(e.compare(Cmp::Lt, u, Number::real(ctx.real("p"))), ctx.resultType().dtype)});
}

/// uniform (the functional form of uniform_): from + u * (to - from).
Results decomposeUniform(RewriteContext &ctx) {
  Emit e(ctx);
  double from = ctx.real("from", 0), to = ctx.real("to", 1);
  Value *u = uniform(ctx, e, resultSizes(ctx), computeDType(drawDType(ctx.resultType().dtype)));
  return finish(ctx, {e.add(e.mul(u, to - from), from)});
}

/// Training dropout: keep where u >= p for u uniform in [0, 1), scale the
/// kept values by 1/(1-p). Returns the output and the keep mask.
std::pair<Value *, Value *> trainingDropout(RewriteContext &ctx, Emit &e, Value *x, double p) {
  DType t = typeOf(x).dtype;
  Value *u = uniform(ctx, e, sizesOf(x), computeDType(t));
  Value *keep = e.compare(Cmp::Ge, u, Number::real(p));
  if (p >= 1)
    return {e.fullLike(x, Number::integer(0), t), keep};
  return {e.mul(x, e.mul(e.cast(keep, t), 1.0 / (1.0 - p))), keep};
}

Results decomposeDropout(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = ctx.value("input");
  double p = ctx.real("p", 0.5);
  if (!ctx.boolean("train", true) || p == 0)
    return finish(ctx, {x});
  return finish(ctx, {trainingDropout(ctx, e, x, p).first});
}

/// native_dropout also returns the keep mask.
Results decomposeNativeDropout(RewriteContext &ctx) {
  Emit e(ctx);
  Value *x = ctx.value("input");
  double p = ctx.real("p", 0.5);
  if (!ctx.boolean("train", true))
    return finish(ctx, {x, e.fullLike(x, Number::integer(1), DType::Bool)});
  auto [out, keep] = trainingDropout(ctx, e, x, p);
  return finish(ctx, {out, keep});
}

const DecompositionEntry kRandomDecompositions[] = {
    {ops::aten_bernoulli_default, decomposeBernoulli},
    {ops::aten_bernoulli_p, decomposeBernoulliP},
    {ops::aten_dropout_default, decomposeDropout},
    {ops::aten_native_dropout_default, decomposeNativeDropout},
    {ops::aten_rand_default, decomposeRand},
    {ops::aten_rand_like_default, decomposeRand},
    {ops::aten_randint_default, decomposeRandint},
    {ops::aten_randint_like_default, decomposeRandint},
    {ops::aten_randint_like_low_dtype, decomposeRandintLow},
    {ops::aten_randint_low, decomposeRandintLow},
    {ops::aten_randn_default, decomposeRandn},
    {ops::aten_randn_like_default, decomposeRandn},
    {ops::aten_uniform_default, decomposeUniform},
};

} // namespace

void registerRandomDecompositions(DecompositionRegistry &r) { r.add(kRandomDecompositions); }

} // namespace gc
