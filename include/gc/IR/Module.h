//===- Module.h - Module, graph, node and value ------------------*- C++ -*-===//
//
// A module holds graphs of nodes in SSA form. A node is one op call: the op
// (an OpId of OpDefs.def, `ops::aten_linear_default`), its arguments under
// their schema names, and the values it defines. A node that returns several
// tensors defines several values, so torch's `getitem` projections are the
// results themselves, not nodes.
//
//===----------------------------------------------------------------------===//
#ifndef GC_IR_MODULE_H
#define GC_IR_MODULE_H

#include "gc/IR/Level.h"
#include "gc/IR/OpId.h"
#include "gc/IR/SourceLoc.h"
#include "gc/IR/Type.h"
#include "gc/Support/Target.h"

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gc {

class Node;
struct LoopGraph;

/// An SSA value: a graph input or a result of a node.
class Value {
public:
  const std::string &name() const { return name_; }
  const Type &type() const { return type_; }
  Type &type() { return type_; }
  /// The node that defines this value, or null for a graph input.
  Node *definingNode() const { return def_; }
  /// Which result of its node this is.
  unsigned resultIndex() const { return index_; }

private:
  friend class Graph;
  std::string name_;
  Type type_;
  Node *def_ = nullptr;
  unsigned index_ = 0;
};

/// What kind of thing an argument holds. Mirrors torch.export's Argument
/// union, less what gc does not support (custom objects, operators).
enum class ArgKind : uint8_t {
  None,
  Tensor,          ///< values[0]
  Tensors,         ///< values
  OptionalTensors, ///< values; a null entry is None
  Int,             ///< ints[0]
  Ints,            ///< ints
  Float,           ///< floats[0]
  Floats,          ///< floats
  Bool,            ///< ints[0] (0 or 1)
  Bools,           ///< ints
  String,          ///< strings[0]
  Strings,         ///< strings
  SymInt,          ///< values[0] if non-null, else the constant ints[0]
  SymInts,         ///< per entry: values[i] if non-null, else ints[i]
  SymFloat,        ///< values[0]
  SymBool,         ///< values[0]
  ScalarType,      ///< ints[0] holds a DType
  MemoryFormat,    ///< ints[0] holds a MemoryFormat
  Layout,          ///< ints[0] holds a Layout
  Device,          ///< device
  /// strings[0]: the name of another graph of the module, which the op
  /// calls with inputs and outputs of its own (a branch of a cond, the body
  /// of a while_loop). torch.export's GraphArgument.
  Graph,
};

/// One argument value. Which fields matter depends on `kind` (see ArgKind).
struct Arg {
  ArgKind kind = ArgKind::None;
  std::vector<Value *> values;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::vector<std::string> strings;
  gc::Device device;

  static Arg none() { return Arg{}; }
  static Arg tensor(Value *v) { return Arg{ArgKind::Tensor, {v}, {}, {}, {}, {}}; }
  static Arg integer(int64_t i) { return Arg{ArgKind::Int, {}, {i}, {}, {}, {}}; }
  static Arg integers(std::vector<int64_t> is) {
    return Arg{ArgKind::Ints, {}, std::move(is), {}, {}, {}};
  }
  static Arg real(double d) { return Arg{ArgKind::Float, {}, {}, {d}, {}, {}}; }
  static Arg boolean(bool b) { return Arg{ArgKind::Bool, {}, {b ? 1 : 0}, {}, {}, {}}; }
  static Arg string(std::string s) {
    return Arg{ArgKind::String, {}, {}, {}, {std::move(s)}, {}};
  }
  static Arg graph(std::string name) {
    return Arg{ArgKind::Graph, {}, {}, {}, {std::move(name)}, {}};
  }
  static Arg scalarType(DType t) {
    return Arg{ArgKind::ScalarType, {}, {static_cast<int64_t>(t)}, {}, {}, {}};
  }
  /// Field by field (values by pointer), so that LoopArg and the loop IR
  /// structs that hold it compare with their defaulted operator==.
  bool operator==(const Arg &) const = default;
};

/// An argument under its schema name. Keyword-only arguments (after `*` in
/// the schema) are marked, so that the call can be rebuilt exactly.
struct NamedArg {
  std::string name;
  bool keywordOnly = false;
  Arg value;
};

/// How a node returns its results, which matters for printing torch's view
/// of the call: one tensor, a tuple of tensors, or a list (Tensor[]).
enum class ResultForm : uint8_t { Single, Tuple, List };

class Node {
public:
  OpId op() const { return op_; }
  void setOp(OpId op) { op_ = op; }
  std::vector<NamedArg> &args() { return args_; }
  const std::vector<NamedArg> &args() const { return args_; }
  /// The argument named `name`, or null.
  const NamedArg *arg(std::string_view name) const;
  const std::vector<Value *> &results() const { return results_; }
  ResultForm resultForm() const { return form_; }
  void setResultForm(ResultForm f) { form_ = f; }
  /// Where in the user's model the node came from (interned in its module's
  /// locations()), or null when unknown.
  const SourceLoc *loc() const { return loc_; }
  void setLoc(const SourceLoc *loc) { loc_ = loc; }

private:
  friend class Graph;
  OpId op_{};
  const SourceLoc *loc_ = nullptr;
  std::vector<NamedArg> args_;
  std::vector<Value *> results_;
  ResultForm form_ = ResultForm::Single;
};

/// What a graph input is: torch.export's signature kinds, then the two
/// halves of the random-number generator's state (RngSeed, RngOffset: one
/// i64[] each), which the decomposition of random ops adds and every runner
/// binds from its own state, never the caller (docs/random.md).
enum class InputKind : uint8_t { UserInput, Parameter, Buffer, Constant, Token, RngSeed, RngOffset };
/// What a graph output is.
enum class OutputKind : uint8_t {
  UserOutput,
  LossOutput,
  BufferMutation,
  UserInputMutation,
  ParameterMutation,
  GradientToParameter,
  GradientToUserInput,
  Token,
  /// A forward graph's value that the backward graph reads (gc-partition);
  /// target is the value's name. Returned to the caller, who passes it back
  /// to the backward graph (docs/partition.md).
  SavedForBackward,
};
std::string_view inputKindName(InputKind k);
/// Whether the runner binds the input from its generator state.
inline bool isGeneratorInput(InputKind k) {
  return k == InputKind::RngSeed || k == InputKind::RngOffset;
}
std::optional<InputKind> parseInputKind(std::string_view s);
std::string_view outputKindName(OutputKind k);
std::optional<OutputKind> parseOutputKind(std::string_view s);

/// One graph input's role. `target` is the original name: the parameter,
/// buffer or constant's fully qualified name, or the user input's argument
/// name.
struct InputSpec {
  InputKind kind = InputKind::UserInput;
  std::string target;
  /// Buffers only: whether the buffer is in the state dict.
  bool persistent = true;
  /// User inputs: where the input sits in the exported call's arguments, as
  /// Python would reach it ("ids", "batch['mask']", "pair[1]"); empty when
  /// the archive records no call structure.
  std::string path;
  bool operator==(const InputSpec &) const = default;
};

/// One graph output's role. `target` names the mutated buffer, parameter or
/// user input, or the parameter/input a gradient is for; empty otherwise.
struct OutputSpec {
  OutputKind kind = OutputKind::UserOutput;
  std::string target;
  /// The name of the graph input this output aliases (is, or is a view of),
  /// so that a runtime can hand out a view of that input instead of a copy,
  /// as AOTAutograd's runtime wrapper does; empty for a fresh tensor.
  std::string aliasOf;
  /// User outputs: where the output sits in what the exported call returns,
  /// as Python would reach it from the result ("[0]", ".logits",
  /// "['parts'][1]"); empty for a lone tensor or when the archive records no
  /// call structure.
  std::string path;
  bool operator==(const OutputSpec &) const = default;
};

/// A graph: inputs with their roles, nodes in order, outputs with theirs.
class Graph {
public:
  explicit Graph(std::string name) : name_(std::move(name)) {}
  Graph(const Graph &) = delete;
  Graph &operator=(const Graph &) = delete;

  const std::string &name() const { return name_; }

  Value *addInput(std::string name, Type type, InputSpec spec);
  /// Appends a node defining one value per entry of `resultTypes`.
  Node *addNode(OpId op, std::vector<NamedArg> args,
                std::vector<std::pair<std::string, Type>> results,
                ResultForm form = ResultForm::Single);
  void addOutput(Value *v, OutputSpec spec);

  const std::vector<Value *> &inputs() const { return inputs_; }
  const std::vector<InputSpec> &inputSpecs() const { return inputSpecs_; }
  const std::vector<std::unique_ptr<Node>> &nodes() const { return nodes_; }
  const std::vector<Value *> &outputs() const { return outputs_; }
  const std::vector<OutputSpec> &outputSpecs() const { return outputSpecs_; }
  OutputSpec &outputSpec(size_t i) { return outputSpecs_[i]; }

private:
  Value *newValue(std::string name, Type type);

  std::string name_;
  std::deque<Value> values_;
  std::vector<Value *> inputs_;
  std::vector<InputSpec> inputSpecs_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<Value *> outputs_;
  std::vector<OutputSpec> outputSpecs_;
};

/// Where weight bytes live: a source archive (read in place, memory-mapped)
/// or a blob gc wrote. In a file, paths are relative to the directory of the
/// file that holds the module, so a build tree can move as a whole; in
/// memory they are relative to Module::sourceBaseDir().
///
/// Program: no file. Its weights are computed where the module runs, before
/// anything else, by the module's constant program: weight W is the output
/// of graph @constant_program (kConstantProgramGraph) whose target is W. A
/// module with a Program source defers its folds to that graph (gc-opt's
/// load-time-constants pass; docs/package.md "Constant program").
struct WeightSource {
  enum class Kind : uint8_t { Archive, Blob, Program };
  Kind kind = Kind::Archive;
  std::string path;
  bool operator==(const WeightSource &) const = default;
};

/// The graph that computes the weights of a Program source.
inline constexpr std::string_view kConstantProgramGraph = "constant_program";

/// A parameter, buffer or tensor constant, by reference.
struct Weight {
  std::string name; ///< fully qualified name, as the signature's targets
  TensorType type;
  uint32_t source = 0; ///< index into Module::weightSources()
  uint64_t offset = 0; ///< byte offset of the data within the source file
  uint64_t bytes = 0;
  std::string sha256; ///< lowercase hex digest of the bytes
  bool operator==(const Weight &) const = default;
};

/// Where a package's weights live.
enum class WeightsMode : uint8_t {
  /// Every weight is copied into the package.
  Embed,
  /// Weights that are entries of the source archive (.pt2) stay there and
  /// are mapped at load time, checked by size and CRC-32; only the others
  /// (constants --freeze computed) are copied into the package. What
  /// freezing derives from them is computed at load time (a constant
  /// program).
  External,
};
/// "embed", "external"; the parser of the flag's value.
std::string_view weightsModeName(WeightsMode mode);
std::optional<WeightsMode> parseWeightsMode(std::string_view name);

/// How exactly float32 matrix products and convolutions are computed.
enum class Precision : uint8_t {
  /// As the model says: float32 products in float32.
  Exact,
  /// float32 products and convolutions take bfloat16 operands and give a
  /// bfloat16 result, which is widened back to float32 (torch.autocast's
  /// arithmetic, with float32 outside the products): AMX and AVX-512 BF16
  /// on the CPU, bf16 tensor cores on the GPU (docs/passes.md,
  /// "lower-precision").
  BFloat16,
};

/// Which algorithms float32 convolutions may take on the CPU.
enum class ConvAlgorithm : uint8_t {
  /// oneDNN's Winograd algorithm where the runtime's rule says it is faster
  /// (docs/backend.md, "Winograd convolutions"), direct elsewhere.
  Auto,
  /// oneDNN's direct algorithm everywhere.
  Direct,
};

/// What a module is compiled for: the machine its kernels will run on and
/// how its package will hold the weights. The opt phase chooses it once
/// (gc-opt or gc-compile --device, --target, --gpu-arch, --weights,
/// --precision, --conv-algorithm); every
/// later phase reads it from the module (docs/passes.md, "The target").
struct Target {
  TargetDevice device = TargetDevice::CPU;
  /// The CPU levels kernels are built for, lowest first ("x86-64-v3,x86-64-v4"
  /// or "native"); used when device is the CPU.
  std::string cpuLevels{kDefaultCpuTargets};
  /// The GPU architectures, sorted ("sm_80,sm_90"); used when device is CUDA.
  std::string gpuArchs{kDefaultGpuArchs};
  WeightsMode weights = WeightsMode::Embed;
  Precision precision = Precision::Exact;
  ConvAlgorithm convAlgorithm = ConvAlgorithm::Auto;
  bool operator==(const Target &) const = default;
};

/// The unit every stage reads and writes.
class Module {
public:
  Module();
  ~Module();
  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;

  /// A deep copy: every field, graph and loop graph, in the same order, with
  /// expressions re-interned in the copy's own SymContext and arguments
  /// pointing at the copy's values, so either module can change or go away
  /// without the other noticing. Prints and writes the same bytes as this.
  std::unique_ptr<Module> clone() const;

  Level level() const { return level_; }
  void setLevel(Level l) { level_ = l; }
  SymContext &syms() { return syms_; }
  const SymContext &syms() const { return syms_; }

  Graph &addGraph(std::string name);
  /// Puts `g` where `old` was (same position); `old` is destroyed.
  void replaceGraph(const Graph &old, std::unique_ptr<Graph> g);
  const std::vector<std::unique_ptr<Graph>> &graphs() const { return graphs_; }
  /// The graph named `name`, or null.
  Graph *graph(std::string_view name) const;

  /// Drops every graph (gc-lower, once they are loop graphs).
  void clearGraphs() { graphs_.clear(); }
  /// At the Loops and Kernels levels the graphs are loop graphs (LoopIR.h)
  /// and graphs() is empty.
  LoopGraph &addLoopGraph(std::string name);
  const std::vector<std::unique_ptr<LoopGraph>> &loopGraphs() const { return loopGraphs_; }
  /// The loop graph named `name`, or null.
  LoopGraph *loopGraph(std::string_view name) const;

  std::vector<WeightSource> &weightSources() { return sources_; }
  const std::vector<WeightSource> &weightSources() const { return sources_; }
  std::vector<Weight> &weights() { return weights_; }
  const std::vector<Weight> &weights() const { return weights_; }
  /// The weight named `name`, or null.
  const Weight *weight(std::string_view name) const;

  /// The directory that relative weight source paths start from. Not part
  /// of the module's contents: readers set it to the file's directory, and
  /// writers re-express paths relative to the output's directory.
  const std::string &sourceBaseDir() const { return sourceBaseDir_; }
  void setSourceBaseDir(std::string dir) { sourceBaseDir_ = std::move(dir); }

  /// A blob whose bytes are still in memory: constants that gc-opt's folding
  /// passes computed. `source` indexes a WeightSource of kind Blob whose path
  /// stays empty until writeModuleFile writes the bytes beside its output,
  /// as "<output>.weights", and names it there; loadWeights reads the bytes
  /// from here. At most one per module, so every new constant goes into it.
  struct PendingBlob {
    uint32_t source = 0;
    std::string bytes;
  };
  std::optional<PendingBlob> &pendingBlob() { return pendingBlob_; }
  const std::optional<PendingBlob> &pendingBlob() const { return pendingBlob_; }

  /// What the module is compiled for; none until the opt phase chose it
  /// (an aten module, or a hand-written text that leaves it out: then the
  /// first phase that runs takes its flags or the defaults).
  const std::optional<Target> &target() const { return target_; }
  void setTarget(Target t) { target_ = std::move(t); }

  /// The source locations nodes and loop nodes point into.
  SourceLocTable &locations() { return locations_; }
  const SourceLocTable &locations() const { return locations_; }

  /// Free-form provenance such as "torch 2.11.0"; kept for messages.
  const std::string &producer() const { return producer_; }
  void setProducer(std::string p) { producer_ = std::move(p); }

private:
  Level level_ = Level::Aten;
  SymContext syms_;
  SourceLocTable locations_;
  std::vector<std::unique_ptr<Graph>> graphs_;
  std::vector<std::unique_ptr<LoopGraph>> loopGraphs_;
  std::vector<WeightSource> sources_;
  std::vector<Weight> weights_;
  std::optional<Target> target_;
  std::string producer_;
  std::string sourceBaseDir_ = ".";
  std::optional<PendingBlob> pendingBlob_;
};

} // namespace gc

#endif // GC_IR_MODULE_H
