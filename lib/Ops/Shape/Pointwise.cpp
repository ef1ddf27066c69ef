//===- Pointwise.cpp - Shapes of elementwise ops, factories and copies ----===//
//
// Elementwise results broadcast their tensor operands, take the dtype that
// torch's type promotion gives (or bool, or a floating type for ops that
// compute in floating point), and are laid out as torch's TensorIterator
// lays out its output. Factories and copies follow their dtype, device and
// memory_format arguments.
//
// This file also defines the general and layout helpers of ShapeUtil.h.
//
//===----------------------------------------------------------------------===//
#include "ShapeUtil.h"

#include "gc/IR/OpId.h"

#include <cmath>
#include <limits>

namespace gc {
namespace shape {

namespace {

bool isConstant(const SymExpr *e, int64_t v) { return e->isConst() && e->constant() == v; }

/// torch counts a size of 0 as 1 when it multiplies sizes into strides.
const SymExpr *atLeastOne(SymContext &syms, const SymExpr *size) {
  return size->isConst() && size->constant() < 1 ? syms.constant(1) : size;
}

/// torch's channels_last strides for a 4-d tensor: C fastest, then W, H, N.
Sizes channelsLastStrides(SymContext &syms, const Sizes &sizes) {
  Sizes strides(4);
  strides[1] = syms.constant(1);
  strides[3] = atLeastOne(syms, sizes[1]);
  strides[2] = syms.mul(strides[3], atLeastOne(syms, sizes[3]));
  strides[0] = syms.mul(strides[2], atLeastOne(syms, sizes[2]));
  return strides;
}

/// torch's is_contiguous(memory_format=channels_last) for a 4-d tensor.
bool isChannelsLastContiguous(SymContext &syms, const TensorType &t) {
  if (t.rank() != 4)
    return false;
  const SymExpr *expected = syms.constant(1);
  for (size_t d : {1, 3, 2, 0}) {
    if (isConstant(t.sizes[d], 1))
      continue;
    if (t.strides[d] != expected)
      return false;
    expected = syms.mul(expected, t.sizes[d]);
  }
  return true;
}

/// The strides of `t` when it is broadcast to `sizes`: 0 where it is
/// broadcast (a missing or a stretched size-1 dimension).
Sizes broadcastStrides(SymContext &syms, const TensorType &t, const Sizes &sizes) {
  size_t offset = sizes.size() - t.rank();
  Sizes out(sizes.size(), syms.constant(0));
  for (size_t j = 0; j < t.rank(); ++j)
    if (!isConstant(t.sizes[j], 1) || isConstant(sizes[offset + j], 1))
      out[offset + j] = t.strides[j];
  return out;
}

/// Dense strides for `sizes` whose dimension order, from the fastest to the
/// slowest, follows the operands' strides as TensorIterator orders them: the
/// first operand that tells two dimensions apart by a smaller stride decides;
/// a stride of 0 tells nothing; equal strides put the smaller size first;
/// undecided dimensions keep the row-major order. nullopt when a comparison
/// depends on symbols.
std::optional<Sizes> denseStridesLike(SymContext &syms, const Sizes &sizes,
                                      const std::vector<Sizes> &operandStrides) {
  size_t n = sizes.size();
  // order[0] is the fastest dimension.
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i)
    order[i] = n - 1 - i;
  bool known = true;
  // > 0 if dimension b must come before (be faster than) dimension a.
  auto shouldSwap = [&](size_t a, size_t b) -> int {
    for (const Sizes &strides : operandStrides) {
      if (isConstant(strides[a], 0) || isConstant(strides[b], 0))
        continue;
      std::optional<int> byStride = compareSizes(syms, strides[a], strides[b]);
      std::optional<int> bySize = compareSizes(syms, sizes[a], sizes[b]);
      if (!byStride || (*byStride == 0 && !bySize)) {
        known = false;
        return 0;
      }
      if (*byStride != 0)
        return *byStride;
      if (*bySize > 0)
        return 1;
    }
    return 0;
  };
  // Insertion sort that stops at the first decided comparison, so that
  // undecided pairs keep their order.
  for (size_t i = 1; i < n; ++i) {
    size_t moving = i;
    for (size_t j = i; j-- > 0;) {
      int c = shouldSwap(order[j], order[moving]);
      if (c > 0) {
        std::swap(order[j], order[moving]);
        moving = j;
      } else if (c < 0) {
        break;
      }
    }
  }
  if (!known)
    return std::nullopt;
  Sizes strides(n);
  const SymExpr *running = syms.constant(1);
  for (size_t d : order) {
    strides[d] = running;
    running = syms.mul(running, atLeastOne(syms, sizes[d]));
  }
  return strides;
}

} // namespace

const SymExpr *numel(SymContext &syms, const Sizes &sizes) {
  const SymExpr *n = syms.constant(1);
  for (const SymExpr *s : sizes)
    n = syms.mul(n, s);
  return n;
}

std::optional<int> compareSizes(SymContext &syms, const SymExpr *a, const SymExpr *b) {
  if (a == b)
    return 0;
  const SymExpr *d = syms.sub(a, b);
  if (!d->isConst())
    return std::nullopt;
  return d->constant() < 0 ? -1 : 1;
}

int64_t constantSize(const SymExpr *e, const std::string &what) {
  if (!e->isConst())
    shapeFail(what + " is symbolic (" + e->str() + "); gc needs it to be known");
  return e->constant();
}

Device deviceOf(std::span<const TensorType *const> operands) {
  for (const TensorType *t : operands)
    if (t)
      return t->device;
  return {};
}

namespace {

/// An int argument of a node, as an expression.
const SymExpr *argExpr(SymContext &syms, const Arg &a) {
  switch (a.kind) {
  case ArgKind::Int:
    return syms.constant(a.ints[0]);
  case ArgKind::SymInt:
    return a.values[0] ? symIntOf(syms, *a.values[0]) : syms.constant(a.ints[0]);
  default:
    shapeFail("a symbolic size is computed from something other than an int");
  }
}

const Arg &nodeArg(const Node &n, std::string_view name) {
  const NamedArg *a = n.arg(name);
  if (!a)
    shapeFail(std::string(opName(n.op())) + " has no argument '" + std::string(name) + "'");
  return a->value;
}

const TensorType &nodeTensor(const Node &n, std::string_view name) {
  const Arg &a = nodeArg(n, name);
  if (a.kind != ArgKind::Tensor || !a.values[0]->type().isTensor())
    shapeFail(std::string(opName(n.op())) + ": argument '" + std::string(name) + "' is not a tensor");
  return a.values[0]->type().tensor;
}

} // namespace

} // namespace shape

const SymExpr *symIntOf(SymContext &syms, const Value &v) {
  using namespace shape;
  const Node *n = v.definingNode();
  if (!n)
    shapeFail("symbolic int %" + v.name() + " is a graph input; gc sizes only with symbols");
  OpId op = n->op();
  auto dim = [&](const TensorType &t) {
    return wrapDimension(constantSize(argExpr(syms, nodeArg(*n, "dim")), "the dimension"),
                         t.rank());
  };
  if (op == ops::aten_sym_size_int) {
    const TensorType &t = nodeTensor(*n, "self");
    return t.sizes.at(dim(t));
  }
  if (op == ops::aten_sym_stride_int) {
    const TensorType &t = nodeTensor(*n, "self");
    return t.strides.at(dim(t));
  }
  if (op == ops::aten_sym_numel_default)
    return numel(syms, nodeTensor(*n, "self").sizes);
  if (op == ops::aten_sym_storage_offset_default)
    return nodeTensor(*n, "self").storageOffset;
  if (op == ops::_operator_neg)
    return syms.sub(syms.constant(0), argExpr(syms, nodeArg(*n, "a")));
  const SymExpr *a = argExpr(syms, nodeArg(*n, "a"));
  const SymExpr *b = argExpr(syms, nodeArg(*n, "b"));
  if (op == ops::_operator_add)
    return syms.add(a, b);
  if (op == ops::_operator_sub)
    return syms.sub(a, b);
  if (op == ops::_operator_mul)
    return syms.mul(a, b);
  if (op == ops::_operator_floordiv)
    return syms.floorDiv(a, b);
  if (op == ops::_operator_mod)
    return syms.mod(a, b);
  shapeFail("cannot tell the value of symbolic int %" + v.name() + " computed by " + std::string(opName(op)));
}

namespace shape {

const SymExpr *symInt(const ShapeContext &ctx, std::string_view name) {
  const Arg *a = ctx.arg(name);
  if (!a || (a->kind != ArgKind::Int && a->kind != ArgKind::SymInt))
    shapeFail("argument '" + std::string(name) + "' is not an integer");
  return argExpr(ctx.syms(), *a);
}

Sizes symInts(const ShapeContext &ctx, std::string_view name) {
  const Arg *a = ctx.arg(name);
  if (!a || a->kind != ArgKind::SymInts)
    return ctx.sizes(name);
  Sizes out;
  for (size_t i = 0; i < a->ints.size(); ++i)
    out.push_back(i < a->values.size() && a->values[i] ? symIntOf(ctx.syms(), *a->values[i])
                                                       : ctx.syms().constant(a->ints[i]));
  return out;
}

bool isContiguous(SymContext &syms, const TensorType &t) {
  for (const SymExpr *s : t.sizes)
    if (isConstant(s, 0))
      return true;
  const SymExpr *expected = syms.constant(1);
  for (size_t d = t.rank(); d-- > 0;) {
    if (isConstant(t.sizes[d], 1))
      continue;
    if (t.strides[d] != expected)
      return false;
    expected = syms.mul(expected, t.sizes[d]);
  }
  return true;
}

bool isNonOverlappingAndDense(SymContext &syms, const TensorType &t) {
  // Dense means that, taken from the smallest stride up, each dimension's
  // stride is the product of the sizes before it; size-0 and size-1
  // dimensions do not matter. Finding the dimension whose stride is the
  // running product needs no ordering of symbolic strides.
  std::vector<size_t> left;
  for (size_t d = 0; d < t.rank(); ++d)
    if (!isConstant(t.sizes[d], 0) && !isConstant(t.sizes[d], 1))
      left.push_back(d);
  const SymExpr *expected = syms.constant(1);
  while (!left.empty()) {
    auto it = std::find_if(left.begin(), left.end(),
                           [&](size_t d) { return t.strides[d] == expected; });
    if (it == left.end())
      return false;
    expected = syms.mul(expected, t.sizes[*it]);
    left.erase(it);
  }
  return true;
}

bool suggestsChannelsLast(SymContext &syms, const TensorType &t) {
  if (t.rank() != 4)
    return false;
  for (size_t d = 0; d < 4; ++d)
    if (!t.sizes[d]->isConst() || !t.strides[d]->isConst())
      return false;
  auto size = [&](size_t d) { return t.sizes[d]->constant(); };
  auto stride = [&](size_t d) { return t.strides[d]->constant(); };
  // A trivial C dimension defaults to NCHW.
  if (stride(1) == 0)
    return false;
  int64_t min = 0;
  for (size_t d : {1, 3, 2, 0}) {
    if (size(d) == 0 || stride(d) < min)
      return false;
    // Equal strides of N and C (an N111 tensor) are read as NCHW.
    if (d == 0 && min == stride(1))
      return false;
    min = stride(d) * (size(d) > 1 ? size(d) : 1);
  }
  return true;
}

TensorType channelsLastType(SymContext &syms, DType dtype, Sizes sizes, Device device) {
  if (sizes.size() != 4)
    shapeFail("channels_last needs a 4-d tensor, not " + std::to_string(sizes.size()) + "-d");
  TensorType t = contiguousType(syms, dtype, sizes, device);
  t.strides = channelsLastStrides(syms, sizes);
  return t;
}

TensorType elementwiseType(SymContext &syms, DType dtype, const Sizes &sizes,
                           std::span<const TensorType *const> operands) {
  TensorType out = contiguousType(syms, dtype, sizes, deviceOf(operands));
  if (operands.empty() || sizes.size() <= 1)
    return out;
  bool sameShape = std::all_of(operands.begin(), operands.end(),
                               [&](const TensorType *t) { return t->sizes == sizes; });
  if (sameShape) {
    auto all = [&](auto pred) { return std::all_of(operands.begin(), operands.end(), pred); };
    if (all([&](const TensorType *t) { return isContiguous(syms, *t); }))
      return out;
    if (all([&](const TensorType *t) { return isChannelsLastContiguous(syms, *t); })) {
      out.strides = channelsLastStrides(syms, sizes);
      return out;
    }
    const Sizes &first = operands.front()->strides;
    if (isNonOverlappingAndDense(syms, *operands.front()) &&
        all([&](const TensorType *t) { return t->strides == first; })) {
      out.strides = first;
      return out;
    }
  }
  std::vector<Sizes> strides;
  for (const TensorType *t : operands)
    strides.push_back(broadcastStrides(syms, *t, sizes));
  if (std::optional<Sizes> dense = denseStridesLike(syms, sizes, strides))
    out.strides = *dense;
  return out;
}

TensorType preservedLayoutType(SymContext &syms, const TensorType &like, DType dtype) {
  const TensorType *operand = &like;
  return elementwiseType(syms, dtype, like.sizes, {&operand, 1});
}

TensorType formattedType(SymContext &syms, DType dtype, const TensorType &like,
                         MemoryFormat format) {
  switch (format) {
  case MemoryFormat::Contiguous:
    return contiguousType(syms, dtype, like.sizes, like.device);
  case MemoryFormat::ChannelsLast:
    return channelsLastType(syms, dtype, like.sizes, like.device);
  case MemoryFormat::Preserve:
    return preservedLayoutType(syms, like, dtype);
  default:
    shapeFail("unsupported memory format " + std::string(memoryFormatName(format)));
  }
}

} // namespace shape

namespace {

using namespace shape;

/// Result dtypes of the elementwise ops.
enum class Result {
  Promoted, ///< torch's result_type of the promoted operands
  Floating, ///< that, with integers and bool computed as float32
  Bool,     ///< comparisons and logical ops
  First,    ///< the first operand's dtype (masked_fill, lerp)
};

DType toFloating(DType t) { return isFloatingPoint(t) ? t : DType::Float32; }

/// An elementwise op: `operands` take part in broadcasting and layout, in
/// torch's operand order, and all but `shapeOnly` in promotion. Absent or
/// None operands are skipped; numbers take part in promotion only.
TensorType elementwise(const ShapeContext &ctx, std::initializer_list<std::string_view> operands,
                       Result kind, std::string_view shapeOnly = {}) {
  std::vector<const TensorType *> tensors;
  std::vector<PromotionOperand> promotion;
  for (std::string_view name : operands) {
    if (!ctx.has(name))
      continue;
    if (ctx.arg(name)->kind == ArgKind::Tensor)
      tensors.push_back(&ctx.tensor(name));
    if (name != shapeOnly)
      promotion.push_back(ctx.operand(name));
  }
  if (tensors.empty())
    shapeFail("an elementwise op needs a tensor operand");
  Sizes sizes;
  for (const TensorType *t : tensors)
    sizes = broadcastSizes(ctx.syms(), sizes, t->sizes);
  DType dtype = resultType(promotion);
  switch (kind) {
  case Result::Promoted:
    break;
  case Result::Floating:
    dtype = toFloating(dtype);
    break;
  case Result::Bool:
    dtype = DType::Bool;
    break;
  case Result::First:
    dtype = promotion.front().dtype;
    break;
  }
  return elementwiseType(ctx.syms(), dtype, sizes, tensors);
}

template <Result R> std::vector<Type> unary(const ShapeContext &ctx) {
  return one(elementwise(ctx, {"self"}, R));
}

/// Square is pow(self, 2): bool squares to int64.
std::vector<Type> square(const ShapeContext &ctx) {
  TensorType t = elementwise(ctx, {"self"}, Result::Promoted);
  if (t.dtype == DType::Bool)
    t.dtype = DType::Int64;
  return one(std::move(t));
}

template <Result R> std::vector<Type> binary(const ShapeContext &ctx) {
  return one(elementwise(ctx, {"self", "other"}, R));
}

/// The special functions whose tensor is named x (airy_ai, ...).
std::vector<Type> unaryOfX(const ShapeContext &ctx) {
  return one(elementwise(ctx, {"x"}, Result::Floating));
}

/// The orthogonal polynomials P_n(x): x and n broadcast, in floating point.
std::vector<Type> polynomial(const ShapeContext &ctx) {
  return one(elementwise(ctx, {"x", "n"}, Result::Floating));
}

/// addcmul, addcdiv: self and both tensors broadcast and promote together.
std::vector<Type> ternary(const ShapeContext &ctx) {
  return one(elementwise(ctx, {"self", "tensor1", "tensor2"}, Result::Promoted));
}

std::vector<Type> heaviside(const ShapeContext &ctx) {
  return one(elementwise(ctx, {"self", "values"}, Result::Promoted));
}

/// div with a rounding mode keeps integers; true division makes them float.
std::vector<Type> divMode(const ShapeContext &ctx) {
  bool rounds = ctx.has("rounding_mode");
  return one(elementwise(ctx, {"self", "other"}, rounds ? Result::Promoted : Result::Floating));
}

std::vector<Type> power(const ShapeContext &ctx) {
  return one(elementwise(ctx, {"self", "exponent"}, Result::Promoted));
}

std::vector<Type> where(const ShapeContext &ctx) {
  return one(elementwise(ctx, {"condition", "self", "other"}, Result::Promoted, "condition"));
}

std::vector<Type> clamp(const ShapeContext &ctx) {
  return one(elementwise(ctx, {"self", "min", "max"}, Result::Promoted));
}

std::vector<Type> clampMin(const ShapeContext &ctx) {
  return one(elementwise(ctx, {"self", "min"}, Result::Promoted));
}

std::vector<Type> clampMax(const ShapeContext &ctx) {
  return one(elementwise(ctx, {"self", "max"}, Result::Promoted));
}

std::vector<Type> maskedFill(const ShapeContext &ctx) {
  return one(elementwise(ctx, {"self", "mask"}, Result::First));
}

std::vector<Type> lerp(const ShapeContext &ctx) {
  return one(elementwise(ctx, {"self", "end", "weight"}, Result::First));
}

/// dropout is the identity when not training (torch returns the input).
std::vector<Type> dropout(const ShapeContext &ctx) {
  const TensorType &input = ctx.tensor("input");
  if (!ctx.boolean("train", true))
    return one(input);
  return one(preservedLayoutType(ctx.syms(), input, input.dtype));
}

std::vector<Type> nativeDropout(const ShapeContext &ctx) {
  const TensorType &input = ctx.tensor("input");
  return {result(preservedLayoutType(ctx.syms(), input, input.dtype)),
          result(preservedLayoutType(ctx.syms(), input, DType::Bool))};
}

//===----------------------------------------------------------------------===//
// Factories and copies
//===----------------------------------------------------------------------===//

Device deviceArg(const ShapeContext &ctx, Device dflt = {}) {
  return ctx.has("device") ? ctx.arg("device")->device : dflt;
}

MemoryFormat memoryFormatArg(const ShapeContext &ctx, MemoryFormat dflt) {
  if (!ctx.has("memory_format"))
    return dflt;
  const Arg *a = ctx.arg("memory_format");
  if (a->kind != ArgKind::MemoryFormat)
    shapeFail("argument 'memory_format' is not a memory format");
  return static_cast<MemoryFormat>(a->ints[0]);
}

/// The dtype torch.full gives a tensor filled with the number `name`: bool,
/// int64 or the default float32.
DType numberDType(const ShapeContext &ctx, std::string_view name) {
  switch (ctx.arg(name)->kind) {
  case ArgKind::Bool:
  case ArgKind::SymBool:
    return DType::Bool;
  case ArgKind::Int:
  case ArgKind::SymInt:
    return DType::Int64;
  default:
    return DType::Float32;
  }
}

std::vector<Type> full(const ShapeContext &ctx) {
  DType dtype = ctx.dtype("dtype").value_or(numberDType(ctx, "fill_value"));
  return one(contiguousType(ctx.syms(), dtype, symInts(ctx, "size"), deviceArg(ctx)));
}

/// zeros, ones, empty, rand, randn: float32 unless told.
std::vector<Type> filled(const ShapeContext &ctx) {
  DType dtype = ctx.dtype("dtype").value_or(DType::Float32);
  return one(contiguousType(ctx.syms(), dtype, symInts(ctx, "size"), deviceArg(ctx)));
}

/// randint: int64 unless told.
std::vector<Type> randint(const ShapeContext &ctx) {
  DType dtype = ctx.dtype("dtype").value_or(DType::Int64);
  return one(contiguousType(ctx.syms(), dtype, symInts(ctx, "size"), deviceArg(ctx)));
}

/// new_ones, new_zeros, new_full, new_empty: self's dtype and device unless told.
std::vector<Type> filledNew(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  DType dtype = ctx.dtype("dtype").value_or(self.dtype);
  return one(contiguousType(ctx.syms(), dtype, symInts(ctx, "size"), deviceArg(ctx, self.device)));
}

/// zeros_like, ones_like, full_like, empty_like, the random *_like ops,
/// bernoulli and uniform, and fill, which take self's dtype and layout too.
std::vector<Type> filledLike(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  DType dtype = ctx.dtype("dtype").value_or(self.dtype);
  TensorType t = formattedType(ctx.syms(), dtype, self,
                               memoryFormatArg(ctx, MemoryFormat::Preserve));
  t.device = deviceArg(ctx, self.device);
  return one(std::move(t));
}

std::vector<Type> scalarTensor(const ShapeContext &ctx) {
  DType dtype = ctx.dtype("dtype").value_or(DType::Float32);
  return one(contiguousType(ctx.syms(), dtype, {}, deviceArg(ctx)));
}

/// arange: ceil((end - start) / step) numbers, int64 unless a bound is a
/// float. Integer bounds may be symbolic.
std::vector<Type> arange(const ShapeContext &ctx) {
  SymContext &syms = ctx.syms();
  auto isFloat = [&](std::string_view name) {
    return ctx.has(name) && ctx.arg(name)->kind == ArgKind::Float;
  };
  bool floating = isFloat("start") || isFloat("end") || isFloat("step");
  DType dtype = ctx.dtype("dtype").value_or(floating ? DType::Float32 : DType::Int64);
  const SymExpr *count;
  if (floating) {
    double start = ctx.real("start", 0), end = ctx.real("end", 0), step = ctx.real("step", 1);
    if (step == 0)
      shapeFail("the step must not be 0");
    double n = std::ceil((end - start) / step);
    if (!std::isfinite(n) || n > static_cast<double>(std::numeric_limits<int64_t>::max()))
      shapeFail("the range is too long");
    count = syms.constant(static_cast<int64_t>(n));
  } else {
    const SymExpr *start = ctx.has("start") ? symInt(ctx, "start") : syms.constant(0);
    const SymExpr *end = symInt(ctx, "end");
    int64_t step = ctx.integer("step", 1);
    if (step == 0)
      shapeFail("the step must not be 0");
    const SymExpr *span = step > 0 ? syms.sub(end, start) : syms.sub(start, end);
    int64_t by = step > 0 ? step : -step;
    count = syms.floorDiv(syms.add(span, syms.constant(by - 1)), syms.constant(by));
  }
  if (count->isConst() && count->constant() < 0)
    shapeFail("the range does not go in the direction of step");
  return one(contiguousType(syms, dtype, {count}, deviceArg(ctx)));
}

std::vector<Type> rand(const ShapeContext &ctx) {
  const TensorType &seed = ctx.tensor("seed");
  DType dtype = ctx.dtype("dtype").value_or(DType::Float32);
  if (!isFloatingPoint(dtype))
    shapeFail("gc.rand makes floating-point numbers, not " + std::string(dtypeName(dtype)));
  return one(contiguousType(ctx.syms(), dtype, symInts(ctx, "size"), seed.device));
}

/// A copy of `self` with `dtype` on `device`, laid out as memory_format
/// says (preserve by default).
TensorType copied(const ShapeContext &ctx, const TensorType &self, DType dtype, Device device) {
  TensorType t = formattedType(ctx.syms(), dtype, self,
                               memoryFormatArg(ctx, MemoryFormat::Preserve));
  t.device = device;
  return t;
}

std::vector<Type> toCopy(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  return one(copied(ctx, self, ctx.dtype("dtype").value_or(self.dtype),
                    deviceArg(ctx, self.device)));
}

/// Tensor.to: self itself when nothing changes and no copy is asked, else
/// a copy.
TensorType converted(const ShapeContext &ctx, const TensorType &self, DType dtype,
                     Device device) {
  MemoryFormat format = memoryFormatArg(ctx, MemoryFormat::Preserve);
  bool keepsLayout = format == MemoryFormat::Preserve ||
                     (format == MemoryFormat::Contiguous && isContiguous(ctx.syms(), self));
  if (dtype == self.dtype && device == self.device && keepsLayout && !ctx.boolean("copy", false))
    return self;
  return copied(ctx, self, dtype, device);
}

std::vector<Type> to(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  return one(converted(ctx, self, ctx.dtype("dtype").value_or(self.dtype),
                       deviceArg(ctx, self.device)));
}

/// to.other, type_as: other's dtype and device.
std::vector<Type> toOther(const ShapeContext &ctx) {
  const TensorType &other = ctx.tensor("other");
  return one(converted(ctx, ctx.tensor("self"), other.dtype, other.device));
}

std::vector<Type> clone(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  return one(formattedType(ctx.syms(), self.dtype, self,
                           memoryFormatArg(ctx, MemoryFormat::Preserve)));
}

/// contiguous returns self itself when it already is.
std::vector<Type> contiguous(const ShapeContext &ctx) {
  const TensorType &self = ctx.tensor("self");
  MemoryFormat format = memoryFormatArg(ctx, MemoryFormat::Contiguous);
  if (format == MemoryFormat::Contiguous && isContiguous(ctx.syms(), self))
    return one(self);
  return one(formattedType(ctx.syms(), self.dtype, self, format));
}

/// alias, detach: the same tensor seen again.
std::vector<Type> alias(const ShapeContext &ctx) { return one(ctx.tensor("self")); }

std::vector<Type> noResults(const ShapeContext &) { return {}; }

//===----------------------------------------------------------------------===//
// Symbolic scalars
//===----------------------------------------------------------------------===//

/// sym_size and its kin, and Python's operators on them, compute symbolic
/// ints (floats when a float takes part; true division always).
std::vector<Type> symbolicNumber(const ShapeContext &ctx) {
  bool floating = ctx.op() == ops::_operator_truediv;
  for (std::string_view name : {"a", "b"})
    if (const Arg *a = ctx.arg(name))
      floating |= a->kind == ArgKind::Float || a->kind == ArgKind::SymFloat;
  return {Type::makeScalar(floating ? Type::Kind::SymFloat : Type::Kind::SymInt)};
}

std::vector<Type> symbolicBool(const ShapeContext &) {
  return {Type::makeScalar(Type::Kind::SymBool)};
}

constexpr ShapeEntry kEntries[] = {
    // Unary ops that keep the dtype.
    {ops::aten_abs_default, unary<Result::Promoted>},
    {ops::aten_bitwise_not_default, unary<Result::Promoted>},
    {ops::aten_ceil_default, unary<Result::Promoted>},
    {ops::aten_celu_default, unary<Result::Promoted>},
    {ops::aten_elu_default, unary<Result::Promoted>},
    {ops::aten_floor_default, unary<Result::Promoted>},
    {ops::aten_frac_default, unary<Result::Promoted>},
    {ops::aten_gelu_default, unary<Result::Promoted>},
    {ops::aten_hardshrink_default, unary<Result::Promoted>},
    {ops::aten_hardsigmoid_default, unary<Result::Promoted>},
    {ops::aten_hardswish_default, unary<Result::Promoted>},
    {ops::aten_hardtanh_default, unary<Result::Promoted>},
    {ops::aten_leaky_relu_default, unary<Result::Promoted>},
    {ops::aten_mish_default, unary<Result::Promoted>},
    {ops::aten_nan_to_num_default, unary<Result::Promoted>},
    {ops::aten_neg_default, unary<Result::Promoted>},
    {ops::aten_relu_default, unary<Result::Promoted>},
    {ops::aten_relu6_default, unary<Result::Promoted>},
    {ops::aten_round_default, unary<Result::Promoted>},
    {ops::aten_round_decimals, unary<Result::Promoted>},
    {ops::aten_selu_default, unary<Result::Promoted>},
    {ops::aten_sgn_default, unary<Result::Promoted>},
    {ops::aten_sign_default, unary<Result::Promoted>},
    {ops::aten_silu_default, unary<Result::Promoted>},
    {ops::aten_softplus_default, unary<Result::Promoted>},
    {ops::aten_softshrink_default, unary<Result::Promoted>},
    {ops::aten_threshold_default, unary<Result::Promoted>},
    {ops::aten_trunc_default, unary<Result::Promoted>},
    {ops::aten_square_default, square},
    // Unary ops that compute in floating point.
#define GC_OP(ID, NAME, SET, TRAITS, SUMMARY, SCHEMA)
#define GC_UNARY_OP(ID, NAME, SCALAR_OP, SUMMARY, FORMULA, FACTOR) {ops::ID, unary<Result::Floating>},
#include "gc/IR/OpDefs.def"
#undef GC_UNARY_OP
#undef GC_OP
    {ops::aten_log10_default, unary<Result::Floating>},
    {ops::aten_log2_default, unary<Result::Floating>},
    {ops::aten_acosh_default, unary<Result::Floating>},
    {ops::aten_atanh_default, unary<Result::Floating>},
    {ops::aten_deg2rad_default, unary<Result::Floating>},
    {ops::aten_exp2_default, unary<Result::Floating>},
    {ops::aten_log_sigmoid_default, unary<Result::Floating>},
    {ops::aten_logit_default, unary<Result::Floating>},
    {ops::aten_rad2deg_default, unary<Result::Floating>},
    {ops::aten_sinc_default, unary<Result::Floating>},
    {ops::aten_special_airy_ai_default, unaryOfX},
    {ops::aten_special_scaled_modified_bessel_k0_default, unaryOfX},
    {ops::aten_special_scaled_modified_bessel_k1_default, unaryOfX},
    // Unary predicates.
    {ops::aten_isinf_default, unary<Result::Bool>},
    {ops::aten_isfinite_default, unary<Result::Bool>},
    {ops::aten_isneginf_default, unary<Result::Bool>},
    {ops::aten_isposinf_default, unary<Result::Bool>},
    {ops::aten_isnan_default, unary<Result::Bool>},
    {ops::aten_logical_not_default, unary<Result::Bool>},
    {ops::aten_signbit_default, unary<Result::Bool>},
    // Binary arithmetic.
    {ops::aten___and___Tensor, binary<Result::Promoted>},
    {ops::aten___or___Tensor, binary<Result::Promoted>},
    {ops::aten_add_Scalar, binary<Result::Promoted>},
    {ops::aten_add_Tensor, binary<Result::Promoted>},
    {ops::aten_addcdiv_default, ternary},
    {ops::aten_addcmul_default, ternary},
    {ops::aten_atan2_default, binary<Result::Floating>},
    {ops::aten_bitwise_and_Scalar, binary<Result::Promoted>},
    {ops::aten_bitwise_and_Tensor, binary<Result::Promoted>},
    {ops::aten_bitwise_or_Scalar, binary<Result::Promoted>},
    {ops::aten_bitwise_or_Tensor, binary<Result::Promoted>},
    {ops::aten_bitwise_xor_Tensor, binary<Result::Promoted>},
    {ops::aten_copysign_Tensor, binary<Result::Floating>},
    {ops::aten_div_Scalar, binary<Result::Floating>},
    {ops::aten_div_Scalar_mode, divMode},
    {ops::aten_div_Tensor, binary<Result::Floating>},
    {ops::aten_div_Tensor_mode, divMode},
    {ops::aten_divide_Tensor, binary<Result::Floating>},
    {ops::aten_floor_divide_default, binary<Result::Promoted>},
    {ops::aten_fmax_default, binary<Result::Promoted>},
    {ops::aten_fmin_default, binary<Result::Promoted>},
    {ops::aten_fmod_Scalar, binary<Result::Promoted>},
    {ops::aten_fmod_Tensor, binary<Result::Promoted>},
    {ops::aten_gcd_default, binary<Result::Promoted>},
    {ops::aten_heaviside_default, heaviside},
    {ops::aten_igamma_default, binary<Result::Floating>},
    {ops::aten_igammac_default, binary<Result::Floating>},
    {ops::aten_special_chebyshev_polynomial_t_default, polynomial},
    {ops::aten_special_chebyshev_polynomial_u_default, polynomial},
    {ops::aten_special_chebyshev_polynomial_v_default, polynomial},
    {ops::aten_special_chebyshev_polynomial_w_default, polynomial},
    {ops::aten_special_hermite_polynomial_h_default, polynomial},
    {ops::aten_special_hermite_polynomial_he_default, polynomial},
    {ops::aten_special_laguerre_polynomial_l_default, polynomial},
    {ops::aten_special_legendre_polynomial_p_default, polynomial},
    {ops::aten_special_zeta_default, binary<Result::Floating>},
    {ops::aten_hypot_default, binary<Result::Promoted>},
    {ops::aten_logaddexp_default, binary<Result::Floating>},
    {ops::aten_max_other, binary<Result::Promoted>},
    {ops::aten_maximum_default, binary<Result::Promoted>},
    {ops::aten_min_other, binary<Result::Promoted>},
    {ops::aten_minimum_default, binary<Result::Promoted>},
    {ops::aten_mul_Scalar, binary<Result::Promoted>},
    {ops::aten_mul_Tensor, binary<Result::Promoted>},
    {ops::aten_multiply_Scalar, binary<Result::Promoted>},
    {ops::aten_multiply_Tensor, binary<Result::Promoted>},
    {ops::aten_pow_Scalar, power},
    {ops::aten_pow_Tensor_Scalar, power},
    {ops::aten_pow_Tensor_Tensor, power},
    {ops::aten_remainder_Scalar, binary<Result::Promoted>},
    {ops::aten_remainder_Tensor, binary<Result::Promoted>},
    {ops::aten_rsub_Scalar, binary<Result::Promoted>},
    {ops::aten_rsub_Tensor, binary<Result::Promoted>},
    {ops::aten_sub_Scalar, binary<Result::Promoted>},
    {ops::aten_sub_Tensor, binary<Result::Promoted>},
    {ops::aten_true_divide_Tensor, binary<Result::Floating>},
    {ops::aten_xlogy_Tensor, binary<Result::Floating>},
    // Comparisons and logical ops.
    {ops::aten_eq_Scalar, binary<Result::Bool>},
    {ops::aten_eq_Tensor, binary<Result::Bool>},
    {ops::aten_ge_Scalar, binary<Result::Bool>},
    {ops::aten_ge_Tensor, binary<Result::Bool>},
    {ops::aten_gt_Scalar, binary<Result::Bool>},
    {ops::aten_gt_Tensor, binary<Result::Bool>},
    {ops::aten_le_Scalar, binary<Result::Bool>},
    {ops::aten_le_Tensor, binary<Result::Bool>},
    {ops::aten_logical_and_default, binary<Result::Bool>},
    {ops::aten_logical_or_default, binary<Result::Bool>},
    {ops::aten_logical_xor_default, binary<Result::Bool>},
    {ops::aten_lt_Scalar, binary<Result::Bool>},
    {ops::aten_lt_Tensor, binary<Result::Bool>},
    {ops::aten_ne_Scalar, binary<Result::Bool>},
    {ops::aten_ne_Tensor, binary<Result::Bool>},
    // Selection.
    {ops::aten_clamp_Tensor, clamp},
    {ops::aten_clamp_default, clamp},
    {ops::aten_clamp_max_Tensor, clampMax},
    {ops::aten_clamp_max_default, clampMax},
    {ops::aten_clamp_min_Tensor, clampMin},
    {ops::aten_clamp_min_default, clampMin},
    {ops::aten_lerp_Scalar, lerp},
    {ops::aten_lerp_Tensor, lerp},
    {ops::aten_masked_fill_Scalar, maskedFill},
    {ops::aten_masked_fill_Tensor, maskedFill},
    {ops::aten_where_Scalar, where},
    {ops::aten_where_ScalarOther, where},
    {ops::aten_where_ScalarSelf, where},
    {ops::aten_where_self, where},
    // Random numbers.
    {ops::aten_bernoulli_default, filledLike},
    {ops::aten_fill_Scalar, filledLike},
    {ops::aten_fill_Tensor, filledLike},
    {ops::aten_bernoulli_p, filledLike},
    {ops::aten_dropout_default, dropout},
    {ops::aten_native_dropout_default, nativeDropout},
    {ops::aten_uniform_default, filledLike},
    // Factories.
    {ops::aten_arange_default, arange},
    {ops::aten_arange_start, arange},
    {ops::aten_arange_start_step, arange},
    {ops::aten_empty_memory_format, filled},
    {ops::aten_empty_like_default, filledLike},
    {ops::aten_full_default, full},
    {ops::aten_full_like_default, filledLike},
    {ops::aten_new_empty_default, filledNew},
    {ops::aten_new_full_default, filledNew},
    {ops::aten_new_ones_default, filledNew},
    {ops::aten_new_zeros_default, filledNew},
    {ops::aten_ones_default, filled},
    {ops::aten_ones_like_default, filledLike},
    {ops::aten_rand_default, filled},
    {ops::aten_rand_like_default, filledLike},
    {ops::aten_randint_default, randint},
    {ops::aten_randint_like_default, filledLike},
    {ops::aten_randint_like_low_dtype, filledLike},
    {ops::aten_randint_low, randint},
    {ops::aten_randn_default, filled},
    {ops::aten_randn_like_default, filledLike},
    {ops::aten_scalar_tensor_default, scalarTensor},
    {ops::aten_zero_default, filledLike},
    {ops::aten_zeros_default, filled},
    {ops::aten_zeros_like_default, filledLike},
    {ops::gc_rand_default, rand},
    // Symbolic scalars, and the checks torch.export records on them.
    {ops::_operator_add, symbolicNumber},
    {ops::_operator_eq, symbolicBool},
    {ops::_operator_floordiv, symbolicNumber},
    {ops::_operator_ge, symbolicBool},
    {ops::_operator_gt, symbolicBool},
    {ops::_operator_le, symbolicBool},
    {ops::_operator_lt, symbolicBool},
    {ops::_operator_mod, symbolicNumber},
    {ops::_operator_mul, symbolicNumber},
    {ops::_operator_ne, symbolicBool},
    {ops::_operator_neg, symbolicNumber},
    {ops::_operator_sub, symbolicNumber},
    {ops::_operator_truediv, symbolicNumber},
    {ops::aten__assert_scalar_default, noResults},
    {ops::aten_sym_constrain_range_default, noResults},
    {ops::aten_sym_constrain_range_for_size_default, noResults},
    {ops::aten_sym_numel_default, symbolicNumber},
    {ops::aten_sym_size_int, symbolicNumber},
    {ops::aten_sym_storage_offset_default, symbolicNumber},
    {ops::aten_sym_stride_int, symbolicNumber},
    // Copies and aliases.
    {ops::aten__assert_tensor_metadata_default, noResults},
    {ops::aten__to_copy_default, toCopy},
    {ops::aten_alias_default, alias},
    {ops::aten_clone_default, clone},
    {ops::aten_contiguous_default, contiguous},
    {ops::aten_detach_default, alias},
    {ops::aten_positive_default, alias},
    {ops::aten_lift_fresh_copy_default, clone},
    {ops::aten_to_device, to},
    {ops::aten_to_dtype, to},
    {ops::aten_to_dtype_layout, to},
    {ops::aten_to_other, toOther},
    {ops::aten_type_as_default, toOther},
};

} // namespace

void registerPointwiseShapes(ShapeRegistry &r) { r.add(kEntries); }

} // namespace gc
