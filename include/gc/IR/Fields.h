//===- Fields.h - Each IR struct's fields, declared once --------*- C++ -*-===//
//
// The one list of the fields of every plain IR struct, in the order of its
// table in formats/graph.fbs: a field's position in kFields<T> is its
// FlatBuffers field id, and its name is the schema's field name. The binary
// reader and writer (lib/GraphFile) and the text form's records
// (lib/IR/Printer.cpp, lib/Parser/Parser.cpp) walk these lists, with
// one codec per field type instead of code per struct; a unit test checks
// the lists against graph.fbs, so the two cannot drift apart.
//
// Adding a field: add the member, its entry here at the end of the list and
// in graph.fbs; nothing else if its type has a codec already.
//
//===----------------------------------------------------------------------===//
#ifndef GC_IR_FIELDS_H
#define GC_IR_FIELDS_H

#include "gc/IR/LoopIR.h"

#include <array>
#include <string_view>
#include <tuple>

namespace gc {

/// How a field is coded where its C++ type alone does not say.
struct Plain {};
/// A uint32_t (or a list of them) indexing LoopGraph::buffers; the text form
/// names the buffer ("%buf0").
struct BufferRef {};
/// A std::string of raw bytes: [ubyte] in the file; the text form shows its
/// size and digest only, so it cannot be read back from text.
struct Bytes {};

template <class S, class M, class C> struct Field {
  std::string_view name;
  M S::*member;
  using Codec = C;
};
template <class C = Plain, class S, class M>
constexpr Field<S, M, C> field(std::string_view name, M S::*member) {
  return {name, member};
}

/// The fields of T; empty for a type that is not a declared struct.
template <class T> inline constexpr auto kFields = std::tuple<>{};
template <class T>
concept Declared = std::tuple_size_v<std::remove_cvref_t<decltype(kFields<T>)>> > 0;

/// A declared struct that the text form writes as a record; tensor types and
/// arguments have a syntax of their own there.
template <class T>
concept Structured = Declared<T> && !std::is_same_v<T, TensorType> && !std::is_same_v<T, Arg>;

/// Calls f(id, field) for each field of T in order while f returns true;
/// returns whether it always did.
template <class T, class F> bool forEachField(F &&f) {
  return std::apply(
      [&](const auto &...fields) {
        size_t id = 0;
        return (f(id++, fields) && ...);
      },
      kFields<T>);
}

template <> inline constexpr auto kFields<TensorType> = std::tuple(
    field("dtype", &TensorType::dtype), field("device", &TensorType::device),
    field("sizes", &TensorType::sizes), field("strides", &TensorType::strides),
    field("storage_offset", &TensorType::storageOffset),
    field("requires_grad", &TensorType::requiresGrad));
template <> inline constexpr auto kFields<Arg> = std::tuple(
    field("kind", &Arg::kind), field("values", &Arg::values), field("ints", &Arg::ints),
    field("floats", &Arg::floats), field("strings", &Arg::strings),
    field("device", &Arg::device));
template <> inline constexpr auto kFields<NamedArg> =
    std::tuple(field("name", &NamedArg::name), field("keyword_only", &NamedArg::keywordOnly),
               field("value", &NamedArg::value));
template <> inline constexpr auto kFields<InputSpec> =
    std::tuple(field("kind", &InputSpec::kind), field("target", &InputSpec::target),
               field("persistent", &InputSpec::persistent), field("path", &InputSpec::path));
template <> inline constexpr auto kFields<OutputSpec> =
    std::tuple(field("kind", &OutputSpec::kind), field("target", &OutputSpec::target),
               field("alias_of", &OutputSpec::aliasOf), field("path", &OutputSpec::path));
template <> inline constexpr auto kFields<WeightSource> =
    std::tuple(field("kind", &WeightSource::kind), field("path", &WeightSource::path));
template <> inline constexpr auto kFields<Weight> = std::tuple(
    field("name", &Weight::name), field("type", &Weight::type), field("source", &Weight::source),
    field("offset", &Weight::offset), field("bytes", &Weight::bytes),
    field("sha256", &Weight::sha256));

template <> inline constexpr auto kFields<SourceLoc> = std::tuple(
    field("file", &SourceLoc::file), field("line", &SourceLoc::line),
    field("function", &SourceLoc::function), field("module_path", &SourceLoc::modulePath),
    field("module_class", &SourceLoc::moduleClass));

template <> inline constexpr auto kFields<Target> = std::tuple(
    field("device", &Target::device), field("cpu_levels", &Target::cpuLevels),
    field("gpu_archs", &Target::gpuArchs), field("weights", &Target::weights),
    field("precision", &Target::precision), field("conv_algorithm", &Target::convAlgorithm));

template <> inline constexpr auto kFields<BodyOp> = std::tuple(
    field("kind", &BodyOp::kind), field("dtype", &BodyOp::dtype), field("op", &BodyOp::op),
    field("operands", &BodyOp::operands), field<BufferRef>("buffer", &BodyOp::buffer),
    field("index", &BodyOp::index), field("indirect", &BodyOp::indirect),
    field("mask", &BodyOp::mask), field("constant", &BodyOp::constant));
template <> inline constexpr auto kFields<Body> =
    std::tuple(field("ops", &Body::ops), field("result", &Body::result));
template <> inline constexpr auto kFields<Buffer> = std::tuple(
    field("name", &Buffer::name), field("kind", &Buffer::kind), field("dtype", &Buffer::dtype),
    field("sizes", &Buffer::sizes), field("strides", &Buffer::strides),
    field("flexible", &Buffer::flexible));
template <> inline constexpr auto kFields<BufferView> =
    std::tuple(field<BufferRef>("buffer", &BufferView::buffer), field("type", &BufferView::type));
template <> inline constexpr auto kFields<PostOp> =
    std::tuple(field("kind", &PostOp::kind), field("input", &PostOp::input));
template <> inline constexpr auto kFields<RmsNormPrologue> =
    std::tuple(field("weight", &RmsNormPrologue::weight), field("eps", &RmsNormPrologue::eps));
template <> inline constexpr auto kFields<LoopArg> =
    std::tuple(field("name", &LoopArg::name), field("keyword_only", &LoopArg::keywordOnly),
               field("value", &LoopArg::value));
template <> inline constexpr auto kFields<LoopNode> = std::tuple(
    field("kind", &LoopNode::kind), field("name", &LoopNode::name),
    field("ranges", &LoopNode::ranges), field("reduction_ranges", &LoopNode::reductionRanges),
    field("reduce", &LoopNode::reduce), field("body", &LoopNode::body),
    field<BufferRef>("output", &LoopNode::output), field("store_index", &LoopNode::storeIndex),
    field("op", &LoopNode::op), field("args", &LoopNode::args),
    field("inputs", &LoopNode::inputs), field("outputs", &LoopNode::outputs),
    field("post_ops", &LoopNode::postOps), field("origin", &LoopNode::origin),
    field("scan", &LoopNode::scan),
    field("store_indirect", &LoopNode::storeIndirect), field("combine", &LoopNode::combine),
    field("loc", &LoopNode::loc), field("rms_norm", &LoopNode::rmsNorm));
template <> inline constexpr auto kFields<LoopBinding> =
    std::tuple(field("name", &LoopBinding::name),
               field<BufferRef>("buffer", &LoopBinding::buffer), field("type", &LoopBinding::type));
template <> inline constexpr auto kFields<KernelGroup> =
    std::tuple(field("name", &KernelGroup::name), field("nodes", &KernelGroup::nodes),
               field("parallel_ranges", &KernelGroup::parallelRanges),
               field("mapping", &KernelGroup::mapping),
               field("block_threads", &KernelGroup::blockThreads),
               field("points_per_thread", &KernelGroup::pointsPerThread),
               field("vector_width", &KernelGroup::vectorWidth));
template <> inline constexpr auto kFields<InplacePair> =
    std::tuple(field<BufferRef>("output", &InplacePair::output),
               field<BufferRef>("input", &InplacePair::input));
template <> inline constexpr auto kFields<PlanStep> =
    std::tuple(field("kind", &PlanStep::kind), field("index", &PlanStep::index),
               field<BufferRef>("frees", &PlanStep::frees), field("inplace", &PlanStep::inplace));
template <> inline constexpr auto kFields<BufferPlacement> = std::tuple(
    field<BufferRef>("buffer", &BufferPlacement::buffer),
    field("offset", &BufferPlacement::offset), field("bytes", &BufferPlacement::bytes));
template <> inline constexpr auto kFields<Plan> = std::tuple(
    field("kernels", &Plan::kernels), field("steps", &Plan::steps),
    field("placements", &Plan::placements), field("symbols", &Plan::symbols),
    field("arena_bytes", &Plan::arenaBytes),
    field("intermediate_bytes", &Plan::intermediateBytes), field("target", &Plan::target),
    field<Bytes>("object_code", &Plan::objectCode), field("object_hash", &Plan::objectHash));
template <> inline constexpr auto kFields<LoopGraph> = std::tuple(
    field("name", &LoopGraph::name), field("buffers", &LoopGraph::buffers),
    field("inputs", &LoopGraph::inputs), field("input_specs", &LoopGraph::inputSpecs),
    field("nodes", &LoopGraph::nodes), field("outputs", &LoopGraph::outputs),
    field("output_specs", &LoopGraph::outputSpecs), field("plan", &LoopGraph::plan));

/// The values of each enum a declared field holds: how many there are (the
/// binary reader refuses others) and their names in the text form.
template <class E> struct EnumInfo;
#define GC_ENUM_FN(E, COUNT, NAME_FN)                                                        \
  template <> struct EnumInfo<E> {                                                          \
    static constexpr size_t count = COUNT;                                                   \
    static std::string_view name(E e) { return NAME_FN(e); }                                 \
  };
#define GC_ENUM_NAMES(E, ...)                                                                \
  template <> struct EnumInfo<E> {                                                          \
    static constexpr std::array<std::string_view, std::size({__VA_ARGS__})> names{         \
        __VA_ARGS__};                                                                        \
    static constexpr size_t count = names.size();                                            \
    static std::string_view name(E e) { return names[static_cast<size_t>(e)]; }             \
  };
GC_ENUM_FN(DType, kNumDTypes, dtypeName)
GC_ENUM_FN(ScalarOp, kNumScalarOps, scalarOpName)
GC_ENUM_FN(ReduceKind, size_t(ReduceKind::Any) + 1, reduceKindName)
GC_ENUM_FN(InputKind, size_t(InputKind::RngOffset) + 1, inputKindName)
GC_ENUM_FN(OutputKind, size_t(OutputKind::SavedForBackward) + 1, outputKindName)
GC_ENUM_FN(Level, size_t(Level::Kernels) + 1, levelName)
GC_ENUM_FN(MemoryFormat, kNumMemoryFormats, memoryFormatName)
GC_ENUM_FN(Layout, kNumLayouts, layoutName)
GC_ENUM_NAMES(BufferKind, "input", "output", "intermediate")
GC_ENUM_NAMES(StoreCombine, "none", "add", "mul", "max", "min")
GC_ENUM_NAMES(BodyOp::Kind, "load", "const", "index", "compute", "cast")
GC_ENUM_NAMES(LoopNode::Kind, "pointwise", "reduction", "extern", "fallback", "call")
GC_ENUM_NAMES(PostOp::Kind, "add_bias", "add", "relu", "gelu_erf", "gelu_tanh", "swish",
              "gated_silu")
GC_ENUM_NAMES(PlanStep::Kind, "kernel", "extern", "fallback", "call")
GC_ENUM_NAMES(GpuMapping, "none", "thread_per_point", "block_per_point")
GC_ENUM_NAMES(WeightSource::Kind, "archive", "blob", "program")
GC_ENUM_NAMES(DeviceKind, "cpu", "cuda", "meta")
GC_ENUM_NAMES(TargetDevice, "cpu", "cuda")
GC_ENUM_FN(WeightsMode, size_t(WeightsMode::External) + 1, weightsModeName)
GC_ENUM_NAMES(Precision, "exact", "bf16")
GC_ENUM_NAMES(ConvAlgorithm, "auto", "direct")
GC_ENUM_NAMES(ResultForm, "single", "tuple", "list")
GC_ENUM_NAMES(Type::Kind, "tensor", "sym_int", "sym_float", "sym_bool")
GC_ENUM_NAMES(SymExpr::Kind, "const", "symbol", "add", "mul", "floordiv", "mod", "min", "max")
GC_ENUM_NAMES(ArgKind, "none", "tensor", "tensors", "optional_tensors", "int", "ints",
              "float", "floats", "bool", "bools", "string", "strings", "symint", "symints",
              "symfloat", "symbool", "scalar_type", "memory_format", "layout", "device",
              "graph")
#undef GC_ENUM_FN
#undef GC_ENUM_NAMES

/// How an argument of each ArgKind is written in the text form
/// (docs/formats.md, "Arguments"): its keyword and what each element is.
/// A `bare` list may leave its keyword out when it has elements, since the
/// first one tells the kind; a bare scalar has no keyword, and the others
/// are written `keyword(element)`. The printer and the parser both read
/// this table.
enum class ArgElem : uint8_t {
  None, Tensor, Int, Float, Bool, String, SymInt, Value, DType, MemoryFormat, Layout, Device,
  Graph
};
struct ArgSyntax {
  ArgKind kind;
  std::string_view keyword;
  ArgElem elem;
  bool list, bare;
};
inline constexpr ArgSyntax kArgSyntax[] = {
    {ArgKind::None, "none", ArgElem::None, false, false},
    {ArgKind::Tensor, "", ArgElem::Tensor, false, true},
    {ArgKind::Tensors, "tensors", ArgElem::Tensor, true, true},
    {ArgKind::OptionalTensors, "opt_tensors", ArgElem::Tensor, true, false},
    {ArgKind::Int, "", ArgElem::Int, false, true},
    {ArgKind::Ints, "ints", ArgElem::Int, true, true},
    {ArgKind::Float, "", ArgElem::Float, false, true},
    {ArgKind::Floats, "floats", ArgElem::Float, true, true},
    {ArgKind::Bool, "", ArgElem::Bool, false, true},
    {ArgKind::Bools, "bools", ArgElem::Bool, true, true},
    {ArgKind::String, "", ArgElem::String, false, true},
    {ArgKind::Strings, "strings", ArgElem::String, true, true},
    {ArgKind::SymInt, "symint", ArgElem::SymInt, false, false},
    {ArgKind::SymInts, "symints", ArgElem::SymInt, true, false},
    {ArgKind::SymFloat, "symfloat", ArgElem::Value, false, false},
    {ArgKind::SymBool, "symbool", ArgElem::Value, false, false},
    {ArgKind::ScalarType, "dtype", ArgElem::DType, false, false},
    {ArgKind::MemoryFormat, "memory_format", ArgElem::MemoryFormat, false, false},
    {ArgKind::Layout, "layout", ArgElem::Layout, false, false},
    {ArgKind::Device, "device", ArgElem::Device, false, false},
    {ArgKind::Graph, "", ArgElem::Graph, false, true},
};
// Indexed by kind.
static_assert([] {
  for (size_t i = 0; i < std::size(kArgSyntax); ++i)
    if (static_cast<size_t>(kArgSyntax[i].kind) != i)
      return false;
  return std::size(kArgSyntax) == EnumInfo<ArgKind>::count;
}());

/// The value of E named `name`, if any.
template <class E> std::optional<E> parseEnum(std::string_view name) {
  for (size_t i = 0; i < EnumInfo<E>::count; ++i)
    if (EnumInfo<E>::name(static_cast<E>(i)) == name)
      return static_cast<E>(i);
  return std::nullopt;
}

} // namespace gc

#endif // GC_IR_FIELDS_H
