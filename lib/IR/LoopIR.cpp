//===- LoopIR.cpp - Names of loop IR enumerations -------------------------===//
#include "gc/IR/LoopIR.h"

#include <array>

namespace gc {
namespace {

struct ScalarOpInfo {
  ScalarOp op;
  std::string_view name;
  unsigned arity;
};

constexpr ScalarOpInfo kScalarOps[] = {
#define GC_SCALAR_OP(ID, NAME, ARITY, CPU, EVAL) {ScalarOp::ID, NAME, ARITY},
#include "gc/IR/ScalarOps.def"
#undef GC_SCALAR_OP
};

constexpr std::array<std::string_view, 7> kReduceKinds = {
    "sum", "prod", "max", "min", "argmax", "argmin", "any"};

} // namespace

std::string_view scalarOpName(ScalarOp op) {
  return kScalarOps[static_cast<size_t>(op)].name;
}

unsigned scalarOpArity(ScalarOp op) {
  return kScalarOps[static_cast<size_t>(op)].arity;
}

std::optional<ScalarOp> parseScalarOp(std::string_view name) {
  for (const ScalarOpInfo &info : kScalarOps)
    if (info.name == name)
      return info.op;
  return std::nullopt;
}

std::string_view reduceKindName(ReduceKind k) {
  return kReduceKinds[static_cast<size_t>(k)];
}

std::optional<ReduceKind> parseReduceKind(std::string_view name) {
  for (size_t i = 0; i < kReduceKinds.size(); ++i)
    if (kReduceKinds[i] == name)
      return static_cast<ReduceKind>(i);
  return std::nullopt;
}

std::vector<uint32_t> keepNeededOps(Body &body, std::span<const uint32_t> roots) {
  std::vector<BodyOp> &ops = body.ops;
  std::vector<bool> live(ops.size(), false);
  for (uint32_t r : roots)
    live[r] = true;
  for (size_t id = ops.size(); id-- > 0;) {
    if (!live[id])
      continue;
    for (uint32_t o : ops[id].operands)
      live[o] = true;
    for (uint32_t o : ops[id].indirect)
      live[o] = true;
    if (ops[id].mask >= 0)
      live[ops[id].mask] = true;
  }
  std::vector<uint32_t> renumbered(ops.size(), 0);
  std::vector<BodyOp> kept;
  for (size_t id = 0; id < ops.size(); ++id) {
    if (!live[id])
      continue;
    BodyOp op = std::move(ops[id]);
    for (uint32_t &o : op.operands)
      o = renumbered[o];
    for (uint32_t &o : op.indirect)
      o = renumbered[o];
    if (op.mask >= 0)
      op.mask = static_cast<int32_t>(renumbered[op.mask]);
    renumbered[id] = static_cast<uint32_t>(kept.size());
    kept.push_back(std::move(op));
  }
  if (body.result < ops.size() && live[body.result])
    body.result = renumbered[body.result];
  ops = std::move(kept);
  return renumbered;
}

std::optional<uint32_t> tensorInput(const LoopNode &n, std::string_view name) {
  for (const LoopArg &a : n.args)
    if (a.name == name)
      return a.value.kind == ArgKind::Tensor && !a.value.ints.empty() && a.value.ints[0] >= 0 &&
                     static_cast<size_t>(a.value.ints[0]) < n.inputs.size()
                 ? std::optional<uint32_t>(static_cast<uint32_t>(a.value.ints[0]))
                 : std::nullopt;
  return std::nullopt;
}

} // namespace gc
