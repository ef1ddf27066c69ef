//===- Pointwise.cpp - Elementwise reference kernels ----------------------===//
//
// Arithmetic, comparisons, logical and bitwise ops, unary math, activations,
// selection, and the factories and copies that fill or alias a tensor.
//
// Every elementwise op goes through `pointwise`: it broadcasts the operands,
// converts each to the op's computation dtype first, as torch does (so the
// number 0.1 compared with a float32 tensor is 0.1f), and runs one element
// function in double for floating dtypes or in int64 for integer and bool
// dtypes. Element functions are written once per op, as a generic lambda or
// as an `Overloaded` pair of a double and an int64 lambda.
//
//===----------------------------------------------------------------------===//

#include "gc/IR/OpId.h"
#include "gc/IR/ScalarEval.h"
#include "gc/Interp/Kernel.h"
#include "gc/Interp/Promotion.h"

#include <algorithm>
#include <cmath>
#include <concepts>
#include <functional>
#include <numbers>
#include <numeric>
#include <optional>
#include <type_traits>

namespace gc {
namespace {

//===----------------------------------------------------------------------===//
// Operands and the element loop
//===----------------------------------------------------------------------===//

Scalar intScalar(int64_t v) { return Scalar{Scalar::Kind::Int, v, 0}; }

/// An operand of an elementwise op: a tensor, or a number that torch.export
/// recorded in a tensor's place (`x + 1` records `other` as the int 1).
class Operand {
public:
  Operand(Tensor t) : tensor_(std::move(t)) {}
  Operand(const Scalar &s) : tensor_(numberTensor(s)), number_(s) {}

  /// The number, if the operand is one.
  const std::optional<Scalar> &number() const { return number_; }
  /// A number's dtype is its literal's kind at full width (see numberTensor).
  DType dtype() const { return tensor_.dtype(); }
  const Shape &sizes() const { return tensor_.sizes(); }
  PromotionOperand promotion() const { return number_ ? operandOf(*number_) : operandOf(tensor_); }
  /// The operand's values converted to `dtype`.
  Tensor in(DType dtype) const { return dtype == tensor_.dtype() ? tensor_ : tensor_.to(dtype); }

private:
  Tensor tensor_;
  std::optional<Scalar> number_;
};

Operand operand(const OpCall &call, std::string_view name) {
  const NamedArg *arg = call.node().arg(name);
  if (arg && arg->value.kind == ArgKind::Tensor)
    return call.tensor(name);
  return call.scalar(name);
}

std::optional<Operand> optOperand(const OpCall &call, std::string_view name) {
  if (!call.has(name))
    return std::nullopt;
  return operand(call, name);
}

/// torch's result_type over the operands.
template <typename... Ops> DType promote(const Ops &...ops) {
  PromotionOperand list[] = {ops.promotion()...};
  return resultType(list);
}

template <typename T> T load(const Tensor &t, const Shape &index) {
  if constexpr (std::is_floating_point_v<T>)
    return t.getDouble(index);
  else
    return t.getInt(index);
}

template <typename V> void store(Tensor &t, const Shape &index, V v) {
  if constexpr (std::is_floating_point_v<V>)
    t.setDouble(index, v);
  else
    t.setInt(index, static_cast<int64_t>(v));
}

template <typename T, typename> using Repeat = T;

/// out[i] = fn(ins[i]...) with every input already of out's shape.
template <typename T, typename Fn, typename... Ins>
void fill(Tensor &out, const Fn &fn, const Ins &...ins) {
  forEachIndex(out.sizes(),
               [&](const Shape &index) { store(out, index, fn(load<T>(ins, index)...)); });
}

/// Broadcasts the operands together, converts each to `compute` and maps
/// them through `fn` into a new tensor of dtype `result`. `fn` gets doubles
/// when `compute` is floating, int64s otherwise (bools as 0 and 1); an `fn`
/// that cannot take them means the op has no kernel for that dtype.
template <typename Fn, typename... Ops>
Tensor pointwise(DType compute, DType result, const Fn &fn, const Ops &...ops) {
  Shape shape;
  ((shape = broadcastShapes(shape, ops.sizes())), ...);
  Tensor out = Tensor::zeros(result, shape);
  if (isFloatingPoint(compute)) {
    if constexpr (std::is_invocable_v<const Fn &, Repeat<double, Ops>...>)
      fill<double>(out, fn, broadcastTo(ops.in(compute), shape)...);
    else
      kernelFail("not implemented for floating dtype " + std::string(dtypeName(compute)));
  } else {
    if constexpr (std::is_invocable_v<const Fn &, Repeat<int64_t, Ops>...>)
      fill<int64_t>(out, fn, broadcastTo(ops.in(compute), shape)...);
    else
      kernelFail("not implemented for dtype " + std::string(dtypeName(compute)));
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Element functions
//===----------------------------------------------------------------------===//

/// One callable from several lambdas, to give an op separate double and
/// int64 element functions.
template <typename... Fs> struct Overloaded : Fs... { using Fs::operator()...; };
// clang 16 (the fuzzers' compiler) deduces no aggregate's template arguments.
template <typename... Fs> Overloaded(Fs...) -> Overloaded<Fs...>;

// int64 arithmetic wraps modulo 2^64, as torch's does (signed overflow is
// undefined in C++); narrower dtypes wrap again when stored.
int64_t wrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t wrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
int64_t wrapNeg(int64_t a) { return static_cast<int64_t>(0 - static_cast<uint64_t>(a)); }

/// Integer division and remainder by zero is an error in torch.
int64_t nonzeroDivisor(int64_t b) {
  if (b == 0)
    kernelFail("ZeroDivisionError");
  return b;
}

/// Integer powers by squaring; a negative exponent gives 1/base truncated.
int64_t intPow(int64_t base, int64_t exp) {
  if (exp < 0)
    return base == 1 ? 1 : base == -1 ? (exp % 2 ? -1 : 1) : 0;
  int64_t result = 1;
  for (; exp; exp >>= 1, base = wrapMul(base, base))
    if (exp & 1)
      result = wrapMul(result, base);
  return result;
}

/// Python's float floor division, which torch follows: computed from fmod
/// so that a quotient just below an integer is not rounded up to it.
double floorDivide(double a, double b) {
  if (b == 0)
    return a / b;
  double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0))
    div -= 1;
  if (div == 0)
    return std::copysign(0.0, a / b);
  double floored = std::floor(div);
  return div - floored > 0.5 ? floored + 1 : floored;
}

/// A remainder with the divisor's sign, given one with the dividend's.
template <typename T> T toDivisorSign(T mod, T b) {
  return mod != 0 && (mod < 0) != (b < 0) ? mod + b : mod;
}

constexpr auto kIdentityInt = [](int64_t x) { return x; };

constexpr Overloaded kMul{[](double a, double b) { return a * b; },
                          [](int64_t a, int64_t b) { return wrapMul(a, b); }};
constexpr Overloaded kTruncDiv{
    [](double a, double b) { return std::trunc(a / b); },
    [](int64_t a, int64_t b) { return b == -1 ? wrapNeg(a) : a / nonzeroDivisor(b); }};
constexpr Overloaded kFloorDiv{[](double a, double b) { return floorDivide(a, b); },
                               [](int64_t a, int64_t b) -> int64_t {
                                 if (b == -1)
                                   return wrapNeg(a);
                                 int64_t q = a / nonzeroDivisor(b);
                                 return a % b != 0 && (a < 0) != (b < 0) ? q - 1 : q;
                               }};
constexpr Overloaded kFmod{
    [](double a, double b) { return std::fmod(a, b); },
    [](int64_t a, int64_t b) -> int64_t { return b == -1 ? 0 : a % nonzeroDivisor(b); }};
constexpr Overloaded kRemainder{
    [](double a, double b) { return toDivisorSign(std::fmod(a, b), b); },
    [](int64_t a, int64_t b) { return toDivisorSign<int64_t>(kFmod(a, b), b); }};
constexpr Overloaded kPow{[](double a, double b) { return std::pow(a, b); },
                          [](int64_t a, int64_t b) { return intPow(a, b); }};
// maximum and minimum propagate NaN.
constexpr Overloaded kMax{[](double a, double b) { return std::isnan(a) || a > b ? a : b; },
                          [](int64_t a, int64_t b) { return std::max(a, b); }};
constexpr Overloaded kMin{[](double a, double b) { return std::isnan(a) || a < b ? a : b; },
                          [](int64_t a, int64_t b) { return std::min(a, b); }};

constexpr Overloaded kAbs{[](double x) { return std::fabs(x); },
                          [](int64_t x) { return x < 0 ? wrapNeg(x) : x; }};
constexpr Overloaded kNeg{[](double x) { return -x; }, [](int64_t x) { return wrapNeg(x); }};
constexpr Overloaded kSign{[](double x) { return static_cast<double>((0 < x) - (x < 0)); },
                           [](int64_t x) { return static_cast<int64_t>((0 < x) - (x < 0)); }};
// Rounding an integer gives itself.
constexpr Overloaded kCeil{[](double x) { return std::ceil(x); }, kIdentityInt};
constexpr Overloaded kFloor{[](double x) { return std::floor(x); }, kIdentityInt};
// nearbyint in the default rounding mode rounds half to even, as torch does.
constexpr Overloaded kRound{[](double x) { return std::nearbyint(x); }, kIdentityInt};
constexpr Overloaded kRelu{[](double x) { return std::isnan(x) || x > 0 ? x : 0.0; },
                           [](int64_t x) { return std::max<int64_t>(x, 0); }};

/// A ScalarOp's math on one value (ScalarEval.h), shared with the loop
/// interpreter.
template <ScalarOp Op> double scalar(double x) { return *evalFloatScalarOp(Op, x); }
template <ScalarOp Op> double scalar2(double x, double y) { return *evalFloatScalarOp(Op, x, y); }

double silu(double x) { return x * scalar<ScalarOp::Sigmoid>(x); }
double hardsigmoid(double x) { return std::clamp(x + 3, 0.0, 6.0) / 6; }
double hardswish(double x) { return x * hardsigmoid(x); }

double geluErf(double x) { return 0.5 * x * (1 + std::erf(x / std::numbers::sqrt2)); }
double geluTanh(double x) {
  double k = std::sqrt(2 / std::numbers::pi);
  return 0.5 * x * (1 + std::tanh(k * (x + 0.044715 * x * x * x)));
}

//===----------------------------------------------------------------------===//
// Kernel shapes shared by many ops
//===----------------------------------------------------------------------===//

using Results = std::vector<Tensor>;

void requireFloatingPoint(DType t) {
  if (!isFloatingPoint(t))
    kernelFail("not implemented for dtype " + std::string(dtypeName(t)) +
               "; it needs a floating dtype");
}

/// self (op) other, in and to their promoted dtype.
template <auto Fn> Results binary(const OpCall &call) {
  Operand self = operand(call, "self"), other = operand(call, "other");
  DType t = promote(self, other);
  return {pointwise(t, t, Fn, self, other)};
}

/// A comparison: computed in the promoted dtype, giving bool.
template <auto Fn> Results compare(const OpCall &call) {
  Operand self = operand(call, "self"), other = operand(call, "other");
  return {pointwise(promote(self, other), DType::Bool, Fn, self, other)};
}

/// logical_and and friends: each operand tested against zero.
template <auto Fn> Results logical(const OpCall &call) {
  Operand self = operand(call, "self"), other = operand(call, "other");
  return {pointwise(DType::Bool, DType::Bool, Fn, self, other)};
}

/// Math on floating values: integer and bool inputs become float32 (torch's
/// default dtype) first.
template <auto Fn> Results unaryFloat(const OpCall &call) {
  // self, or x for some special functions
  Operand self = operand(call, call.node().args().front().name);
  DType t = isFloatingPoint(self.dtype()) ? self.dtype() : DType::Float32;
  return {pointwise(t, t, Fn, self)};
}

/// A special function of two tensors (self and other, or x and n), in
/// floating point as unaryFloat.
template <auto Fn> Results binaryFloat(const OpCall &call) {
  const std::vector<NamedArg> &args = call.node().args();
  Operand a = operand(call, args[0].name), b = operand(call, args[1].name);
  DType t = promote(a, b);
  t = isFloatingPoint(t) ? t : DType::Float32;
  return {pointwise(t, t, Fn, a, b)};
}

/// An op that keeps its input's dtype.
template <auto Fn> Results unarySame(const OpCall &call) {
  Operand self = operand(call, "self");
  return {pointwise(self.dtype(), self.dtype(), Fn, self)};
}

/// Activations torch implements for floating dtypes only.
template <auto Fn> Results activation(const OpCall &call) {
  requireFloatingPoint(call.tensor("self").dtype());
  return unarySame<Fn>(call);
}

//===----------------------------------------------------------------------===//
// Arithmetic
//===----------------------------------------------------------------------===//

/// add and sub: self + sign * alpha * other; Reversed (rsub) swaps the
/// roles: other - alpha * self.
template <int Sign, bool Reversed = false> Results addScaled(const OpCall &call) {
  Operand self = operand(call, Reversed ? "other" : "self"),
          other = operand(call, Reversed ? "self" : "other");
  DType t = promote(self, other);
  Scalar alpha = call.has("alpha") ? call.scalar("alpha") : intScalar(1);
  if (!isFloatingPoint(t) && alpha.kind == Scalar::Kind::Float)
    kernelFail("for integral input tensors, argument alpha must not be a floating point number");
  if (Sign < 0 && t == DType::Bool)
    kernelFail("subtraction of bool tensors is not supported; use logical_xor or bitwise_xor");
  double alphaF = Sign * alpha.toDouble();
  int64_t alphaI = wrapMul(Sign, alpha.i);
  Overloaded fn{[=](double a, double b) { return a + alphaF * b; },
                [=](int64_t a, int64_t b) { return wrapAdd(a, wrapMul(alphaI, b)); }};
  return {pointwise(t, t, fn, self, other)};
}

/// div with rounding_mode None (true division, integers give float32),
/// "trunc" or "floor" (in the promoted dtype).
Results divide(const OpCall &call) {
  Operand self = operand(call, "self"), other = operand(call, "other");
  DType t = promote(self, other);
  std::string mode = call.string("rounding_mode", "");
  if (mode.empty()) {
    DType f = isFloatingPoint(t) ? t : DType::Float32;
    return {pointwise(f, f, std::divides<double>(), self, other)};
  }
  if (mode == "trunc")
    return {pointwise(t, t, kTruncDiv, self, other)};
  if (mode == "floor")
    return {pointwise(t, t, kFloorDiv, self, other)};
  kernelFail("div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '" +
             mode + "'");
}

Results power(const OpCall &call) {
  Operand self = operand(call, "self"), exponent = operand(call, "exponent");
  DType t = promote(self, exponent);
  const std::optional<Scalar> &e = exponent.number();
  if (!isFloatingPoint(t) && e && e->kind != Scalar::Kind::Float && e->i < 0)
    kernelFail("integers to negative integer powers are not allowed");
  return {pointwise(t, t, kPow, self, exponent)};
}

Results negate(const OpCall &call) {
  if (call.tensor("self").dtype() == DType::Bool)
    kernelFail("negation, the `-` operator, on a bool tensor is not supported; use logical_not");
  return unarySame<kNeg>(call);
}

/// square is pow(self, 2), so bool becomes int64.
Results square(const OpCall &call) {
  Operand self = operand(call, "self");
  DType t = promote(self, Operand(intScalar(2)));
  return {pointwise(t, t, kMul, self, self)};
}

//===----------------------------------------------------------------------===//
// Logical and bitwise
//===----------------------------------------------------------------------===//

Results bitwiseNot(const OpCall &call) {
  Operand self = operand(call, "self");
  if (self.dtype() == DType::Bool)
    return {pointwise(
        DType::Bool, DType::Bool, [](int64_t x) { return x == 0; }, self)};
  return unarySame<[](std::integral auto x) { return ~x; }>(call);
}

Results logicalNot(const OpCall &call) {
  return {pointwise(DType::Bool, DType::Bool, std::logical_not<int64_t>(), operand(call, "self"))};
}

Results isNan(const OpCall &call) {
  Operand self = operand(call, "self");
  Overloaded fn{[](double x) { return std::isnan(x); }, [](int64_t) { return false; }};
  return {pointwise(self.dtype(), DType::Bool, fn, self)};
}

//===----------------------------------------------------------------------===//
// Activations
//===----------------------------------------------------------------------===//

Results gelu(const OpCall &call) {
  std::string approximate = call.string("approximate", "none");
  if (approximate == "none")
    return activation<geluErf>(call);
  if (approximate == "tanh")
    return activation<geluTanh>(call);
  kernelFail("gelu: approximate must be 'none' or 'tanh', not '" + approximate + "'");
}

//===----------------------------------------------------------------------===//
// Selection
//===----------------------------------------------------------------------===//

Results where(const OpCall &call) {
  Operand condition = operand(call, "condition");
  Operand self = operand(call, "self"), other = operand(call, "other");
  if (condition.dtype() != DType::Bool && condition.dtype() != DType::UInt8)
    kernelFail("where expected condition to be a boolean tensor, but got " +
               std::string(dtypeName(condition.dtype())));
  DType t = promote(self, other);
  auto fn = [](auto c, auto a, auto b) { return c ? a : b; };
  return {pointwise(t, t, fn, condition, self, other)};
}

/// masked_fill.Scalar and .Tensor: the result broadcasts self with mask and
/// keeps self's dtype; the value is converted to it.
Results maskedFill(const OpCall &call) {
  Operand self = operand(call, "self"), mask = operand(call, "mask");
  Operand value = operand(call, "value");
  if (mask.dtype() != DType::Bool)
    kernelFail("masked_fill only supports boolean masks, but got mask with dtype " +
               std::string(dtypeName(mask.dtype())));
  if (!value.sizes().empty())
    kernelFail("masked_fill only supports a 0-dimensional value tensor, but got tensor with " +
               std::to_string(value.sizes().size()) + " dimension(s)");
  auto fn = [](auto s, auto m, auto v) { return m ? v : s; };
  return {pointwise(self.dtype(), self.dtype(), fn, self, mask, value)};
}

/// clamp, clamp_min and clamp_max: bounds are tensors or numbers, promoted
/// with self; a NaN anywhere gives NaN; min > max gives max.
Results clampBetween(const OpCall &call, std::optional<Operand> lo, std::optional<Operand> hi) {
  Operand self = operand(call, "self");
  if (!lo && !hi)
    kernelFail("clamp: at least one of 'min' or 'max' must not be None");
  std::vector<PromotionOperand> types = {self.promotion()};
  for (const std::optional<Operand> &bound : {lo, hi})
    if (bound)
      types.push_back(bound->promotion());
  DType t = resultType(types);
  bool hasLo = lo.has_value(), hasHi = hi.has_value();
  auto fn = [=](auto x, auto l, auto h) {
    if (hasLo)
      x = kMax(x, l);
    if (hasHi)
      x = kMin(x, h);
    return x;
  };
  // self stands in for a missing bound, which fn ignores.
  return {pointwise(t, t, fn, self, lo.value_or(self), hi.value_or(self))};
}

Results clamp(const OpCall &call) {
  return clampBetween(call, optOperand(call, "min"), optOperand(call, "max"));
}
Results clampMin(const OpCall &call) { return clampBetween(call, operand(call, "min"), {}); }
Results clampMax(const OpCall &call) { return clampBetween(call, {}, operand(call, "max")); }

/// hardtanh: self clamped to [min_val, max_val] (by default [-1, 1]).
Results hardtanh(const OpCall &call) {
  auto bound = [&](std::string_view name, int64_t dflt) {
    return call.has(name) ? operand(call, name) : Operand(intScalar(dflt));
  };
  return clampBetween(call, bound("min_val", -1), bound("max_val", 1));
}

/// lerp.Scalar, with torch's formula that is exact at both ends.
Results lerp(const OpCall &call) {
  Operand self = operand(call, "self"), end = operand(call, "end");
  double w = call.real("weight");
  if (self.dtype() != end.dtype())
    kernelFail("expected dtype " + std::string(dtypeName(self.dtype())) +
               " for `end` but got dtype " + std::string(dtypeName(end.dtype())));
  requireFloatingPoint(self.dtype());
  auto fn = [w](double a, double b) {
    return std::fabs(w) < 0.5 ? a + w * (b - a) : b - (b - a) * (1 - w);
  };
  return {pointwise(self.dtype(), self.dtype(), fn, self, end)};
}

//===----------------------------------------------------------------------===//
// Creation
//===----------------------------------------------------------------------===//

Tensor filled(DType dtype, Shape sizes, const Scalar &value) {
  Tensor t = Tensor::zeros(dtype, std::move(sizes));
  t.copyFrom(numberTensor(value));
  return t;
}

/// The dtype torch gives a tensor made from a number: bool, int64 or the
/// default float32.
DType defaultDType(const Scalar &s) { return operandOf(s).dtype; }

Results full(const OpCall &call) {
  Scalar value = call.scalar("fill_value");
  return {filled(call.dtype("dtype").value_or(defaultDType(value)), call.ints("size"), value)};
}

Results fullLike(const OpCall &call) {
  Tensor self = call.tensor("self");
  return {
      filled(call.dtype("dtype").value_or(self.dtype()), self.sizes(), call.scalar("fill_value"))};
}

/// ones, zeros: float32 unless a dtype is given.
template <int Value> Results constantOf(const OpCall &call) {
  return {
      filled(call.dtype("dtype").value_or(DType::Float32), call.ints("size"), intScalar(Value))};
}

/// ones_like, zeros_like: self's shape and, by default, dtype.
template <int Value> Results constantLike(const OpCall &call) {
  Tensor self = call.tensor("self");
  return {filled(call.dtype("dtype").value_or(self.dtype()), self.sizes(), intScalar(Value))};
}

/// new_ones, new_zeros: a given shape, self's dtype by default.
template <int Value> Results newConstant(const OpCall &call) {
  return {filled(call.dtype("dtype").value_or(call.tensor("self").dtype()), call.ints("size"),
                 intScalar(Value))};
}

Results scalarTensor(const OpCall &call) {
  return {filled(call.dtype("dtype").value_or(DType::Float32), {}, call.scalar("s"))};
}

int64_t truncatedInt(const Scalar &s) {
  return s.kind == Scalar::Kind::Float ? static_cast<int64_t>(s.f) : s.i;
}

/// arange.default, .start and .start_step. Integer dtypes count in int64 on
/// the truncated bounds, floating ones in double, as torch does.
Results arange(const OpCall &call) {
  Scalar start = call.has("start") ? call.scalar("start") : intScalar(0);
  Scalar end = call.scalar("end");
  Scalar step = call.has("step") ? call.scalar("step") : intScalar(1);
  bool allInts = start.kind != Scalar::Kind::Float && end.kind != Scalar::Kind::Float &&
                 step.kind != Scalar::Kind::Float;
  DType dtype = call.dtype("dtype").value_or(allInts ? DType::Int64 : DType::Float32);
  auto check = [](auto lo, auto hi, auto by) {
    if (by == 0)
      kernelFail("arange: step must be nonzero");
    if ((by > 0 && hi < lo) || (by < 0 && hi > lo))
      kernelFail("arange: upper bound and larger bound inconsistent with step sign");
  };
  if (isFloatingPoint(dtype)) {
    double lo = start.toDouble(), hi = end.toDouble(), by = step.toDouble();
    if (!std::isfinite(lo) || !std::isfinite(hi))
      kernelFail("arange: unsupported range " + std::to_string(lo) + " -> " + std::to_string(hi));
    check(lo, hi, by);
    Tensor out = Tensor::zeros(dtype, {static_cast<int64_t>(std::ceil((hi - lo) / by))});
    for (int64_t i = 0; i < out.numel(); ++i)
      out.storeDouble(i, lo + by * static_cast<double>(i));
    return {out};
  }
  int64_t lo = truncatedInt(start), hi = truncatedInt(end), by = truncatedInt(step);
  check(lo, hi, by);
  int64_t towardZero = by > 0 ? 1 : -1;
  Tensor out = Tensor::zeros(dtype, {(hi - lo + by - towardZero) / by});
  for (int64_t i = 0; i < out.numel(); ++i)
    out.storeInt(i, wrapAdd(lo, wrapMul(by, i)));
  return {out};
}

//===----------------------------------------------------------------------===//
// Copies, aliases and no-ops
//===----------------------------------------------------------------------===//

// Copies are contiguous whatever the memory format asks: the values are the
// same, and results are checked by shape and dtype only.
Results clone(const OpCall &call) { return {call.tensor("self").clone()}; }

Results contiguous(const OpCall &call) {
  Tensor self = call.tensor("self");
  return {self.isContiguous() ? self : self.clone()};
}

Results alias(const OpCall &call) { return {call.tensor("self")}; }

/// to.device, to.dtype and to.dtype_layout: self itself when no conversion
/// or copy is asked for. The interpreter holds every tensor in host memory,
/// so the device changes nothing.
Results toDType(const OpCall &call) {
  Tensor self = call.tensor("self");
  DType dtype = call.dtype("dtype").value_or(self.dtype());
  if (dtype == self.dtype() && !call.boolean("copy", false))
    return {self};
  return {self.to(dtype)};
}

/// type_as: self in other's dtype (self itself when it has it).
Results typeAs(const OpCall &call) {
  Tensor self = call.tensor("self");
  DType dtype = call.tensor("other").dtype();
  return {dtype == self.dtype() ? self : self.to(dtype)};
}

/// fill.Scalar and fill.Tensor (a 0-dim value): a new tensor shaped like
/// self, in self's dtype, holding value everywhere.
Results fill(const OpCall &call) {
  Tensor self = call.tensor("self");
  bool tensorValue = call.node().op() == ops::aten_fill_Tensor;
  Tensor value = tensorValue ? call.tensor("value") : numberTensor(call.scalar("value"));
  if (value.dim() != 0)
    kernelFail("fill expects a 0-dim value tensor, got " + std::to_string(value.dim()) +
               " dims");
  Tensor out = Tensor::zeros(self.dtype(), self.sizes());
  out.copyFrom(value);
  return {out};
}

/// torch.export's guard on a tensor's metadata; it holds in any graph that
/// exported, so only what the interpreter can see cheaply is checked.
Results assertTensorMetadata(const OpCall &call) {
  Tensor a = call.tensor("a");
  std::optional<DType> dtype = call.dtype("dtype");
  if (dtype && *dtype != a.dtype())
    kernelFail("tensor metadata mismatch: dtype " + std::string(dtypeName(a.dtype())) +
               ", expected " + std::string(dtypeName(*dtype)));
  std::optional<std::vector<int64_t>> size = call.optInts("size");
  if (size && *size != a.sizes())
    kernelFail("tensor metadata mismatch: shape " + shapeString(a.sizes()) + ", expected " +
               shapeString(*size));
  return {};
}

/// Training dropout with 0 < p < 1, computed as its decomposition computes
/// it so that every stage gives the same bits: u = gc.rand's numbers from
/// the run's stream (the element dtype, float32 for half types), kept where
/// u >= p, and x * (keep * 1/(1-p)) with the factor in x's dtype.
Tensor trainingDropout(const OpCall &call, const Tensor &x, double p) {
  RandomState *rng = call.random();
  if (!rng)
    kernelFail("dropout in training mode draws random numbers, and this call has no generator");
  DType t = x.dtype();
  DType drawn = t == DType::Float64 ? t : DType::Float32;
  Tensor u = uniformNumbers(drawn, x.sizes(), rng->seed, rng->offset);
  rng->offset += static_cast<uint64_t>(x.numel());
  double scale = Tensor::scalar(t, 1.0 / (1.0 - p)).loadDouble(0); // rounded to t
  std::vector<double> xs = x.toDoubles();
  Tensor out = Tensor::zeros(t, x.sizes());
  for (int64_t i = 0; i < out.numel(); ++i)
    out.storeDouble(i, xs[i] * (u.loadDouble(i) >= p ? scale : 0.0));
  return out;
}

/// dropout(input, p, train). Outside training torch returns the input
/// itself; p = 1 multiplies by zero (NaN stays NaN).
Results dropout(const OpCall &call) {
  Tensor x = call.tensor("input");
  double p = call.real("p");
  if (p < 0 || p > 1)
    kernelFail("dropout probability has to be between 0 and 1, but got " + std::to_string(p));
  // `train` is required by the schema; assuming training when it is missing
  // fails loudly below instead of silently skipping dropout.
  if (!call.boolean("train", true) || p == 0 || x.numel() == 0)
    return {x};
  return {p != 1 ? trainingDropout(call, x, p)
                 : pointwise(
                       x.dtype(), x.dtype(), [](auto v) { return v * 0; }, Operand(x))};
}

//===----------------------------------------------------------------------===//
// The table
//===----------------------------------------------------------------------===//

const KernelEntry kKernels[] = {
    // Arithmetic. Every `other` may be a tensor or a number.
    {ops::aten_add_Tensor, addScaled<1>},
    {ops::aten_add_Scalar, addScaled<1>},
    {ops::aten_sub_Tensor, addScaled<-1>},
    {ops::aten_rsub_Scalar, addScaled<-1, true>},
    {ops::aten_rsub_Tensor, addScaled<-1, true>},
    {ops::aten_sub_Scalar, addScaled<-1>},
    {ops::aten_mul_Tensor, binary<kMul>},
    {ops::aten_mul_Scalar, binary<kMul>},
    {ops::aten_multiply_Tensor, binary<kMul>},
    {ops::aten_multiply_Scalar, binary<kMul>},
    {ops::aten_div_Tensor, divide},
    {ops::aten_div_Scalar, divide},
    {ops::aten_div_Tensor_mode, divide},
    {ops::aten_div_Scalar_mode, divide},
    {ops::aten_pow_Tensor_Scalar, power},
    {ops::aten_pow_Tensor_Tensor, power},
    {ops::aten_pow_Scalar, power},
    {ops::aten_max_other, binary<kMax>},
    {ops::aten_maximum_default, binary<kMax>},
    {ops::aten_min_other, binary<kMin>},
    {ops::aten_minimum_default, binary<kMin>},
    {ops::aten_fmod_Tensor, binary<kFmod>},
    {ops::aten_fmod_Scalar, binary<kFmod>},
    {ops::aten_remainder_Tensor, binary<kRemainder>},
    {ops::aten_remainder_Scalar, binary<kRemainder>},
    {ops::aten_gcd_default, binary<[](int64_t a, int64_t b) { return std::gcd(a, b); }>},
    // Comparisons.
    {ops::aten_eq_Tensor, compare<std::equal_to<>{}>},
    {ops::aten_eq_Scalar, compare<std::equal_to<>{}>},
    {ops::aten_ne_Tensor, compare<std::not_equal_to<>{}>},
    {ops::aten_ne_Scalar, compare<std::not_equal_to<>{}>},
    {ops::aten_le_Tensor, compare<std::less_equal<>{}>},
    {ops::aten_le_Scalar, compare<std::less_equal<>{}>},
    {ops::aten_lt_Tensor, compare<std::less<>{}>},
    {ops::aten_lt_Scalar, compare<std::less<>{}>},
    {ops::aten_gt_Tensor, compare<std::greater<>{}>},
    {ops::aten_gt_Scalar, compare<std::greater<>{}>},
    {ops::aten_ge_Tensor, compare<std::greater_equal<>{}>},
    {ops::aten_ge_Scalar, compare<std::greater_equal<>{}>},
    // Logical and bitwise. The bitwise functors take no doubles, so floating
    // dtypes have no kernel; on bool they act on 0 and 1 as the logical ops.
    {ops::aten___and___Tensor, binary<std::bit_and<>{}>},
    {ops::aten_bitwise_and_Tensor, binary<std::bit_and<>{}>},
    {ops::aten___or___Tensor, binary<std::bit_or<>{}>},
    {ops::aten_bitwise_or_Tensor, binary<std::bit_or<>{}>},
    {ops::aten_bitwise_not_default, bitwiseNot},
    {ops::aten_logical_and_default, logical<std::logical_and<int64_t>{}>},
    {ops::aten_logical_or_default, logical<std::logical_or<int64_t>{}>},
    {ops::aten_logical_not_default, logicalNot},
    {ops::aten_isnan_default, isNan},
    // Unary math that keeps integer dtypes.
    {ops::aten_abs_default, unarySame<kAbs>},
    {ops::aten_neg_default, negate},
    {ops::aten_ceil_default, unarySame<kCeil>},
    {ops::aten_floor_default, unarySame<kFloor>},
    {ops::aten_round_default, unarySame<kRound>},
    {ops::aten_sign_default, unarySame<kSign>},
    {ops::aten_square_default, square},
    // Unary math on floating values.
#define GC_OP(ID, NAME, SET, TRAITS, SUMMARY, SCHEMA)
#define GC_UNARY_OP(ID, NAME, SCALAR_OP, SUMMARY, FORMULA, FACTOR)                                \
  {ops::ID, unaryFloat<scalar<ScalarOp::SCALAR_OP>>},
#include "gc/IR/OpDefs.def"
#undef GC_UNARY_OP
#undef GC_OP
    {ops::aten_log2_default, unaryFloat<[](double x) { return std::log2(x); }>},
    {ops::aten_log10_default, unaryFloat<[](double x) { return std::log10(x); }>},
    // Special functions (the rest are GC_UNARY_OP rows).
    {ops::aten_special_airy_ai_default, unaryFloat<scalar<ScalarOp::AiryAi>>},
    {ops::aten_special_scaled_modified_bessel_k0_default, unaryFloat<scalar<ScalarOp::K0e>>},
    {ops::aten_special_scaled_modified_bessel_k1_default, unaryFloat<scalar<ScalarOp::K1e>>},
    {ops::aten_igamma_default, binaryFloat<scalar2<ScalarOp::Igamma>>},
    {ops::aten_igammac_default, binaryFloat<scalar2<ScalarOp::Igammac>>},
    {ops::aten_special_zeta_default, binaryFloat<scalar2<ScalarOp::Zeta>>},
    {ops::aten_special_chebyshev_polynomial_t_default, binaryFloat<scalar2<ScalarOp::ChebyshevT>>},
    {ops::aten_special_chebyshev_polynomial_u_default, binaryFloat<scalar2<ScalarOp::ChebyshevU>>},
    {ops::aten_special_chebyshev_polynomial_v_default, binaryFloat<scalar2<ScalarOp::ChebyshevV>>},
    {ops::aten_special_chebyshev_polynomial_w_default, binaryFloat<scalar2<ScalarOp::ChebyshevW>>},
    {ops::aten_special_hermite_polynomial_h_default, binaryFloat<scalar2<ScalarOp::HermiteH>>},
    {ops::aten_special_hermite_polynomial_he_default, binaryFloat<scalar2<ScalarOp::HermiteHe>>},
    {ops::aten_special_laguerre_polynomial_l_default, binaryFloat<scalar2<ScalarOp::LaguerreL>>},
    {ops::aten_special_legendre_polynomial_p_default, binaryFloat<scalar2<ScalarOp::LegendreP>>},
    // Activations.
    {ops::aten_relu_default, unarySame<kRelu>},
    {ops::aten_gelu_default, gelu},
    {ops::aten_silu_default, activation<silu>},
    {ops::aten_hardsigmoid_default, activation<hardsigmoid>},
    {ops::aten_hardswish_default, activation<hardswish>},
    // Selection.
    {ops::aten_where_self, where},
    {ops::aten_where_ScalarSelf, where},
    {ops::aten_where_ScalarOther, where},
    {ops::aten_where_Scalar, where},
    {ops::aten_masked_fill_Scalar, maskedFill},
    {ops::aten_masked_fill_Tensor, maskedFill},
    {ops::aten_clamp_default, clamp},
    {ops::aten_clamp_Tensor, clamp},
    {ops::aten_hardtanh_default, hardtanh},
    {ops::aten_clamp_min_default, clampMin},
    {ops::aten_clamp_min_Tensor, clampMin},
    {ops::aten_clamp_max_default, clampMax},
    {ops::aten_clamp_max_Tensor, clampMax},
    {ops::aten_lerp_Scalar, lerp},
    // Creation.
    {ops::aten_full_default, full},
    {ops::aten_full_like_default, fullLike},
    {ops::aten_ones_default, constantOf<1>},
    {ops::aten_zeros_default, constantOf<0>},
    {ops::aten_ones_like_default, constantLike<1>},
    {ops::aten_zeros_like_default, constantLike<0>},
    {ops::aten_new_ones_default, newConstant<1>},
    {ops::aten_new_zeros_default, newConstant<0>},
    {ops::aten_scalar_tensor_default, scalarTensor},
    {ops::aten_arange_default, arange},
    {ops::aten_arange_start, arange},
    {ops::aten_arange_start_step, arange},
    // Copies, aliases and no-ops.
    {ops::aten_clone_default, clone},
    {ops::aten_contiguous_default, contiguous},
    {ops::aten_alias_default, alias},
    {ops::aten_detach_default, alias},
    {ops::aten_to_device, toDType},
    {ops::aten_to_dtype, toDType},
    {ops::aten_to_dtype_layout, toDType},
    {ops::aten_type_as_default, typeAs},
    {ops::aten_fill_Scalar, fill},
    {ops::aten_fill_Tensor, fill},
    {ops::aten__assert_tensor_metadata_default, assertTensorMetadata},
    {ops::aten_dropout_default, dropout},
};

} // namespace

void registerPointwiseKernels(KernelRegistry &r) { r.add(kKernels); }

} // namespace gc
