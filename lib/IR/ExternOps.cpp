//===- ExternOps.cpp - Ops that run as one library call -------------------===//
#include "gc/IR/ExternOps.h"

#include "gc/IR/OpId.h"

namespace gc {

namespace {

constexpr ExternOp kExternOps[] = {
#define GC_OP(ID, NAME, SET, TRAITS, SUMMARY, SCHEMA)
#define GC_UNARY_OP(ID, NAME, SCALAR_OP, SUMMARY, FORMULA, FACTOR)
#define GC_EXTERN_OP(ID, NAME, SET, SUMMARY, SCHEMA, CALL, POST_OPS, WORK, WHOLE)                  \
  {ops::ID, ExternCall::CALL, ExternBias::POST_OPS, ExternWork::WORK, ExternWhole::WHOLE},
#include "gc/IR/OpDefs.def"
#undef GC_EXTERN_OP
#undef GC_UNARY_OP
#undef GC_OP
};

using Args = std::vector<NamedArg>;

const NamedArg *findArg(const Args &args, std::string_view name) {
  for (const NamedArg &a : args)
    if (a.name == name)
      return &a;
  return nullptr;
}

const TensorType *tensorArg(const Args &args, std::string_view name) {
  const NamedArg *a = findArg(args, name);
  if (!a || a->value.values.empty() || !a->value.values[0] ||
      !a->value.values[0]->type().isTensor())
    return nullptr;
  return &a->value.values[0]->type().tensor;
}

bool flag(const Args &args, std::string_view name) {
  const NamedArg *a = findArg(args, name);
  return a && a->value.kind == ArgKind::Bool && !a->value.ints.empty() && a->value.ints[0];
}

/// The floating-point types the fused attention reads and writes: float32,
/// and bfloat16 and float16 (widened to float32 on the CPU as it reads them;
/// tensor cores on a GPU).
bool fusedAttentionType(DType t) { return t == DType::Float32 || isHalfPrecision(t); }

/// Query rows per (batch, head) up to which a call is a decode step for the
/// GPU's kernel choice. Measured on an H200 (docs/gpu.md): in float32 the
/// kernel runs such steps 1.6 to 9.9 times faster than the decomposition,
/// while 64 to 197 rows (llama_50m, bert_base, vit_b_16) run at 0.59 to
/// 0.65 of its speed (cuBLAS's float32 products run at several times the
/// kernel's exact multiply-add rate). In 16-bit types the kernel wins at
/// every size but one: a decode step without grouped-query heads, whose
/// decomposition is two small products and a softmax (0.0235 ms against
/// the kernel's 0.0330 for 4 rows over a 2048-key cache); with grouped
/// heads the decomposition repeats the cache per query head, and the
/// kernel wins (0.0286 ms against 0.1415).
constexpr int64_t kDecodeRows = 16;

/// Whether a call has a static count of at most kDecodeRows query rows.
bool isDecodeStep(const TensorType &q) {
  const SymExpr *rows = q.sizes[q.sizes.size() - 2];
  return rows && rows->isConst() && rows->constant() <= kDecodeRows;
}

/// Whether key heads `hk` divide query heads `hq`, both static.
bool headsDivide(const SymExpr *hq, const SymExpr *hk) {
  return hq->isConst() && hk->isConst() && hk->constant() >= 1 &&
         hq->constant() % hk->constant() == 0;
}

/// The calls the fused attention of `device` takes (runsWhole in
/// ExternOps.h says which).
bool fusedAttentionTakes(const Args &args, TargetDevice device) {
  const TensorType *q = tensorArg(args, "query"), *k = tensorArg(args, "key"),
                   *v = tensorArg(args, "value");
  if (!q || !k || !v)
    return false;
  bool gpu = device == TargetDevice::CUDA;
  if (!gpu && q->device.kind != DeviceKind::CPU)
    return false;
  size_t rank = q->sizes.size();
  if (rank < 3 || k->sizes.size() != rank || v->sizes.size() != rank)
    return false;
  if (!fusedAttentionType(q->dtype) || k->dtype != q->dtype || v->dtype != q->dtype)
    return false;
  const NamedArg *dropout = findArg(args, "dropout_p");
  if (dropout && dropout->value.kind == ArgKind::Float && !dropout->value.floats.empty() &&
      dropout->value.floats[0] != 0)
    return false;
  if (gpu) {
    // The kernel's bound: one static head dimension of at most 128, and a
    // rank it maps to (batch, heads, rows, columns).
    if (rank > 4)
      return false;
    const SymExpr *e = q->sizes.back();
    if (!e || !e->isConst() || e->constant() < 1 || e->constant() > 128)
      return false;
    for (const TensorType *t : {k, v})
      if (t->sizes.back() != e)
        return false;
    bool grouped = rank == 4 && q->sizes[1] != k->sizes[1];
    if (q->dtype == DType::Float32 ? !isDecodeStep(*q) : isDecodeStep(*q) && !grouped)
      return false;
    if (grouped && !headsDivide(q->sizes[1], k->sizes[1]))
      return false;
  } else if (flag(args, "enable_gqa") && q->sizes[rank - 3] != k->sizes[rank - 3] &&
             (v->sizes[rank - 3] != k->sizes[rank - 3] ||
              !headsDivide(q->sizes[rank - 3], k->sizes[rank - 3]))) {
    return false;
  }
  if (const TensorType *mask = tensorArg(args, "attn_mask"))
    return !flag(args, "is_causal") &&
           (mask->dtype == DType::Bool || fusedAttentionType(mask->dtype));
  return true;
}

} // namespace

const ExternOp *externOp(OpId op) {
  for (const ExternOp &e : kExternOps)
    if (e.op == op)
      return &e;
  return nullptr;
}

std::vector<OpId> externOps() {
  std::vector<OpId> out;
  for (const ExternOp &e : kExternOps)
    out.push_back(e.op);
  return out;
}

std::optional<ProductOperands> productOperands(const LoopNode &node) {
  const ExternOp *e = externOp(node.op);
  if (!e || e->call != ExternCall::Matmul)
    return std::nullopt;
  std::optional<uint32_t> src = tensorInput(node, "self"), weights = tensorInput(node, "mat2");
  if (!src || !weights)
    return std::nullopt;
  return ProductOperands{*src, *weights};
}

std::optional<size_t> externBiasDim(OpId op, size_t rank) {
  const ExternOp *e = externOp(op);
  if (!e)
    return std::nullopt;
  switch (e->bias) {
  case ExternBias::LastDim:
    return rank - 1;
  case ExternBias::Channels:
    if (rank >= 2)
      return 1;
    return std::nullopt;
  case ExternBias::None:
    return std::nullopt;
  }
  return std::nullopt;
}

bool runsWhole(OpId op, const std::vector<NamedArg> &args, TargetDevice device) {
  const ExternOp *e = externOp(op);
  if (!e)
    return false;
  switch (e->whole) {
  case ExternWhole::Always:
    return false;
  case ExternWhole::FusedAttention:
    return fusedAttentionTakes(args, device);
  }
  return false;
}

bool runsWhole(const Node &n, TargetDevice device) { return runsWhole(n.op(), n.args(), device); }

} // namespace gc
