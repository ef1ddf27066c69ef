//===- GraphBuilder.cpp - Building and rewriting graphs -------------------===//
#include "gc/Ops/GraphBuilder.h"

#include "gc/IR/Describe.h"
#include "gc/IR/Names.h"
#include "gc/IR/OpSchema.h"
#include "gc/Ops/ShapeInference.h"

namespace gc {

void rewriteFail(const std::string &message) { throw RewriteError(message); }

ArgValue::ArgValue(std::vector<Value *> vs) {
  arg.kind = ArgKind::Tensors;
  for (Value *v : vs)
    if (!v)
      arg.kind = ArgKind::OptionalTensors;
  arg.values = std::move(vs);
}

GraphBuilder::GraphBuilder(Module &m, Graph &g) : module_(m), graph_(g) {
  for (const Value *v : g.inputs())
    names_.insert(v->name());
  for (const auto &n : g.nodes())
    for (const Value *v : n->results())
      names_.insert(v->name());
}

std::string GraphBuilder::uniqueName(std::string_view hint) {
  std::string base(hint);
  if (!isValueName(base))
    base = "v";
  if (names_.insert(base).second)
    return base;
  for (int i = 1;; ++i) {
    std::string name = base + "_" + std::to_string(i);
    if (names_.insert(name).second)
      return name;
  }
}

Node *GraphBuilder::createWithTypes(OpId op, std::vector<NamedArg> args,
                                    std::vector<std::pair<std::string, Type>> results,
                                    ResultForm form) {
  for (auto &r : results)
    names_.insert(r.first);
  Node *n = graph_.addNode(std::move(op), std::move(args), std::move(results), form);
  n->setLoc(loc_);
  return n;
}

std::vector<Value *> GraphBuilder::create(OpId op,
                                          std::vector<std::pair<std::string, ArgValue>> args,
                                          std::string_view nameHint) {
  std::vector<NamedArg> named;
  const OpSchema &schema = opSchema(op);
  // Schema order, so that equal calls print (and CSE) the same.
  for (const ArgDef &def : schema.args)
    for (auto &[name, value] : args)
      if (name == def.name)
        named.push_back({name, def.keywordOnly, value.arg});
  if (named.size() != args.size())
    for (auto &[name, value] : args)
      if (!schema.arg(name))
        rewriteFail(opString(op) + " has no argument '" + name + "'");
  Expected<std::vector<Type>> types = inferResultTypes(op, named, syms());
  if (!types)
    rewriteFail(types.error().message());
  std::string base(nameHint);
  if (base.empty()) {
    // aten.add.Tensor -> "add"
    std::string_view name = opName(op);
    size_t first = name.find('.'), second = name.find('.', first + 1);
    base = std::string(name.substr(first + 1, second - first - 1));
  }
  std::vector<std::pair<std::string, Type>> results;
  for (Type &t : *types)
    results.emplace_back(uniqueName(base), std::move(t));
  ResultForm form = ResultForm::Single;
  if (schema.returns.size() > 1)
    form = ResultForm::Tuple;
  else if (schema.returns.size() == 1 && schema.returns[0] == "Tensor[]")
    form = ResultForm::List;
  Node *n = graph_.addNode(op, std::move(named), std::move(results), form);
  n->setLoc(loc_);
  return n->results();
}

Value *GraphBuilder::create1(OpId op,
                             std::vector<std::pair<std::string, ArgValue>> args,
                             std::string_view nameHint) {
  std::vector<Value *> r = create(op, std::move(args), nameHint);
  if (r.size() != 1)
    rewriteFail(opString(op) + " has " + std::to_string(r.size()) + " results, not one");
  return r[0];
}

// ---- RewriteContext ----

Value *RewriteContext::map(const Value *old) const {
  auto it = map_.find(old);
  if (it == map_.end() || !it->second)
    rewriteFail("%" + old->name() + " has no value in the new graph");
  return it->second;
}

std::vector<NamedArg> RewriteContext::mappedArgs() const {
  std::vector<NamedArg> args = old_.args();
  for (NamedArg &a : args)
    for (Value *&v : a.value.values)
      if (v)
        v = map(v);
  return args;
}

Value *RewriteContext::value(std::string_view name) const {
  const Arg &a = get(name).value;
  if (a.kind != ArgKind::Tensor)
    rewriteFail("argument '" + std::string(name) + "' is not a tensor");
  return map(a.values[0]);
}

std::optional<Value *> RewriteContext::optValue(std::string_view name) const {
  if (!has(name))
    return std::nullopt;
  return value(name);
}

std::vector<Value *> RewriteContext::values(std::string_view name) const {
  const Arg &a = get(name).value;
  if (a.kind != ArgKind::Tensors && a.kind != ArgKind::OptionalTensors)
    rewriteFail("argument '" + std::string(name) + "' is not a list of tensors");
  std::vector<Value *> out;
  for (const Value *v : a.values)
    out.push_back(v ? map(v) : nullptr);
  return out;
}

ArgValue RewriteContext::passThrough(std::string_view name) const {
  Arg a = get(name).value;
  for (Value *&v : a.values)
    if (v)
      v = map(v);
  return ArgValue(std::move(a));
}

const TensorType &RewriteContext::type(std::string_view name) const {
  return value(name)->type().tensor;
}

const TensorType &RewriteContext::resultType(size_t i) const {
  if (i >= old_.results().size())
    rewriteFail("the node has no result " + std::to_string(i));
  return old_.results()[i]->type().tensor;
}

// ---- rewriteGraph ----

namespace {
/// A kept node's inputs may now come from rewritten producers with other
/// layouts (a decomposed attention is contiguous where torch's result was
/// not), so the strides recorded for its results may no longer hold. Where
/// the shape function agrees on dtype and sizes, take its strides and
/// offset; otherwise keep what was recorded.
void adoptInferredLayouts(OpId op, const std::vector<NamedArg> &args,
                          SymContext &syms, std::vector<std::pair<std::string, Type>> &results) {
  Expected<std::vector<Type>> inferred = inferResultTypes(op, args, syms);
  if (!inferred || inferred->size() != results.size())
    return;
  for (size_t i = 0; i < results.size(); ++i) {
    TensorType &old = results[i].second.tensor;
    const Type &now = (*inferred)[i];
    if (!results[i].second.isTensor() || !now.isTensor() || now.tensor.dtype != old.dtype ||
        now.tensor.sizes != old.sizes)
      continue;
    old.strides = now.tensor.strides;
    old.storageOffset = now.tensor.storageOffset;
  }
}
} // namespace

Error rewriteGraph(Module &m, Graph &g, const NodeRewrite &rewrite, const GraphFinish &finish) {
  auto ng = std::make_unique<Graph>(g.name());
  GraphBuilder b(m, *ng);
  // Old names stay reserved, so new values never take a name that a kept
  // node still uses.
  for (const Value *v : g.inputs())
    b.reserveName(v->name());
  for (const auto &n : g.nodes())
    for (const Value *v : n->results())
      b.reserveName(v->name());

  ValueMap map;
  for (size_t i = 0; i < g.inputs().size(); ++i)
    map[g.inputs()[i]] = ng->addInput(g.inputs()[i]->name(), g.inputs()[i]->type(),
                                      g.inputSpecs()[i]);
  for (const auto &n : g.nodes()) {
    // Whatever replaces the node comes from the same place in the model.
    b.setLoc(n->loc());
    try {
      RewriteContext ctx(*n, b, map);
      std::optional<std::vector<Value *>> replaced = rewrite(ctx);
      if (replaced) {
        if (replaced->size() != n->results().size())
          return makeError() << "graph @" << g.name() << ", " << describeNode(*n) << ": the rewrite gave " << replaced->size()
                             << " values for " << n->results().size() << " results";
        for (size_t i = 0; i < replaced->size(); ++i)
          map[n->results()[i]] = (*replaced)[i];
        continue;
      }
      std::vector<NamedArg> args = ctx.mappedArgs();
      std::vector<std::pair<std::string, Type>> results;
      for (const Value *r : n->results())
        results.emplace_back(r->name(), r->type());
      adoptInferredLayouts(n->op(), args, m.syms(), results);
      Node *copy = b.createWithTypes(n->op(), std::move(args), std::move(results), n->resultForm());
      for (size_t i = 0; i < copy->results().size(); ++i)
        map[n->results()[i]] = copy->results()[i];
    } catch (const std::exception &e) {
      return makeError() << "graph @" << g.name() << ", " << describeNode(*n) << ": " << e.what();
    }
  }
  b.setLoc(nullptr);
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    auto it = map.find(g.outputs()[i]);
    if (it == map.end() || !it->second)
      return makeError() << "graph @" << g.name() << ": output %" << g.outputs()[i]->name()
                         << " was removed";
    ng->addOutput(it->second, g.outputSpecs()[i]);
  }
  try {
    if (finish)
      finish(b, map);
  } catch (const std::exception &e) {
    return makeError() << "graph @" << g.name() << ": " << e.what();
  }
  m.replaceGraph(g, std::move(ng));
  return Error::success();
}

} // namespace gc
