//===- Canonicalize.cpp - Local simplifications ---------------------------===//
//
// Rewrites that make a graph smaller without changing any value:
//  - views that change nothing (a view, reshape, expand or squeeze to the
//    same sizes, a permute in identity order, a full slice with step 1);
//  - chains of reshaping views (view, reshape, squeeze, unsqueeze, flatten,
//    unflatten) become one view of the first input, or none when the sizes
//    come back to the input's (squeeze/unsqueeze pairs);
//  - chains of permutes and transposes become one permute, or none;
//  - x + 0, x - 0, x * 1, x / 1 where the result has x's dtype and sizes
//    (with a Python number as the other operand);
//  - _to_copy and clone whose result has x's dtype, device, sizes and
//    strides;
//  - checks on sizes (_assert_scalar of a comparison, sym_constrain_range)
//    that the symbols' ranges prove. torch.export adds them on the counts
//    of nonzero, unique, ... (u0 >= 0, u0 <= numel) whose ranges it
//    records, and every run checks a symbol against its range when it
//    binds it, so such a check cannot fail. Any other check stays.
// The last two replace a new tensor by x, so they leave graph outputs
// alone: returning x itself would make the output alias an input or
// another output.
// Each rule reads the producer of its input in the graph being built, so a
// chain collapses in one sweep; sweeps repeat until nothing changes. Nodes a
// rule leaves unused are left for dce. The graph must be functional: with
// in-place ops, x and a copy of x are not interchangeable.
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"

#include "gc/IR/IndexSimplify.h"
#include "gc/Ops/GraphBuilder.h"
#include "gc/Ops/ShapeInference.h"
#include "gc/Transforms/Passes.h"

#include <cmath>

namespace gc {

namespace {

constexpr int kMaxSweeps = 16;

/// Views that keep the elements in row-major order, changing only sizes.
bool isReshape(OpId op) {
  return isOneOf(op, {ops::aten_view_default, ops::aten_reshape_default, ops::aten__unsafe_view_default,
                      ops::aten_squeeze_dims, ops::aten_squeeze_dim, ops::aten_squeeze_default,
                      ops::aten_unsqueeze_default, ops::aten_flatten_using_ints, ops::aten_unflatten_int});
}

bool isPermute(OpId op) {
  return isOneOf(op, {ops::aten_permute_default, ops::aten_transpose_int, ops::aten_t_default});
}

/// A Python-number argument as a double, or nullopt (absent, a tensor, or
/// symbolic).
std::optional<double> number(const Node &n, std::string_view name) {
  const Arg *a = argOf(n, name);
  if (!a)
    return std::nullopt;
  switch (a->kind) {
  case ArgKind::Float:
    return a->floats[0];
  case ArgKind::Int:
  case ArgKind::Bool:
    return static_cast<double>(a->ints[0]);
  default:
    return std::nullopt;
  }
}

const TensorType &tensorOf(const Value *v) { return v->type().tensor; }

bool sameShape(const TensorType &a, const TensorType &b) {
  return a.dtype == b.dtype && a.sizes == b.sizes;
}

bool isIdentity(const std::vector<int64_t> &p) {
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] != static_cast<int64_t>(i))
      return false;
  return true;
}

/// A size argument as an expression over the model's symbols, or null.
const SymExpr *sizeExpr(SymContext &syms, const Arg *a) {
  if (a && a->kind == ArgKind::Int)
    return syms.constant(a->ints[0]);
  if (a && a->kind == ArgKind::SymInt && !a->values.empty() && a->values[0]) {
    try {
      return symIntOf(syms, *a->values[0]);
    } catch (const std::exception &) {
      return nullptr; // a value gc cannot express: nothing to prove with
    }
  }
  return nullptr;
}

/// True if the ranges prove lo <= e (e's least value is at least lo).
bool atLeast(const SymExpr *e, int64_t lo, const VarRanges &ranges) {
  std::optional<SymRange> b = boundsOf(e, ranges);
  return b && b->min >= lo;
}

/// True if `n` checks sizes and the symbols' ranges prove it holds.
bool provenCheck(const Node &n, SymContext &syms) {
  VarRanges ranges(syms.ranges().begin(), syms.ranges().end());
  if (isOneOf(n.op(), {ops::aten_sym_constrain_range_default,
                       ops::aten_sym_constrain_range_for_size_default})) {
    const SymExpr *size = sizeExpr(syms, argOf(n, "size"));
    if (!size)
      return false;
    const Arg *lo = argOf(n, "min"), *hi = argOf(n, "max");
    bool minHolds = !lo || lo->kind == ArgKind::None ||
                    (lo->kind == ArgKind::Int && atLeast(size, lo->ints[0], ranges));
    bool maxHolds = !hi || hi->kind == ArgKind::None ||
                    (hi->kind == ArgKind::Int &&
                     atLeast(syms.sub(syms.constant(hi->ints[0]), size), 0, ranges));
    return minHolds && maxHolds;
  }
  if (n.op() != ops::aten__assert_scalar_default)
    return false;
  const Arg *cond = argOf(n, "self");
  const Node *cmp = cond && cond->kind == ArgKind::SymBool && !cond->values.empty() && cond->values[0]
                        ? cond->values[0]->definingNode()
                        : nullptr;
  if (!cmp)
    return false;
  const SymExpr *a = sizeExpr(syms, argOf(*cmp, "a")), *b = sizeExpr(syms, argOf(*cmp, "b"));
  if (!a || !b)
    return false;
  if (cmp->op() == ops::_operator_ge)
    return atLeast(syms.sub(a, b), 0, ranges);
  if (cmp->op() == ops::_operator_gt)
    return atLeast(syms.sub(a, b), 1, ranges);
  if (cmp->op() == ops::_operator_le)
    return atLeast(syms.sub(b, a), 0, ranges);
  if (cmp->op() == ops::_operator_lt)
    return atLeast(syms.sub(b, a), 1, ranges);
  return false;
}

class CanonicalizePass : public Pass {
public:
  std::string_view name() const override { return "canonicalize"; }

  Error run(Module &m) override {
    GC_RETURN_IF_ERROR(requireFunctional(m, name()));
    for (const auto &g : m.graphs()) {
      for (int sweep = 0;; ++sweep) {
        if (sweep == kMaxSweeps)
          return makeError() << "graph @" << g->name() << ": still changing after " << kMaxSweeps
                             << " sweeps";
        std::unordered_set<const Value *> outputs(g->outputs().begin(), g->outputs().end());
        bool changed = false;
        GC_RETURN_IF_ERROR(rewriteGraph(m, *g, [&](RewriteContext &ctx) {
          if (provenCheck(ctx.node(), m.syms())) {
            ++statistics()["size checks proven"];
            changed = true;
            return std::optional(std::vector<Value *>{});
          }
          std::optional<Value *> r = simplify(ctx, outputs);
          if (!r)
            return std::optional<std::vector<Value *>>();
          changed = true;
          return std::optional(std::vector<Value *>{*r});
        }));
        if (!changed)
          break;
      }
    }
    return Error::success();
  }

private:
  /// The value that replaces the node's one result, or nullopt to keep it.
  std::optional<Value *> simplify(RewriteContext &ctx,
                                  const std::unordered_set<const Value *> &outputs) {
    const Node &n = ctx.node();
    if (n.results().size() != 1 || !n.results()[0]->type().isTensor() || !tensorArg(n, "self") ||
        !tensorArg(n, "self")->type().isTensor())
      return std::nullopt;
    const TensorType &result = tensorOf(n.results()[0]);
    Value *x = ctx.map(tensorArg(n, "self"));
    OpId op = n.op();
    auto fired = [&](const char *stat, Value *v) {
      ++statistics()[stat];
      return std::optional(v);
    };

    // Views that change nothing.
    bool noOpView = false;
    if (isReshape(op) || op == ops::aten_expand_default || op == ops::aten_alias_default)
      noOpView = sameShape(result, tensorOf(x));
    else if (op == ops::aten_slice_Tensor)
      noOpView = sameShape(result, tensorOf(x)) && (!argOf(n, "step") || intArg(n, "step") == 1);
    else if (isPermute(op))
      noOpView = permutationOf(n) && isIdentity(*permutationOf(n));
    if (noOpView)
      return fired("no-op views removed", x);

    Node *producer = x->definingNode();
    if (isReshape(op) && producer && isReshape(producer->op()) && tensorArg(*producer, "self")) {
      Value *source = tensorArg(*producer, "self");
      const TensorType &in = tensorOf(source);
      if (sameShape(result, in))
        return fired("view chains folded", source);
      std::vector<int64_t> sizes;
      for (const SymExpr *s : result.sizes)
        if (s->isConst())
          sizes.push_back(s->constant());
      if (sizes.size() == result.rank() && isContiguous(ctx.syms(), in))
        return fired("view chains folded",
                     ctx.builder().create1(ops::aten_view_default, {{"self", source}, {"size", sizes}},
                                           "view"));
    }
    if (isPermute(op) && producer && isPermute(producer->op()) && tensorArg(*producer, "self")) {
      std::optional<std::vector<int64_t>> outer = permutationOf(n),
                                          inner = permutationOf(*producer);
      if (outer && inner) {
        std::vector<int64_t> composed(outer->size());
        for (size_t i = 0; i < composed.size(); ++i)
          composed[i] = (*inner)[(*outer)[i]];
        Value *source = tensorArg(*producer, "self");
        if (isIdentity(composed))
          return fired("permutes folded", source);
        return fired("permutes folded",
                     ctx.builder().create1(ops::aten_permute_default,
                                           {{"self", source}, {"dims", composed}}, "permute"));
      }
    }

    // The rules below replace a new tensor by x itself, which an output
    // must not become: it would alias an input or another output.
    if (outputs.count(n.results()[0]))
      return std::nullopt;

    // x + 0, x - 0, x * 1, x / 1.
    std::optional<double> other = number(n, "other");
    std::optional<double> alpha = number(n, "alpha");
    bool neutral = false;
    if (other && sameShape(result, tensorOf(x))) {
      if (isOneOf(op, {ops::aten_add_Tensor, ops::aten_add_Scalar, ops::aten_sub_Tensor, ops::aten_sub_Scalar}))
        neutral = *other == 0 && std::isfinite(alpha.value_or(1));
      else if (isOneOf(op, {ops::aten_mul_Tensor, ops::aten_mul_Scalar, ops::aten_div_Tensor,
                            ops::aten_div_Scalar}))
        neutral = *other == 1;
    }
    if (neutral)
      return fired("arithmetic identities removed", x);

    // Copies that change nothing.
    if (isOneOf(op, {ops::aten__to_copy_default, ops::aten_clone_default})) {
      const TensorType &in = tensorOf(x);
      if (sameShape(result, in) && result.device == in.device && result.strides == in.strides)
        return fired(op == ops::aten_clone_default ? "clones removed" : "casts removed", x);
    }
    return std::nullopt;
  }
};

} // namespace

std::unique_ptr<Pass> createCanonicalizePass() { return std::make_unique<CanonicalizePass>(); }

} // namespace gc
