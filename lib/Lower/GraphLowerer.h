//===- GraphLowerer.h - One core graph to loop IR ---------------*- C++ -*-===//
//
// Every graph value is lowered to a Lowered: either a strided view of a
// buffer (graph inputs, realized values and views of them) or a loader that
// emits the value's scalar computation at given indices into the body of
// whichever node reads it. Views compose index maps; when the base is a
// strided view and the composed index stays affine in the loop variables,
// the view is again a strided view (a permute, a slice, a reshape of a
// contiguous region), otherwise it stays a loader whose index uses
// floordiv/mod.
//
// GraphLowerer holds the values, buffers and nodes of one graph's lowering;
// the op families (Families/*.cpp) each register the lowering rows of their
// ops, which build on what GraphLowerer offers them. Private to lib/Lower.
//
//===----------------------------------------------------------------------===//
#ifndef GC_LIB_LOWER_GRAPHLOWERER_H
#define GC_LIB_LOWER_GRAPHLOWERER_H

#include "BodyBuilder.h"

#include "gc/IR/Describe.h"
#include "gc/IR/Module.h"
#include "gc/IR/OpRegistry.h"
#include "gc/IR/TypePromotion.h"
#include "gc/Lower/Lowering.h"

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

namespace gc::lower {

using Exprs = std::vector<const SymExpr *>;

struct StridedView {
  uint32_t buffer = 0;
  Exprs sizes;
  Exprs strides;
  const SymExpr *offset = nullptr;
};

struct Lowered;
using LoweredPtr = std::shared_ptr<const Lowered>;
/// Emits the value at the given indices (one per dimension) into a body.
using Loader = std::function<uint32_t(BodyBuilder &, const Exprs &)>;
/// Maps the indices of a view to the indices of its base.
using IndexMap = std::function<Exprs(SymContext &, const Exprs &)>;

struct Lowered {
  DType dtype = DType::Float32;
  Exprs sizes;
  std::optional<StridedView> view; ///< set when the value is in a buffer
  Loader loader;                   ///< otherwise
  /// Operations emitting the value costs (a load or a constant: 1).
  unsigned cost = 1;
  /// The buffer of the extern result this value is a pointwise function of
  /// and of nothing else: what the extern's post-ops may compute as it
  /// stores (an extern's own result names its buffer).
  std::optional<uint32_t> epilogueOf;
};

/// A number argument, as torch types literals.
struct Number {
  double value = 0;
  DType dtype = DType::Int64; ///< Bool, Int64 or Float64
};
/// Reads a number argument; nullopt when it is not one.
std::optional<Number> numberArg(const NamedArg *a);

/// An operand of a pointwise op: a tensor, a constant number, or a symbolic
/// int (a size the model's symbols give, read as an index expression).
struct Operand {
  LoweredPtr tensor;
  Number number;
  PromotionOperand promotion;
  const SymExpr *symbolic = nullptr;
};

/// The tensors among `operands` (null entries skipped).
std::vector<LoweredPtr> tensorsOf(std::initializer_list<const Operand *> operands);

/// An error thrown inside a lowering (an argument that does not read), caught
/// at the node and reported with its name.
struct LowerError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class GraphLowerer;

/// One op's lowering: `lower` builds the op's loop nodes or lowered values;
/// the other members parameterize rows that share one function.
struct OpLowering {
  OpId op;
  Error (*lower)(GraphLowerer &lowerer, const Node &n, const OpLowering &row);
  ScalarOp scalar = ScalarOp::Add;
  const char *lhs = "self";
  const char *rhs = "other";
  /// The op lowers to a view of its input (View.cpp): a read of its result
  /// is a read of the input.
  bool view = false;
};
using LoweringRegistry = OpRegistry<OpLowering>;

void registerPointwiseLowerings(LoweringRegistry &r);
void registerReductionLowerings(LoweringRegistry &r);
void registerViewLowerings(LoweringRegistry &r);
void registerIndexingLowerings(LoweringRegistry &r);
void registerPoolingLowerings(LoweringRegistry &r);
void registerCallLowerings(LoweringRegistry &r);

// Body building blocks ---------------------------------------------------------

/// `v` read at the given indices (one per dimension).
uint32_t emit(BodyBuilder &b, const Lowered &v, const Exprs &idx);
/// `v` read at the indices of a result of shape `outRank`, broadcast as
/// torch broadcasts (trailing dimensions line up, size-1 dimensions repeat).
uint32_t emitBroadcast(BodyBuilder &b, const Lowered &v, const Exprs &outIdx);
/// Operand `o` at `idx`, converted to `dtype`.
uint32_t emitOperand(BodyBuilder &b, const Operand &o, const Exprs &idx, DType dtype);
/// The loop variable `prefix` followed by `i` (i0, r1, t0).
std::string loopVar(char prefix, size_t i);
/// The loop variables `prefix`0 ... `prefix`(n-1) as expressions.
Exprs loopVars(SymContext &sx, char prefix, size_t n);
/// base + sum(idx[d] * strides[d]).
const SymExpr *dot(SymContext &sx, const Exprs &idx, const Exprs &strides, const SymExpr *base);
/// The strides torch gave `t` when they describe a dense, non-overlapping
/// layout; otherwise row-major strides.
Exprs denseStrides(SymContext &sx, const TensorType &t);
/// A dimension argument counted from the end when negative.
size_t wrap(int64_t d, size_t rank);

/// Lowers the nodes of one graph into one loop graph.
class GraphLowerer {
public:
  GraphLowerer(Module &m, const Graph &g, const LowerOptions &options, LoopGraph &out,
               LowerReport &report)
      : sx_(m.syms()), g_(g), options_(options), out_(out), report_(report),
        symRanges_(m.syms().ranges()) {}

  Error run();

  // What the op families build on.

  SymContext &syms() const { return sx_; }
  const VarRanges &symRanges() const { return symRanges_; }
  LoweredPtr value(const Value *v) const { return vals_.at(v); }
  const TensorType &resultType(const Node &n, size_t i = 0) const {
    return n.results()[i]->type().tensor;
  }
  /// How many consumers read `v`, counting through views.
  unsigned uses(const Value *v) const;
  const Buffer &buffer(uint32_t b) const { return out_.buffers[b]; }
  std::vector<int64_t> ints(const Node &n, const char *name) const;
  static std::string nodeName(const Node &n) {
    return n.results().empty() ? opString(n.op()) : n.results()[0]->name();
  }

  Operand operand(const Node &n, const char *name) const;
  LoweredPtr pointwise(DType dtype, Exprs sizes, unsigned ownCost,
                       const std::vector<LoweredPtr> &inputs, Loader loader) const;
  LoweredPtr makeView(const LoweredPtr &base, Exprs sizes, IndexMap map);
  LoweredPtr stridedLowered(DType dtype, StridedView view) const;
  BodyBuilder builder(const Exprs &ranges, const Exprs &reductionRanges = {}) const;

  /// Records the lowering of `v`, realizing it when the heuristics say so.
  void define(const Value *v, LoweredPtr l);
  /// Records the lowering of `v` as it is (a view of a buffer it was
  /// written into).
  void setValue(const Value *v, LoweredPtr l) { vals_[v] = std::move(l); }
  /// Puts `v`'s value in a buffer of its own; returns its view.
  StridedView realize(const Value *v);

  /// A buffer for result `v` of a node: the graph's output buffer if `v` is
  /// one the node may write directly, else an intermediate.
  uint32_t resultBuffer(const Value *v, const TensorType &type, bool flexible);
  /// The buffer of input `self` when `result`, computed from it, is the new
  /// value of the buffer `self` holds (its buffer_mutation output), nothing
  /// else reads `self`, and both are dense: the node may then update the
  /// buffer where it lies, and the output is bound to the input's buffer
  /// (a KV cache written at a position without a copy of the cache).
  std::optional<uint32_t> inPlaceBuffer(const Value *result, const Value *self);
  uint32_t addBuffer(std::string name, BufferKind kind, DType dtype, Exprs sizes, Exprs strides,
                     bool flexible);
  /// Writes `l` into `buffer` with a Pointwise node.
  void writePointwise(const std::string &name, const std::string &origin, const Lowered &l,
                      uint32_t buffer);
  /// A scattering Pointwise node over `ranges`: the body `b` computes
  /// `value`, stored into `buffer` at `target` (one index per buffer dim,
  /// over i0.. and t0.., with `at` the body values bound to t0..).
  void addScatter(const std::string &name, const std::string &origin, uint32_t buffer,
                  const Exprs &ranges, BodyBuilder b, uint32_t value, std::vector<uint32_t> at,
                  const Exprs &target, StoreCombine combine);
  /// Adds a Reduction node computing result 0 of `n` and records its value.
  void addReduction(LoopNode node, BodyBuilder b, uint32_t value, const Value *result);
  /// Adds a Reduction node of `kind` over `inner` that writes a contiguous
  /// intermediate buffer `name` (one element per point of `outer`) with the
  /// body `b` builds, result `value`; returns the buffer's value.
  LoweredPtr scratchReduction(const std::string &name, const std::string &origin,
                              ReduceKind kind, const Exprs &outer, const Exprs &inner,
                              BodyBuilder b, uint32_t value);

  /// A Fallback node for `n`; with --no-fallback an error, saying `why` if
  /// the op has a lowering that does not take this node.
  Error fallback(const Node &n, const std::string &why = "");
  /// An Extern, Fallback or Call node running `n` on buffers.
  Error callNode(const Node &n, LoopNode::Kind kind);

  /// Appends `node` under a name no other node has.
  void addNode(LoopNode node);

private:
  Error lowerNode(const Node &n);
  /// Whether `n` makes an unbacked size (its count computed from the data:
  /// nonzero, unique, a boolean mask), which only a call run on the host
  /// can learn; records the sizes its results carry.
  bool makesUnbackedSize(const Node &n);
  /// Gives size value `v` (a SymInt or SymBool a call reads at run time) a
  /// one-element tensor: its defining size op runs as a call, on the host.
  Error lowerSizeValue(const Node &user, const Value *v);
  std::string where(const Node &n) const {
    return "graph '" + g_.name() + "': node '" + nodeName(n) + "' (" + opString(n.op()) + ")" +
           locSuffix(n.loc());
  }
  /// `base`, or `base_1`, `base_2`, ... if `taken` holds it; recorded in `taken`.
  static std::string uniqueName(std::set<std::string> &taken, const std::string &base);
  BufferView bufferView(DType dtype, const StridedView &v) const;

  SymContext &sx_;
  const Graph &g_;
  const LowerOptions &options_;
  LoopGraph &out_;
  LowerReport &report_;
  VarRanges symRanges_;
  std::unordered_map<const Value *, LoweredPtr> vals_;
  /// How many consumers read each value, counting through views.
  std::unordered_map<const Value *, unsigned> uses_;
  /// Graph outputs a node may write directly: output position, or -1.
  std::unordered_map<const Value *, int> ownedOutput_;
  /// The size symbols bound so far: by the inputs, then by the calls that
  /// compute unbacked sizes.
  std::set<std::string> knownSizes_;
  std::vector<std::optional<LoopBinding>> outputBindings_;
  std::set<std::string> bufferNames_, nodeNames_;
  /// The source location of each value's node by the value's name, which
  /// loop nodes give as their origin: a pointwise value is written where it
  /// is first needed, perhaps while a later node is lowered.
  std::unordered_map<std::string, const SourceLoc *> originLocs_;
  /// Values whose buffers are laid out channels-last (ActivationLayout.h).
  std::unordered_set<const Value *> channelsLast_;
};

} // namespace gc::lower

#endif // GC_LIB_LOWER_GRAPHLOWERER_H
