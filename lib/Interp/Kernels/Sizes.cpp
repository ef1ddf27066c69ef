//===- Sizes.cpp - Reference kernels of size computations ----------------===//
//
// sym_size and its kin read a tensor's metadata; Python's integer operators
// combine sizes. Each returns a 0-dim int64 (or bool) tensor, which the
// interpreter keeps as the value of the symbolic int or bool it computes.
//
//===----------------------------------------------------------------------===//
#include "gc/Interp/Kernel.h"

namespace gc {

namespace {

using Results = std::vector<Tensor>;

Results integer(int64_t v) {
  Tensor t = Tensor::zeros(DType::Int64, {});
  t.storeInt(0, v);
  return {t};
}

Results boolean(bool v) {
  Tensor t = Tensor::zeros(DType::Bool, {});
  t.storeInt(0, v ? 1 : 0);
  return {t};
}

Results symSize(const OpCall &call) {
  Tensor self = call.tensor("self");
  return integer(self.size(wrapDim(call.integer("dim"), self.dim())));
}

Results symStride(const OpCall &call) {
  Tensor self = call.tensor("self");
  return integer(self.strides()[wrapDim(call.integer("dim"), self.dim())]);
}

Results symNumel(const OpCall &call) { return integer(call.tensor("self").numel()); }

Results symStorageOffset(const OpCall &call) { return integer(call.tensor("self").offset()); }

int64_t operand(const OpCall &call, std::string_view name) {
  Scalar s = call.scalar(name);
  if (s.kind == Scalar::Kind::Float)
    kernelFail("argument '" + std::string(name) + "' is a float; sizes are integers");
  return s.i;
}

/// Python's // and %: the quotient rounds toward negative infinity, the
/// remainder takes the divisor's sign.
int64_t floorDiv(int64_t a, int64_t b) {
  if (b == 0)
    kernelFail("integer division by zero");
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

template <typename Fn> Results arithmetic(const OpCall &call) {
  return integer(Fn{}(operand(call, "a"), operand(call, "b")));
}

template <typename Fn> Results comparison(const OpCall &call) {
  return boolean(Fn{}(operand(call, "a"), operand(call, "b")));
}

struct FloorDiv {
  int64_t operator()(int64_t a, int64_t b) const { return floorDiv(a, b); }
};
struct PyMod {
  int64_t operator()(int64_t a, int64_t b) const { return a - floorDiv(a, b) * b; }
};

Results neg(const OpCall &call) { return integer(-operand(call, "a")); }

const KernelEntry kKernels[] = {
    {ops::aten_sym_size_int, symSize},
    {ops::aten_sym_stride_int, symStride},
    {ops::aten_sym_numel_default, symNumel},
    {ops::aten_sym_storage_offset_default, symStorageOffset},
    {ops::_operator_add, arithmetic<std::plus<>>},
    {ops::_operator_sub, arithmetic<std::minus<>>},
    {ops::_operator_mul, arithmetic<std::multiplies<>>},
    {ops::_operator_floordiv, arithmetic<FloorDiv>},
    {ops::_operator_mod, arithmetic<PyMod>},
    {ops::_operator_neg, neg},
    {ops::_operator_eq, comparison<std::equal_to<>>},
    {ops::_operator_ne, comparison<std::not_equal_to<>>},
    {ops::_operator_lt, comparison<std::less<>>},
    {ops::_operator_le, comparison<std::less_equal<>>},
    {ops::_operator_gt, comparison<std::greater<>>},
    {ops::_operator_ge, comparison<std::greater_equal<>>},
};

} // namespace

void registerSizeKernels(KernelRegistry &r) { r.add(kKernels); }

} // namespace gc
