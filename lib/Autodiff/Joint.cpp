//===- Joint.cpp - Building the joint forward and backward graph ----------===//
//
// The forward nodes are copied first. Gradients then flow from the tangents
// back through the nodes in reverse order, each node's rule turning the
// gradients of its results into gradients of its operands. Only values on a
// path from an input that gets a gradient carry one, so rules run only
// where their result is needed, and ops without a rule fail only there.
//
//===----------------------------------------------------------------------===//
#include "gc/Autodiff/Autodiff.h"

#include "gc/IR/Describe.h"
#include "gc/Autodiff/Derivatives.h"
#include "gc/IR/OpSchema.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace gc {

namespace {

bool isFloatingTensor(const Value *v) {
  return v->type().isTensor() && isFloatingPoint(v->type().tensor.dtype);
}

/// The gradients that flow into each value, summed as they arrive.
class GradientMap {
public:
  explicit GradientMap(GraphBuilder &b) : b_(b) {}

  /// Adds `g` to the gradient of `v`, first summing it over the dims that
  /// broadcasting added and casting it to v's dtype.
  void accumulate(Value *v, Value *g) {
    g = fit(v, g);
    auto [it, fresh] = grads_.emplace(v, g);
    if (!fresh)
      it->second = b_.create1(ops::aten_add_Tensor, {{"self", it->second}, {"other", g}});
  }

  Value *get(const Value *v) const {
    auto it = grads_.find(v);
    return it == grads_.end() ? nullptr : it->second;
  }

private:
  Value *fit(Value *v, Value *g) {
    const TensorType &want = v->type().tensor, &got = g->type().tensor;
    size_t lead = got.rank() - std::min(got.rank(), want.rank());
    std::vector<int64_t> dropped, kept;
    for (size_t d = 0; d < got.rank(); ++d) {
      if (d < lead)
        dropped.push_back(static_cast<int64_t>(d));
      else if (want.sizes[d - lead] != got.sizes[d] && want.sizes[d - lead]->isConst() &&
               want.sizes[d - lead]->constant() == 1)
        kept.push_back(static_cast<int64_t>(d));
    }
    if (!kept.empty())
      g = b_.create1(ops::aten_sum_dim_IntList, {{"self", g}, {"dim", kept}, {"keepdim", true}});
    if (!dropped.empty())
      g = b_.create1(ops::aten_sum_dim_IntList, {{"self", g}, {"dim", dropped}, {"keepdim", false}});
    if (g->type().tensor.sizes != want.sizes)
      rewriteFail("a gradient for %" + v->name() + " does not match its sizes");
    if (g->type().tensor.dtype != want.dtype)
      g = b_.create1(ops::aten__to_copy_default, {{"self", g}, {"dtype", want.dtype}});
    return g;
  }

  GraphBuilder &b_;
  std::unordered_map<const Value *, Value *> grads_;
};

/// A tensor operand of a node: where it sits among the arguments.
struct Operand {
  const std::string *arg;
  size_t index;
  const Value *value;
};

std::vector<Operand> tensorOperands(const Node &n) {
  std::vector<Operand> out;
  for (const NamedArg &a : n.args()) {
    if (a.value.kind != ArgKind::Tensor && a.value.kind != ArgKind::Tensors &&
        a.value.kind != ArgKind::OptionalTensors)
      continue;
    for (size_t i = 0; i < a.value.values.size(); ++i)
      if (a.value.values[i])
        out.push_back({&a.name, i, a.value.values[i]});
  }
  return out;
}

bool wantsGradient(const InputSpec &spec, const Value *v, const JointOptions &o) {
  if (!isFloatingTensor(v))
    return false;
  if (spec.kind == InputKind::Parameter)
    return v->type().tensor.requiresGrad;
  return spec.kind == InputKind::UserInput && o.gradUserInputs;
}

class JointBuilder {
public:
  JointBuilder(Module &m, const Graph &forward, const JointOptions &o)
      : m_(m), forward_(forward), o_(o), joint_(std::make_unique<Graph>("joint")), b_(m, *joint_),
        grads_(b_) {}

  Expected<std::unique_ptr<Graph>> build() {
    copyForward();
    markDifferentiable();
    addTangents();
    // Each backward node comes from the place of the forward node whose
    // derivative it computes.
    for (auto it = forward_.nodes().rbegin(); it != forward_.nodes().rend(); ++it) {
      b_.setLoc((*it)->loc());
      GC_RETURN_IF_ERROR(backward(**it));
    }
    b_.setLoc(nullptr);
    for (size_t i = 0; i < forward_.outputs().size(); ++i)
      joint_->addOutput(map_.at(forward_.outputs()[i]), forward_.outputSpecs()[i]);
    GC_RETURN_IF_ERROR(addGradientOutputs());
    return std::move(joint_);
  }

private:
  void copyForward() {
    for (size_t i = 0; i < forward_.inputs().size(); ++i) {
      const Value *in = forward_.inputs()[i];
      b_.reserveName(in->name());
      map_[in] = joint_->addInput(in->name(), in->type(), forward_.inputSpecs()[i]);
    }
    for (const auto &n : forward_.nodes()) {
      RewriteContext ctx(*n, b_, map_);
      std::vector<std::pair<std::string, Type>> results;
      for (const Value *r : n->results())
        results.emplace_back(r->name(), r->type());
      b_.setLoc(n->loc());
      Node *copy =
          b_.createWithTypes(n->op(), ctx.mappedArgs(), std::move(results), n->resultForm());
      for (size_t i = 0; i < copy->results().size(); ++i)
        map_[n->results()[i]] = copy->results()[i];
    }
  }

  /// Values that depend on an input that gets a gradient, through ops that
  /// pass gradients on.
  void markDifferentiable() {
    for (size_t i = 0; i < forward_.inputs().size(); ++i)
      if (wantsGradient(forward_.inputSpecs()[i], forward_.inputs()[i], o_))
        differentiable_.insert(forward_.inputs()[i]);
    for (const auto &n : forward_.nodes()) {
      const DerivativeEntry *rule = derivatives().find(n->op());
      if (rule && !rule->fn)
        continue;
      bool depends = false;
      for (const Operand &op : tensorOperands(*n))
        depends |= differentiable_.count(op.value) > 0;
      if (!depends)
        continue;
      for (const Value *r : n->results())
        if (isFloatingTensor(r))
          differentiable_.insert(r);
    }
  }

  void addTangents() {
    size_t k = 0;
    for (size_t i = 0; i < forward_.outputs().size(); ++i) {
      const OutputSpec &spec = forward_.outputSpecs()[i];
      const Value *out = forward_.outputs()[i];
      if ((spec.kind != OutputKind::UserOutput && spec.kind != OutputKind::LossOutput) ||
          !spec.aliasOf.empty() || !isFloatingTensor(out))
        continue;
      std::string name = "tangents_" + std::to_string(k++);
      // A tangent arrives as a fresh tensor, whatever view the output is.
      Type t = out->type();
      t.tensor.strides = contiguousStrides(m_.syms(), t.tensor.sizes);
      t.tensor.storageOffset = m_.syms().constant(0);
      t.tensor.requiresGrad = false;
      b_.reserveName(name);
      Value *tangent = joint_->addInput(name, t, InputSpec{InputKind::UserInput, name});
      if (differentiable_.count(out))
        grads_.accumulate(map_.at(out), tangent);
    }
  }

  Error backward(const Node &n) {
    std::vector<Value *> resultGrads;
    bool any = false;
    for (const Value *r : n.results()) {
      resultGrads.push_back(differentiable_.count(r) ? grads_.get(map_.at(r)) : nullptr);
      any |= resultGrads.back() != nullptr;
    }
    std::vector<Operand> operands;
    for (const Operand &op : tensorOperands(n))
      if (differentiable_.count(op.value))
        operands.push_back(op);
    if (!any || operands.empty())
      return Error::success();
    std::string where = "graph @" + forward_.name() + ", " + describeNode(n);
    const DerivativeEntry *rule = derivatives().find(n.op());
    if (!rule)
      return makeError() << where << ": gc has no derivative for this op";
    try {
      DerivativeContext ctx(n, b_, map_, std::move(resultGrads));
      InputGrads grads = rule->fn(ctx);
      for (const Operand &op : operands)
        if (Value *g = grads.get(*op.arg, op.index))
          grads_.accumulate(map_.at(op.value), g);
    } catch (const std::exception &e) {
      return makeError() << where << ": " << e.what();
    }
    return Error::success();
  }

  Error addGradientOutputs() {
    auto add = [&](size_t i, OutputKind kind) -> Error {
      Value *in = joint_->inputs()[i];
      Value *g = grads_.get(in);
      if (!g) {
        std::vector<int64_t> sizes;
        for (const SymExpr *s : in->type().tensor.sizes) {
          if (!s->isConst())
            return makeError() << "graph @" << forward_.name() << ": the zero gradient of %"
                               << in->name() << " has the symbolic size " << s->str();
          sizes.push_back(s->constant());
        }
        Arg device;
        device.kind = ArgKind::Device;
        device.device = in->type().tensor.device;
        g = b_.create1(ops::aten_full_default, {{"size", sizes},
                                             {"fill_value", 0.0},
                                             {"dtype", in->type().tensor.dtype},
                                             {"device", ArgValue(device)}});
      }
      joint_->addOutput(g, OutputSpec{kind, forward_.inputSpecs()[i].target, {}});
      return Error::success();
    };
    try {
      for (size_t i = 0; i < forward_.inputs().size(); ++i)
        if (forward_.inputSpecs()[i].kind == InputKind::Parameter &&
            wantsGradient(forward_.inputSpecs()[i], forward_.inputs()[i], o_))
          GC_RETURN_IF_ERROR(add(i, OutputKind::GradientToParameter));
      for (size_t i = 0; i < forward_.inputs().size(); ++i)
        if (forward_.inputSpecs()[i].kind == InputKind::UserInput &&
            wantsGradient(forward_.inputSpecs()[i], forward_.inputs()[i], o_))
          GC_RETURN_IF_ERROR(add(i, OutputKind::GradientToUserInput));
    } catch (const std::exception &e) {
      return makeError() << "graph @" << forward_.name() << ": " << e.what();
    }
    return Error::success();
  }

  Module &m_;
  const Graph &forward_;
  const JointOptions &o_;
  std::unique_ptr<Graph> joint_;
  GraphBuilder b_;
  ValueMap map_;
  GradientMap grads_;
  std::unordered_set<const Value *> differentiable_;
};

} // namespace

InputGrads &InputGrads::set(std::string_view arg, Value *grad, size_t index) {
  grads_[{std::string(arg), index}] = grad;
  return *this;
}

Value *InputGrads::get(std::string_view arg, size_t index) const {
  auto it = grads_.find({std::string(arg), index});
  return it == grads_.end() ? nullptr : it->second;
}

Error buildJointModule(Module &m, const JointOptions &o) {
  if (m.level() != Level::Core)
    return makeError() << "the joint graph is built from a module of level core, not "
                       << levelName(m.level());
  // Derivatives of cond and while_loop would differentiate the graphs they
  // call; that is not built yet, so they are refused by name rather than
  // counted as extra graphs.
  for (const auto &g : m.graphs())
    for (const auto &n : g->nodes())
      if (callsGraphs(n->op()))
        return makeError() << "graph @" << g->name() << ", node "
                           << (n->results().empty() ? "" : "%" + n->results()[0]->name() + " ")
                           << "(" << n->op()
                           << "): autodiff through control flow is not supported yet";
  if (m.graphs().size() != 1)
    return makeError() << "the joint graph is built from a module with one graph, not "
                       << m.graphs().size();
  const Graph &forward = *m.graphs()[0];
  Expected<std::unique_ptr<Graph>> joint = JointBuilder(m, forward, o).build();
  if (!joint)
    return joint.error();
  m.replaceGraph(forward, joint.take());
  m.setLevel(Level::Joint);
  return Error::success();
}

} // namespace gc
