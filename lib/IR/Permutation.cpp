//===- Permutation.cpp - The dims a permuting view reorders ---------------===//
#include "gc/IR/Permutation.h"

#include "gc/IR/OpId.h"

#include <numeric>

namespace gc {

std::optional<std::vector<int64_t>> permutationOf(const Node &n) {
  if (n.results().empty() || !n.results()[0]->type().isTensor())
    return std::nullopt;
  int64_t rank = static_cast<int64_t>(n.results()[0]->type().tensor.rank());
  std::vector<int64_t> p(rank);
  std::iota(p.begin(), p.end(), 0);
  auto wrap = [&](int64_t d) { return d < 0 ? d + rank : d; };
  // A plain integer argument (absent, None, a list or a symbol: none).
  auto dimArg = [&](std::string_view name) -> std::optional<int64_t> {
    const NamedArg *a = n.arg(name);
    if (!a || a->value.kind == ArgKind::None || a->value.ints.size() != 1 ||
        (!a->value.values.empty() && a->value.values[0]))
      return std::nullopt;
    int64_t d = wrap(a->value.ints[0]);
    if (d < 0 || d >= rank)
      return std::nullopt;
    return d;
  };
  if (n.op() == ops::aten_permute_default) {
    const NamedArg *dims = n.arg("dims");
    if (!dims || dims->value.kind == ArgKind::None || dims->value.ints.size() != p.size())
      return std::nullopt;
    for (size_t i = 0; i < p.size(); ++i)
      p[i] = wrap(dims->value.ints[i]);
  } else if (n.op() == ops::aten_transpose_int) {
    std::optional<int64_t> d0 = dimArg("dim0"), d1 = dimArg("dim1");
    if (!d0 || !d1)
      return std::nullopt;
    std::swap(p[*d0], p[*d1]);
  } else if (n.op() == ops::aten_t_default) {
    if (rank == 2)
      std::swap(p[0], p[1]);
  } else {
    return std::nullopt;
  }
  return p;
}

} // namespace gc
