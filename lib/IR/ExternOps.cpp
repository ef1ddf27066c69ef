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

const TensorType *tensorArg(const Node &n, std::string_view name) {
  const NamedArg *a = n.arg(name);
  if (!a || a->value.values.empty() || !a->value.values[0] ||
      !a->value.values[0]->type().isTensor())
    return nullptr;
  return &a->value.values[0]->type().tensor;
}

bool flag(const Node &n, std::string_view name) {
  const NamedArg *a = n.arg(name);
  return a && a->value.kind == ArgKind::Bool && !a->value.ints.empty() && a->value.ints[0];
}

/// The floating-point types the fused attention step reads and writes:
/// float32, and bfloat16 and float16 widened to float32 as it reads them.
bool fusedAttentionType(DType t) { return t == DType::Float32 || isHalfPrecision(t); }

/// The calls the fused attention step (lib/Runtime/Cpu/AttentionStep.cpp)
/// takes: query, key and value on the CPU of one such type, one rank >= 3
/// and one head count; no dropout; a mask that is absent, boolean or of
/// such a type (any broadcast), or is_causal. Grouped-query attention with
/// fewer key heads decomposes.
bool fusedAttentionTakes(const Node &n) {
  const TensorType *q = tensorArg(n, "query"), *k = tensorArg(n, "key"),
                   *v = tensorArg(n, "value");
  if (!q || !k || !v || q->device.kind != DeviceKind::CPU)
    return false;
  size_t rank = q->sizes.size();
  if (rank < 3 || k->sizes.size() != rank || v->sizes.size() != rank)
    return false;
  if (!fusedAttentionType(q->dtype) || k->dtype != q->dtype || v->dtype != q->dtype)
    return false;
  if (flag(n, "enable_gqa") && q->sizes[rank - 3] != k->sizes[rank - 3])
    return false;
  const NamedArg *dropout = n.arg("dropout_p");
  if (dropout && dropout->value.kind == ArgKind::Float && !dropout->value.floats.empty() &&
      dropout->value.floats[0] != 0)
    return false;
  if (const TensorType *mask = tensorArg(n, "attn_mask"))
    return !flag(n, "is_causal") &&
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

bool cpuRunsWhole(const Node &n) {
  const ExternOp *e = externOp(n.op());
  if (!e)
    return false;
  switch (e->whole) {
  case ExternWhole::Always:
    return false;
  case ExternWhole::FusedAttention:
    return fusedAttentionTakes(n);
  }
  return false;
}

} // namespace gc
