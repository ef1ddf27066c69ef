//===- CpuSteps.cpp - Ops the CPU backend runs whole ----------------------===//
#include "gc/IR/CpuSteps.h"

#include "gc/IR/OpId.h"

namespace gc {

namespace {

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

/// The fused attention step (lib/Runtime/AttentionStep.cpp): float32
/// query, key and value on the CPU, of one rank >= 3 and one head count;
/// no dropout; a mask that is absent, boolean or float32 (any broadcast),
/// or is_causal. Grouped-query attention with fewer key heads decomposes.
bool attentionRunsWhole(const Node &n) {
  const TensorType *q = tensorArg(n, "query"), *k = tensorArg(n, "key"),
                   *v = tensorArg(n, "value");
  if (!q || !k || !v || q->device.kind != DeviceKind::CPU)
    return false;
  size_t rank = q->sizes.size();
  if (rank < 3 || k->sizes.size() != rank || v->sizes.size() != rank)
    return false;
  for (const TensorType *t : {q, k, v})
    if (t->dtype != DType::Float32)
      return false;
  if (flag(n, "enable_gqa") && q->sizes[rank - 3] != k->sizes[rank - 3])
    return false;
  const NamedArg *dropout = n.arg("dropout_p");
  if (dropout && dropout->value.kind == ArgKind::Float && !dropout->value.floats.empty() &&
      dropout->value.floats[0] != 0)
    return false;
  if (const TensorType *mask = tensorArg(n, "attn_mask"))
    return !flag(n, "is_causal") &&
           (mask->dtype == DType::Bool || mask->dtype == DType::Float32);
  return true;
}

struct CpuStep {
  OpId op;
  bool (*runsWhole)(const Node &n);
};

constexpr CpuStep kCpuSteps[] = {
    {ops::aten_scaled_dot_product_attention_default, attentionRunsWhole},
};

} // namespace

bool cpuRunsWhole(const Node &n) {
  for (const CpuStep &s : kCpuSteps)
    if (s.op == n.op())
      return s.runsWhole(n);
  return false;
}

} // namespace gc
