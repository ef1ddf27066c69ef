//===- Lowering.cpp - Core graphs to loop IR ------------------------------===//
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
//===----------------------------------------------------------------------===//
#include "gc/Lower/Lowering.h"

#include "ActivationLayout.h"
#include "BodyBuilder.h"

#include "gc/IR/ArgReader.h"
#include "gc/IR/IndexSimplify.h"
#include "gc/IR/OpId.h"
#include "gc/IR/OpRegistry.h"
#include "gc/IR/OpSchema.h"
#include "gc/IR/TypePromotion.h"
#include "gc/Ops/ShapeInference.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace gc {
namespace {

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

uint32_t emit(BodyBuilder &b, const Lowered &v, const Exprs &idx) {
  if (!v.view)
    return v.loader(b, idx);
  SymContext &sx = b.syms();
  const SymExpr *e = v.view->offset;
  for (size_t d = 0; d < idx.size(); ++d)
    e = sx.add(e, sx.mul(idx[d], v.view->strides[d]));
  return b.load(v.view->buffer, v.dtype, e);
}

/// `v` read at the indices of a result of shape `outRank`, broadcast as
/// torch broadcasts (trailing dimensions line up, size-1 dimensions repeat).
uint32_t emitBroadcast(BodyBuilder &b, const Lowered &v, const Exprs &outIdx) {
  size_t lead = outIdx.size() - v.sizes.size();
  Exprs idx;
  for (size_t d = 0; d < v.sizes.size(); ++d) {
    bool one = v.sizes[d]->isConst() && v.sizes[d]->constant() == 1;
    idx.push_back(one ? b.syms().constant(0) : outIdx[lead + d]);
  }
  return emit(b, v, idx);
}

std::string loopVar(char prefix, size_t i) { return std::string(1, prefix) + std::to_string(i); }

Exprs loopVars(SymContext &sx, char prefix, size_t n) {
  Exprs out;
  for (size_t i = 0; i < n; ++i)
    out.push_back(sx.symbol(loopVar(prefix, i)));
  return out;
}

const SymExpr *dot(SymContext &sx, const Exprs &idx, const Exprs &strides, const SymExpr *base) {
  const SymExpr *e = base;
  for (size_t d = 0; d < idx.size(); ++d)
    e = sx.add(e, sx.mul(idx[d], strides[d]));
  return e;
}

/// The strides torch gave `t` when they describe a dense, non-overlapping
/// layout; otherwise row-major strides.
Exprs denseStrides(SymContext &sx, const TensorType &t) {
  Exprs contiguous = contiguousStrides(sx, t.sizes);
  std::vector<size_t> dims;
  for (size_t d = 0; d < t.rank(); ++d) {
    if (!t.sizes[d]->isConst() || !t.strides[d]->isConst())
      return contiguous;
    if (t.sizes[d]->constant() != 1)
      dims.push_back(d);
  }
  std::stable_sort(dims.begin(), dims.end(), [&](size_t a, size_t b) {
    return t.strides[a]->constant() < t.strides[b]->constant();
  });
  int64_t expected = 1;
  for (size_t d : dims) {
    if (t.strides[d]->constant() != expected)
      return contiguous;
    expected *= t.sizes[d]->constant();
  }
  return t.strides;
}

/// Reads a number argument; nullopt when it is not one.
struct Number {
  double value = 0;
  DType dtype = DType::Int64; ///< Bool, Int64 or Float64, as torch types literals
};
std::optional<Number> numberArg(const NamedArg *a) {
  if (!a)
    return std::nullopt;
  const Arg &v = a->value;
  switch (v.kind) {
  case ArgKind::Bool:
    return Number{static_cast<double>(v.ints[0]), DType::Bool};
  case ArgKind::Int:
    return Number{static_cast<double>(v.ints[0]), DType::Int64};
  case ArgKind::SymInt:
    if (!v.values.empty() && v.values[0])
      return std::nullopt;
    return Number{static_cast<double>(v.ints[0]), DType::Int64};
  case ArgKind::Float:
    return Number{v.floats[0], DType::Float64};
  default:
    return std::nullopt;
  }
}

class GraphLowerer;
struct OpLowering {
  OpId op;
  Error (GraphLowerer::*fn)(const Node &, const OpLowering &);
  ScalarOp scalar = ScalarOp::Add;
  const char *lhs = "self";
  const char *rhs = "other";
};

/// An error thrown inside a lowering (an argument that does not read), caught
/// at the node and reported with its name.
struct LowerError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class GraphLowerer {
public:
  GraphLowerer(Module &m, const Graph &g, const LowerOptions &options, LoopGraph &out,
               LowerReport &report)
      : sx_(m.syms()), g_(g), options_(options), out_(out), report_(report),
        symRanges_(m.syms().ranges()) {}

  Error run();

  // Handlers (OpLowering::fn).
  Error binary(const Node &n, const OpLowering &e);
  Error compare(const Node &n, const OpLowering &e);
  Error logical(const Node &n, const OpLowering &e);
  Error unary(const Node &n, const OpLowering &e);
  Error predicate(const Node &n, const OpLowering &e);
  Error where(const Node &n, const OpLowering &e);
  Error clamp(const Node &n, const OpLowering &e);
  Error full(const Node &n, const OpLowering &e);
  Error arange(const Node &n, const OpLowering &e);
  Error reduction(const Node &n, const OpLowering &e);
  Error cumsum(const Node &n, const OpLowering &e);
  Error view(const Node &n, const OpLowering &e);
  Error asStrided(const Node &n, const OpLowering &e);
  Error toCopy(const Node &n, const OpLowering &e);
  Error cat(const Node &n, const OpLowering &e);
  Error pad(const Node &n, const OpLowering &e);
  Error index(const Node &n, const OpLowering &e);
  Error gather(const Node &n, const OpLowering &e);
  Error scatter(const Node &n, const OpLowering &e);
  Error indexPut(const Node &n, const OpLowering &e);
  Error maxPool(const Node &n, const OpLowering &e);
  Error avgPool(const Node &n, const OpLowering &e);
  Error flip(const Node &n, const OpLowering &e);
  Error sortRows(const Node &n, const OpLowering &e);
  Error externCall(const Node &n, const OpLowering &e);

private:
  /// A tensor, a constant number, or a symbolic int (a size the model's
  /// symbols give, read as an index expression).
  struct Operand {
    LoweredPtr tensor;
    Number number;
    PromotionOperand promotion;
    const SymExpr *symbolic = nullptr;
  };

  static std::vector<LoweredPtr> tensorsOf(std::initializer_list<const Operand *> operands) {
    std::vector<LoweredPtr> out;
    for (const Operand *o : operands)
      if (o && o->tensor)
        out.push_back(o->tensor);
    return out;
  }
  /// Adds a Reduction node computing result 0 of `n` and records its value.
  void addReduction(LoopNode node, BodyBuilder b, uint32_t value, const Value *result);
  /// Adds a Reduction node of `kind` over `inner` that writes a contiguous
  /// intermediate buffer `name` (one element per point of `outer`) with the
  /// body `b` builds, result `value`; returns the buffer's value.
  LoweredPtr scratchReduction(const std::string &name, const std::string &origin,
                              ReduceKind kind, const Exprs &outer, const Exprs &inner,
                              BodyBuilder b, uint32_t value);

  Error lowerNode(const Node &n);
  /// A Fallback node for `n`; with --no-fallback an error, saying `why` if
  /// the op has a lowering that does not take this node.
  Error fallback(const Node &n, const std::string &why = "");
  Error callNode(const Node &n, LoopNode::Kind kind);
  std::string where(const Node &n) const {
    return "graph '" + g_.name() + "': node '" + nodeName(n) + "' (" + opString(n.op()) + ")";
  }
  static std::string nodeName(const Node &n) {
    return n.results().empty() ? opString(n.op()) : n.results()[0]->name();
  }

  LoweredPtr value(const Value *v) const { return vals_.at(v); }
  const TensorType &resultType(const Node &n, size_t i = 0) const {
    return n.results()[i]->type().tensor;
  }
  Operand operand(const Node &n, const char *name) const;
  uint32_t emitOperand(BodyBuilder &b, const Operand &o, const Exprs &idx, DType dtype) const;
  LoweredPtr pointwise(DType dtype, Exprs sizes, unsigned ownCost,
                       const std::vector<LoweredPtr> &inputs, Loader loader) const;
  LoweredPtr makeView(const LoweredPtr &base, Exprs sizes, IndexMap map);
  LoweredPtr stridedLowered(DType dtype, StridedView view) const;
  /// Records the lowering of `v`, realizing it when the heuristics say so.
  void define(const Value *v, LoweredPtr l);
  /// Puts `v`'s value in a buffer of its own; returns its view.
  StridedView realize(const Value *v);
  /// Realizes argument `name` of `n` if it is an extern's epilogue that
  /// `n`'s result broadcasts: computed once per element of its own rather
  /// than once per point of the result (the sigmoid of a squeeze-excitation
  /// gate, read at every position of its channel).
  void realizeBroadcastEpilogue(const Node &n, const char *name);
  /// Appends `node` under a name no other node has.
  void addNode(LoopNode node);
  /// Writes `l` into `buffer` with a Pointwise node.
  void writePointwise(const std::string &name, const std::string &origin, const Lowered &l,
                      uint32_t buffer);
  /// A scattering Pointwise node over `ranges`: the body `b` computes
  /// `value`, stored into `buffer` at `target` (one index per buffer dim,
  /// over i0.. and t0.., with `at` the body values bound to t0..).
  void addScatter(const std::string &name, const std::string &origin, uint32_t buffer,
                  const Exprs &ranges, BodyBuilder b, uint32_t value, std::vector<uint32_t> at,
                  const Exprs &target, StoreCombine combine);
  /// A buffer for result `v` of a node: the graph's output buffer if `v` is
  /// one the node may write directly, else an intermediate.
  uint32_t resultBuffer(const Value *v, const TensorType &type, bool flexible);
  /// `base`, or `base_1`, `base_2`, ... if `taken` holds it; recorded in `taken`.
  static std::string uniqueName(std::set<std::string> &taken, const std::string &base);
  uint32_t addBuffer(std::string name, BufferKind kind, DType dtype, Exprs sizes, Exprs strides,
                     bool flexible);
  BufferView bufferView(DType dtype, const StridedView &v) const;
  BodyBuilder builder(const Exprs &ranges, const Exprs &reductionRanges = {}) const;
  std::vector<int64_t> ints(const Node &n, const char *name) const;
  std::vector<int64_t> windowArg(const Node &n, const char *name, std::vector<int64_t> dflt) const;

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
  std::vector<std::optional<LoopBinding>> outputBindings_;
  std::set<std::string> bufferNames_, nodeNames_;
  /// Values whose buffers are laid out channels-last (ActivationLayout.h).
  std::unordered_set<const Value *> channelsLast_;
};

/// A value several consumers read is recomputed in each of them while its
/// body costs at most this much (softmax's exp(x - max) stays inlined in
/// both the sum and the division), and is realized beyond that: a short body
/// is cheaper to repeat than a round trip through memory, as Inductor's
/// realize-on-reuse threshold also judges.
constexpr unsigned kReuseInlineCost = 4;

// Tables ---------------------------------------------------------------------

#define GC_BIN(NAME, OP) OpLowering{NAME, &GraphLowerer::binary, ScalarOp::OP}
#define GC_CMP(NAME, OP) OpLowering{NAME, &GraphLowerer::compare, ScalarOp::OP}
#define GC_UN(NAME, OP) OpLowering{NAME, &GraphLowerer::unary, ScalarOp::OP}
#define GC_POLY(NAME, OP) OpLowering{NAME, &GraphLowerer::binary, ScalarOp::OP, "x", "n"}
#define GC_UN_X(NAME, OP) OpLowering{NAME, &GraphLowerer::unary, ScalarOp::OP, "x"}

const OpRegistry<OpLowering> &lowerings() {
  static const OpRegistry<OpLowering> registry = [] {
    static const OpLowering kTable[] = {
        GC_BIN(ops::aten_add_Tensor, Add),
        GC_BIN(ops::aten_add_Scalar, Add),
        GC_BIN(ops::aten_sub_Tensor, Sub),
        GC_BIN(ops::aten_sub_Scalar, Sub),
        GC_BIN(ops::aten_mul_Tensor, Mul),
        GC_BIN(ops::aten_mul_Scalar, Mul),
        GC_BIN(ops::aten_div_Tensor, Div),
        GC_BIN(ops::aten_div_Scalar, Div),
        GC_BIN(ops::aten_div_Tensor_mode, Div),
        GC_BIN(ops::aten_div_Scalar_mode, Div),
        GC_BIN(ops::aten_maximum_default, Maximum),
        GC_BIN(ops::aten_minimum_default, Minimum),
        GC_BIN(ops::aten_remainder_Tensor, Remainder),
        GC_BIN(ops::aten_remainder_Scalar, Remainder),
        GC_BIN(ops::aten_fmod_Tensor, Fmod),
        GC_BIN(ops::aten_fmod_Scalar, Fmod),
        GC_BIN(ops::aten_bitwise_and_Tensor, BitwiseAnd),
        GC_BIN(ops::aten_bitwise_and_Scalar, BitwiseAnd),
        GC_BIN(ops::aten_bitwise_or_Tensor, BitwiseOr),
        GC_BIN(ops::aten_bitwise_or_Scalar, BitwiseOr),
        GC_BIN(ops::aten_bitwise_xor_Tensor, BitwiseXor),
        GC_BIN(ops::aten_gcd_default, Gcd),
        // Special functions of two tensors.
        GC_BIN(ops::aten_igamma_default, Igamma),
        GC_BIN(ops::aten_igammac_default, Igammac),
        GC_BIN(ops::aten_special_zeta_default, Zeta),
        GC_POLY(ops::aten_special_chebyshev_polynomial_t_default, ChebyshevT),
        GC_POLY(ops::aten_special_chebyshev_polynomial_u_default, ChebyshevU),
        GC_POLY(ops::aten_special_chebyshev_polynomial_v_default, ChebyshevV),
        GC_POLY(ops::aten_special_chebyshev_polynomial_w_default, ChebyshevW),
        GC_POLY(ops::aten_special_hermite_polynomial_h_default, HermiteH),
        GC_POLY(ops::aten_special_hermite_polynomial_he_default, HermiteHe),
        GC_POLY(ops::aten_special_laguerre_polynomial_l_default, LaguerreL),
        GC_POLY(ops::aten_special_legendre_polynomial_p_default, LegendreP),
        OpLowering{ops::aten_pow_Tensor_Tensor, &GraphLowerer::binary, ScalarOp::Pow, "self",
                   "exponent"},
        OpLowering{ops::aten_pow_Tensor_Scalar, &GraphLowerer::binary, ScalarOp::Pow, "self",
                   "exponent"},
        OpLowering{ops::aten_pow_Scalar, &GraphLowerer::binary, ScalarOp::Pow, "self", "exponent"},
        GC_CMP(ops::aten_eq_Tensor, Eq),
        GC_CMP(ops::aten_eq_Scalar, Eq),
        GC_CMP(ops::aten_ne_Tensor, Ne),
        GC_CMP(ops::aten_ne_Scalar, Ne),
        GC_CMP(ops::aten_lt_Tensor, Lt),
        GC_CMP(ops::aten_lt_Scalar, Lt),
        GC_CMP(ops::aten_le_Tensor, Le),
        GC_CMP(ops::aten_le_Scalar, Le),
        GC_CMP(ops::aten_gt_Tensor, Gt),
        GC_CMP(ops::aten_gt_Scalar, Gt),
        GC_CMP(ops::aten_ge_Tensor, Ge),
        GC_CMP(ops::aten_ge_Scalar, Ge),
        OpLowering{ops::aten_logical_and_default, &GraphLowerer::logical, ScalarOp::LogicalAnd},
        OpLowering{ops::aten_logical_or_default, &GraphLowerer::logical, ScalarOp::LogicalOr},
        OpLowering{ops::aten_logical_xor_default, &GraphLowerer::logical, ScalarOp::Ne},
        GC_UN(ops::aten_neg_default, Neg),
        GC_UN(ops::aten_abs_default, Abs),
        // The floating unary ops: their GC_UNARY_OP rows.
#define GC_OP(ID, NAME, SET, TRAITS, SUMMARY, SCHEMA)
#define GC_UNARY_OP(ID, NAME, SCALAR_OP, SUMMARY, FORMULA, FACTOR) GC_UN(ops::ID, SCALAR_OP),
#include "gc/IR/OpDefs.def"
#undef GC_UNARY_OP
#undef GC_OP
        GC_UN(ops::aten_floor_default, Floor),
        GC_UN(ops::aten_ceil_default, Ceil),
        GC_UN(ops::aten_round_default, Round),
        GC_UN(ops::aten_trunc_default, Trunc),
        GC_UN(ops::aten_sign_default, Sign),
        GC_UN(ops::aten_bitwise_not_default, BitwiseNot),
        GC_UN_X(ops::aten_special_airy_ai_default, AiryAi),
        GC_UN_X(ops::aten_special_scaled_modified_bessel_k0_default, K0e),
        GC_UN_X(ops::aten_special_scaled_modified_bessel_k1_default, K1e),
        OpLowering{ops::aten_isnan_default, &GraphLowerer::predicate, ScalarOp::IsNan},
        OpLowering{ops::aten_logical_not_default, &GraphLowerer::predicate, ScalarOp::LogicalNot},
        OpLowering{ops::aten_where_self, &GraphLowerer::where},
        OpLowering{ops::aten_clamp_default, &GraphLowerer::clamp},
        OpLowering{ops::aten_clamp_Tensor, &GraphLowerer::clamp},
        OpLowering{ops::aten_full_default, &GraphLowerer::full},
        OpLowering{ops::aten_scalar_tensor_default, &GraphLowerer::full},
        OpLowering{ops::aten_arange_default, &GraphLowerer::arange},
        OpLowering{ops::aten_arange_start, &GraphLowerer::arange},
        OpLowering{ops::aten_arange_start_step, &GraphLowerer::arange},
        OpLowering{ops::aten_sum_default, &GraphLowerer::reduction},
        OpLowering{ops::aten_sum_dim_IntList, &GraphLowerer::reduction},
        OpLowering{ops::aten_prod_default, &GraphLowerer::reduction},
        OpLowering{ops::aten_prod_dim_int, &GraphLowerer::reduction},
        OpLowering{ops::aten_amax_default, &GraphLowerer::reduction},
        OpLowering{ops::aten_amin_default, &GraphLowerer::reduction},
        OpLowering{ops::aten_argmax_default, &GraphLowerer::reduction},
        OpLowering{ops::aten_argmin_default, &GraphLowerer::reduction},
        OpLowering{ops::aten_any_default, &GraphLowerer::reduction},
        OpLowering{ops::aten_any_dim, &GraphLowerer::reduction},
        OpLowering{ops::aten_any_dims, &GraphLowerer::reduction},
        OpLowering{ops::aten_cumsum_default, &GraphLowerer::cumsum},
        OpLowering{ops::aten_view_default, &GraphLowerer::view},
        OpLowering{ops::aten_reshape_default, &GraphLowerer::view},
        OpLowering{ops::aten__unsafe_view_default, &GraphLowerer::view},
        OpLowering{ops::aten_permute_default, &GraphLowerer::view},
        OpLowering{ops::aten_expand_default, &GraphLowerer::view},
        OpLowering{ops::aten_slice_Tensor, &GraphLowerer::view},
        OpLowering{ops::aten_select_int, &GraphLowerer::view},
        OpLowering{ops::aten_squeeze_default, &GraphLowerer::view},
        OpLowering{ops::aten_squeeze_dim, &GraphLowerer::view},
        OpLowering{ops::aten_squeeze_dims, &GraphLowerer::view},
        OpLowering{ops::aten_unsqueeze_default, &GraphLowerer::view},
        OpLowering{ops::aten_alias_default, &GraphLowerer::view},
        OpLowering{ops::aten_detach_default, &GraphLowerer::view},
        OpLowering{ops::aten_clone_default, &GraphLowerer::view},
        OpLowering{ops::aten_as_strided_default, &GraphLowerer::asStrided},
        OpLowering{ops::aten__to_copy_default, &GraphLowerer::toCopy},
        OpLowering{ops::aten_cat_default, &GraphLowerer::cat},
        OpLowering{ops::aten_constant_pad_nd_default, &GraphLowerer::pad},
        OpLowering{ops::aten_index_Tensor, &GraphLowerer::index},
        OpLowering{ops::aten_gather_default, &GraphLowerer::gather},
        OpLowering{ops::aten_scatter_src, &GraphLowerer::scatter},
        OpLowering{ops::aten_scatter_add_default, &GraphLowerer::scatter},
        OpLowering{ops::aten_scatter_reduce_two, &GraphLowerer::scatter},
        OpLowering{ops::aten_index_put_default, &GraphLowerer::indexPut},
        OpLowering{ops::aten_max_pool2d_with_indices_default, &GraphLowerer::maxPool},
        OpLowering{ops::aten_avg_pool2d_default, &GraphLowerer::avgPool},
        OpLowering{ops::aten_flip_default, &GraphLowerer::flip},
        OpLowering{ops::aten_sort_default, &GraphLowerer::sortRows},
        OpLowering{ops::aten_topk_default, &GraphLowerer::sortRows},
        OpLowering{ops::aten_mm_default, &GraphLowerer::externCall},
        OpLowering{ops::aten_bmm_default, &GraphLowerer::externCall},
        OpLowering{ops::aten_convolution_default, &GraphLowerer::externCall},
        // Only where the CPU pipeline kept it whole (gc/IR/CpuSteps.h).
        OpLowering{ops::aten_scaled_dot_product_attention_default, &GraphLowerer::externCall},
    };
    OpRegistry<OpLowering> r;
    r.add(kTable);
    return r;
  }();
  return registry;
}

#undef GC_BIN
#undef GC_CMP
#undef GC_UN
#undef GC_POLY
#undef GC_UN_X

/// True if `op` lowers to a strided view of its input (GraphLowerer::view):
/// a read of its result is a read of the input. clone is one of them, though
/// no view in torch: its copy is made only where the value is realized.
bool lowersToView(OpId op) {
  const OpLowering *l = lowerings().find(op);
  return l && l->fn == &GraphLowerer::view;
}

// Building blocks ------------------------------------------------------------

/// A dimension argument counted from the end when negative.
size_t wrap(int64_t d, size_t rank) {
  int64_t r = static_cast<int64_t>(std::max<size_t>(rank, 1));
  int64_t w = d < 0 ? d + r : d;
  if (w < 0 || w >= r)
    throw LowerError("dim " + std::to_string(d) + " is out of range");
  return static_cast<size_t>(w);
}


std::vector<int64_t> GraphLowerer::ints(const Node &n, const char *name) const {
  try {
    return ArgReader(n.args()).ints(name);
  } catch (const ArgumentError &e) {
    throw LowerError(e.what());
  }
}

BodyBuilder GraphLowerer::builder(const Exprs &ranges, const Exprs &reductionRanges) const {
  VarRanges r = symRanges_;
  for (size_t i = 0; i < ranges.size(); ++i)
    r[loopVar('i', i)] = loopVarRange(ranges[i], symRanges_);
  for (size_t i = 0; i < reductionRanges.size(); ++i)
    r[loopVar('r', i)] = loopVarRange(reductionRanges[i], symRanges_);
  return BodyBuilder(sx_, std::move(r));
}

std::string GraphLowerer::uniqueName(std::set<std::string> &taken, const std::string &base) {
  std::string name = base;
  for (int k = 1; !taken.insert(name).second; ++k)
    name = base + "_" + std::to_string(k);
  return name;
}

uint32_t GraphLowerer::addBuffer(std::string name, BufferKind kind, DType dtype, Exprs sizes,
                                 Exprs strides, bool flexible) {
  name = uniqueName(bufferNames_, name);
  out_.buffers.push_back(
      Buffer{std::move(name), kind, dtype, std::move(sizes), std::move(strides), flexible});
  return static_cast<uint32_t>(out_.buffers.size() - 1);
}

BufferView GraphLowerer::bufferView(DType dtype, const StridedView &v) const {
  TensorType t;
  t.dtype = dtype;
  t.sizes = v.sizes;
  t.strides = v.strides;
  t.storageOffset = v.offset;
  return BufferView{v.buffer, std::move(t)};
}

LoweredPtr GraphLowerer::stridedLowered(DType dtype, StridedView view) const {
  auto l = std::make_shared<Lowered>();
  l->dtype = dtype;
  l->sizes = view.sizes;
  l->view = std::move(view);
  return l;
}

LoweredPtr GraphLowerer::pointwise(DType dtype, Exprs sizes, unsigned ownCost,
                                   const std::vector<LoweredPtr> &inputs, Loader loader) const {
  auto l = std::make_shared<Lowered>();
  l->dtype = dtype;
  l->sizes = std::move(sizes);
  l->cost = ownCost;
  for (const LoweredPtr &in : inputs)
    l->cost += in->cost;
  l->loader = std::move(loader);
  if (!inputs.empty() && inputs[0]->epilogueOf &&
      std::all_of(inputs.begin(), inputs.end(),
                  [&](const LoweredPtr &in) { return in->epilogueOf == inputs[0]->epilogueOf; }))
    l->epilogueOf = inputs[0]->epilogueOf;
  return l;
}

GraphLowerer::Operand GraphLowerer::operand(const Node &n, const char *name) const {
  const NamedArg *a = n.arg(name);
  if (a && a->value.kind == ArgKind::Tensor) {
    LoweredPtr t = value(a->value.values[0]);
    return Operand{t, {}, {t->dtype, t->sizes.empty() ? PromotionOperand::Rank::ZeroDim
                                                       : PromotionOperand::Rank::Tensor}};
  }
  if (a && a->value.kind == ArgKind::SymInt && a->value.values.at(0))
    return Operand{nullptr, {}, {DType::Int64, PromotionOperand::Rank::Scalar},
                   symIntOf(sx_, *a->value.values[0])};
  std::optional<Number> num = numberArg(a);
  if (!num)
    throw LowerError(std::string("argument '") + name + "' is neither a tensor nor a number");
  return Operand{nullptr, *num, {num->dtype, PromotionOperand::Rank::Scalar}};
}

uint32_t GraphLowerer::emitOperand(BodyBuilder &b, const Operand &o, const Exprs &idx,
                                   DType dtype) const {
  if (o.tensor)
    return b.cast(emitBroadcast(b, *o.tensor, idx), dtype);
  if (o.symbolic)
    return b.cast(b.index(o.symbolic), dtype);
  return b.cast(b.constant(o.number.dtype, o.number.value), dtype);
}

LoweredPtr GraphLowerer::makeView(const LoweredPtr &base, Exprs sizes, IndexMap map) {
  auto l = std::make_shared<Lowered>();
  l->dtype = base->dtype;
  l->sizes = sizes;
  l->cost = base->cost;
  if (base->view) {
    BodyBuilder b = builder(sizes);
    Exprs vars = loopVars(sx_, 'i', sizes.size());
    const SymExpr *e =
        b.simplify(dot(sx_, map(sx_, vars), base->view->strides, base->view->offset));
    StridedView v{base->view->buffer, sizes, {}, nullptr};
    std::map<std::string, const SymExpr *> zero;
    for (size_t d = 0; d < sizes.size(); ++d) {
      const SymExpr *c = affineCoefficient(sx_, e, loopVar('i', d));
      if (!c)
        break;
      v.strides.push_back(c);
      zero[loopVar('i', d)] = sx_.constant(0);
    }
    if (v.strides.size() == sizes.size()) {
      v.offset = substitute(sx_, e, zero);
      l->view = std::move(v);
      l->cost = 1;
      return l;
    }
  }
  l->loader = [base, map](BodyBuilder &b, const Exprs &idx) {
    return emit(b, *base, map(b.syms(), idx));
  };
  return l;
}

void GraphLowerer::addNode(LoopNode node) {
  node.name = uniqueName(nodeNames_, node.name);
  out_.nodes.push_back(std::move(node));
}

void GraphLowerer::writePointwise(const std::string &name, const std::string &origin,
                                  const Lowered &l, uint32_t buffer) {
  LoopNode node;
  node.kind = LoopNode::Kind::Pointwise;
  node.name = name;
  node.origin = origin;
  node.ranges = l.sizes;
  BodyBuilder b = builder(l.sizes);
  Exprs vars = loopVars(sx_, 'i', l.sizes.size());
  uint32_t result = b.cast(emit(b, l, vars), out_.buffers[buffer].dtype);
  node.body = std::move(b).finish(result);
  node.output = buffer;
  node.storeIndex =
      builder(l.sizes).simplify(dot(sx_, vars, out_.buffers[buffer].strides, sx_.constant(0)));
  addNode(std::move(node));
}

void GraphLowerer::addScatter(const std::string &name, const std::string &origin,
                              uint32_t buffer, const Exprs &ranges, BodyBuilder b, uint32_t value,
                              std::vector<uint32_t> at, const Exprs &target,
                              StoreCombine combine) {
  LoopNode node;
  node.kind = LoopNode::Kind::Pointwise;
  node.name = name;
  node.origin = origin;
  node.ranges = ranges;
  uint32_t result = b.cast(value, out_.buffers[buffer].dtype);
  node.body = std::move(b).finish(result, &at);
  node.storeIndirect = std::move(at);
  node.combine = combine;
  node.output = buffer;
  node.storeIndex =
      builder(ranges).simplify(dot(sx_, target, out_.buffers[buffer].strides, sx_.constant(0)));
  addNode(std::move(node));
}

uint32_t GraphLowerer::resultBuffer(const Value *v, const TensorType &type, bool flexible) {
  auto owned = ownedOutput_.find(v);
  if (owned != ownedOutput_.end()) {
    Exprs strides = denseStrides(sx_, type);
    uint32_t buf = addBuffer(v->name(), BufferKind::Output, type.dtype, type.sizes, strides, false);
    TensorType bound = type;
    bound.strides = strides;
    bound.storageOffset = sx_.constant(0);
    outputBindings_[owned->second] = LoopBinding{v->name(), buf, std::move(bound)};
    ownedOutput_.erase(owned);
    return buf;
  }
  Exprs strides = flexible ? contiguousStrides(sx_, type.sizes) : denseStrides(sx_, type);
  if (channelsLast_.count(v) && type.rank() == 4) {
    strides = channelsLastStrides(sx_, type.sizes);
    ++report_.channelsLastBuffers;
  }
  return addBuffer(v->name(), BufferKind::Intermediate, type.dtype, type.sizes, strides, flexible);
}

StridedView GraphLowerer::realize(const Value *v) {
  LoweredPtr l = value(v);
  if (l->view)
    return *l->view;
  TensorType type = v->type().tensor;
  type.sizes = l->sizes;
  uint32_t buf = resultBuffer(v, type, true);
  writePointwise(v->name(), v->name(), *l, buf);
  StridedView view{buf, l->sizes, out_.buffers[buf].strides, sx_.constant(0)};
  vals_[v] = stridedLowered(l->dtype, view);
  return view;
}

void GraphLowerer::define(const Value *v, LoweredPtr l) {
  vals_[v] = l;
  if (l->view)
    return;
  unsigned uses = uses_.count(v) ? uses_.at(v) : 0;
  // Several readers of an extern's epilogue read it from memory: the extern
  // computes it as it stores (PostOps.h), where each reader would repeat it.
  if (ownedOutput_.count(v) || (uses > 1 && (l->cost > kReuseInlineCost || l->epilogueOf)) ||
      l->cost > options_.maxInlineOps)
    realize(v);
}

// Pointwise ops --------------------------------------------------------------

void GraphLowerer::realizeBroadcastEpilogue(const Node &n, const char *name) {
  const NamedArg *a = n.arg(name);
  if (!a || a->value.kind != ArgKind::Tensor || !a->value.values[0])
    return;
  const Value *v = a->value.values[0];
  LoweredPtr l = value(v);
  auto numel = [](const Exprs &sizes) -> std::optional<int64_t> {
    int64_t n = 1;
    for (const SymExpr *s : sizes) {
      if (!s->isConst())
        return std::nullopt;
      n *= s->constant();
    }
    return n;
  };
  std::optional<int64_t> own = numel(l->sizes), result = numel(resultType(n).sizes);
  if (!l->view && l->epilogueOf && own && result && *own < *result)
    realize(v);
}

Error GraphLowerer::binary(const Node &n, const OpLowering &e) {
  realizeBroadcastEpilogue(n, e.lhs);
  realizeBroadcastEpilogue(n, e.rhs);
  Operand a = operand(n, e.lhs), b = operand(n, e.rhs);
  const TensorType &rt = resultType(n);
  DType dtype = rt.dtype;
  ScalarOp op = e.scalar;
  std::string mode = ArgReader(n.args()).string("rounding_mode", "");
  if (mode == "floor")
    op = ScalarOp::FloorDiv;
  else if (mode == "trunc")
    op = ScalarOp::TruncDiv;
  std::optional<Number> alpha = numberArg(n.arg("alpha"));
  if (alpha && alpha->value == 1)
    alpha.reset();
  std::vector<LoweredPtr> ins = tensorsOf({&a, &b});
  Loader f = [this, a, b, dtype, op, alpha](BodyBuilder &bb, const Exprs &idx) {
    uint32_t x = emitOperand(bb, a, idx, dtype);
    uint32_t y = emitOperand(bb, b, idx, dtype);
    if (alpha)
      y = bb.compute(ScalarOp::Mul, dtype, {y, bb.cast(bb.constant(alpha->dtype, alpha->value), dtype)});
    return bb.compute(op, dtype, {x, y});
  };
  define(n.results()[0], pointwise(dtype, rt.sizes, alpha ? 3 : 1, ins, std::move(f)));
  return Error::success();
}

Error GraphLowerer::compare(const Node &n, const OpLowering &e) {
  Operand a = operand(n, e.lhs), b = operand(n, e.rhs);
  PromotionOperand ops[] = {a.promotion, b.promotion};
  DType common = gc::resultType(ops);
  std::vector<LoweredPtr> ins = tensorsOf({&a, &b});
  ScalarOp op = e.scalar;
  Loader f = [this, a, b, common, op](BodyBuilder &bb, const Exprs &idx) {
    return bb.compute(op, DType::Bool,
                      {emitOperand(bb, a, idx, common), emitOperand(bb, b, idx, common)});
  };
  define(n.results()[0], pointwise(DType::Bool, resultType(n).sizes, 1, ins, std::move(f)));
  return Error::success();
}

Error GraphLowerer::logical(const Node &n, const OpLowering &e) {
  Operand a = operand(n, e.lhs), b = operand(n, e.rhs);
  const TensorType &rt = resultType(n);
  std::vector<LoweredPtr> ins = tensorsOf({&a, &b});
  ScalarOp op = e.scalar;
  DType dtype = rt.dtype;
  Loader f = [this, a, b, op, dtype](BodyBuilder &bb, const Exprs &idx) {
    uint32_t r = bb.compute(op, DType::Bool,
                            {emitOperand(bb, a, idx, DType::Bool),
                             emitOperand(bb, b, idx, DType::Bool)});
    return bb.cast(r, dtype);
  };
  define(n.results()[0], pointwise(dtype, rt.sizes, 1, ins, std::move(f)));
  return Error::success();
}

Error GraphLowerer::unary(const Node &n, const OpLowering &e) {
  Operand a = operand(n, e.lhs);
  const TensorType &rt = resultType(n);
  DType dtype = rt.dtype;
  ScalarOp op = e.scalar;
  Loader f = [this, a, dtype, op](BodyBuilder &bb, const Exprs &idx) {
    return bb.compute(op, dtype, {emitOperand(bb, a, idx, dtype)});
  };
  define(n.results()[0], pointwise(dtype, rt.sizes, 1, {a.tensor}, std::move(f)));
  return Error::success();
}

Error GraphLowerer::predicate(const Node &n, const OpLowering &e) {
  Operand a = operand(n, "self");
  const TensorType &rt = resultType(n);
  ScalarOp op = e.scalar;
  DType in = a.tensor->dtype, dtype = rt.dtype;
  Loader f = [this, a, in, op, dtype](BodyBuilder &bb, const Exprs &idx) {
    return bb.cast(bb.compute(op, DType::Bool, {emitOperand(bb, a, idx, in)}), dtype);
  };
  define(n.results()[0], pointwise(dtype, rt.sizes, 1, {a.tensor}, std::move(f)));
  return Error::success();
}

Error GraphLowerer::where(const Node &n, const OpLowering &) {
  Operand c = operand(n, "condition"), a = operand(n, "self"), b = operand(n, "other");
  const TensorType &rt = resultType(n);
  DType dtype = rt.dtype;
  std::vector<LoweredPtr> ins = tensorsOf({&c, &a, &b});
  Loader f = [this, c, a, b, dtype](BodyBuilder &bb, const Exprs &idx) {
    return bb.compute(ScalarOp::Where, dtype,
                      {emitOperand(bb, c, idx, DType::Bool), emitOperand(bb, a, idx, dtype),
                       emitOperand(bb, b, idx, dtype)});
  };
  define(n.results()[0], pointwise(dtype, rt.sizes, 1, ins, std::move(f)));
  return Error::success();
}

Error GraphLowerer::clamp(const Node &n, const OpLowering &) {
  Operand x = operand(n, "self");
  ArgReader args(n.args());
  std::optional<Operand> lo, hi;
  if (args.has("min"))
    lo = operand(n, "min");
  if (args.has("max"))
    hi = operand(n, "max");
  const TensorType &rt = resultType(n);
  DType dtype = rt.dtype;
  std::vector<LoweredPtr> ins =
      tensorsOf({&x, lo ? &*lo : nullptr, hi ? &*hi : nullptr});
  Loader f = [this, x, lo, hi, dtype](BodyBuilder &bb, const Exprs &idx) {
    uint32_t v = emitOperand(bb, x, idx, dtype);
    if (lo)
      v = bb.compute(ScalarOp::Maximum, dtype, {v, emitOperand(bb, *lo, idx, dtype)});
    if (hi)
      v = bb.compute(ScalarOp::Minimum, dtype, {v, emitOperand(bb, *hi, idx, dtype)});
    return v;
  };
  define(n.results()[0], pointwise(dtype, rt.sizes, 2, ins, std::move(f)));
  return Error::success();
}

Error GraphLowerer::full(const Node &n, const OpLowering &) {
  const char *name = n.arg("fill_value") ? "fill_value" : "s";
  std::optional<Number> fill = numberArg(n.arg(name));
  if (!fill)
    throw LowerError(std::string("argument '") + name + "' is not a number");
  const TensorType &rt = resultType(n);
  Number value = *fill;
  DType dtype = rt.dtype;
  Loader f = [value, dtype](BodyBuilder &bb, const Exprs &) {
    return bb.cast(bb.constant(value.dtype, value.value), dtype);
  };
  define(n.results()[0], pointwise(dtype, rt.sizes, 0, {}, std::move(f)));
  return Error::success();
}

Error GraphLowerer::arange(const Node &n, const OpLowering &) {
  Number start{0, DType::Int64}, step{1, DType::Int64};
  if (n.arg("start"))
    start = numberArg(n.arg("start")).value_or(start);
  if (n.arg("step"))
    step = numberArg(n.arg("step")).value_or(step);
  const TensorType &rt = resultType(n);
  DType dtype = rt.dtype;
  bool integral = start.dtype != DType::Float64 && step.dtype != DType::Float64;
  Loader f = [start, step, dtype, integral](BodyBuilder &bb, const Exprs &idx) {
    SymContext &sx = bb.syms();
    if (integral)
      return bb.cast(bb.index(sx.add(sx.constant(static_cast<int64_t>(start.value)),
                                     sx.mul(idx[0], sx.constant(static_cast<int64_t>(step.value))))),
                     dtype);
    uint32_t i = bb.cast(bb.index(idx[0]), DType::Float64);
    uint32_t v = bb.compute(ScalarOp::Mul, DType::Float64, {i, bb.constant(DType::Float64, step.value)});
    v = bb.compute(ScalarOp::Add, DType::Float64, {v, bb.constant(DType::Float64, start.value)});
    return bb.cast(v, dtype);
  };
  define(n.results()[0], pointwise(dtype, rt.sizes, 3, {}, std::move(f)));
  return Error::success();
}

// Reductions -----------------------------------------------------------------

Error GraphLowerer::reduction(const Node &n, const OpLowering &) {
  ReduceKind kind = ReduceKind::Sum;
  switch (n.op()) {
  case ops::aten_prod_default:
  case ops::aten_prod_dim_int:
    kind = ReduceKind::Prod;
    break;
  case ops::aten_amax_default:
    kind = ReduceKind::Max;
    break;
  case ops::aten_amin_default:
    kind = ReduceKind::Min;
    break;
  case ops::aten_argmax_default:
    kind = ReduceKind::ArgMax;
    break;
  case ops::aten_argmin_default:
    kind = ReduceKind::ArgMin;
    break;
  case ops::aten_any_default:
  case ops::aten_any_dim:
  case ops::aten_any_dims:
    kind = ReduceKind::Any;
    break;
  default:
    break;
  }
  LoweredPtr x = value(n.arg("self")->value.values[0]);
  int64_t rank = static_cast<int64_t>(x->sizes.size());
  ArgReader args(n.args());
  std::vector<int64_t> dims;
  if (args.has("dim"))
    dims = ints(n, "dim");
  bool keepdim = args.boolean("keepdim", false);
  std::vector<bool> reduced(rank, dims.empty());
  for (int64_t d : dims) {
    int64_t w = d < 0 ? d + rank : d;
    if (w < 0 || w >= std::max<int64_t>(rank, 1))
      throw LowerError("dim " + std::to_string(d) + " is out of range");
    if (rank > 0)
      reduced[w] = true;
  }
  const Value *result = n.results()[0];
  const TensorType &rt = result->type().tensor;
  Exprs outer = rt.sizes, inner;
  Exprs ivars = loopVars(sx_, 'i', outer.size());
  Exprs inIdx;
  size_t nextOuter = 0, nextInner = 0;
  for (int64_t d = 0; d < rank; ++d) {
    if (reduced[d]) {
      inner.push_back(x->sizes[d]);
      inIdx.push_back(sx_.symbol(loopVar('r', nextInner++)));
      nextOuter += keepdim;
    } else {
      inIdx.push_back(ivars.at(nextOuter++));
    }
  }
  LoopNode node;
  node.reduce = kind;
  node.reductionRanges = inner;
  BodyBuilder b = builder(outer, inner);
  uint32_t v = emit(b, *x, inIdx);
  if (kind == ReduceKind::Any)
    v = b.cast(v, DType::Bool);
  else if (kind != ReduceKind::ArgMax && kind != ReduceKind::ArgMin)
    v = b.cast(v, rt.dtype);
  addReduction(std::move(node), std::move(b), v, result);
  return Error::success();
}

/// cumsum: a scan along `dim`, serial along it (r0) and parallel over the
/// other dims, accumulating in the result's dtype (int64 for integer and
/// bool inputs, or `dtype`), as torch's result type says.
Error GraphLowerer::cumsum(const Node &n, const OpLowering &) {
  LoweredPtr x = value(n.arg("self")->value.values[0]);
  const Value *result = n.results()[0];
  const TensorType &rt = result->type().tensor;
  size_t rank = x->sizes.size();
  size_t dim = wrap(ArgReader(n.args()).integer("dim"), rank);
  Exprs outer, inner{rank == 0 ? sx_.constant(1) : x->sizes[dim]};
  Exprs idx;
  for (size_t d = 0, next = 0; d < rank; ++d) {
    if (d == dim) {
      idx.push_back(sx_.symbol(loopVar('r', 0)));
      continue;
    }
    outer.push_back(x->sizes[d]);
    idx.push_back(sx_.symbol(loopVar('i', next++)));
  }
  LoopNode node;
  node.kind = LoopNode::Kind::Reduction;
  node.reduce = ReduceKind::Sum;
  node.scan = true;
  node.name = result->name();
  node.origin = result->name();
  node.ranges = outer;
  node.reductionRanges = inner;
  BodyBuilder b = builder(outer, inner);
  uint32_t v = b.cast(emit(b, *x, idx), rt.dtype);
  node.body = std::move(b).finish(v);
  node.output = resultBuffer(result, rt, true);
  const Exprs &strides = out_.buffers[node.output].strides;
  node.storeIndex = builder(outer, inner).simplify(dot(sx_, idx, strides, sx_.constant(0)));
  StridedView view{node.output, rt.sizes, strides, sx_.constant(0)};
  addNode(std::move(node));
  vals_[result] = stridedLowered(rt.dtype, view);
  return Error::success();
}

void GraphLowerer::addReduction(LoopNode node, BodyBuilder b, uint32_t value,
                                const Value *result) {
  const TensorType &rt = result->type().tensor;
  node.kind = LoopNode::Kind::Reduction;
  node.name = result->name();
  node.origin = result->name();
  node.ranges = rt.sizes;
  node.body = std::move(b).finish(value);
  node.output = resultBuffer(result, rt, true);
  const Exprs &strides = out_.buffers[node.output].strides;
  node.storeIndex = builder(rt.sizes).simplify(
      dot(sx_, loopVars(sx_, 'i', rt.rank()), strides, sx_.constant(0)));
  StridedView view{node.output, rt.sizes, strides, sx_.constant(0)};
  addNode(std::move(node));
  vals_[result] = stridedLowered(rt.dtype, view);
}

LoweredPtr GraphLowerer::scratchReduction(const std::string &name, const std::string &origin,
                                          ReduceKind kind, const Exprs &outer,
                                          const Exprs &inner, BodyBuilder b, uint32_t value) {
  LoopNode node;
  node.kind = LoopNode::Kind::Reduction;
  node.reduce = kind;
  node.name = name;
  node.origin = origin;
  node.ranges = outer;
  node.reductionRanges = inner;
  DType dtype = b.dtypeOf(value);
  node.body = std::move(b).finish(value);
  Exprs strides = contiguousStrides(sx_, outer);
  node.output = addBuffer(name, BufferKind::Intermediate,
                          kind == ReduceKind::ArgMax || kind == ReduceKind::ArgMin ? DType::Int64
                                                                                   : dtype,
                          outer, strides, true);
  node.storeIndex = builder(outer).simplify(
      dot(sx_, loopVars(sx_, 'i', outer.size()), strides, sx_.constant(0)));
  LoweredPtr l = stridedLowered(out_.buffers[node.output].dtype,
                                StridedView{node.output, outer, strides, sx_.constant(0)});
  addNode(std::move(node));
  return l;
}

// Views ----------------------------------------------------------------------

/// Index map of a reshape: the row-major position, split along the base.
Exprs reshapeIndex(SymContext &sx, const Exprs &inSizes, const Exprs &outSizes, const Exprs &idx) {
  Exprs outStrides = contiguousStrides(sx, outSizes), inStrides = contiguousStrides(sx, inSizes);
  const SymExpr *linear = dot(sx, idx, outStrides, sx.constant(0));
  Exprs in;
  for (size_t d = 0; d < inSizes.size(); ++d) {
    const SymExpr *e = sx.floorDiv(linear, inStrides[d]);
    if (d > 0)
      e = sx.mod(e, inSizes[d]);
    in.push_back(e);
  }
  return in;
}

Error GraphLowerer::view(const Node &n, const OpLowering &) {
  OpId op = n.op();
  LoweredPtr base = value(n.arg("self")->value.values[0]);
  const TensorType &rt = resultType(n);
  Exprs in = base->sizes, out = rt.sizes;
  size_t inRank = in.size(), outRank = out.size();
  ArgReader args(n.args());
  IndexMap map;
  if (isOneOf(op, {ops::aten_alias_default, ops::aten_detach_default, ops::aten_clone_default})) {
    define(n.results()[0], base);
    return Error::success();
  } else if (op == ops::aten_view_default || op == ops::aten_reshape_default ||
             op == ops::aten__unsafe_view_default) {
    map = [in, out](SymContext &sx, const Exprs &idx) { return reshapeIndex(sx, in, out, idx); };
  } else if (op == ops::aten_permute_default) {
    std::vector<size_t> dims;
    for (int64_t d : ints(n, "dims"))
      dims.push_back(wrap(d, inRank));
    map = [dims](SymContext &, const Exprs &idx) {
      Exprs r(idx.size());
      for (size_t j = 0; j < dims.size(); ++j)
        r[dims[j]] = idx[j];
      return r;
    };
  } else if (op == ops::aten_expand_default) {
    map = [in, out](SymContext &sx, const Exprs &idx) {
      size_t lead = out.size() - in.size();
      Exprs r;
      for (size_t d = 0; d < in.size(); ++d) {
        bool one = in[d]->isConst() && in[d]->constant() == 1;
        r.push_back(one ? sx.constant(0) : idx[lead + d]);
      }
      return r;
    };
  } else if (op == ops::aten_slice_Tensor) {
    size_t dim = wrap(args.integer("dim", 0), inRank);
    int64_t start = args.has("start") ? args.integer("start") : 0;
    int64_t step = args.integer("step", 1);
    const SymExpr *startE = sx_.constant(start);
    if (start < 0) {
      startE = sx_.add(in[dim], startE);
      if (in[dim]->isConst())
        startE = sx_.constant(std::max<int64_t>(start + in[dim]->constant(), 0));
    } else if (in[dim]->isConst()) {
      startE = sx_.constant(std::min(start, in[dim]->constant()));
    }
    map = [dim, startE, step](SymContext &sx, const Exprs &idx) {
      Exprs r = idx;
      r[dim] = sx.add(startE, sx.mul(idx[dim], sx.constant(step)));
      return r;
    };
  } else if (op == ops::aten_select_int) {
    size_t dim = wrap(args.integer("dim"), inRank);
    int64_t index = args.integer("index");
    const SymExpr *ie = index < 0 ? sx_.add(in[dim], sx_.constant(index)) : sx_.constant(index);
    map = [dim, ie](SymContext &, const Exprs &idx) {
      Exprs r = idx;
      r.insert(r.begin() + dim, ie);
      return r;
    };
  } else if (isOneOf(op, {ops::aten_squeeze_default, ops::aten_squeeze_dim, ops::aten_squeeze_dims})) {
    // Result dims are the base dims that are kept, in order; the dropped
    // ones have size 1 and read index 0.
    std::vector<bool> dropped(inRank, false);
    std::vector<size_t> candidates;
    if (op == ops::aten_squeeze_default) {
      for (size_t d = 0; d < inRank; ++d)
        candidates.push_back(d);
    } else {
      for (int64_t d : ints(n, "dim"))
        candidates.push_back(wrap(d, inRank));
    }
    size_t drops = 0;
    for (size_t d : candidates)
      if (d < inRank && in[d]->isConst() && in[d]->constant() == 1 && !dropped[d]) {
        dropped[d] = true;
        ++drops;
      }
    if (inRank - drops != outRank)
      throw LowerError("cannot tell which dimensions squeeze removes");
    map = [dropped](SymContext &sx, const Exprs &idx) {
      Exprs r;
      size_t next = 0;
      for (bool drop : dropped)
        r.push_back(drop ? sx.constant(0) : idx[next++]);
      return r;
    };
  } else if (op == ops::aten_unsqueeze_default) {
    size_t dim = wrap(args.integer("dim"), inRank + 1);
    map = [dim](SymContext &, const Exprs &idx) {
      Exprs r = idx;
      r.erase(r.begin() + dim);
      return r;
    };
  }
  define(n.results()[0], makeView(base, out, std::move(map)));
  return Error::success();
}

/// as_strided reads self's storage: torch's storage position p of self is
/// element `offset - storageOffset + p` of a buffer that holds self with
/// torch's own strides. A value laid out otherwise is first written into
/// such a buffer. The result is a strided view of it (no copy); its sizes,
/// strides and offset are those the shape function gave the result.
Error GraphLowerer::asStrided(const Node &n, const OpLowering &) {
  const Value *self = n.arg("self")->value.values[0];
  const TensorType &st = self->type().tensor, &rt = resultType(n);
  for (const SymExpr *e : rt.strides)
    if (e->isConst() && e->constant() < 0)
      throw LowerError("negative strides are not supported");
  LoweredPtr x = value(self);
  std::optional<StridedView> base = x->view;
  if (!base || base->strides != st.strides) {
    if (denseStrides(sx_, st) != st.strides)
      throw LowerError("self is not dense; its storage is not known here");
    uint32_t buf = addBuffer(self->name() + "_storage", BufferKind::Intermediate, x->dtype, x->sizes,
                             st.strides, false);
    writePointwise(self->name() + "_storage", nodeName(n), *x, buf);
    base = StridedView{buf, x->sizes, st.strides, sx_.constant(0)};
  }
  const SymExpr *offset = sx_.add(base->offset, sx_.sub(rt.storageOffset, st.storageOffset));
  // Where every size and stride is known, the view must stay inside the
  // elements the buffer holds.
  auto extent = [&](const Exprs &sizes, const Exprs &strides, const SymExpr *start) {
    const SymExpr *e = start;
    for (size_t d = 0; d < sizes.size(); ++d)
      e = sx_.add(e, sx_.mul(sx_.sub(sizes[d], sx_.constant(1)), strides[d]));
    return e;
  };
  const SymExpr *last = extent(rt.sizes, rt.strides, offset);
  const Buffer &b = out_.buffers[base->buffer];
  const SymExpr *bufLast = extent(b.sizes, b.strides, sx_.constant(0));
  bool empty = std::any_of(rt.sizes.begin(), rt.sizes.end(),
                           [](const SymExpr *e) { return e->isConst() && e->constant() == 0; });
  if (!empty && offset->isConst() && last->isConst() && bufLast->isConst() &&
      (offset->constant() < 0 || last->constant() > bufLast->constant()))
    throw LowerError("the view reaches outside self's elements (elements " +
                     std::to_string(offset->constant()) + " to " +
                     std::to_string(last->constant()) + " of " +
                     std::to_string(bufLast->constant() + 1) + ")");
  define(n.results()[0], stridedLowered(x->dtype, StridedView{base->buffer, rt.sizes, rt.strides,
                                                              builder({}).simplify(offset)}));
  return Error::success();
}

Error GraphLowerer::toCopy(const Node &n, const OpLowering &) {
  LoweredPtr x = value(n.arg("self")->value.values[0]);
  DType dtype = resultType(n).dtype;
  if (dtype == x->dtype) {
    define(n.results()[0], x);
    return Error::success();
  }
  Loader f = [x, dtype](BodyBuilder &bb, const Exprs &idx) {
    return bb.cast(emit(bb, *x, idx), dtype);
  };
  define(n.results()[0], pointwise(dtype, x->sizes, 1, {x}, std::move(f)));
  return Error::success();
}

// Masked reads ---------------------------------------------------------------

/// Emits `inner` where `cond` holds (loads masked by it) and `otherwise`
/// elsewhere.
uint32_t emitMasked(BodyBuilder &b, uint32_t cond, DType dtype,
                    const std::function<uint32_t()> &inner, uint32_t otherwise) {
  int32_t saved = b.mask();
  b.setMask(static_cast<int32_t>(b.andMask(cond)));
  uint32_t v = b.cast(inner(), dtype);
  b.setMask(saved);
  return b.compute(ScalarOp::Where, dtype, {cond, v, otherwise});
}

/// lo <= e < hi, as a Bool body value; either bound may be null.
uint32_t emitInRange(BodyBuilder &b, const SymExpr *e, const SymExpr *lo, const SymExpr *hi) {
  uint32_t v = b.index(e);
  std::optional<uint32_t> cond;
  auto conj = [&](uint32_t c) {
    cond = cond ? b.compute(ScalarOp::LogicalAnd, DType::Bool, {*cond, c}) : c;
  };
  if (lo)
    conj(b.compute(ScalarOp::Ge, DType::Bool, {v, b.index(lo)}));
  if (hi)
    conj(b.compute(ScalarOp::Lt, DType::Bool, {v, b.index(hi)}));
  return cond ? *cond : b.constant(DType::Bool, 1);
}

Error GraphLowerer::cat(const Node &n, const OpLowering &) {
  const TensorType &rt = resultType(n);
  int64_t rank = static_cast<int64_t>(rt.rank());
  int64_t wrapped = ArgReader(n.args()).integer("dim", 0);
  wrapped += wrapped < 0 ? rank : 0;
  if (wrapped < 0 || wrapped >= rank)
    throw LowerError("dim is out of range");
  size_t dim = static_cast<size_t>(wrapped);
  std::vector<LoweredPtr> parts;
  for (const Value *v : n.arg("tensors")->value.values) {
    LoweredPtr l = value(v);
    bool legacyEmpty = l->sizes.size() == 1 && l->sizes[0]->isConst() &&
                       l->sizes[0]->constant() == 0 && rt.rank() != 1;
    if (!legacyEmpty)
      parts.push_back(l);
  }
  Exprs offsets{sx_.constant(0)};
  for (const LoweredPtr &p : parts)
    offsets.push_back(sx_.add(offsets.back(), p->sizes[dim]));
  DType dtype = rt.dtype;
  Loader f = [parts, offsets, dim, dtype](BodyBuilder &bb, const Exprs &idx) {
    SymContext &sx = bb.syms();
    std::optional<uint32_t> acc;
    for (size_t k = parts.size(); k-- > 0;) {
      const SymExpr *lo = k == 0 ? nullptr : offsets[k];
      const SymExpr *hi = k + 1 == parts.size() ? nullptr : offsets[k + 1];
      uint32_t cond = emitInRange(bb, idx[dim], lo, hi);
      Exprs shifted = idx;
      shifted[dim] = sx.sub(idx[dim], offsets[k]);
      const LoweredPtr &part = parts[k];
      auto inner = [&] { return emit(bb, *part, shifted); };
      uint32_t otherwise = acc ? *acc : bb.constant(dtype, 0);
      acc = emitMasked(bb, cond, dtype, inner, otherwise);
    }
    return acc ? *acc : bb.constant(dtype, 0);
  };
  define(n.results()[0], pointwise(dtype, rt.sizes, 4 * static_cast<unsigned>(parts.size()),
                                   parts, std::move(f)));
  return Error::success();
}

Error GraphLowerer::pad(const Node &n, const OpLowering &) {
  LoweredPtr x = value(n.arg("self")->value.values[0]);
  std::vector<int64_t> p = ints(n, "pad");
  std::optional<Number> fill = numberArg(n.arg("value"));
  double fillValue = fill ? fill->value : 0;
  const TensorType &rt = resultType(n);
  size_t rank = rt.rank();
  if (p.size() % 2 || p.size() / 2 > rank)
    throw LowerError("pad has " + std::to_string(p.size()) + " entries");
  std::vector<int64_t> low(rank, 0);
  for (size_t k = 0; k < p.size() / 2; ++k)
    low[rank - 1 - k] = p[2 * k];
  DType dtype = rt.dtype;
  Exprs outSizes = rt.sizes;
  Loader f = [x, low, outSizes, dtype, fillValue](BodyBuilder &bb, const Exprs &idx) {
    SymContext &sx = bb.syms();
    Exprs in;
    std::optional<uint32_t> cond;
    for (size_t d = 0; d < idx.size(); ++d) {
      in.push_back(sx.sub(idx[d], sx.constant(low[d])));
      if (low[d] == 0 && x->sizes[d] == outSizes[d])
        continue;
      uint32_t c = emitInRange(bb, in[d], sx.constant(0), x->sizes[d]);
      cond = cond ? bb.compute(ScalarOp::LogicalAnd, DType::Bool, {*cond, c}) : c;
    }
    if (!cond)
      return bb.cast(emit(bb, *x, in), dtype);
    return emitMasked(bb, *cond, dtype, [&] { return emit(bb, *x, in); },
                      bb.cast(bb.constant(DType::Float64, fillValue), dtype));
  };
  define(n.results()[0], pointwise(dtype, rt.sizes, 6, {x}, std::move(f)));
  return Error::success();
}

// Gathers and pooling --------------------------------------------------------

Error GraphLowerer::index(const Node &n, const OpLowering &) {
  const Value *self = n.arg("self")->value.values[0];
  const std::vector<Value *> &indices = n.arg("indices")->value.values;
  for (const Value *v : indices)
    // Boolean masks select a data-dependent number of elements.
    if (v && (v->type().tensor.dtype == DType::Bool || v->type().tensor.dtype == DType::UInt8))
      return fallback(n);
  StridedView base = realize(self);
  DType dtype = value(self)->dtype;
  const TensorType &rt = resultType(n);
  size_t selfRank = base.sizes.size();
  std::vector<size_t> indexed;
  std::vector<LoweredPtr> idxVals;
  for (size_t d = 0; d < indices.size(); ++d)
    if (indices[d]) {
      indexed.push_back(d);
      idxVals.push_back(value(indices[d]));
    }
  if (indexed.empty())
    throw LowerError("index.Tensor without index tensors");
  size_t bRank = rt.rank() + indexed.size() - selfRank;
  bool adjacent = indexed.back() - indexed.front() + 1 == indexed.size();
  size_t bStart = adjacent ? indexed.front() : 0;
  Loader f = [base, indexed, idxVals, bRank, bStart, dtype](BodyBuilder &bb, const Exprs &idx) {
    SymContext &sx = bb.syms();
    Exprs bIdx(idx.begin() + bStart, idx.begin() + bStart + bRank);
    Exprs in(base.sizes.size(), nullptr);
    std::vector<uint32_t> indirect;
    VarRanges tRanges;
    for (size_t k = 0; k < indexed.size(); ++k) {
      size_t d = indexed[k];
      uint32_t t = bb.cast(emitBroadcast(bb, *idxVals[k], bIdx), DType::Int64);
      uint32_t neg = bb.compute(ScalarOp::Lt, DType::Bool, {t, bb.constant(DType::Int64, 0)});
      uint32_t wrapped = bb.compute(ScalarOp::Add, DType::Int64, {t, bb.index(base.sizes[d])});
      indirect.push_back(bb.compute(ScalarOp::Where, DType::Int64, {neg, wrapped, t}));
      in[d] = sx.symbol(loopVar('t', k));
      tRanges[loopVar('t', k)] = loopVarRange(base.sizes[d], bb.ranges());
    }
    size_t next = 0;
    for (size_t d = 0; d < in.size(); ++d) {
      if (in[d])
        continue;
      if (next == bStart)
        next += bRank;
      in[d] = idx[next++];
    }
    return bb.load(base.buffer, dtype, dot(sx, in, base.strides, base.offset), std::move(indirect),
                   tRanges);
  };
  define(n.results()[0], pointwise(dtype, rt.sizes, 1 + 4 * static_cast<unsigned>(indexed.size()),
                                   idxVals, std::move(f)));
  return Error::success();
}

/// `x` read at `in`, a window element of a pooling over the last two dims;
/// `outside` (as `dtype`) where the element lies in the padding or past the
/// input (ceil_mode). Without padding or ceil_mode every window lies inside.
uint32_t emitWindow(BodyBuilder &b, const Lowered &x, const Exprs &in,
                    const std::vector<int64_t> &padding, bool ceilMode, DType dtype,
                    double outside) {
  size_t rank = in.size();
  std::optional<uint32_t> cond;
  for (size_t k = 0; k < 2; ++k) {
    if (padding[k] == 0 && !ceilMode)
      continue;
    uint32_t c = emitInRange(b, in[rank - 2 + k], b.syms().constant(0), x.sizes[rank - 2 + k]);
    cond = cond ? b.compute(ScalarOp::LogicalAnd, DType::Bool, {*cond, c}) : c;
  }
  if (!cond)
    return b.cast(emit(b, x, in), dtype);
  return emitMasked(b, *cond, dtype, [&] { return emit(b, x, in); }, b.constant(dtype, outside));
}

/// A pooling window argument: one value per spatial dim, or one for both;
/// an absent or empty one (stride) means `dflt`.
std::vector<int64_t> GraphLowerer::windowArg(const Node &n, const char *name,
                                             std::vector<int64_t> dflt) const {
  std::vector<int64_t> v = ArgReader(n.args()).has(name) ? ints(n, name) : dflt;
  if (v.empty())
    v = dflt;
  if (v.size() == 1)
    v.push_back(v[0]);
  if (v.size() != 2)
    throw LowerError(std::string("argument '") + name + "' needs 1 or 2 values");
  return v;
}

/// gather reads self where the index says along `dim` (no bounds check, as
/// index.Tensor: a bad index reads another element, or past the buffer).
Error GraphLowerer::gather(const Node &n, const OpLowering &) {
  const Value *self = n.arg("self")->value.values[0];
  LoweredPtr index = value(n.arg("index")->value.values[0]);
  StridedView base = realize(self);
  size_t rank = base.sizes.size();
  size_t dim = wrap(ArgReader(n.args()).integer("dim"), rank);
  if (index->sizes.size() != rank)
    throw LowerError("gather needs an index of self's rank");
  DType dtype = value(self)->dtype;
  Loader f = [base, index, dim, rank, dtype](BodyBuilder &bb, const Exprs &idx) {
    SymContext &sx = bb.syms();
    uint32_t t = bb.cast(emit(bb, *index, idx), DType::Int64);
    if (rank == 0)
      return bb.load(base.buffer, dtype, base.offset);
    Exprs in = idx;
    in[dim] = sx.symbol(loopVar('t', 0));
    VarRanges tRanges{{loopVar('t', 0), loopVarRange(base.sizes[dim], bb.ranges())}};
    return bb.load(base.buffer, dtype, dot(sx, in, base.strides, base.offset), {t}, tRanges);
  };
  define(n.results()[0], pointwise(dtype, resultType(n).sizes, 2, {index}, std::move(f)));
  return Error::success();
}

/// scatter.src, scatter_add and scatter_reduce.two: a copy of self in the
/// result's buffer, then scattering nodes over the index's points that
/// write (or combine) src's element at the same point into the element the
/// index names along `dim`. Indices are not checked (see gather).
Error GraphLowerer::scatter(const Node &n, const OpLowering &) {
  ArgReader args(n.args());
  LoweredPtr self = value(n.arg("self")->value.values[0]);
  LoweredPtr index = value(n.arg("index")->value.values[0]);
  LoweredPtr src = value(n.arg("src")->value.values[0]);
  size_t rank = self->sizes.size();
  size_t dim = wrap(args.integer("dim"), rank);
  if (index->sizes.size() != rank)
    throw LowerError("scatter needs an index of self's rank");
  std::string reduce = n.op() == ops::aten_scatter_add_default ? "sum"
                       : n.op() == ops::aten_scatter_src     ? ""
                                                             : args.string("reduce", "");
  bool includeSelf = args.boolean("include_self", true);
  static const std::map<std::string, StoreCombine> kCombines = {
      {"", StoreCombine::None},     {"sum", StoreCombine::Add}, {"mean", StoreCombine::Add},
      {"prod", StoreCombine::Mul},  {"amax", StoreCombine::Max}, {"amin", StoreCombine::Min}};
  auto combine = kCombines.find(reduce);
  if (combine == kCombines.end())
    throw LowerError("reduce '" + reduce + "' is not one of sum, prod, mean, amax, amin");
  const Value *result = n.results()[0];
  const TensorType &rt = result->type().tensor;
  DType dtype = rt.dtype;
  const std::string &name = result->name();
  Exprs ranges = index->sizes;
  auto fromSrc = [&](BodyBuilder &b, const Exprs &iv) { return emit(b, *src, iv); };
  auto constant = [&](double c) {
    return [c](BodyBuilder &b, const Exprs &) { return b.constant(DType::Float64, c); };
  };
  // One scattering node into `buffer`.
  auto pass = [&](const std::string &suffix, uint32_t buffer, StoreCombine how,
                  const std::function<uint32_t(BodyBuilder &, const Exprs &)> &valueOf) {
    BodyBuilder b = builder(ranges);
    Exprs iv = loopVars(sx_, 'i', ranges.size());
    uint32_t t = b.cast(emit(b, *index, iv), DType::Int64);
    uint32_t v = valueOf(b, iv);
    Exprs target = iv;
    if (rank > 0)
      target[dim] = sx_.symbol(loopVar('t', 0));
    addScatter(name + suffix, name, buffer, ranges, std::move(b), v, {t}, target, how);
  };
  // A buffer holding a copy of self, where the scatters go.
  auto copyOfSelf = [&](uint32_t buffer) {
    writePointwise(out_.buffers[buffer].name + "_self", name, *self, buffer);
    // Without self, an element the index names starts from the
    // reduction's identity; for amax and amin one of its own values
    // serves (max(x, x) = x), which needs no extreme constant.
    if (!includeSelf && combine->second != StoreCombine::None)
      pass("_init", buffer, StoreCombine::None,
           reduce == "amax" || reduce == "amin" ? std::function(fromSrc)
                                                : std::function(constant(reduce == "prod")));
  };
  if (reduce != "mean") {
    uint32_t buf = resultBuffer(result, rt, false);
    copyOfSelf(buf);
    pass("", buf, combine->second, fromSrc);
    vals_[result] = stridedLowered(
        dtype, StridedView{buf, rt.sizes, out_.buffers[buf].strides, sx_.constant(0)});
    return Error::success();
  }
  // mean: the sum over self (if included) and src, divided by how many
  // values went in (at least 1), with floor division for integers, as
  // torch computes it.
  Exprs strides = contiguousStrides(sx_, rt.sizes);
  uint32_t sums = addBuffer(name + "_sum", BufferKind::Intermediate, dtype, rt.sizes, strides, false);
  uint32_t counts =
      addBuffer(name + "_count", BufferKind::Intermediate, dtype, rt.sizes, strides, false);
  copyOfSelf(sums);
  pass("", sums, StoreCombine::Add, fromSrc);
  LoweredPtr start = pointwise(dtype, rt.sizes, 0, {}, [dtype, includeSelf](BodyBuilder &b, const Exprs &) {
    return b.constant(dtype, includeSelf ? 1 : 0);
  });
  writePointwise(name + "_count_init", name, *start, counts);
  pass("_count", counts, StoreCombine::Add, constant(1));
  LoweredPtr sumL = stridedLowered(dtype, StridedView{sums, rt.sizes, strides, sx_.constant(0)});
  LoweredPtr countL = stridedLowered(dtype, StridedView{counts, rt.sizes, strides, sx_.constant(0)});
  ScalarOp div = isFloatingPoint(dtype) ? ScalarOp::Div : ScalarOp::FloorDiv;
  define(result, pointwise(dtype, rt.sizes, 4, {sumL, countL},
                           [sumL, countL, dtype, div](BodyBuilder &b, const Exprs &idx) {
                             uint32_t c = emit(b, *countL, idx);
                             uint32_t zero = b.compute(ScalarOp::Eq, DType::Bool,
                                                       {c, b.constant(dtype, 0)});
                             c = b.compute(ScalarOp::Where, dtype, {zero, b.constant(dtype, 1), c});
                             return b.compute(div, dtype, {emit(b, *sumL, idx), c});
                           }));
  return Error::success();
}

/// index_put: a copy of self, then one scattering node over the points of
/// self[indices] (the shape index.Tensor gives) that writes (accumulate:
/// adds) the broadcast values there. Negative indices count from the end,
/// as in index.Tensor; others are not checked.
Error GraphLowerer::indexPut(const Node &n, const OpLowering &) {
  LoweredPtr self = value(n.arg("self")->value.values[0]);
  LoweredPtr values = value(n.arg("values")->value.values[0]);
  const std::vector<Value *> &indices = n.arg("indices")->value.values;
  for (const Value *v : indices)
    // Boolean masks select a data-dependent number of elements.
    if (v && (v->type().tensor.dtype == DType::Bool || v->type().tensor.dtype == DType::UInt8))
      return fallback(n);
  bool accumulate = ArgReader(n.args()).boolean("accumulate", false);
  size_t rank = self->sizes.size();
  if (indices.size() > rank)
    throw LowerError("too many indices for a tensor of rank " + std::to_string(rank));
  std::vector<size_t> indexed;
  std::vector<LoweredPtr> idxVals;
  Exprs broadcast;
  for (size_t d = 0; d < indices.size(); ++d) {
    if (!indices[d])
      continue;
    indexed.push_back(d);
    idxVals.push_back(value(indices[d]));
    // Index tensors broadcast together, trailing dims lined up.
    const Exprs &s = idxVals.back()->sizes;
    if (s.size() > broadcast.size())
      broadcast.insert(broadcast.begin(), s.size() - broadcast.size(), sx_.constant(1));
    for (size_t k = 0; k < s.size(); ++k) {
      const SymExpr *&b = broadcast[broadcast.size() - s.size() + k];
      if (b->isConst() && b->constant() == 1)
        b = s[k];
    }
  }
  if (indexed.empty())
    throw LowerError("index_put without index tensors");
  size_t bRank = broadcast.size();
  bool adjacent = indexed.back() - indexed.front() + 1 == indexed.size();
  size_t bStart = adjacent ? indexed.front() : 0;
  // The points: self's dims before the indexed block, the broadcast index
  // dims, then self's other dims.
  Exprs ranges(self->sizes.begin(), self->sizes.begin() + bStart);
  ranges.insert(ranges.end(), broadcast.begin(), broadcast.end());
  std::vector<bool> isIndexed(rank, false);
  for (size_t d : indexed)
    isIndexed[d] = true;
  for (size_t d = bStart; d < rank; ++d)
    if (!isIndexed[d])
      ranges.push_back(self->sizes[d]);

  const Value *result = n.results()[0];
  const TensorType &rt = result->type().tensor;
  uint32_t buf = resultBuffer(result, rt, false);
  writePointwise(out_.buffers[buf].name + "_self", result->name(), *self, buf);
  BodyBuilder b = builder(ranges);
  Exprs iv = loopVars(sx_, 'i', ranges.size());
  Exprs bIdx(iv.begin() + bStart, iv.begin() + bStart + bRank);
  std::vector<uint32_t> at;
  Exprs target(rank, nullptr);
  for (size_t k = 0; k < indexed.size(); ++k) {
    size_t d = indexed[k];
    uint32_t t = b.cast(emitBroadcast(b, *idxVals[k], bIdx), DType::Int64);
    uint32_t neg = b.compute(ScalarOp::Lt, DType::Bool, {t, b.constant(DType::Int64, 0)});
    uint32_t wrapped = b.compute(ScalarOp::Add, DType::Int64, {t, b.index(self->sizes[d])});
    at.push_back(b.compute(ScalarOp::Where, DType::Int64, {neg, wrapped, t}));
    target[d] = sx_.symbol(loopVar('t', k));
  }
  size_t next = 0;
  for (size_t d = 0; d < rank; ++d) {
    if (target[d])
      continue;
    if (next == bStart)
      next += bRank;
    target[d] = iv[next++];
  }
  uint32_t v = emitBroadcast(b, *values, iv);
  addScatter(result->name(), result->name(), buf, ranges, std::move(b), v, std::move(at), target,
             accumulate ? StoreCombine::Add : StoreCombine::None);
  vals_[result] = stridedLowered(
      rt.dtype, StridedView{buf, rt.sizes, out_.buffers[buf].strides, sx_.constant(0)});
  return Error::success();
}

Error GraphLowerer::maxPool(const Node &n, const OpLowering &) {
  LoweredPtr x = value(n.arg("self")->value.values[0]);
  std::vector<int64_t> kernel = windowArg(n, "kernel_size", {});
  std::vector<int64_t> stride = windowArg(n, "stride", kernel);
  std::vector<int64_t> padding = windowArg(n, "padding", {0, 0});
  std::vector<int64_t> dilation = windowArg(n, "dilation", {1, 1});
  bool ceilMode = ArgReader(n.args()).boolean("ceil_mode", false);
  const Value *result = n.results()[0];
  const TensorType &rt = result->type().tensor;
  size_t rank = rt.rank();
  if (rank < 3 || x->sizes.size() != rank)
    throw LowerError("max_pool2d expects 3 or 4 dimensions");
  Exprs outer = rt.sizes, inner{sx_.constant(kernel[0]), sx_.constant(kernel[1])};
  Exprs ivars = loopVars(sx_, 'i', rank), rvars = loopVars(sx_, 'r', 2);
  // Where window element (r0, r1) of output point (..., i_h, i_w) reads.
  Exprs starts, in(ivars.begin(), ivars.end() - 2);
  for (size_t k = 0; k < 2; ++k) {
    starts.push_back(sx_.sub(sx_.mul(ivars[rank - 2 + k], sx_.constant(stride[k])),
                             sx_.constant(padding[k])));
    in.push_back(sx_.add(starts[k], sx_.mul(rvars[k], sx_.constant(dilation[k]))));
  }
  // The window's value at (r0, r1); -inf where padding is read.
  auto window = [&](BodyBuilder &b) {
    return emitWindow(b, *x, in, padding, ceilMode, x->dtype,
                      -std::numeric_limits<double>::infinity());
  };
  LoopNode values;
  values.reduce = ReduceKind::Max;
  values.reductionRanges = inner;
  BodyBuilder vb = builder(outer, inner);
  uint32_t v = window(vb);
  addReduction(std::move(values), std::move(vb), v, result);
  if (n.results().size() < 2 || !uses_.count(n.results()[1]) || uses_.at(n.results()[1]) == 0)
    return Error::success();

  // The indices (what the backward scatters into): the first largest
  // element of each window, as torch picks it, as a position in the
  // input's H x W plane. ArgMax gives its place r0 * kw + r1 in the window.
  const Value *indices = n.results()[1];
  const TensorType &it = indices->type().tensor;
  BodyBuilder pb = builder(outer, inner);
  uint32_t w = window(pb);
  LoweredPtr place = scratchReduction(indices->name() + "_window", indices->name(),
                                      ReduceKind::ArgMax, it.sizes, inner, std::move(pb), w);
  const SymExpr *width = x->sizes[rank - 1];
  define(indices, pointwise(DType::Int64, it.sizes, 6, {place}, [=, this](BodyBuilder &b,
                                                                          const Exprs &idx) {
    uint32_t p = emit(b, *place, idx);
    uint32_t kw = b.constant(DType::Int64, static_cast<double>(kernel[1]));
    uint32_t r0 = b.compute(ScalarOp::FloorDiv, DType::Int64, {p, kw});
    uint32_t r1 = b.compute(ScalarOp::Remainder, DType::Int64, {p, kw});
    auto along = [&](size_t k, uint32_t r) {
      const SymExpr *start = sx_.sub(sx_.mul(idx[rank - 2 + k], sx_.constant(stride[k])),
                                     sx_.constant(padding[k]));
      uint32_t step = b.compute(ScalarOp::Mul, DType::Int64,
                                {r, b.constant(DType::Int64, static_cast<double>(dilation[k]))});
      return b.compute(ScalarOp::Add, DType::Int64, {b.index(start), step});
    };
    uint32_t row = b.compute(ScalarOp::Mul, DType::Int64, {along(0, r0), b.index(width)});
    return b.compute(ScalarOp::Add, DType::Int64, {row, along(1, r1)});
  }));
  return Error::success();
}

/// avg_pool2d: a Sum over each window (padding, and the part of a ceil_mode
/// window past the input, read as 0) into a buffer, then a division by the
/// window's count as torch counts it: the window clipped to the padded input
/// (count_include_pad), or to the input itself, or divisor_override.
Error GraphLowerer::avgPool(const Node &n, const OpLowering &) {
  LoweredPtr x = value(n.arg("self")->value.values[0]);
  std::vector<int64_t> kernel = windowArg(n, "kernel_size", {});
  std::vector<int64_t> stride = windowArg(n, "stride", kernel);
  std::vector<int64_t> padding = windowArg(n, "padding", {0, 0});
  ArgReader args(n.args());
  bool ceilMode = args.boolean("ceil_mode", false);
  bool countPad = args.boolean("count_include_pad", true);
  std::optional<int64_t> divisorOverride;
  if (args.has("divisor_override")) {
    divisorOverride = args.integer("divisor_override");
    if (*divisorOverride == 0)
      throw LowerError("divisor_override must not be zero");
  }
  const Value *result = n.results()[0];
  const TensorType &rt = result->type().tensor;
  size_t rank = rt.rank();
  if (rank < 3 || x->sizes.size() != rank)
    throw LowerError("avg_pool2d expects 3 or 4 dimensions");
  if (rt.dtype == DType::Bool)
    throw LowerError("avg_pool2d of a bool input is not supported");
  Exprs outer = rt.sizes, inner{sx_.constant(kernel[0]), sx_.constant(kernel[1])};
  Exprs ivars = loopVars(sx_, 'i', rank), rvars = loopVars(sx_, 'r', 2);
  auto start = [=, this](const Exprs &idx, size_t k) {
    return sx_.sub(sx_.mul(idx[rank - 2 + k], sx_.constant(stride[k])), sx_.constant(padding[k]));
  };
  Exprs in(ivars.begin(), ivars.end() - 2);
  for (size_t k = 0; k < 2; ++k)
    in.push_back(sx_.add(start(ivars, k), rvars[k]));

  BodyBuilder sb = builder(outer, inner);
  uint32_t v = emitWindow(sb, *x, in, padding, ceilMode, rt.dtype, 0);
  LoweredPtr sums = scratchReduction(result->name() + "_sum", result->name(), ReduceKind::Sum,
                                     outer, inner, std::move(sb), v);

  Exprs inSizes = x->sizes;
  DType dtype = rt.dtype;
  define(result, pointwise(dtype, outer, 8, {sums}, [=, this](BodyBuilder &b, const Exprs &idx) {
    const SymExpr *count = sx_.constant(1);
    for (size_t k = 0; k < 2; ++k) {
      if (divisorOverride)
        break;
      const SymExpr *lo = start(idx, k), *size = inSizes[rank - 2 + k];
      const SymExpr *hi = sx_.min(sx_.add(lo, sx_.constant(kernel[k])),
                                  sx_.add(size, sx_.constant(padding[k])));
      if (!countPad) {
        lo = sx_.max(lo, sx_.constant(0));
        hi = sx_.min(hi, size);
      }
      count = sx_.mul(count, sx_.sub(hi, lo));
    }
    uint32_t divisor = divisorOverride
                           ? b.constant(dtype, static_cast<double>(*divisorOverride))
                           : b.cast(b.index(b.simplify(count)), dtype);
    // Integer averages truncate, as torch's integer division does.
    ScalarOp div = isFloatingPoint(dtype) ? ScalarOp::Div : ScalarOp::TruncDiv;
    return b.compute(div, dtype, {emit(b, *sums, idx), divisor});
  }));
  return Error::success();
}

/// sort and topk (stable; NaN sorts as the largest value, as in torch) as
/// loops, by rank: element j of a row goes to position rank(j), the number
/// of elements that come before it (smaller, or equal and earlier; larger
/// for a descending order). Three nodes, all parallel over the rows: a Sum
/// over the row computes every rank, a second Sum finds the source index of
/// each output position (the one element whose rank it is), and the values
/// are a gather of self at those indices. The work grows with the square of
/// the row, so rows longer than kMaxRankSortRow (or of symbolic length)
/// keep the reference kernel, and --no-fallback says why.
constexpr int64_t kMaxRankSortRow = 2048;

Error GraphLowerer::sortRows(const Node &n, const OpLowering &) {
  bool isTopk = n.op() == ops::aten_topk_default;
  ArgReader args(n.args());
  const Value *self = n.arg("self")->value.values[0];
  LoweredPtr x = value(self);
  size_t rank = x->sizes.size();
  size_t dim = wrap(args.integer("dim", -1), rank);
  bool descending = isTopk ? args.boolean("largest", true) : args.boolean("descending", false);
  const SymExpr *row = rank == 0 ? sx_.constant(1) : x->sizes[dim];
  if (!row->isConst() || row->constant() > kMaxRankSortRow)
    return fallback(n, "rows of more than " + std::to_string(kMaxRankSortRow) +
                           " elements or of symbolic length (this one has " + row->str() + ")");
  if (n.results().size() != 2)
    throw LowerError("expected values and indices");
  const Value *values = n.results()[0], *indices = n.results()[1];
  const TensorType &vt = values->type().tensor;
  DType dtype = x->dtype;
  bool floating = isFloatingPoint(dtype);
  StridedView in = realize(self);
  LoweredPtr src = value(self);
  Exprs ivars = loopVars(sx_, 'i', rank);
  const SymExpr *r0 = sx_.symbol(loopVar('r', 0));
  // Index of the row element at position `at` along dim, the others at idx.
  auto along = [=](const Exprs &idx, const SymExpr *at) {
    Exprs e = idx;
    if (rank > 0)
      e[dim] = at;
    return e;
  };
  const SymExpr *own = rank == 0 ? sx_.constant(0) : ivars[dim];

  // rank(j) = #{k : k comes before j}, k = r0, j = the point's own element.
  Exprs sizes = x->sizes;
  BodyBuilder rb = builder(sizes, {row});
  uint32_t a = emit(rb, *src, along(ivars, r0)), b = emit(rb, *src, ivars);
  ScalarOp order = descending ? ScalarOp::Gt : ScalarOp::Lt;
  uint32_t first = rb.compute(order, DType::Bool, {a, b});
  uint32_t same = rb.compute(ScalarOp::Eq, DType::Bool, {a, b});
  if (floating) {
    uint32_t an = rb.compute(ScalarOp::IsNan, DType::Bool, {a});
    uint32_t bn = rb.compute(ScalarOp::IsNan, DType::Bool, {b});
    // NaN is the largest value, and equal to itself.
    uint32_t nanFirst = descending
                            ? rb.compute(ScalarOp::LogicalAnd, DType::Bool,
                                         {an, rb.compute(ScalarOp::LogicalNot, DType::Bool, {bn})})
                            : rb.compute(ScalarOp::LogicalAnd, DType::Bool,
                                         {rb.compute(ScalarOp::LogicalNot, DType::Bool, {an}), bn});
    first = rb.compute(ScalarOp::LogicalOr, DType::Bool, {first, nanFirst});
    same = rb.compute(ScalarOp::LogicalOr, DType::Bool,
                      {same, rb.compute(ScalarOp::LogicalAnd, DType::Bool, {an, bn})});
  }
  uint32_t earlier = rb.compute(ScalarOp::Lt, DType::Bool, {rb.index(r0), rb.index(own)});
  uint32_t before = rb.compute(
      ScalarOp::LogicalOr, DType::Bool,
      {first, rb.compute(ScalarOp::LogicalAnd, DType::Bool, {same, earlier})});
  uint32_t counted = rb.cast(before, DType::Int64);
  LoweredPtr ranks = scratchReduction(values->name() + "_rank", values->name(), ReduceKind::Sum,
                                      sizes, {row}, std::move(rb), counted);

  // The source index of output position p: the r0 whose rank is p.
  Exprs outSizes = vt.sizes;
  LoopNode source;
  source.reduce = ReduceKind::Sum;
  source.reductionRanges = {row};
  BodyBuilder sb = builder(outSizes, {row});
  uint32_t rk = emit(sb, *ranks, along(ivars, r0));
  uint32_t hit = sb.compute(ScalarOp::Eq, DType::Bool, {rk, sb.index(own)});
  uint32_t pos = sb.compute(ScalarOp::Where, DType::Int64,
                            {hit, sb.index(r0), sb.constant(DType::Int64, 0)});
  addReduction(std::move(source), std::move(sb), pos, indices);
  LoweredPtr idx = value(indices);

  VarRanges tRanges;
  tRanges[loopVar('t', 0)] = loopVarRange(row, symRanges_);
  define(values, pointwise(dtype, outSizes, 2, {idx}, [=, this](BodyBuilder &bb, const Exprs &o) {
    uint32_t t = emit(bb, *idx, o);
    Exprs at = along(o, sx_.symbol(loopVar('t', 0)));
    return bb.load(in.buffer, dtype, dot(sx_, at, in.strides, in.offset), {t}, tRanges);
  }));
  return Error::success();
}

/// flip reads each flipped dimension backwards. Not a strided view (its
/// strides would be negative, which the externs and bindings do not take):
/// a body its consumers inline, realized like any pointwise value.
Error GraphLowerer::flip(const Node &n, const OpLowering &) {
  LoweredPtr x = value(n.arg("self")->value.values[0]);
  size_t rank = x->sizes.size();
  std::vector<bool> flipped(rank, false);
  for (int64_t d : ints(n, "dims"))
    flipped[wrap(d, rank)] = true;
  Exprs sizes = x->sizes;
  define(n.results()[0],
         pointwise(x->dtype, sizes, 1, {x}, [=, this](BodyBuilder &b, const Exprs &idx) {
           Exprs in = idx;
           for (size_t d = 0; d < rank; ++d)
             if (flipped[d])
               in[d] = sx_.sub(sx_.sub(sizes[d], sx_.constant(1)), idx[d]);
           return emit(b, *x, in);
         }));
  return Error::success();
}

// Calls ----------------------------------------------------------------------

Error GraphLowerer::externCall(const Node &n, const OpLowering &) {
  return callNode(n, LoopNode::Kind::Extern);
}

Error GraphLowerer::fallback(const Node &n, const std::string &why) {
  if (options_.noFallback)
    return makeError() << where(n) << ": no lowering for " << n.op()
                       << (why.empty() ? "" : " with " + why);
  report_.fallbacks.push_back("node '" + nodeName(n) + "': " + opString(n.op()));
  return callNode(n, LoopNode::Kind::Fallback);
}

Error GraphLowerer::callNode(const Node &n, LoopNode::Kind kind) {
  LoopNode node;
  node.kind = kind;
  node.name = nodeName(n);
  node.origin = nodeName(n);
  node.op = n.op();
  // A channels-last convolution reads a graph input (or another fixed
  // buffer) through one conversion into a channels-last buffer of its own.
  bool channelsLast = !n.results().empty() && channelsLast_.count(n.results()[0]);
  auto input = [&](const Value *v, const std::string &arg) -> int64_t {
    StridedView view = realize(v);
    if (channelsLast && arg == "input" && view.sizes.size() == 4 &&
        view.strides != channelsLastStrides(sx_, view.sizes)) {
      uint32_t buf = addBuffer(v->name() + "_channels_last", BufferKind::Intermediate,
                               value(v)->dtype, view.sizes,
                               channelsLastStrides(sx_, view.sizes), true);
      ++report_.channelsLastBuffers;
      writePointwise(out_.buffers[buf].name, v->name(), *value(v), buf);
      view = StridedView{buf, view.sizes, out_.buffers[buf].strides, sx_.constant(0)};
    }
    node.inputs.push_back(bufferView(value(v)->dtype, view));
    return static_cast<int64_t>(node.inputs.size() - 1);
  };
  for (const NamedArg &a : n.args()) {
    LoopArg arg{a.name, a.keywordOnly, a.value};
    switch (a.value.kind) {
    case ArgKind::Tensor:
    case ArgKind::Tensors:
    case ArgKind::OptionalTensors:
      arg.value.values.clear();
      arg.value.ints.clear();
      for (const Value *v : a.value.values)
        arg.value.ints.push_back(v ? input(v, a.name) : -1);
      break;
    case ArgKind::SymInt:
    case ArgKind::SymInts:
    case ArgKind::SymFloat:
    case ArgKind::SymBool:
      for (const Value *v : a.value.values)
        if (v)
          return makeError() << where(n) << ": argument '" << a.name
                             << "' is symbolic; not supported by gc-lower";
      arg.value.values.clear();
      break;
    default:
      break;
    }
    node.args.push_back(std::move(arg));
  }
  for (const Value *r : n.results()) {
    if (!r->type().isTensor())
      return makeError() << where(n) << ": result '" << r->name() << "' is not a tensor";
    const TensorType &t = r->type().tensor;
    uint32_t buf = resultBuffer(r, t, false);
    StridedView view{buf, t.sizes, out_.buffers[buf].strides, sx_.constant(0)};
    node.outputs.push_back(bufferView(t.dtype, view));
    auto result = std::make_shared<Lowered>(*stridedLowered(t.dtype, view));
    if (kind == LoopNode::Kind::Extern)
      result->epilogueOf = buf;
    vals_[r] = std::move(result);
  }
  addNode(std::move(node));
  return Error::success();
}

// Driver ---------------------------------------------------------------------

Error GraphLowerer::lowerNode(const Node &n) {
  // A size computation has nothing to run: where a node uses its value,
  // lowering reads it as an expression (symIntOf).
  if (computesSizes(n.op()))
    return Error::success();
  // cond and while_loop stay calls: each graph they call is lowered to a
  // loop graph of its own, and the plan runs the one the data picks.
  if (callsGraphs(n.op()))
    return callNode(n, LoopNode::Kind::Call);
  const OpLowering *l = lowerings().find(n.op());
  if (!l)
    return fallback(n);
  for (const Value *r : n.results())
    if (!r->type().isTensor())
      return fallback(n);
  try {
    return (this->*(l->fn))(n, *l);
  } catch (const std::exception &e) {
    return makeError() << where(n) << ": " << e.what();
  }
}

Error GraphLowerer::run() {
  channelsLast_ = channelsLastValues(g_, options_.layout);
  out_.inputSpecs = g_.inputSpecs();
  out_.outputSpecs = g_.outputSpecs();
  for (size_t i = 0; i < g_.inputs().size(); ++i) {
    const Value *v = g_.inputs()[i];
    if (!v->type().isTensor())
      return makeError() << "graph '" << g_.name() << "': input '" << v->name()
                         << "' is not a tensor; not supported by gc-lower";
    const TensorType &t = v->type().tensor;
    uint32_t buf = addBuffer(v->name(), BufferKind::Input, t.dtype, t.sizes, t.strides, false);
    out_.inputs.push_back(LoopBinding{v->name(), buf, t});
    vals_[v] = stridedLowered(t.dtype, StridedView{buf, t.sizes, t.strides, sx_.constant(0)});
  }

  for (const Value *v : g_.outputs())
    ++uses_[v];
  for (auto it = g_.nodes().rbegin(); it != g_.nodes().rend(); ++it) {
    const Node &n = **it;
    unsigned through = 0;
    if (lowersToView(n.op()))
      for (const Value *r : n.results())
        through += uses_.count(r) ? uses_.at(r) : 0;
    for (const NamedArg &a : n.args())
      for (const Value *v : a.value.values)
        if (v)
          uses_[v] += lowersToView(n.op()) ? through : 1;
  }

  outputBindings_.resize(g_.outputs().size());
  std::map<const Value *, int> seen;
  for (size_t i = 0; i < g_.outputs().size(); ++i)
    ++seen[g_.outputs()[i]];
  for (size_t i = 0; i < g_.outputs().size(); ++i) {
    const Value *v = g_.outputs()[i];
    if (seen[v] == 1 && v->definingNode() && g_.outputSpecs()[i].aliasOf.empty() &&
        v->type().isTensor())
      ownedOutput_[v] = static_cast<int>(i);
  }

  for (const auto &node : g_.nodes())
    GC_RETURN_IF_ERROR(lowerNode(*node));

  for (size_t i = 0; i < g_.outputs().size(); ++i) {
    if (outputBindings_[i])
      continue;
    const Value *v = g_.outputs()[i];
    if (!v->type().isTensor())
      return makeError() << "graph '" << g_.name() << "': output '" << v->name()
                         << "' is not a tensor; not supported by gc-lower";
    TensorType t = v->type().tensor;
    t.strides = denseStrides(sx_, t);
    t.storageOffset = sx_.constant(0);
    std::string name = "out" + std::to_string(i);
    uint32_t buf = addBuffer(name, BufferKind::Output, t.dtype, t.sizes, t.strides, false);
    writePointwise(name, v->name(), *value(v), buf);
    outputBindings_[i] = LoopBinding{v->name(), buf, std::move(t)};
  }
  for (std::optional<LoopBinding> &b : outputBindings_)
    out_.outputs.push_back(std::move(*b));
  return Error::success();
}

/// gc-lower makes code for the CPU and for CUDA GPUs (gc-codegen picks
/// which): a tensor on any other device (meta) is refused, naming the first
/// input or node that has one.
Error requireCompilableDevices(const Module &module) {
  auto compilable = [](const Value *v) {
    return !v->type().isTensor() || v->type().tensor.device.kind == DeviceKind::CPU ||
           v->type().tensor.device.kind == DeviceKind::CUDA;
  };
  auto refuse = [](const Graph &g, const std::string &what, const Value *v) -> Error {
    return makeError() << "graph '" << g.name() << "': " << what << " is on "
                       << deviceName(v->type().tensor.device)
                       << "; gc compiles for the CPU and for CUDA GPUs only";
  };
  for (const auto &g : module.graphs()) {
    for (const Value *v : g->inputs())
      if (!compilable(v))
        return refuse(*g, "input '" + v->name() + "'", v);
    for (const auto &n : g->nodes())
      for (const Value *v : n->results())
        if (!compilable(v))
          return refuse(*g, "node '" + v->name() + "' (" + opString(n->op()) + ")", v);
  }
  return Error::success();
}

} // namespace

Expected<LowerReport> lowerModule(Module &module, const LowerOptions &options) {
  if (module.level() != Level::Core && module.level() != Level::Partitioned)
    return makeError() << "gc-lower expects a module at the core or partitioned level, got "
                       << levelName(module.level());
  GC_RETURN_IF_ERROR(requireCompilableDevices(module));
  LowerReport report;
  LowerOptions resolved = options;
  resolved.layout = resolveLayout(options.layout, module);
  for (const auto &g : module.graphs()) {
    LoopGraph &lg = module.addLoopGraph(g->name());
    GraphLowerer lowerer(module, *g, resolved, lg, report);
    GC_RETURN_IF_ERROR(lowerer.run());
  }
  module.clearGraphs();
  module.setLevel(Level::Loops);
  return report;
}

std::vector<OpId> loweredOps() {
  std::vector<OpId> ops = lowerings().ops();
  for (const OpSchema &s : allOpSchemas())
    if (s.core && (s.computesSizes() || s.callsGraphs()))
      ops.push_back(s.id);
  std::sort(ops.begin(), ops.end(), [](OpId a, OpId b) { return opName(a) < opName(b); });
  return ops;
}

} // namespace gc
