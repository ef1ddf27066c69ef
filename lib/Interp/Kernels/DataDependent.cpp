//===- DataDependent.cpp - Kernels whose result sizes depend on data -----===//
//
// nonzero, masked_select, unique and unique_consecutive return as many
// elements as their input's values call for; torch.export gives those sizes
// unbacked symbols (u0, ...), which the interpreter binds from the result it
// gets (docs/formats.md, "Unbacked symbols"). The checks torch.export puts on
// such symbols (_assert_scalar, sym_constrain_range) run here too: a check
// that fails is the node's error, with torch's own message.
//
//===----------------------------------------------------------------------===//
#include "gc/Interp/Kernel.h"
#include "gc/Interp/Promotion.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace gc {

namespace {

using Results = std::vector<Tensor>;

/// One element, in the domain that keeps its value exactly.
struct Element {
  bool isFloat = false;
  double f = 0;
  int64_t i = 0;

  bool operator<(const Element &o) const {
    // NaN sorts last, as torch's sorted unique puts it.
    if (isFloat)
      return std::isnan(o.f) ? !std::isnan(f) : f < o.f;
    return i < o.i;
  }
  bool operator==(const Element &o) const { return isFloat ? f == o.f : i == o.i; }
};

/// self's elements in row-major order.
std::vector<Element> elements(const Tensor &self) {
  std::vector<Element> out;
  bool isFloat = isFloatingPoint(self.dtype());
  forEachIndex(self.sizes(), [&](const Shape &idx) {
    Element e;
    e.isFloat = isFloat;
    if (isFloat)
      e.f = self.getDouble(idx);
    else
      e.i = self.getInt(idx);
    out.push_back(e);
  });
  return out;
}

Tensor fromElements(DType dtype, const std::vector<Element> &values) {
  Tensor t = Tensor::zeros(dtype, {static_cast<int64_t>(values.size())});
  for (size_t k = 0; k < values.size(); ++k) {
    if (values[k].isFloat)
      t.storeDouble(static_cast<int64_t>(k), values[k].f);
    else
      t.storeInt(static_cast<int64_t>(k), values[k].i);
  }
  return t;
}

Tensor int64Tensor(const Shape &sizes, const std::vector<int64_t> &values) {
  Tensor t = Tensor::zeros(DType::Int64, sizes);
  for (size_t k = 0; k < values.size(); ++k)
    t.storeInt(static_cast<int64_t>(k), values[k]);
  return t;
}

/// One row per nonzero element of self: its multi-index, row-major order.
Results nonzero(const OpCall &call) {
  Tensor self = call.tensor("self");
  std::vector<int64_t> rows;
  int64_t count = 0;
  forEachIndex(self.sizes(), [&](const Shape &idx) {
    bool hit = isFloatingPoint(self.dtype()) ? self.getDouble(idx) != 0 : self.getInt(idx) != 0;
    if (!hit)
      return;
    rows.insert(rows.end(), idx.begin(), idx.end());
    ++count;
  });
  return {int64Tensor({count, self.dim()}, rows)};
}

/// self's elements where mask holds, both broadcast to one shape.
Results maskedSelect(const OpCall &call) {
  Tensor self = call.tensor("self"), mask = call.tensor("mask");
  if (mask.dtype() != DType::Bool)
    kernelFail("masked_select: expected a bool mask, got " + std::string(dtypeName(mask.dtype())));
  Shape shape = broadcastShapes(self.sizes(), mask.sizes());
  Tensor s = broadcastTo(self, shape), m = broadcastTo(mask, shape);
  std::vector<Element> picked;
  std::vector<Element> all = elements(s);
  size_t k = 0;
  forEachIndex(shape, [&](const Shape &idx) {
    if (m.getInt(idx) != 0)
      picked.push_back(all[k]);
    ++k;
  });
  return {fromElements(self.dtype(), picked)};
}

/// What unique and unique_consecutive return: the values, the inverse
/// (self's shape; empty unless asked for) and the counts (empty unless
/// asked for).
Results uniqueResults(const Tensor &self, const std::vector<Element> &values,
                      const std::vector<int64_t> &inverse, const std::vector<int64_t> &counts,
                      bool returnInverse, bool returnCounts) {
  Tensor inv = returnInverse ? int64Tensor(self.sizes(), inverse) : Tensor::zeros(DType::Int64, {0});
  Tensor cnt = returnCounts ? int64Tensor({static_cast<int64_t>(counts.size())}, counts)
                            : Tensor::zeros(DType::Int64, {0});
  return {fromElements(self.dtype(), values), inv, cnt};
}

/// The distinct values of self in ascending order (the reference kernel
/// sorts whether or not `sorted` asks for it: torch leaves the order of an
/// unsorted result unspecified).
Results unique(const OpCall &call) {
  Tensor self = call.tensor("self");
  std::vector<Element> all = elements(self);
  std::vector<size_t> order(all.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return all[a] < all[b]; });
  std::vector<Element> values;
  std::vector<int64_t> inverse(all.size()), counts;
  for (size_t k = 0; k < order.size(); ++k) {
    const Element &e = all[order[k]];
    // NaNs never compare equal: each is a value of its own, as in torch.
    if (values.empty() || !(values.back() == e)) {
      values.push_back(e);
      counts.push_back(0);
    }
    ++counts.back();
    inverse[order[k]] = static_cast<int64_t>(values.size()) - 1;
  }
  return uniqueResults(self, values, inverse, counts, call.boolean("return_inverse", false),
                       call.boolean("return_counts", false));
}

/// self flattened, with runs of equal consecutive values collapsed to one.
Results uniqueConsecutive(const OpCall &call) {
  Tensor self = call.tensor("self");
  if (call.has("dim"))
    kernelFail("unique_consecutive: only dim=None (the flattened tensor) is supported");
  std::vector<Element> all = elements(self), values;
  std::vector<int64_t> inverse(all.size()), counts;
  for (size_t k = 0; k < all.size(); ++k) {
    if (values.empty() || !(values.back() == all[k])) {
      values.push_back(all[k]);
      counts.push_back(0);
    }
    ++counts.back();
    inverse[k] = static_cast<int64_t>(values.size()) - 1;
  }
  return uniqueResults(self, values, inverse, counts, call.boolean("return_inverse", false),
                       call.boolean("return_counts", false));
}

/// torch.export's run-time assertion on a symbolic bool.
Results assertScalar(const OpCall &call) {
  Scalar cond = call.scalar("self");
  if (cond.toDouble() == 0)
    kernelFail(call.string("assert_msg", "assertion failed"));
  return {};
}

/// A symbolic int's range check: min <= size <= max, either end optional.
Results constrainRange(const OpCall &call) {
  Scalar s = call.scalar("size");
  if (s.kind == Scalar::Kind::Float)
    kernelFail("argument 'size' is a float; sizes are integers");
  if (call.has("min") && s.i < call.integer("min"))
    kernelFail("size " + std::to_string(s.i) + " is below its lower bound " +
               std::to_string(call.integer("min")));
  if (call.has("max") && s.i > call.integer("max"))
    kernelFail("size " + std::to_string(s.i) + " is above its upper bound " +
               std::to_string(call.integer("max")));
  return {};
}

const KernelEntry kKernels[] = {
    {ops::aten_nonzero_default, nonzero},
    {ops::aten_masked_select_default, maskedSelect},
    {ops::aten__unique2_default, unique},
    {ops::aten_unique_consecutive_default, uniqueConsecutive},
    {ops::aten__assert_scalar_default, assertScalar},
    {ops::aten_sym_constrain_range_default, constrainRange},
    {ops::aten_sym_constrain_range_for_size_default, constrainRange},
};

} // namespace

void registerDataDependentKernels(KernelRegistry &r) { r.add(kKernels); }

} // namespace gc
