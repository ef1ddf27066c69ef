//===- Functionalize.cpp - In-place ops become functional -----------------===//
//
// torch.export's training IR keeps in-place ops (aten.add_.Tensor on a
// buffer, aten.relu_.default on an activation) and views that alias. Every
// later stage assumes a value never changes once computed, so this pass,
// which runs first, rewrites the graph into that form. The conventions are
// AOTAutograd's:
//
//  - An in-place or out= variant (OpVariants.h: "aten.add_.Tensor",
//    "aten.add.out") becomes its functional op on the same arguments
//    (functionalArgs) whose results are written back into the written
//    arguments, cast to their dtypes where the functional op would promote.
//    aten.copy_.default becomes its source, expanded and cast as needed;
//    resize_ and resize_as_ (rows, since they change sizes) become resize
//    and resize_as; detach_ leaves the values as they are.
//    Batch norm in training mode (aten.batch_norm.default,
//    native_batch_norm, _native_batch_norm_legit, _batch_norm_with_update)
//    writes its running statistics; it becomes
//    aten._native_batch_norm_legit_functional.default, whose results 3
//    and 4 are the new running mean and variance (on an
//    empty input torch leaves the statistics alone: it becomes inference
//    batch norm, whose result is just as empty). Any other
//    op whose schema marks an argument `(a!)` is an error: gc knows no
//    functional form for it.
//  - The new value replaces the old one for every later use: of the written
//    tensor, of the in-place op's own result (which is the written tensor),
//    and of views taken of it before or after the write (such views are
//    taken again from the new value where they are used).
//  - A write through a view (x[0].add_(1)) updates the viewed tensor: the
//    new elements are put back into it (reshapes and permutes are undone,
//    a slice with step 1 or a select is spliced in with aten.cat). Writes
//    through other views (expand, as_strided, split results) are errors.
//  - A graph input that was written gets an output carrying its final
//    value: buffer_mutation("<fqn>") for a buffer, user_input_mutation("<name>")
//    for a user input, parameter_mutation("<fqn>") for a parameter. These
//    outputs come first, before the graph's own outputs, in input order.
//  - An output that is an input or a view of one stays so; its value is the
//    input's final one, as the original graph would return it.
//
// reshape, flatten and contiguous alias their input only when it is
// contiguous (otherwise torch copies), and aten.to only when it changes
// nothing; they are tracked as views only then.
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"

#include "gc/IR/Describe.h"
#include "gc/IR/OpSchema.h"
#include "gc/IR/OpVariants.h"
#include "gc/IR/Printer.h"
#include "gc/Ops/GraphBuilder.h"
#include "gc/Ops/ShapeInference.h"
#include "gc/Transforms/Passes.h"

#include <algorithm>
#include <unordered_map>

namespace gc {

namespace {

bool boolArg(const Node &n, std::string_view name) {
  const Arg *a = argOf(n, name);
  return a && a->kind == ArgKind::Bool && a->ints[0] != 0;
}

std::vector<int64_t> staticSizes(const TensorType &t) {
  std::vector<int64_t> sizes;
  for (const SymExpr *s : t.sizes) {
    if (!s->isConst())
      rewriteFail("writing through a view of a tensor with symbolic sizes is not supported");
    sizes.push_back(s->constant());
  }
  return sizes;
}

/// aten.to's overloads: views of self when nothing changes.
bool isConversion(OpId op) {
  return isOneOf(op, {ops::aten_to_device, ops::aten_to_dtype, ops::aten_to_dtype_layout});
}

/// Views whose elements are their input's in row-major order.
bool isReshapeView(OpId op) {
  return isOneOf(op, {ops::aten_view_default, ops::aten_reshape_default, ops::aten_flatten_using_ints,
                      ops::aten_unflatten_int, ops::aten_squeeze_dims, ops::aten_squeeze_dim,
                      ops::aten_squeeze_default, ops::aten_unsqueeze_default, ops::aten_view_as_default,
                      ops::aten_contiguous_default});
}

/// Views that share all of their input's elements, unchanged.
bool isIdentityView(OpId op) {
  return isOneOf(op, {ops::aten_alias_default, ops::aten_detach_default}) || isConversion(op);
}

/// If `n` returns views of one of its arguments, that argument's name.
std::optional<std::string_view> viewBase(const Node &n, SymContext &syms) {
  OpId op = n.op();
  const Value *self = tensorArg(n, "self");
  if (!self)
    return std::nullopt;
  if (isOneOf(op, {ops::aten_reshape_default, ops::aten_flatten_using_ints, ops::aten_contiguous_default}) &&
      !isContiguous(syms, self->type().tensor))
    return std::nullopt;
  if (isConversion(op) &&
      (boolArg(n, "copy") || n.results().size() != 1 ||
       n.results()[0]->type().tensor.dtype != self->type().tensor.dtype ||
       n.results()[0]->type().tensor.device != self->type().tensor.device))
    return std::nullopt;
  if (returnsView(op))
    return "self";
  return std::nullopt;
}

/// True if `n`'s input has a size that is 0: torch's batch norm then
/// returns an empty result at once and leaves the running statistics alone.
bool isEmpty(const Node &n) {
  const Value *input = tensorArg(n, "input");
  if (!input)
    return false;
  for (const SymExpr *s : input->type().tensor.sizes)
    if (s->isConst() && s->constant() == 0)
      return true;
  return false;
}

/// The in-place rows of OpDefs.def that become a functional op: they change
/// self's sizes, so they are no variant (OpVariants.h).
std::optional<OpId> resizedBy(OpId op) {
  if (op == ops::aten_resize__default)
    return ops::aten_resize_default;
  if (op == ops::aten_resize_as__default)
    return ops::aten_resize_as_default;
  return std::nullopt;
}

/// How a graph input's final value is returned when it was written.
std::optional<OutputKind> mutationKind(InputKind k) {
  switch (k) {
  case InputKind::Buffer:
    return OutputKind::BufferMutation;
  case InputKind::UserInput:
    return OutputKind::UserInputMutation;
  case InputKind::Parameter:
    return OutputKind::ParameterMutation;
  default:
    return std::nullopt;
  }
}

class Functionalizer {
public:
  Functionalizer(Module &m, const Graph &old)
      : m_(m), old_(old), new_(std::make_unique<Graph>(old.name())), b_(m, *new_) {}

  Error run(std::map<std::string, int64_t> &stats) {
    for (const Value *v : old_.inputs())
      b_.reserveName(v->name());
    for (const auto &n : old_.nodes())
      for (const Value *v : n->results())
        b_.reserveName(v->name());
    for (size_t i = 0; i < old_.inputs().size(); ++i)
      latest_[old_.inputs()[i]] =
          new_->addInput(old_.inputs()[i]->name(), old_.inputs()[i]->type(), old_.inputSpecs()[i]);
    for (const auto &n : old_.nodes()) {
      // Whatever replaces the node (copies, write-backs) comes from its place.
      b_.setLoc(n->loc());
      try {
        visit(*n, stats);
      } catch (const std::exception &e) {
        return makeError() << "graph @" << old_.name() << ", " << describeNode(*n) << ": "
                           << e.what();
      }
    }
    b_.setLoc(nullptr);
    return finishOutputs(stats);
  }

  std::unique_ptr<Graph> take() { return std::move(new_); }

private:
  /// How an old value is reached from the tensor it views. `base` is null
  /// for a root (a graph input or a fresh result); `view` is null when the
  /// value is its base itself (an in-place op's result).
  struct Alias {
    const Value *base = nullptr;
    const Node *view = nullptr;
    unsigned index = 0;
  };
  struct Cached {
    Value *value;
    unsigned version;
  };

  const Value *root(const Value *v) const {
    for (auto it = alias_.find(v); it != alias_.end(); it = alias_.find(v))
      v = it->second.base;
    return v;
  }

  /// The new graph's value holding the current contents of old value `v`.
  Value *current(const Value *v) {
    auto it = alias_.find(v);
    if (it == alias_.end())
      return latest_.at(v);
    unsigned version = versions_[root(v)];
    if (auto c = cache_.find(v); c != cache_.end() && c->second.version == version)
      return c->second.value;
    Alias a = it->second;
    Value *base = current(a.base);
    Value *value = a.view ? emit(*a.view, mapArgs(*a.view, a.base, base), true)[a.index] : base;
    cache_[v] = {value, version};
    return value;
  }

  /// `n`'s arguments with old values replaced by their current ones, and
  /// `from` by `to` where given.
  std::vector<NamedArg> mapArgs(const Node &n, const Value *from = nullptr, Value *to = nullptr) {
    std::vector<NamedArg> args = n.args();
    for (NamedArg &a : args)
      for (Value *&v : a.value.values)
        if (v)
          v = v == from ? to : current(v);
    return args;
  }

  /// Appends a call of `n`'s op with `args`. Result names are `n`'s when
  /// `rename` is false. Result types are `n`'s when every tensor argument
  /// kept its type, else inferred again (a written tensor's new value may
  /// have other strides).
  std::vector<Value *> emit(const Node &n, std::vector<NamedArg> args, bool rename) {
    bool sameTypes = true;
    for (size_t i = 0; i < args.size(); ++i)
      for (size_t k = 0; k < args[i].value.values.size(); ++k)
        if (const Value *v = args[i].value.values[k])
          sameTypes &= v->type() == n.args()[i].value.values[k]->type();
    std::vector<std::pair<std::string, Type>> results;
    for (const Value *r : n.results())
      results.emplace_back(rename ? b_.uniqueName(r->name()) : r->name(), r->type());
    if (!sameTypes) {
      Expected<std::vector<Type>> types = inferResultTypes(n.op(), args, m_.syms(), &m_);
      if (!types)
        rewriteFail(types.error().message());
      for (size_t i = 0; i < results.size() && i < types->size(); ++i)
        results[i].second = (*types)[i];
    }
    return b_.createWithTypes(n.op(), std::move(args), std::move(results), n.resultForm())
        ->results();
  }

  /// `v` as a tensor of `want`'s dtype.
  Value *castTo(Value *v, const TensorType &want) {
    if (v->type().tensor.dtype == want.dtype)
      return v;
    return b_.create1(ops::aten__to_copy_default, {{"self", v}, {"dtype", want.dtype}});
  }

  void visit(const Node &n, std::map<std::string, int64_t> &counts) {
    OpId op = n.op();
    bool stats = tensorArg(n, "running_mean") && tensorArg(n, "running_var");
    if (op == ops::aten_batch_norm_default && stats && boolArg(n, "training") && isEmpty(n)) {
      // Its result is empty whatever the mode; in inference it writes nothing.
      std::vector<NamedArg> args = mapArgs(n);
      for (NamedArg &a : args)
        if (a.name == "training")
          a.value = Arg::boolean(false);
      latest_[n.results()[0]] = emit(n, std::move(args), false)[0];
      return;
    }
    // _batch_norm_with_update is batch norm in training mode.
    bool withUpdate = op == ops::aten__batch_norm_with_update_default;
    if ((isOneOf(op, {ops::aten_batch_norm_default, ops::aten_native_batch_norm_default,
                      ops::aten__native_batch_norm_legit_default}) &&
         stats && (boolArg(n, "training") || op != ops::aten_batch_norm_default)) ||
        (withUpdate && stats)) {
      functionalBatchNorm(n, withUpdate || boolArg(n, "training"));
      ++counts["batch norms made functional"];
      return;
    }
    if (!writesInPlace(op)) {
      std::vector<Value *> results = emit(n, mapArgs(n), false);
      SymContext &syms = m_.syms();
      std::optional<std::string_view> base = viewBase(n, syms);
      for (size_t i = 0; i < results.size(); ++i) {
        if (base) {
          const Value *r = n.results()[i];
          alias_[r] = {tensorArg(n, *base), &n, static_cast<unsigned>(i)};
          cache_[r] = {results[i], versions_[root(r)]};
        } else {
          latest_[n.results()[i]] = results[i];
        }
      }
      return;
    }
    const OpVariant *variant = findVariant(op);
    if (variant) {
      std::vector<Value *> values = functionalCall(n, *variant);
      for (size_t i = 0; i < variant->written.size(); ++i) {
        const Value *target = tensorArg(n, variant->written[i]);
        const Type &want = current(target)->type(), &got = values.at(i)->type();
        if (want.tensor.sizes != got.tensor.sizes)
          rewriteFail(writeBackMismatch(*variant, i, printType(want), printType(got)));
        write(target, castTo(values.at(i), target->type().tensor));
        alias_[n.results().at(i)] = {target, nullptr, 0};
      }
      ++counts["in-place ops made functional"];
      return;
    }
    const Value *self = tensorArg(n, "self");
    std::optional<OpId> resize = resizedBy(op);
    bool known = resize || isOneOf(op, {ops::aten_copy__default, ops::aten_detach__default});
    if (!known || !self || n.results().size() != 1)
      rewriteFail(std::string(opName(op)) + " writes its arguments in place, and gc knows no functional form of it");
    if (op == ops::aten_copy__default) {
      const TensorType &want = self->type().tensor;
      Value *value = current(tensorArg(n, "src"));
      if (value->type().tensor.sizes != want.sizes)
        value = b_.create1(ops::aten_expand_default, {{"self", value}, {"size", staticSizes(want)}});
      write(self, castTo(value, want));
    } else if (resize) {
      std::vector<std::pair<std::string, ArgValue>> args;
      for (NamedArg &a : mapArgs(n))
        args.emplace_back(a.name, ArgValue(std::move(a.value)));
      write(self, b_.create1(*resize, std::move(args)));
    }
    alias_[n.results()[0]] = {self, nullptr, 0};
    ++counts["in-place ops made functional"];
  }

  /// The call of variant `n`'s functional op. An aten op without a shape
  /// function gives its results the written tensors' types: they must have
  /// their sizes, and their values are cast to their dtypes all the same.
  std::vector<Value *> functionalCall(const Node &n, const OpVariant &v) {
    std::vector<NamedArg> args = functionalArgs(v, mapArgs(n));
    if (shapeFunctions().find(v.functional)) {
      std::vector<std::pair<std::string, ArgValue>> named;
      for (NamedArg &a : args)
        named.emplace_back(a.name, ArgValue(std::move(a.value)));
      return b_.create(v.functional, std::move(named));
    }
    std::vector<std::pair<std::string, Type>> results;
    for (const std::string &w : v.written)
      results.emplace_back(b_.uniqueName(n.results()[0]->name()), current(tensorArg(n, w))->type());
    ResultForm form = results.size() > 1 ? ResultForm::Tuple : ResultForm::Single;
    return b_.createWithTypes(v.functional, std::move(args), std::move(results), form)->results();
  }

  /// Writes `value` into old value `target` (writeBack), and makes it what
  /// `target` reads from now on.
  void write(const Value *target, Value *value) {
    writeBack(target, value);
    if (alias_.count(target))
      cache_[target] = {value, versions_[root(target)]};
  }

  /// Batch norm with running statistics: in training it updates them, and
  /// becomes _native_batch_norm_legit_functional; native_batch_norm and
  /// _native_batch_norm_legit in inference (whose schemas mark the
  /// statistics written all the same) become
  /// _native_batch_norm_legit_no_training.
  void functionalBatchNorm(const Node &n, bool training) {
    const Value *mean = tensorArg(n, "running_mean");
    const Value *var = tensorArg(n, "running_var");
    auto pass = [&](std::string_view name) {
      const Value *v = tensorArg(n, name);
      return v ? ArgValue(current(v)) : ArgValue::none();
    };
    const Arg *momentum = argOf(n, "momentum");
    const Arg *eps = argOf(n, "eps");
    if (!momentum || !eps)
      rewriteFail("batch norm without momentum or eps");
    std::vector<std::pair<std::string, ArgValue>> args = {
        {"input", pass("input")},      {"weight", pass("weight")},
        {"bias", pass("bias")},        {"running_mean", current(mean)},
        {"running_var", current(var)}, {"momentum", ArgValue(*momentum)},
        {"eps", ArgValue(*eps)}};
    if (!training) {
      std::vector<Value *> r =
          b_.create(ops::aten__native_batch_norm_legit_no_training_default, std::move(args));
      for (size_t i = 0; i < n.results().size(); ++i)
        latest_[n.results()[i]] = r.at(i);
      return;
    }
    args.emplace_back("training", true);
    std::vector<Value *> r =
        b_.create(ops::aten__native_batch_norm_legit_functional_default, std::move(args));
    if (r.size() != 5)
      rewriteFail("aten._native_batch_norm_legit_functional.default must have 5 results");
    writeBack(mean, castTo(r[3], mean->type().tensor));
    writeBack(var, castTo(r[4], var->type().tensor));
    // Results past the statistics (_batch_norm_with_update's reserve space,
    // which the CPU leaves empty) are zeros of their recorded type.
    for (size_t i = 0; i < n.results().size(); ++i) {
      const TensorType &t = n.results()[i]->type().tensor;
      latest_[n.results()[i]] =
          i < 3 ? r[i]
                : b_.create1(ops::aten_zeros_default,
                             {{"size", staticSizes(t)}, {"dtype", t.dtype}});
    }
  }

  /// Makes `value` the contents of old value `target`, and of what it views.
  void writeBack(const Value *target, Value *value) {
    auto it = alias_.find(target);
    if (it == alias_.end()) {
      latest_[target] = value;
      ++versions_[target];
      written_.insert(target);
      return;
    }
    Alias a = it->second;
    Value *base = current(a.base);
    writeBack(a.base, a.view ? unview(*a.view, base, value) : value);
  }

  /// The new contents of the tensor that `view` viewed, now `base`, once
  /// that view's elements become `value`.
  Value *unview(const Node &view, Value *base, Value *value) {
    OpId op = view.op();
    const TensorType &baseType = base->type().tensor;
    if (isIdentityView(op))
      return value;
    if (isReshapeView(op))
      return b_.create1(ops::aten_reshape_default,
                        {{"self", value}, {"shape", staticSizes(baseType)}});
    if (isOneOf(op, {ops::aten_permute_default, ops::aten_transpose_int, ops::aten_t_default})) {
      std::optional<std::vector<int64_t>> p = permutationOf(view);
      if (!p)
        rewriteFail("cannot undo " + std::string(opName(op)) + " with symbolic dimensions");
      std::vector<int64_t> inverse(p->size());
      for (size_t i = 0; i < p->size(); ++i)
        inverse[(*p)[i]] = static_cast<int64_t>(i);
      return b_.create1(ops::aten_permute_default, {{"self", value}, {"dims", inverse}});
    }
    if (op == ops::aten_select_int || op == ops::aten_slice_Tensor) {
      std::vector<int64_t> sizes = staticSizes(baseType);
      int64_t rank = static_cast<int64_t>(sizes.size());
      // Absent arguments take the schema's defaults.
      auto number = [&](std::string_view name, int64_t dflt) {
        if (!argOf(view, name))
          return dflt;
        std::optional<int64_t> v = intArg(view, name);
        if (!v)
          rewriteFail("cannot undo " + std::string(opName(op)) + " with a symbolic " + std::string(name));
        return *v;
      };
      int64_t dim = number("dim", 0);
      dim = dim < 0 ? dim + rank : dim;
      if (dim < 0 || dim >= rank)
        rewriteFail("cannot undo " + std::string(opName(op)) + ": dimension out of range");
      int64_t size = sizes[dim];
      auto clampIndex = [&](int64_t i) {
        return std::clamp(i < 0 ? i + size : i, int64_t(0), size);
      };
      int64_t start, end;
      if (op == ops::aten_select_int) {
        start = clampIndex(number("index", 0));
        end = start + 1;
        value = b_.create1(ops::aten_unsqueeze_default, {{"self", value}, {"dim", dim}});
      } else {
        if (number("step", 1) != 1)
          rewriteFail("writing through a slice with a step other than 1 is not supported");
        start = clampIndex(number("start", 0));
        end = std::max(start, clampIndex(number("end", size)));
      }
      std::vector<Value *> pieces;
      auto piece = [&](int64_t from, int64_t to) {
        if (from < to)
          pieces.push_back(b_.create1(
              ops::aten_slice_Tensor,
              {{"self", base}, {"dim", dim}, {"start", from}, {"end", to}, {"step", int64_t(1)}}));
      };
      piece(0, start);
      pieces.push_back(value);
      piece(end, size);
      if (pieces.size() == 1)
        return value;
      return b_.create1(ops::aten_cat_default, {{"tensors", pieces}, {"dim", dim}});
    }
    rewriteFail("writing in place through a view made by " + std::string(opName(op)) + " is not supported");
  }

  Error finishOutputs(std::map<std::string, int64_t> &stats) {
    std::unordered_set<std::string> recorded;
    for (const OutputSpec &s : old_.outputSpecs())
      if (!s.target.empty() && s.kind != OutputKind::UserOutput)
        recorded.insert(s.target);
    for (size_t i = 0; i < old_.inputs().size(); ++i) {
      const Value *in = old_.inputs()[i];
      const InputSpec &spec = old_.inputSpecs()[i];
      if (!written_.count(in))
        continue;
      std::optional<OutputKind> kind = mutationKind(spec.kind);
      if (!kind)
        return makeError() << "graph @" << old_.name() << ": the " << inputKindName(spec.kind)
                           << " input %" << in->name() << " is written in place";
      if (recorded.count(spec.target))
        return makeError() << "graph @" << old_.name() << ": %" << in->name()
                           << " is written in place, but an output already records a mutation of '"
                           << spec.target << "'";
      new_->addOutput(current(in), OutputSpec{*kind, spec.target});
      ++stats["mutation outputs added"];
    }
    for (size_t i = 0; i < old_.outputs().size(); ++i)
      new_->addOutput(current(old_.outputs()[i]), old_.outputSpecs()[i]);
    return Error::success();
  }

  Module &m_;
  const Graph &old_;
  std::unique_ptr<Graph> new_;
  GraphBuilder b_;
  std::unordered_map<const Value *, Alias> alias_;
  std::unordered_map<const Value *, Value *> latest_;
  std::unordered_map<const Value *, unsigned> versions_;
  std::unordered_map<const Value *, Cached> cache_;
  std::unordered_set<const Value *> written_;
};

class FunctionalizePass : public Pass {
public:
  std::string_view name() const override { return "functionalize"; }

  Error run(Module &m) override {
    for (const auto &g : m.graphs()) {
      Functionalizer f(m, *g);
      GC_RETURN_IF_ERROR(f.run(statistics()));
      m.replaceGraph(*g, f.take());
    }
    return requireFunctional(m, name());
  }
};

} // namespace

std::unique_ptr<Pass> createFunctionalizePass() { return std::make_unique<FunctionalizePass>(); }

} // namespace gc
