//===- CostModel.cpp - What saving a value costs --------------------------===//
#include "gc/Partition/CostModel.h"

#include <algorithm>
#include <map>

namespace gc {

int64_t symbolHint(const SymContext &syms, const std::string &name) {
  SymRange r = syms.range(name).value_or(SymRange{});
  return std::clamp(kDefaultSymbolHint, r.min, std::max(r.min, r.max));
}

namespace {
void bindSymbols(const SymContext &syms, const SymExpr *e, std::map<std::string, int64_t> &out) {
  if (e->isSymbol()) {
    out.emplace(e->symbolName(), symbolHint(syms, e->symbolName()));
    return;
  }
  for (const SymExpr *operand : e->operands())
    bindSymbols(syms, operand, out);
}
} // namespace

Expected<uint64_t> valueBytes(const SymContext &syms, const Value &v) {
  if (!v.type().isTensor())
    return uint64_t{8};
  const TensorType &t = v.type().tensor;
  uint64_t bytes = dtypeSize(t.dtype);
  for (const SymExpr *size : t.sizes) {
    std::map<std::string, int64_t> values;
    bindSymbols(syms, size, values);
    std::optional<int64_t> n = evaluate(size, values);
    if (!n || *n < 0)
      return makeError() << "value '%" << v.name() << "': cannot evaluate size '" << size->str()
                         << "' with the size hints";
    bytes *= static_cast<uint64_t>(*n);
  }
  return bytes;
}

} // namespace gc
