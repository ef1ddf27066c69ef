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

constexpr std::array kScalarOps = {
    ScalarOpInfo{ScalarOp::Neg, "neg", 1},
    ScalarOpInfo{ScalarOp::Abs, "abs", 1},
    ScalarOpInfo{ScalarOp::Exp, "exp", 1},
    ScalarOpInfo{ScalarOp::Expm1, "expm1", 1},
    ScalarOpInfo{ScalarOp::Log, "log", 1},
    ScalarOpInfo{ScalarOp::Log1p, "log1p", 1},
    ScalarOpInfo{ScalarOp::Sqrt, "sqrt", 1},
    ScalarOpInfo{ScalarOp::Rsqrt, "rsqrt", 1},
    ScalarOpInfo{ScalarOp::Sin, "sin", 1},
    ScalarOpInfo{ScalarOp::Cos, "cos", 1},
    ScalarOpInfo{ScalarOp::Tan, "tan", 1},
    ScalarOpInfo{ScalarOp::Asin, "asin", 1},
    ScalarOpInfo{ScalarOp::Acos, "acos", 1},
    ScalarOpInfo{ScalarOp::Atan, "atan", 1},
    ScalarOpInfo{ScalarOp::Sinh, "sinh", 1},
    ScalarOpInfo{ScalarOp::Cosh, "cosh", 1},
    ScalarOpInfo{ScalarOp::Tanh, "tanh", 1},
    ScalarOpInfo{ScalarOp::Erf, "erf", 1},
    ScalarOpInfo{ScalarOp::Sigmoid, "sigmoid", 1},
    ScalarOpInfo{ScalarOp::Reciprocal, "reciprocal", 1},
    ScalarOpInfo{ScalarOp::Floor, "floor", 1},
    ScalarOpInfo{ScalarOp::Ceil, "ceil", 1},
    ScalarOpInfo{ScalarOp::Round, "round", 1},
    ScalarOpInfo{ScalarOp::Trunc, "trunc", 1},
    ScalarOpInfo{ScalarOp::Sign, "sign", 1},
    ScalarOpInfo{ScalarOp::IsNan, "isnan", 1},
    ScalarOpInfo{ScalarOp::LogicalNot, "logical_not", 1},
    ScalarOpInfo{ScalarOp::BitwiseNot, "bitwise_not", 1},
    ScalarOpInfo{ScalarOp::Add, "add", 2},
    ScalarOpInfo{ScalarOp::Sub, "sub", 2},
    ScalarOpInfo{ScalarOp::Mul, "mul", 2},
    ScalarOpInfo{ScalarOp::Div, "div", 2},
    ScalarOpInfo{ScalarOp::FloorDiv, "floordiv", 2},
    ScalarOpInfo{ScalarOp::TruncDiv, "truncdiv", 2},
    ScalarOpInfo{ScalarOp::Remainder, "remainder", 2},
    ScalarOpInfo{ScalarOp::Fmod, "fmod", 2},
    ScalarOpInfo{ScalarOp::Pow, "pow", 2},
    ScalarOpInfo{ScalarOp::Maximum, "maximum", 2},
    ScalarOpInfo{ScalarOp::Minimum, "minimum", 2},
    ScalarOpInfo{ScalarOp::Eq, "eq", 2},
    ScalarOpInfo{ScalarOp::Ne, "ne", 2},
    ScalarOpInfo{ScalarOp::Lt, "lt", 2},
    ScalarOpInfo{ScalarOp::Le, "le", 2},
    ScalarOpInfo{ScalarOp::Gt, "gt", 2},
    ScalarOpInfo{ScalarOp::Ge, "ge", 2},
    ScalarOpInfo{ScalarOp::LogicalAnd, "logical_and", 2},
    ScalarOpInfo{ScalarOp::LogicalOr, "logical_or", 2},
    ScalarOpInfo{ScalarOp::BitwiseAnd, "bitwise_and", 2},
    ScalarOpInfo{ScalarOp::BitwiseOr, "bitwise_or", 2},
    ScalarOpInfo{ScalarOp::BitwiseXor, "bitwise_xor", 2},
    ScalarOpInfo{ScalarOp::Atan2, "atan2", 2},
    ScalarOpInfo{ScalarOp::Where, "where", 3},
    ScalarOpInfo{ScalarOp::Erfc, "erfc", 1},
};
static_assert(kScalarOps.size() == static_cast<size_t>(ScalarOp::Erfc) + 1);

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

} // namespace gc
