//===- LowerPrecision.cpp - float32 products on bfloat16 operands ---------===//
//
// --precision=bf16 (the target's precision, chosen once by the opt phase):
// every float32 matrix product and convolution, the ops whose rows call a
// library (ExternOps.h), but a depthwise convolution on the CPU (below),
// takes bfloat16 operands and gives a bfloat16 result, which is widened
// back to float32 at once:
//   y = mm(x, w)  becomes  y = mm(x.to(bf16), w.to(bf16)).to(float32)
// The library accumulates in float32 either way (oneDNN on AMX or AVX-512
// BF16, cuBLASLt and cuDNN on tensor cores); what changes is the rounding of
// the operands and of the result to bfloat16's 8 bits of mantissa, as under
// torch.autocast, but every other op and every value a user sees stays
// float32. An operand that is a view of a weight (linear's transposed
// weight) is cast where the weight enters and viewed after, so that the
// cast of a frozen weight has a constant argument: constant folding then
// stores the weight in bfloat16 (half the bytes), once, instead of a cast
// in every run. A cast back to float32 is pointwise and fuses into the
// result's consumers.
//
// oneDNN's fpmath mode (float32 operands, implicit bfloat16 arithmetic)
// would need no casts, but Debian 12's oneDNN 2.6 runs it on the float32
// kernels (brg:avx512_core), not on AMX: measured, it is no faster.
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"

#include "gc/IR/ExternOps.h"
#include "gc/IR/OpSchema.h"
#include "gc/IR/TargetOf.h"
#include "gc/Ops/Emit.h"
#include "gc/Ops/GraphBuilder.h"
#include "gc/Transforms/Passes.h"

#include <unordered_map>

namespace gc {

namespace {

/// Whether `n` is a depthwise convolution (one input channel a group),
/// whose few operations per element read make it memory-bound.
bool depthwise(const Node &n) {
  const Value *w = tensorArg(n, "weight");
  std::optional<int64_t> groups = intArg(n, "groups");
  return w && groups && *groups > 1 && w->type().kind == Type::Kind::Tensor &&
         w->type().tensor.rank() >= 2 && w->type().tensor.sizes[1]->isConst() &&
         w->type().tensor.sizes[1]->constant() == 1;
}

/// Whether `n` is a float32 product or convolution this pass rewrites for
/// `device`. On the CPU a depthwise convolution keeps float32: bfloat16
/// arithmetic saves it nothing that its casts do not cost again
/// (efficientnet_b0 on the Zen 5, 2 threads: 3.88-3.90 -> 3.66-3.73 ms,
/// error against float32 PyTorch 1.1e-2 -> 7.7e-3). Not measured on a GPU.
bool rewritable(const Node &n, TargetDevice device) {
  const ExternOp *row = externOp(n.op());
  if (!row || (row->call != ExternCall::Matmul && row->call != ExternCall::Convolution) ||
      n.results().size() != 1 || n.results()[0]->type().kind != Type::Kind::Tensor ||
      n.results()[0]->type().tensor.dtype != DType::Float32 ||
      (device == TargetDevice::CPU && row->call == ExternCall::Convolution && depthwise(n)))
    return false;
  for (const NamedArg &a : n.args())
    for (const Value *v : a.value.values)
      if (v && v->type().kind == Type::Kind::Tensor &&
          v->type().tensor.dtype != DType::Float32)
        return false;
  return true;
}

/// The single tensor argument of view node `n`, or null.
Value *viewed(const Node &n) {
  if (!returnsView(n.op()) || n.results().size() != 1)
    return nullptr;
  Value *only = nullptr;
  for (const NamedArg &a : n.args())
    for (Value *in : a.value.values)
      if (in && in->type().kind == Type::Kind::Tensor) {
        if (only)
          return nullptr;
        only = in;
      }
  return only;
}

/// Whether `v` is a graph input or a chain of views of one.
bool viewsInput(const Value *v) {
  for (const Node *def = v->definingNode(); def; def = v->definingNode())
    if (!(v = viewed(*def)))
      return false;
  return true;
}

/// `v` (already in the new graph) in bfloat16. A chain of views of a graph
/// input is rebuilt on the input's cast; `made` keeps one cast per value.
Value *narrow(decompose::Emit &e, GraphBuilder &b, Value *v,
              std::unordered_map<Value *, Value *> &made) {
  if (Value *done = made[v])
    return done;
  Node *def = v->definingNode();
  Value *result = nullptr;
  if (def && viewed(*def) && viewsInput(v)) {
    std::vector<NamedArg> args = def->args();
    for (NamedArg &a : args)
      for (Value *&in : a.value.values)
        if (in && in->type().kind == Type::Kind::Tensor)
          in = narrow(e, b, in, made);
    Type t = v->type();
    t.tensor.dtype = DType::BFloat16;
    result = b.createWithTypes(def->op(), std::move(args),
                               {{b.uniqueName(v->name() + "_bf16"), std::move(t)}},
                               def->resultForm())
                 ->results()[0];
  }
  return made[v] = result ? result : e.cast(v, DType::BFloat16);
}

class LowerPrecisionPass final : public Pass {
public:
  std::string_view name() const override { return "lower-precision"; }

  Error run(Module &m) override {
    const Target target = targetOf(m);
    if (target.precision == Precision::Exact)
      return Error::success();
    GC_RETURN_IF_ERROR(requireFunctional(m, name()));
    for (const auto &g : m.graphs()) {
      bool any = false;
      for (const auto &n : g->nodes())
        any |= rewritable(*n, target.device);
      if (!any)
        continue;
      std::unordered_map<Value *, Value *> narrowed;
      GC_RETURN_IF_ERROR(rewriteGraph(m, *g, [&](RewriteContext &ctx) {
        if (!rewritable(ctx.node(), target.device))
          return std::optional<std::vector<Value *>>();
        ++statistics()["products on bfloat16"];
        decompose::Emit e(ctx);
        std::vector<NamedArg> args = ctx.mappedArgs();
        for (NamedArg &a : args)
          for (Value *&v : a.value.values)
            if (v && v->type().kind == Type::Kind::Tensor)
              v = narrow(e, ctx.builder(), v, narrowed);
        const Value *old = ctx.node().results()[0];
        Type narrow = old->type();
        narrow.tensor.dtype = DType::BFloat16;
        Node *product = ctx.builder().createWithTypes(
            ctx.node().op(), std::move(args),
            {{ctx.builder().uniqueName(old->name() + "_bf16"), std::move(narrow)}},
            ctx.node().resultForm());
        return std::optional<std::vector<Value *>>(
            std::vector<Value *>{e.cast(product->results()[0], DType::Float32)});
      }));
    }
    return Error::success();
  }
};

} // namespace

std::unique_ptr<Pass> createLowerPrecisionPass() {
  return std::make_unique<LowerPrecisionPass>();
}

} // namespace gc
