//===- ShapeInference.cpp - Result types of ops ---------------------------===//
#include "gc/Ops/ShapeInference.h"
#include "gc/Ops/PluginOps.h"

#include "gc/IR/ArgReader.h"
#include "gc/IR/OpVariants.h"
#include "gc/IR/Printer.h"
#include "gc/IR/ShapeMath.h"

namespace gc {

void shapeFail(const std::string &message) { throw ShapeError(message); }

const TensorType &ShapeContext::tensor(std::string_view name) const {
  const Arg &a = get(name).value;
  if (a.kind != ArgKind::Tensor || !a.values[0]->type().isTensor())
    shapeFail("argument '" + std::string(name) + "' is not a tensor");
  return a.values[0]->type().tensor;
}

std::vector<const TensorType *> ShapeContext::optTensors(std::string_view name) const {
  const Arg &a = get(name).value;
  if (a.kind != ArgKind::Tensors && a.kind != ArgKind::OptionalTensors)
    shapeFail("argument '" + std::string(name) + "' is not a list of tensors");
  std::vector<const TensorType *> out;
  for (const Value *v : a.values)
    out.push_back(v ? &v->type().tensor : nullptr);
  return out;
}

std::vector<const TensorType *> ShapeContext::tensors(std::string_view name) const {
  std::vector<const TensorType *> out = optTensors(name);
  for (const TensorType *t : out)
    if (!t)
      shapeFail("argument '" + std::string(name) + "' holds None");
  return out;
}

std::vector<const SymExpr *> ShapeContext::sizes(std::string_view name) const {
  std::vector<const SymExpr *> out;
  for (int64_t i : ints(name))
    out.push_back(syms_.constant(i));
  return out;
}

PromotionOperand ShapeContext::operand(std::string_view name) const {
  const Arg &a = get(name).value;
  using R = PromotionOperand::Rank;
  switch (a.kind) {
  case ArgKind::Tensor: {
    const TensorType &t = tensor(name);
    return {t.dtype, t.rank() == 0 ? R::ZeroDim : R::Tensor};
  }
  case ArgKind::Bool:
    return {DType::Bool, R::Scalar};
  case ArgKind::Int:
  case ArgKind::SymInt:
    return {DType::Int64, R::Scalar};
  case ArgKind::Float:
  case ArgKind::SymFloat:
    return {DType::Float32, R::Scalar};
  default:
    shapeFail("argument '" + std::string(name) + "' is neither a tensor nor a number");
  }
}

const Graph &ShapeContext::callee(std::string_view name) const {
  const Arg &a = get(name).value;
  if (a.kind != ArgKind::Graph)
    shapeFail("argument '" + std::string(name) + "' is not a graph");
  if (!module_)
    shapeFail("argument '" + std::string(name) + "' names graph @" + a.strings.at(0) +
              ", but no module was given to find it in");
  const Graph *g = module_->graph(a.strings.at(0));
  if (!g)
    shapeFail("argument '" + std::string(name) + "' names graph @" + a.strings.at(0) +
              ", which the module does not have");
  return *g;
}

const ShapeRegistry &shapeFunctions() {
  static const ShapeRegistry registry = [] {
    ShapeRegistry r;
    registerPointwiseShapes(r);
    registerReductionShapes(r);
    registerViewShapes(r);
    registerIndexingShapes(r);
    registerNNShapes(r);
    registerProductShapes(r);
    registerRecurrentShapes(r);
    registerControlFlowShapes(r);
    registerLinalgShapes(r);
    return r;
  }();
  return registry;
}

namespace {

/// A variant (OpVariants.h) returns the tensors it writes, unchanged; its
/// functional op's results must have their sizes.
std::vector<Type> variantTypes(const OpVariant &v, const std::vector<NamedArg> &args,
                               SymContext &syms, const Module *module) {
  Expected<std::vector<Type>> results =
      inferResultTypes(v.functional, functionalArgs(v, args), syms, module);
  if (!results)
    shapeFail(results.error().message());
  ShapeContext ctx(v.id, args, syms, module);
  std::vector<Type> out;
  for (size_t i = 0; i < v.written.size(); ++i) {
    const TensorType &target = ctx.tensor(v.written[i]);
    const TensorType &result = results->at(i).tensor;
    if (result.sizes != target.sizes)
      shapeFail(writeBackMismatch(v, i, printType(Type::makeTensor(target)),
                                  printType(results->at(i))));
    out.push_back(Type::makeTensor(target));
  }
  return out;
}

} // namespace

Expected<std::vector<Type>> inferResultTypes(OpId op,
                                             const std::vector<NamedArg> &args,
                                             SymContext &syms, const Module *module) {
  if (const OpVariant *v = findVariant(op)) {
    try {
      return variantTypes(*v, args, syms, module);
    } catch (const std::exception &e) {
      return makeError() << op << ": " << e.what();
    }
  }
  if (const PluginOp *plugin = pluginOpOf(op))
    return pluginResultTypes(*plugin, args, syms);
  const ShapeEntry *entry = shapeFunctions().find(op);
  if (!entry)
    return makeError() << "no shape function for " << op;
  try {
    return entry->fn(ShapeContext(op, args, syms, module));
  } catch (const std::exception &e) {
    return makeError() << op << ": " << e.what();
  }
}

TensorType contiguousType(SymContext &syms, DType dtype, std::vector<const SymExpr *> sizes,
                          Device device) {
  TensorType t;
  t.dtype = dtype;
  t.device = device;
  t.strides = contiguousStrides(syms, sizes);
  t.sizes = std::move(sizes);
  t.storageOffset = syms.constant(0);
  return t;
}

std::vector<const SymExpr *> broadcastSizes(SymContext &syms,
                                            const std::vector<const SymExpr *> &a,
                                            const std::vector<const SymExpr *> &b) {
  size_t n = std::max(a.size(), b.size());
  std::vector<const SymExpr *> out(n);
  const SymExpr *one = syms.constant(1);
  for (size_t i = 0; i < n; ++i) {
    const SymExpr *x = i < n - a.size() ? one : a[i - (n - a.size())];
    const SymExpr *y = i < n - b.size() ? one : b[i - (n - b.size())];
    if (x == y || y == one)
      out[i] = x;
    else if (x == one)
      out[i] = y;
    else if (x->isConst() && y->isConst())
      shapeFail("sizes " + x->str() + " and " + y->str() + " do not broadcast");
    else
      out[i] = x->isConst() ? x : y;
  }
  return out;
}

int64_t wrapDimension(int64_t dim, int64_t rank) {
  try {
    return normalizeDim(dim, rank);
  } catch (const ArgumentError &e) {
    shapeFail(e.what());
  }
}

} // namespace gc
