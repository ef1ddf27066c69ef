//===- GroupedAttention.cpp - Attention over unrepeated key heads ---------===//
//
// A model with grouped-query attention that calls
// scaled_dot_product_attention without enable_gqa first repeats each key
// and value head for the query heads that read it: x[:, :, None]
// .expand(b, kv, group, s, e).reshape(b, kv * group, s, e), a copy of the
// whole key and value tensors (for a decoder, its whole KV cache, every
// step). Where the target's fused attention takes the call on the
// unrepeated tensors with enable_gqa (runsWhole), whose query head h reads
// key head h / group, this pass makes that call: the same values, and the
// fused attention reads each key head once for its group. It runs before
// decompose-keep-whole, which then keeps the new call whole (a GPU's
// kernel takes a bfloat16 decode step with grouped heads, not with the
// repeated ones). The repeat stays for any other reader (dce removes it
// otherwise). Key and value must be repeated alike.
//
// The repeat: a merge of dims (h, h + 1) into h (reshape, view or
// _unsafe_view; at level core, a view of a clone), of an expand that
// widens a size-1 dim h + 1 to the group, of x with that dim inserted
// (unsqueeze, or a view or reshape that inserts it); h is the heads' dim
// of the call (rank - 3).
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"

#include "gc/IR/ExternOps.h"
#include "gc/IR/TargetOf.h"
#include "gc/Ops/GraphBuilder.h"
#include "gc/Transforms/Passes.h"

#include <algorithm>

namespace gc {

namespace {

/// The ops that reshape without moving elements: the merge of two dims and
/// the insertion of a size-1 dim.
bool isReshape(OpId op) {
  return op == ops::aten_reshape_default || op == ops::aten_view_default ||
         op == ops::aten__unsafe_view_default;
}

const std::vector<const SymExpr *> &sizesOf(const Value *v) { return v->type().tensor.sizes; }

/// `sizes` without dim `d`.
std::vector<const SymExpr *> without(std::vector<const SymExpr *> sizes, size_t d) {
  sizes.erase(sizes.begin() + static_cast<std::ptrdiff_t>(d));
  return sizes;
}

/// The tensor a view, clone or expand node `n` reads (its `self`), or null.
const Value *selfOf(const Node *n) { return n ? tensorArg(*n, "self") : nullptr; }

/// What `v` repeats: x and the group when `v` is x with each slice along
/// dim `h` repeated `group` times in a row (x's dim h times the group is
/// v's), else nullopt.
std::optional<std::pair<const Value *, int64_t>> repeatedHeads(SymContext &syms, const Value *v,
                                                               size_t h) {
  const Node *merge = v->definingNode();
  if (!merge || !isReshape(merge->op()))
    return std::nullopt;
  const Value *wide = selfOf(merge);
  if (wide && wide->definingNode() && wide->definingNode()->op() == ops::aten_clone_default)
    wide = selfOf(wide->definingNode());
  if (!wide || !wide->type().isTensor() || sizesOf(wide).size() != sizesOf(v).size() + 1)
    return std::nullopt;
  // wide is [..., kv, group, ...] and v the same with the two merged.
  const std::vector<const SymExpr *> &w = sizesOf(wide);
  std::vector<const SymExpr *> merged = without(w, h + 1);
  merged[h] = syms.mul(w[h], w[h + 1]);
  if (merged != sizesOf(v) || !w[h + 1]->isConst() || w[h + 1]->constant() < 2)
    return std::nullopt;
  const Node *expand = wide->definingNode();
  const Value *one = selfOf(expand);
  if (!expand || expand->op() != ops::aten_expand_default || !one || !one->type().isTensor())
    return std::nullopt;
  const std::vector<const SymExpr *> &o = sizesOf(one);
  if (o.size() != w.size() || o[h + 1] != syms.constant(1) || without(o, h + 1) != without(w, h + 1))
    return std::nullopt;
  // x with the size-1 dim inserted.
  const Node *insert = one->definingNode();
  const Value *x = selfOf(insert);
  if (!x || !x->type().isTensor() || sizesOf(x) != without(o, h + 1))
    return std::nullopt;
  bool inserted = isReshape(insert->op());
  if (insert->op() == ops::aten_unsqueeze_default) {
    int64_t rank = static_cast<int64_t>(o.size());
    int64_t dim = intArg(*insert, "dim").value_or(rank); // out of range when unknown
    inserted = (dim < 0 ? dim + rank : dim) == static_cast<int64_t>(h + 1);
  }
  if (!inserted)
    return std::nullopt;
  return std::pair(x, w[h + 1]->constant());
}

class GroupedAttentionPass : public Pass {
public:
  std::string_view name() const override { return "grouped-attention"; }

  Error run(Module &m) override {
    GC_RETURN_IF_ERROR(requireFunctional(m, name()));
    TargetDevice device = targetOf(m).device;
    for (const auto &g : m.graphs()) {
      bool any = false;
      for (const auto &n : g->nodes())
        any |= externOp(n->op()) && externOp(n->op())->call == ExternCall::Attention;
      if (!any)
        continue;
      GC_RETURN_IF_ERROR(rewriteGraph(m, *g, [&](RewriteContext &ctx) {
        std::optional<std::vector<Value *>> keep;
        const Node &n = ctx.node();
        const ExternOp *ext = externOp(n.op());
        if (!ext || ext->call != ExternCall::Attention)
          return keep;
        const Value *query = tensorArg(n, "query"), *key = tensorArg(n, "key"),
                    *value = tensorArg(n, "value");
        if (!query || !key || !value || !query->type().isTensor() || !key->type().isTensor() ||
            sizesOf(key).size() < 3)
          return keep;
        // The query's batch and heads are the repeated key's, no broadcast:
        // the grouped call then reads key head h / group for query head h.
        size_t heads = sizesOf(key).size() - 3;
        const std::vector<const SymExpr *> &qs = sizesOf(query), &ks = sizesOf(key);
        if (qs.size() != ks.size() || !std::equal(ks.begin(), ks.begin() + heads + 1, qs.begin()))
          return keep;
        auto k = repeatedHeads(m.syms(), key, heads);
        auto v = value->type().isTensor() ? repeatedHeads(m.syms(), value, heads) : std::nullopt;
        if (!k || !v || k->second != v->second)
          return keep;
        std::vector<NamedArg> args = ctx.mappedArgs();
        std::erase_if(args, [](const NamedArg &a) { return a.name == "enable_gqa"; });
        for (NamedArg &a : args)
          if (a.name == "key" || a.name == "value")
            a.value = Arg::tensor(ctx.map(a.name == "key" ? k->first : v->first));
        args.push_back({"enable_gqa", true, Arg::boolean(true)});
        if (!runsWhole(n.op(), args, device))
          return keep;
        std::vector<std::pair<std::string, ArgValue>> named;
        for (NamedArg &a : args)
          named.emplace_back(a.name, ArgValue(std::move(a.value)));
        ++statistics()["attention calls on unrepeated key heads"];
        return std::optional(ctx.builder().create(n.op(), std::move(named)));
      }));
    }
    return Error::success();
  }
};

} // namespace

std::unique_ptr<Pass> createGroupedAttentionPass() {
  return std::make_unique<GroupedAttentionPass>();
}

} // namespace gc
