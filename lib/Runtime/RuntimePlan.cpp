//===- RuntimePlan.cpp - Checking a runtime plan --------------------------===//
//
// FlatBuffers' verifier proves that every offset lies inside the bytes and
// that every required field is there; the checks here prove what the
// runtime then takes for granted: enums in range, every buffer, input,
// symbol and weight index inside its table, and every size program well
// formed. Each failure is one message naming the graph and the place.
//
//===----------------------------------------------------------------------===//
#include "gc/Runtime/RuntimePlan.h"

#include "gc/Support/SourceText.h"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <optional>
#include <type_traits>

namespace gc {

namespace {

using namespace plan;

/// The size of an optional vector field.
template <typename T> size_t sizeOf(const flatbuffers::Vector<T> *v) { return v ? v->size() : 0; }

/// Whether the elements of `v` (absent or empty: none) lie on their
/// alignment. FlatBuffers' verifier checks a vector's length word, not its
/// 8-byte elements, which a corrupt plan may misplace.
template <typename T> bool aligned(const flatbuffers::Vector<T> *v) {
  using Element = std::remove_cv_t<std::remove_pointer_t<T>>;
  return !v || v->size() == 0 || reinterpret_cast<uintptr_t>(v->Data()) % alignof(Element) == 0;
}

/// Checks one graph of a plan; fail() starts a message naming the graph.
class GraphChecker {
public:
  GraphChecker(const Plan &plan, const Graph &graph) : plan_(plan), graph_(graph) {}

  Error check() {
    size_t numBuffers = graph_.buffers()->size();
    for (size_t b = 0; b < numBuffers; ++b) {
      const Buffer &buf = *graph_.buffers()->Get(b);
      std::string what = "buffer " + std::to_string(b);
      if (buf.kind() > BufferKind::MAX)
        return fail() << what << " has an unknown kind";
      GC_RETURN_IF_ERROR(checkDType(buf.dtype(), what));
      GC_RETURN_IF_ERROR(checkLayout(*buf.sizes(), *buf.strides(), what));
    }
    for (const auto *list : {graph_.inputs(), graph_.outputs()})
      for (size_t i = 0; i < list->size(); ++i) {
        const Binding &b = *list->Get(i);
        std::string what = std::string(list == graph_.inputs() ? "input " : "output ") +
                           std::to_string(i);
        GC_RETURN_IF_ERROR(checkView(*b.view(), what));
        if (b.weight() < -1 || b.weight() >= static_cast<int64_t>(plan_.weights()->size()) ||
            (list == graph_.outputs() && b.weight() != -1))
          return fail() << what << " ('" << b.name()->str() << "') is bound to missing weight "
                        << b.weight();
        GC_RETURN_IF_ERROR(checkGenerator(b, list == graph_.inputs(), what));
      }
    if (graph_.random_draws() < 0)
      return fail() << "draws " << graph_.random_draws() << " random numbers";
    for (size_t s = 0; s < graph_.steps()->size(); ++s)
      GC_RETURN_IF_ERROR(checkStep(*graph_.steps()->Get(s), s));
    for (uint32_t slot : *graph_.kernel_symbols())
      if (slot >= plan_.symbols()->size())
        return fail() << "kernels take missing symbol " << slot;
    if (!aligned(graph_.placements()))
      return fail() << "the placements are misaligned";
    for (const Placement *p : *graph_.placements())
      if (p->buffer() >= numBuffers)
        return fail() << "placement of missing buffer " << p->buffer();
    return Error::success();
  }

private:
  /// A generator input is an i64[] of no weight; nothing else is one.
  Error checkGenerator(const Binding &b, bool input, const std::string &what) const {
    if (b.generator() == GeneratorPart::None)
      return Error::success();
    const View &v = *b.view();
    if (b.generator() > GeneratorPart::MAX || !input || b.weight() != -1 ||
        v.dtype() != plan::DType::Int64 || v.sizes()->size() != 0)
      return fail() << what << " ('" << b.name()->str()
                    << "') is a bad generator input: it must be an input i64[] of no weight";
    return Error::success();
  }

  ErrorBuilder fail() const {
    ErrorBuilder e;
    e << graphLabel(graph_) << ": ";
    return e;
  }

  Error checkDType(plan::DType t, const std::string &what) const {
    if (static_cast<int>(t) >= kNumDTypes)
      return fail() << what << " has unknown dtype " << static_cast<int>(t);
    return Error::success();
  }

  /// A program must leave one value, never pop an empty stack, and name
  /// only symbols the plan has.
  Error checkProgram(const SizeProgram &p, const std::string &what) const {
    if (!aligned(p.code()))
      return fail() << what << ": a size program is misaligned";
    int64_t depth = 0;
    for (const SizeInsn *insn : *p.code()) {
      switch (insn->op()) {
      case SizeOp::Const:
        ++depth;
        break;
      case SizeOp::Symbol:
        if (insn->arg() < 0 || static_cast<uint64_t>(insn->arg()) >= plan_.symbols()->size())
          return fail() << what << ": a size program reads missing symbol " << insn->arg();
        ++depth;
        break;
      case SizeOp::Add:
      case SizeOp::Mul:
      case SizeOp::FloorDiv:
      case SizeOp::Mod:
      case SizeOp::Min:
      case SizeOp::Max:
        if (depth < 2)
          return fail() << what << ": a size program pops an empty stack";
        --depth;
        break;
      default:
        return fail() << what << ": a size program has unknown operation "
                      << static_cast<int>(insn->op());
      }
    }
    if (depth != 1)
      return fail() << what << ": a size program leaves " << depth << " values, not 1";
    return Error::success();
  }

  Error checkPrograms(const flatbuffers::Vector<flatbuffers::Offset<SizeProgram>> &list,
                      const std::string &what) const {
    for (const SizeProgram *p : list)
      GC_RETURN_IF_ERROR(checkProgram(*p, what));
    return Error::success();
  }

  Error checkLayout(const flatbuffers::Vector<flatbuffers::Offset<SizeProgram>> &sizes,
                    const flatbuffers::Vector<flatbuffers::Offset<SizeProgram>> &strides,
                    const std::string &what) const {
    if (sizes.size() != strides.size())
      return fail() << what << " has " << sizes.size() << " sizes but " << strides.size()
                    << " strides";
    GC_RETURN_IF_ERROR(checkPrograms(sizes, what));
    return checkPrograms(strides, what);
  }

  Error checkView(const View &v, const std::string &what) const {
    if (v.buffer() >= graph_.buffers()->size())
      return fail() << what << " views missing buffer " << v.buffer() << " of "
                    << graph_.buffers()->size();
    GC_RETURN_IF_ERROR(checkDType(v.dtype(), what));
    GC_RETURN_IF_ERROR(checkLayout(*v.sizes(), *v.strides(), what));
    return v.offset() ? checkProgram(*v.offset(), what) : Error::success();
  }

  Error checkStep(const Step &step, size_t s) const {
    std::string what = "step " + std::to_string(s) + " ('" + step.name()->str() + "')";
    if (step.kind() > StepKind::MAX)
      return fail() << what << " has an unknown kind";
    size_t numBuffers = graph_.buffers()->size();
    for (uint32_t b : *step.uses())
      if (b >= numBuffers)
        return fail() << what << " uses missing buffer " << b;
    for (const InplacePair *p : *step.inplace())
      if (p->input() >= numBuffers || p->output() >= numBuffers)
        return fail() << what << " pairs missing buffers in place";
    for (const SizeProgram *work : {step.flops(), step.bytes()})
      if (work)
        GC_RETURN_IF_ERROR(checkProgram(*work, what));
    if (const KernelStep *k = step.detail_as_KernelStep()) {
      if (step.kind() != StepKind::Kernel)
        return fail() << what << " is a kernel of another kind";
      if (k->parallel_range())
        GC_RETURN_IF_ERROR(checkProgram(*k->parallel_range(), what));
      if (k->grid())
        GC_RETURN_IF_ERROR(checkProgram(*k->grid(), what));
      return checkProgram(*k->work(), what);
    }
    const OpStep *op = step.detail_as_OpStep();
    if (!op || step.kind() == StepKind::Kernel)
      return fail() << what << " has no op or a kind that does not match it";
    for (const auto *views : {op->inputs(), op->outputs()})
      for (const View *v : *views)
        GC_RETURN_IF_ERROR(checkView(*v, what));
    if (step.kind() == StepKind::Fallback && sizeOf(op->fallback()) == 0)
      return fail() << what << " is a fallback without a payload";
    if ((step.kind() == StepKind::Call) != (op->call() != nullptr))
      return fail() << what << (op->call() ? " calls graphs but is not a call step"
                                           : " is a call step that calls no graphs");
    if (const CallStep *c = op->call()) {
      // A graph calls only graphs after it, so that calls cannot recurse.
      size_t graphs = plan_.graphs()->size(), self = 0;
      while (self < graphs && plan_.graphs()->Get(self) != &graph_)
        ++self;
      bool bad = c->kind() > CallKind::MAX || c->graphs()->size() != 2 ||
                 c->carried() > op->inputs()->size() ||
                 (c->kind() == CallKind::Cond && op->inputs()->size() < 1) ||
                 (c->kind() == CallKind::WhileLoop && c->carried() != op->outputs()->size());
      for (uint32_t g : *c->graphs())
        bad |= g >= graphs || g <= self;
      if (bad)
        return fail() << what << " calls missing or earlier graphs, or has the wrong operands";
    }
    if (const DnnlCall *d = op->dnnl()) {
      if (!aligned(d->stride()) || !aligned(d->padding()) || !aligned(d->dilation()) ||
          !aligned(d->scales()))
        return fail() << what << " has a misaligned oneDNN call";
      size_t numInputs = op->inputs()->size();
      bool bad = d->primitive() > DnnlPrimitive::MAX || d->src() >= numInputs ||
                 d->weights() >= numInputs || d->bias() < -1 ||
                 d->bias() >= static_cast<int64_t>(numInputs) || op->outputs()->size() != 1;
      for (size_t k = 0; k < sizeOf(d->post_ops()); ++k) {
        const PostOp &p = *d->post_ops()->Get(k);
        bad |= p.kind() > PostOpKind::MAX || p.input() >= numInputs;
      }
      if (const RmsNormPrologue *norm = d->rms_norm())
        bad |= norm->weight() >= numInputs;
      if (bad)
        return fail() << what << " has a oneDNN call on missing operands";
      for (size_t k = 0; k < sizeOf(d->post_ops()); ++k) {
        if (d->post_ops()->Get(k)->kind() != PostOpKind::GatedSilu)
          continue;
        if (uint32_t minor = plan_.version()->minor_version(); minor < kPlanMinorGatedSilu)
          return fail() << what << " has a gated SiLU post-op, which plans have from "
                        << kPlanMajor << "." << kPlanMinorGatedSilu << " on; this plan is "
                        << kPlanMajor << "." << minor;
        if (d->primitive() != DnnlPrimitive::Matmul || d->post_ops()->size() != 1)
          return fail() << what << " has a gated SiLU post-op that is not a matrix product's "
                        << "only post-op";
      }
      if (d->rms_norm()) {
        if (uint32_t minor = plan_.version()->minor_version(); minor < kPlanMinorRmsNorm)
          return fail() << what << " has an RMSNorm prologue, which plans have from "
                        << kPlanMajor << "." << kPlanMinorRmsNorm << " on; this plan is "
                        << kPlanMajor << "." << minor;
        if (d->primitive() != DnnlPrimitive::Matmul)
          return fail() << what << " has an RMSNorm prologue on a convolution";
      }
    }
    return Error::success();
  }

  const Plan &plan_;
  const Graph &graph_;
};

Error checkVersion(const uint8_t *data, size_t size) {
  // The version alone first, so that a newer plan is told apart from a
  // corrupt one even if the rest of its layout changed.
  flatbuffers::Verifier verifier(data, size);
  flatbuffers::uoffset_t rootOffset = size >= 8 ? verifier.VerifyOffset(0) : 0;
  if (!rootOffset || !flatbuffers::BufferHasIdentifier(data, PlanIdentifier()))
    return makeError() << "not a gc runtime plan";
  const auto *root = reinterpret_cast<const flatbuffers::Table *>(data + rootOffset);
  if (!root->VerifyTableStart(verifier) ||
      !root->VerifyField<PlanVersion>(verifier, Plan::VT_VERSION, alignof(PlanVersion)))
    return makeError() << "corrupt runtime plan (bad root table)";
  const auto *v = root->GetStruct<const PlanVersion *>(Plan::VT_VERSION);
  if (!v)
    return makeError() << "corrupt runtime plan (no version)";
  if (v->major_version() != kPlanMajor || v->minor_version() > kPlanMinor)
    return makeError() << "runtime plan version " << v->major_version() << "."
                       << v->minor_version() << "; this gc reads " << kPlanMajor << ".0 to "
                       << kPlanMajor << "." << kPlanMinor;
  return Error::success();
}

} // namespace

Expected<std::shared_ptr<const RuntimePlan>> RuntimePlan::read(std::string bytes,
                                                               const std::string &where) {
  const auto *data = reinterpret_cast<const uint8_t *>(bytes.data());
  if (Error e = checkVersion(data, bytes.size()))
    return e.withContext(where);
  flatbuffers::Verifier::Options options;
  // A table takes at least 4 bytes: the bound keeps a hostile plan of
  // shared tables from making verification quadratic.
  options.max_tables = static_cast<flatbuffers::uoffset_t>(bytes.size() / 4 + 1);
  flatbuffers::Verifier verifier(data, bytes.size(), options);
  if (!VerifyPlanBuffer(verifier))
    return makeError() << where << ": corrupt runtime plan (its structure does not verify)";
  const Plan &root = *GetPlan(data);
  for (const Symbol *s : *root.symbols())
    if (s->min() > s->max())
      return makeError() << where << ": symbol " << s->name()->str() << " has an empty range";
  for (const Weight *w : *root.weights())
    if (static_cast<int>(w->dtype()) >= kNumDTypes || w->sizes()->size() != w->strides()->size() ||
        !aligned(w->sizes()) || !aligned(w->strides()))
      return makeError() << where << ": weight '" << w->name()->str()
                         << "' has an unknown dtype or a bad layout";
  for (const Graph *g : *root.graphs())
    if (Error e = GraphChecker(root, *g).check())
      return e.withContext(where);
  return std::shared_ptr<const RuntimePlan>(new RuntimePlan(std::move(bytes)));
}

Expected<int64_t> evaluate(const SizeProgram &program, std::span<const int64_t> symbols) {
  // Size programs are short (a handful of instructions); a fixed stack
  // keeps evaluation free of allocation, and a longer one spills.
  int64_t small[16];
  std::vector<int64_t> large;
  const auto *code = program.code();
  int64_t *stack = small;
  if (code->size() > 16) {
    large.resize(code->size());
    stack = large.data();
  }
  size_t top = 0;
  for (const SizeInsn *insn : *code) {
    int64_t arg = insn->arg();
    if (insn->op() == SizeOp::Const) {
      stack[top++] = arg;
      continue;
    }
    if (insn->op() == SizeOp::Symbol) {
      stack[top++] = symbols[arg];
      continue;
    }
    int64_t b = stack[--top], &a = stack[top - 1];
    switch (insn->op()) {
    case SizeOp::Add:
      a = static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
      break;
    case SizeOp::Mul:
      a = static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
      break;
    case SizeOp::FloorDiv:
    case SizeOp::Mod: {
      if (b == 0)
        return makeError() << "a size divides by zero";
      // -1 separately: INT64_MIN / -1 overflows.
      int64_t q = b == -1 ? static_cast<int64_t>(0 - static_cast<uint64_t>(a)) : a / b;
      int64_t r = b == -1 ? 0 : a % b;
      if (r != 0 && ((r < 0) != (b < 0))) {
        --q;
        r += b;
      }
      a = insn->op() == SizeOp::FloorDiv ? q : r;
      break;
    }
    case SizeOp::Min:
      a = std::min(a, b);
      break;
    default:
      a = std::max(a, b);
      break;
    }
  }
  return stack[0];
}

std::optional<uint32_t> boundSymbol(const SizeProgram &program) {
  const auto *code = program.code();
  if (code->size() == 1 && code->Get(0)->op() == SizeOp::Symbol)
    return static_cast<uint32_t>(code->Get(0)->arg());
  return std::nullopt;
}

std::string sizeText(const SizeProgram &program, const Plan &plan) {
  std::vector<std::string> stack;
  for (const SizeInsn *insn : *program.code()) {
    switch (insn->op()) {
    case SizeOp::Const:
      stack.push_back(std::to_string(insn->arg()));
      continue;
    case SizeOp::Symbol:
      stack.push_back(plan.symbols()->Get(insn->arg())->name()->str());
      continue;
    default:
      break;
    }
    std::string b = std::move(stack.back());
    stack.pop_back();
    std::string &a = stack.back();
    auto factor = [](const std::string &t) {
      return t.find(" + ") == std::string::npos ? t : "(" + t + ")";
    };
    switch (insn->op()) {
    case SizeOp::Add:
      a = b[0] == '-' ? a + " - " + b.substr(1) : a + " + " + b;
      break;
    case SizeOp::Mul:
      a = a == "-1" ? "-" + factor(b) : factor(a) + "*" + factor(b);
      break;
    default: {
      // "floordiv(a, b)", as SymExpr prints it.
      std::string name = EnumNameSizeOp(insn->op());
      std::transform(name.begin(), name.end(), name.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      a = name + "(" + a + ", " + b + ")";
      break;
    }
    }
  }
  return stack.empty() ? "?" : stack.back();
}

std::string typeText(plan::DType dtype,
                     const flatbuffers::Vector<flatbuffers::Offset<SizeProgram>> *sizes,
                     const Plan &plan) {
  std::string s(dtypeName(dtypeOf(dtype)));
  s += '[';
  for (size_t d = 0; d < sizes->size(); ++d)
    s += (d ? ", " : "") + sizeText(*sizes->Get(d), plan);
  return s + ']';
}

const char *stepKindName(StepKind k) {
  static const char *const kNames[] = {"kernel", "extern", "fallback", "call"};
  static_assert(std::size(kNames) == static_cast<size_t>(StepKind::MAX) + 1);
  return kNames[static_cast<size_t>(k)];
}

std::string graphLabel(const Graph &g) { return "graph @" + g.name()->str(); }

std::string stepSourceSuffix(const Step &s) {
  if (!s.sources() || s.sources()->size() == 0)
    return "";
  auto text = [](const flatbuffers::String *str) {
    return str ? str->string_view() : std::string_view();
  };
  const Source &first = *s.sources()->Get(0);
  std::string out = describeSource(text(first.file()), first.line(), text(first.function()),
                                   text(first.module_path()), text(first.module_class()));
  if (out.empty())
    return out;
  out = " at " + out;
  if (size_t more = s.sources()->size() - 1)
    out += " and " + std::to_string(more) + (more == 1 ? " other place" : " other places");
  return out;
}

std::string stepModulePath(const Step &s) {
  if (!s.sources() || s.sources()->size() == 0)
    return "";
  auto path = [&](uint32_t i) {
    const flatbuffers::String *p = s.sources()->Get(i)->module_path();
    return p ? p->string_view() : std::string_view();
  };
  std::string_view common = path(0);
  for (uint32_t i = 1; i < s.sources()->size(); ++i)
    common = commonModulePath(common, path(i));
  return std::string(common);
}

std::string_view commonModulePath(std::string_view a, std::string_view b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n])
    ++n;
  // Whole components only: "layers.1" and "layers.10" share "layers".
  if ((n == a.size() || a[n] == '.') && (n == b.size() || b[n] == '.'))
    return a.substr(0, n);
  size_t dot = a.substr(0, n).rfind('.');
  return a.substr(0, dot == std::string_view::npos ? 0 : dot);
}

} // namespace gc
