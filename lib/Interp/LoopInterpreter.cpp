//===- LoopInterpreter.cpp - Running loop IR directly ---------------------===//
//
// Index expressions are compiled once per node into trees over variable
// slots, with the size symbols replaced by their values, so that the inner
// loops evaluate them without looking names up.
//
//===----------------------------------------------------------------------===//
#include "gc/Interp/LoopInterpreter.h"

#include "gc/IR/ScalarEval.h"
#include "gc/Interp/ControlFlow.h"
#include "gc/Interp/Interpreter.h"

#include "gc/Interp/ReferenceCall.h"

#include <cmath>
#include <set>
#include <limits>
#include <numeric>

namespace gc {
namespace {

using Bindings = std::map<std::string, int64_t>;

/// Slots of the loop variables: i-vars, then r-vars, then t-vars.
constexpr size_t kMaxVars = 64;
constexpr size_t kReductionSlot = kMaxVars, kIndirectSlot = 2 * kMaxVars;

struct CompiledExpr {
  SymExpr::Kind kind = SymExpr::Kind::Const;
  int64_t constant = 0;
  size_t slot = 0;
  std::vector<CompiledExpr> operands;
};

int64_t floorDiv(int64_t a, int64_t b) {
  if (b == 0)
    return 0;
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t floorMod(int64_t a, int64_t b) {
  if (b == 0)
    return 0;
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

int64_t evalExpr(const CompiledExpr &e, const int64_t *vars) {
  using K = SymExpr::Kind;
  switch (e.kind) {
  case K::Const:
    return e.constant;
  case K::Symbol:
    return vars[e.slot];
  case K::Add: {
    uint64_t s = 0;
    for (const CompiledExpr &o : e.operands)
      s += static_cast<uint64_t>(evalExpr(o, vars));
    return static_cast<int64_t>(s);
  }
  case K::Mul: {
    uint64_t p = 1;
    for (const CompiledExpr &o : e.operands)
      p *= static_cast<uint64_t>(evalExpr(o, vars));
    return static_cast<int64_t>(p);
  }
  case K::FloorDiv:
    return floorDiv(evalExpr(e.operands[0], vars), evalExpr(e.operands[1], vars));
  case K::Mod:
    return floorMod(evalExpr(e.operands[0], vars), evalExpr(e.operands[1], vars));
  case K::Min:
  case K::Max: {
    int64_t r = evalExpr(e.operands[0], vars);
    for (size_t i = 1; i < e.operands.size(); ++i) {
      int64_t v = evalExpr(e.operands[i], vars);
      r = e.kind == K::Min ? std::min(r, v) : std::max(r, v);
    }
    return r;
  }
  }
  return 0;
}

Expected<CompiledExpr> compileExpr(const SymExpr *e, const Bindings &b) {
  CompiledExpr c;
  c.kind = e->kind();
  if (e->isConst()) {
    c.constant = e->constant();
    return c;
  }
  if (e->isSymbol()) {
    const std::string &name = e->symbolName();
    if (auto it = b.find(name); it != b.end()) {
      c.kind = SymExpr::Kind::Const;
      c.constant = it->second;
      return c;
    }
    size_t base = name[0] == 'i' ? 0 : name[0] == 'r' ? kReductionSlot : kIndirectSlot;
    bool loopVar = (name[0] == 'i' || name[0] == 'r' || name[0] == 't') && name.size() > 1 &&
                   name.find_first_not_of("0123456789", 1) == std::string::npos;
    if (!loopVar || std::stoull(name.substr(1)) >= kMaxVars)
      return makeError() << "unbound symbol " << name;
    c.slot = base + std::stoull(name.substr(1));
    return c;
  }
  for (const SymExpr *o : e->operands()) {
    Expected<CompiledExpr> oc = compileExpr(o, b);
    if (!oc)
      return oc.error();
    c.operands.push_back(oc.take());
  }
  return c;
}

Expected<int64_t> evalConst(const SymExpr *e, const Bindings &b) {
  std::optional<int64_t> v = evaluate(e, b);
  if (!v)
    return makeError() << "cannot evaluate " << e->str();
  return *v;
}

Expected<Shape> evalAll(const std::vector<const SymExpr *> &es, const Bindings &b) {
  Shape out;
  for (const SymExpr *e : es) {
    Expected<int64_t> v = evalConst(e, b);
    if (!v)
      return v.error();
    out.push_back(*v);
  }
  return out;
}

// Scalars ----------------------------------------------------------------

/// A body value: `f` for floating dtypes, `i` for the others (Bool is 0/1).
struct Num {
  double f = 0;
  int64_t i = 0;
};

double roundTo(DType t, double v) {
  switch (t) {
  case DType::Float32:
    return static_cast<float>(v);
  case DType::Float16:
    return halfToFloat(floatToHalf(static_cast<float>(v)));
  case DType::BFloat16:
    return bfloat16ToFloat(floatToBFloat16(static_cast<float>(v)));
  default:
    return v;
  }
}

int64_t wrapTo(DType t, int64_t v) {
  switch (t) {
  case DType::Bool:
    return v != 0;
  case DType::UInt8:
    return static_cast<uint8_t>(v);
  case DType::Int8:
    return static_cast<int8_t>(v);
  case DType::Int16:
    return static_cast<int16_t>(v);
  case DType::Int32:
    return static_cast<int32_t>(v);
  default:
    return v;
  }
}

int64_t truncToInt(double v) {
  if (!std::isfinite(v) || std::fabs(v) >= 9.2e18)
    return 0;
  return static_cast<int64_t>(v);
}

/// A value of dtype t. Float16 and BFloat16 values are float32s, as the
/// compiled kernels hold them: only stores and conversions to or from them
/// round to their precision.
Num make(DType t, double f, int64_t i) {
  Num n;
  if (isFloatingPoint(t))
    n.f = roundTo(isHalfPrecision(t) ? DType::Float32 : t, f);
  else
    n.i = wrapTo(t, i);
  return n;
}

Num convert(DType from, DType to, Num v) {
  if (isHalfPrecision(from) && from != to)
    v.f = roundTo(from, v.f);
  Num n;
  if (isFloatingPoint(from)) {
    if (isFloatingPoint(to))
      n = make(to, v.f, 0);
    else
      return to == DType::Bool ? make(to, 0, v.f != 0) : make(to, 0, truncToInt(v.f));
  } else {
    n = make(to, static_cast<double>(v.i), v.i);
  }
  if (isHalfPrecision(to) && from != to)
    n.f = roundTo(to, n.f);
  return n;
}

Num constantOf(DType t, double c) {
  if (isFloatingPoint(t))
    return make(t, c, 0);
  return make(t, c, t == DType::Bool ? c != 0 : truncToInt(c));
}

int64_t intPow(int64_t base, int64_t exp) {
  if (exp < 0)
    return base == 1 ? 1 : base == -1 ? (exp % 2 ? -1 : 1) : 0;
  uint64_t r = 1, b = static_cast<uint64_t>(base);
  for (; exp; exp >>= 1, b *= b)
    if (exp & 1)
      r *= b;
  return static_cast<int64_t>(r);
}

Expected<Num> computeFloat(ScalarOp op, DType dtype, const Num *a, const Num *b) {
  std::optional<double> r = evalFloatScalarOp(op, a[0].f, b ? b->f : 0);
  if (!r)
    return makeError() << scalarOpName(op) << " is not defined on floating-point values";
  if (scalarOpGivesBool(op))
    return Num{0, *r != 0};
  return isFloatingPoint(dtype) ? make(dtype, *r, 0) : make(dtype, 0, truncToInt(*r));
}

Expected<Num> computeInt(ScalarOp op, DType dtype, const Num *a, const Num *b) {
  int64_t x = a[0].i, y = b ? b->i : 0, r = 0;
  auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
  switch (op) {
  case ScalarOp::Neg: r = static_cast<int64_t>(0 - u(x)); break;
  case ScalarOp::Abs: r = x < 0 ? static_cast<int64_t>(0 - u(x)) : x; break;
  case ScalarOp::Floor:
  case ScalarOp::Ceil:
  case ScalarOp::Round:
  case ScalarOp::Trunc: r = x; break;
  case ScalarOp::Sign: r = (x > 0) - (x < 0); break;
  case ScalarOp::IsNan: r = 0; break;
  case ScalarOp::LogicalNot: r = x == 0; break;
  case ScalarOp::BitwiseNot: r = dtype == DType::Bool ? !x : ~x; break;
  case ScalarOp::Add: r = static_cast<int64_t>(u(x) + u(y)); break;
  case ScalarOp::Sub: r = static_cast<int64_t>(u(x) - u(y)); break;
  case ScalarOp::Mul: r = static_cast<int64_t>(u(x) * u(y)); break;
  case ScalarOp::FloorDiv: r = floorDiv(x, y); break;
  case ScalarOp::Div:
  case ScalarOp::TruncDiv: r = y == 0 ? 0 : x / y; break;
  case ScalarOp::Remainder: r = floorMod(x, y); break;
  case ScalarOp::Fmod: r = y == 0 ? 0 : x % y; break;
  case ScalarOp::Pow: r = intPow(x, y); break;
  case ScalarOp::Maximum: r = std::max(x, y); break;
  case ScalarOp::Minimum: r = std::min(x, y); break;
  case ScalarOp::Eq: r = x == y; break;
  case ScalarOp::Ne: r = x != y; break;
  case ScalarOp::Lt: r = x < y; break;
  case ScalarOp::Le: r = x <= y; break;
  case ScalarOp::Gt: r = x > y; break;
  case ScalarOp::Ge: r = x >= y; break;
  case ScalarOp::LogicalAnd: r = x != 0 && y != 0; break;
  case ScalarOp::LogicalOr: r = x != 0 || y != 0; break;
  case ScalarOp::BitwiseAnd: r = x & y; break;
  case ScalarOp::BitwiseOr: r = x | y; break;
  case ScalarOp::BitwiseXor: r = x ^ y; break;
  case ScalarOp::Gcd: r = std::gcd(x, y); break;
  default:
    return makeError() << scalarOpName(op) << " is not defined on integer values";
  }
  return make(dtype, static_cast<double>(r), r);
}

/// A scattering store: `old` (combine) `v` in the buffer's dtype; a NaN
/// wins max and min, as in torch's scatter_reduce.
Num combineStored(StoreCombine combine, DType t, Num old, Num v) {
  if (isFloatingPoint(t)) {
    double x = old.f, y = v.f;
    switch (combine) {
    case StoreCombine::Add: return make(t, x + y, 0);
    case StoreCombine::Mul: return make(t, x * y, 0);
    case StoreCombine::Max: return make(t, std::isnan(x) || x >= y ? x : y, 0);
    case StoreCombine::Min: return make(t, std::isnan(x) || x <= y ? x : y, 0);
    case StoreCombine::None: break;
    }
    return v;
  }
  auto u = [](int64_t a) { return static_cast<uint64_t>(a); };
  int64_t x = old.i, y = v.i;
  if (t == DType::Bool)
    return make(t, 0, combine == StoreCombine::Add || combine == StoreCombine::Max ? (x || y)
                                                                                  : (x && y));
  switch (combine) {
  case StoreCombine::Add: return make(t, 0, static_cast<int64_t>(u(x) + u(y)));
  case StoreCombine::Mul: return make(t, 0, static_cast<int64_t>(u(x) * u(y)));
  case StoreCombine::Max: return make(t, 0, t == DType::UInt8 ? std::max(u(x), u(y)) : std::max(x, y));
  case StoreCombine::Min: return make(t, 0, t == DType::UInt8 ? std::min(u(x), u(y)) : std::min(x, y));
  case StoreCombine::None: break;
  }
  return v;
}

// Buffers ----------------------------------------------------------------

/// A buffer's memory: `storage` holds element `base + k` for the buffer's
/// element k, for k in [0, extent).
struct Memory {
  Tensor storage;
  int64_t base = 0;
  int64_t extent = 0;
};

int64_t extentOf(const Shape &sizes, const Shape &strides) {
  int64_t extent = 1;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 0)
      return 0;
    extent += (sizes[d] - 1) * std::abs(strides[d]);
  }
  return extent;
}

Tensor viewOf(const Memory &m, const Shape &sizes, const Shape &strides, int64_t offset) {
  return m.storage.asStrided(sizes, strides, m.base + offset);
}

// Nodes ------------------------------------------------------------------

struct CompiledOp {
  const BodyOp *op;
  CompiledExpr index;
};

class NodeRunner {
public:
  NodeRunner(const Module &m, const LoopGraph &g, const LoopNode &n, std::vector<Memory> &mem,
             Bindings &b)
      : m_(m), g_(g), n_(n), mem_(mem), b_(b) {}

  Error run() {
    switch (n_.kind) {
    case LoopNode::Kind::Pointwise:
    case LoopNode::Kind::Reduction:
      return runLoops();
    case LoopNode::Kind::Extern:
    case LoopNode::Kind::Fallback:
      return runCall();
    case LoopNode::Kind::Call:
      return runGraphCall();
    }
    return Error::success();
  }

private:
  Error fail(const std::string &what) const {
    return makeError() << "node '" << n_.name << "': " << what;
  }

  Error compile() {
    for (const BodyOp &op : n_.body.ops) {
      CompiledOp c{&op, {}};
      if (op.index) {
        Expected<CompiledExpr> e = compileExpr(op.index, b_);
        if (!e)
          return fail(e.error().message());
        c.index = e.take();
      }
      ops_.push_back(std::move(c));
    }
    if (n_.body.result >= ops_.size())
      return fail("the body's result is not one of its operations");
    return Error::success();
  }

  Expected<Num> evalBody() {
    vals_.resize(ops_.size());
    for (size_t k = 0; k < ops_.size(); ++k) {
      const BodyOp &op = *ops_[k].op;
      for (uint32_t o : op.operands)
        if (o >= k)
          return fail("operation " + std::to_string(k) + " reads a later value");
      switch (op.kind) {
      case BodyOp::Kind::Const:
        vals_[k] = constantOf(op.dtype, op.constant);
        break;
      case BodyOp::Kind::Index:
        vals_[k] = make(op.dtype, static_cast<double>(evalExpr(ops_[k].index, vars_)),
                        evalExpr(ops_[k].index, vars_));
        break;
      case BodyOp::Kind::Load: {
        if (op.mask >= 0 && !vals_[op.mask].i) {
          vals_[k] = constantOf(op.dtype, op.constant);
          break;
        }
        for (size_t j = 0; j < op.indirect.size(); ++j)
          vars_[kIndirectSlot + j] = vals_[op.indirect[j]].i;
        int64_t off = evalExpr(ops_[k].index, vars_);
        if (op.buffer >= mem_.size())
          return fail("load from a buffer that does not exist");
        const Memory &m = mem_[op.buffer];
        if (off < 0 || off >= m.extent)
          return fail("load of element " + std::to_string(off) + " of buffer '" +
                      g_.buffers[op.buffer].name + "', which has " + std::to_string(m.extent));
        DType bt = g_.buffers[op.buffer].dtype;
        Num raw;
        if (isFloatingPoint(bt))
          raw.f = m.storage.loadDouble(m.base + off);
        else
          raw.i = m.storage.loadInt(m.base + off);
        vals_[k] = convert(bt, op.dtype, raw);
        break;
      }
      case BodyOp::Kind::Cast:
        vals_[k] = convert(n_.body.ops[op.operands[0]].dtype, op.dtype, vals_[op.operands[0]]);
        break;
      case BodyOp::Kind::Compute: {
        if (op.operands.size() != scalarOpArity(op.op))
          return fail("operation " + std::to_string(k) + " has the wrong operand count");
        if (op.op == ScalarOp::Where) {
          vals_[k] = vals_[op.operands[0]].i ? vals_[op.operands[1]] : vals_[op.operands[2]];
          break;
        }
        Num args[2];
        for (size_t j = 0; j < op.operands.size(); ++j)
          args[j] = vals_[op.operands[j]];
        DType in = n_.body.ops[op.operands[0]].dtype;
        const Num *second = op.operands.size() > 1 ? &args[1] : nullptr;
        Expected<Num> r = isFloatingPoint(in) ? computeFloat(op.op, op.dtype, args, second)
                                              : computeInt(op.op, op.dtype, args, second);
        if (!r)
          return fail(r.error().message());
        vals_[k] = isFloatingPoint(in) && !isFloatingPoint(op.dtype)
                       ? make(op.dtype, 0, r->i)
                       : (!isFloatingPoint(in) && isFloatingPoint(op.dtype)
                              ? make(op.dtype, static_cast<double>(r->i), 0)
                              : *r);
        break;
      }
      }
    }
    return vals_[n_.body.result];
  }

  Error store(const CompiledExpr &index, DType from, Num v) {
    Memory &m = mem_[n_.output];
    int64_t off = evalExpr(index, vars_);
    if (off < 0 || off >= m.extent)
      return fail("store to element " + std::to_string(off) + " of buffer '" +
                  g_.buffers[n_.output].name + "', which has " + std::to_string(m.extent));
    DType bt = g_.buffers[n_.output].dtype;
    Num c = convert(from, bt, v);
    if (n_.combine != StoreCombine::None) {
      Num old;
      if (isFloatingPoint(bt))
        old.f = m.storage.loadDouble(m.base + off);
      else
        old.i = m.storage.loadInt(m.base + off);
      c = combineStored(n_.combine, bt, old, c);
    }
    if (isFloatingPoint(bt))
      m.storage.storeDouble(m.base + off, c.f);
    else
      m.storage.storeInt(m.base + off, c.i);
    return Error::success();
  }

  /// Calls `fn` for every point of `sizes`, with the variables at `slot`.
  template <typename Fn> Error forEach(const Shape &sizes, size_t slot, Fn fn) {
    for (int64_t s : sizes)
      if (s == 0)
        return Error::success();
    std::fill(vars_ + slot, vars_ + slot + sizes.size(), 0);
    while (true) {
      GC_RETURN_IF_ERROR(fn());
      size_t d = sizes.size();
      while (d > 0) {
        --d;
        if (++vars_[slot + d] < sizes[d])
          break;
        vars_[slot + d] = 0;
        if (d == 0)
          return Error::success();
      }
      if (sizes.empty())
        return Error::success();
    }
  }

  Error runLoops() {
    if (n_.ranges.size() >= kMaxVars || n_.reductionRanges.size() >= kMaxVars)
      return fail("too many loops");
    if (n_.output >= mem_.size())
      return fail("store to a buffer that does not exist");
    GC_RETURN_IF_ERROR(compile());
    Expected<Shape> outer = evalAll(n_.ranges, b_);
    Expected<Shape> inner = evalAll(n_.reductionRanges, b_);
    if (!n_.storeIndex)
      return fail("no store index");
    Expected<CompiledExpr> storeIndex = compileExpr(n_.storeIndex, b_);
    if (!outer || !inner || !storeIndex)
      return fail("cannot evaluate the loop ranges or the store index");
    DType resultType = n_.body.ops[n_.body.result].dtype;
    if (n_.kind == LoopNode::Kind::Pointwise)
      return forEach(*outer, 0, [&]() -> Error {
        Expected<Num> v = evalBody();
        if (!v)
          return v.error();
        for (size_t j = 0; j < n_.storeIndirect.size(); ++j) {
          uint32_t x = n_.storeIndirect[j];
          if (x >= vals_.size())
            return fail("indirect store index %" + std::to_string(x) + " is not a body value");
          vars_[kIndirectSlot + j] = vals_[x].i;
        }
        return store(*storeIndex, resultType, *v);
      });
    bool isFloat = isFloatingPoint(resultType);
    ReduceKind kind = n_.reduce;
    // torch counts when it sums booleans (and multiplies them as integers),
    // as the kernels do.
    DType valueType = resultType == DType::Bool &&
                              (kind == ReduceKind::Sum || kind == ReduceKind::Prod)
                          ? DType::Int64
                          : resultType;
    return forEach(*outer, 0, [&]() -> Error {
      double accF = kind == ReduceKind::Prod ? 1 : 0;
      int64_t accI = kind == ReduceKind::Prod ? 1 : 0;
      bool first = true;
      int64_t position = 0, best = 0;
      GC_RETURN_IF_ERROR(forEach(*inner, kReductionSlot, [&]() -> Error {
        Expected<Num> v = evalBody();
        if (!v)
          return v.error();
        double f = isFloat ? v->f : static_cast<double>(v->i);
        int64_t i = v->i;
        switch (kind) {
        case ReduceKind::Sum:
          accF += f;
          accI = static_cast<int64_t>(static_cast<uint64_t>(accI) + static_cast<uint64_t>(i));
          break;
        case ReduceKind::Prod:
          accF *= f;
          accI = static_cast<int64_t>(static_cast<uint64_t>(accI) * static_cast<uint64_t>(i));
          break;
        case ReduceKind::Max:
        case ReduceKind::Min: {
          bool better = kind == ReduceKind::Max ? f > accF : f < accF;
          bool betterI = kind == ReduceKind::Max ? i > accI : i < accI;
          if (first || std::isnan(f) || (!std::isnan(accF) && better))
            accF = f;
          if (first || betterI)
            accI = i;
          break;
        }
        case ReduceKind::ArgMax:
        case ReduceKind::ArgMin: {
          bool better = kind == ReduceKind::ArgMax ? f > accF : f < accF;
          if (first || (std::isnan(f) && !std::isnan(accF)) || (!std::isnan(accF) && better)) {
            accF = f;
            best = position;
          }
          break;
        }
        case ReduceKind::Any:
          accI = accI || i;
          break;
        }
        first = false;
        ++position;
        // A scan stores every prefix, rounded to the output as the kernels
        // round their running value.
        if (n_.scan) {
          Num rounded = make(valueType, accF, accI);
          accF = rounded.f;
          accI = rounded.i;
          return store(*storeIndex, valueType, rounded);
        }
        return Error::success();
      }));
      if (n_.scan)
        return Error::success();
      if (kind == ReduceKind::ArgMax || kind == ReduceKind::ArgMin)
        return store(*storeIndex, DType::Int64, Num{0, best});
      if (kind == ReduceKind::Any)
        return store(*storeIndex, DType::Bool, Num{0, accI});
      if (first && (kind == ReduceKind::Max || kind == ReduceKind::Min))
        return fail("max or min of an empty range");
      return store(*storeIndex, valueType, make(valueType, accF, accI));
    });
  }

  Expected<Tensor> tensorOf(const BufferView &v) {
    if (v.buffer >= mem_.size())
      return fail("a view of a buffer that does not exist");
    Expected<Shape> sizes = evalAll(v.type.sizes, b_);
    Expected<Shape> strides = evalAll(v.type.strides, b_);
    Expected<int64_t> offset = evalConst(v.type.storageOffset, b_);
    if (!sizes || !strides || !offset)
      return fail("cannot evaluate a buffer view's layout");
    const Memory &m = mem_[v.buffer];
    int64_t extent = extentOf(*sizes, *strides);
    if (*offset < 0 || (extent > 0 && *offset + extent > m.extent))
      return fail("a view reaches outside buffer '" + g_.buffers[v.buffer].name + "'");
    return viewOf(m, *sizes, *strides, *offset);
  }

  /// A call whose output sizes are unbacked symbols (nonzero, unique)
  /// binds them from the results it gets; its buffers were allocated at the
  /// symbols' upper bounds, and its views then take the true sizes.
  Error runCall() {
    Expected<ReferenceCall> call = ReferenceCall::create(n_);
    if (!call)
      return call.error();
    std::vector<Tensor> inputs;
    for (const BufferView &v : n_.inputs) {
      Expected<Tensor> t = tensorOf(v);
      if (!t)
        return t.error();
      inputs.push_back(*t);
    }
    Expected<std::vector<Tensor>> results = call->compute(inputs);
    if (!results)
      return results.error();
    for (size_t i = 0; i < n_.outputs.size() && i < results->size(); ++i)
      GC_RETURN_IF_ERROR(bindUnbackedSizes(m_, "node '" + n_.name + "': result " +
                                                   std::to_string(i),
                                           n_.outputs[i].type, (*results)[i], b_));
    for (size_t i = 0; i < n_.outputs.size() && i < results->size(); ++i) {
      Expected<Tensor> t = tensorOf(n_.outputs[i]);
      if (!t)
        return t.error();
      if ((*results)[i].sizes() != t->sizes())
        return fail("result " + std::to_string(i) + " has shape " +
                    shapeString((*results)[i].sizes()) + ", its buffer view " +
                    shapeString(t->sizes()));
      t->copyFrom((*results)[i]);
    }
    return Error::success();
  }

  /// cond and while_loop: the loop graphs they name run in this
  /// interpreter on views of the node's inputs; what the last one returns
  /// is copied into the node's outputs.
  Error runGraphCall() {
    std::vector<Tensor> inputs;
    for (const BufferView &v : n_.inputs) {
      Expected<Tensor> t = tensorOf(v);
      if (!t)
        return t.error();
      inputs.push_back(*t);
    }
    auto arg = [&](std::string_view name) -> const Arg * {
      for (const LoopArg &a : n_.args)
        if (a.name == name)
          return &a.value;
      return nullptr;
    };
    // The verifier checked that the arguments exist and name inputs.
    auto args = [&](std::string_view name) {
      std::vector<Tensor> out;
      if (const Arg *a = arg(name))
        for (int64_t i : a->ints)
          out.push_back(inputs[i]);
      return out;
    };
    auto call = [&](std::string_view name,
                    const std::vector<Tensor> &in) -> Expected<std::vector<Tensor>> {
      const Arg *a = arg(name);
      const LoopGraph *callee = a && !a->strings.empty() ? m_.loopGraph(a->strings[0]) : nullptr;
      if (!callee)
        return makeError() << "argument '" << name << "' names no loop graph of the module";
      Expected<std::vector<Tensor>> r = runLoopGraph(m_, *callee, in, {});
      if (!r)
        return r.error().withContext("graph @" + callee->name);
      return r;
    };
    Expected<std::vector<Tensor>> results = runControlFlow(n_.op, args, call);
    if (!results)
      return fail(results.error().message());
    if (results->size() != n_.outputs.size())
      return fail("the called graph returned " + std::to_string(results->size()) +
                  " values for " + std::to_string(n_.outputs.size()) + " outputs");
    for (size_t i = 0; i < results->size(); ++i) {
      Expected<Tensor> out = tensorOf(n_.outputs[i]);
      if (!out)
        return out.error();
      out->copyFrom((*results)[i]);
    }
    return Error::success();
  }

  const Module &m_;
  const LoopGraph &g_;
  const LoopNode &n_;
  std::vector<Memory> &mem_;
  Bindings &b_; ///< a call whose result sizes are unbacked symbols binds them

  std::vector<CompiledOp> ops_;
  std::vector<Num> vals_;
  int64_t vars_[3 * kMaxVars] = {};
};


void collectSymbols(const SymExpr *e, std::set<std::string> &out) {
  if (e->isSymbol())
    out.insert(e->symbolName());
  for (const SymExpr *o : e->operands())
    collectSymbols(o, out);
}

/// `bound` with every symbol of a buffer's layout that no input binds set
/// to the upper bound of its range.
Expected<Bindings> boundedBindings(const Module &m, const LoopGraph &g, const Bindings &bound) {
  std::set<std::string> used;
  for (const Buffer &buf : g.buffers)
    for (const auto *list : {&buf.sizes, &buf.strides})
      for (const SymExpr *e : *list)
        collectSymbols(e, used);
  Bindings out = bound;
  for (const std::string &name : used) {
    if (out.count(name))
      continue;
    std::optional<SymRange> r = m.syms().range(name);
    if (!r || r->max == SymRange::kUnbounded)
      return makeError() << "graph '" << g.name << "': size " << name
                         << " is computed at run time and has no upper bound to allocate for";
    out.emplace(name, r->max);
  }
  return out;
}

/// The memory of an input buffer: the tensor itself when its layout is the
/// buffer's, else a copy laid out as the buffer says.
Memory inputMemory(const Tensor &t, const Shape &strides) {
  bool same = true;
  for (int64_t d = 0; d < t.dim(); ++d)
    same &= t.size(d) == 1 || t.strides()[d] == strides[d];
  int64_t extent = extentOf(t.sizes(), strides);
  if (same)
    return Memory{t, t.offset(), extent};
  Memory m{Tensor::zeros(t.dtype(), {extent}), 0, extent};
  viewOf(m, t.sizes(), strides, 0).copyFrom(t);
  return m;
}

} // namespace

Expected<std::vector<Tensor>> runLoopGraph(const Module &module, const LoopGraph &graph,
                                           const std::vector<Tensor> &userInputs,
                                           const std::map<std::string, Tensor> &weights,
                                           const RandomState &rng) {
  if (graph.inputs.size() != graph.inputSpecs.size())
    return makeError() << "graph '" << graph.name << "': " << graph.inputs.size()
                       << " input bindings for " << graph.inputSpecs.size() << " inputs";
  Bindings bindings;
  std::vector<std::pair<uint32_t, Tensor>> bound;
  size_t next = 0;
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    const LoopBinding &in = graph.inputs[i];
    const InputSpec &spec = graph.inputSpecs[i];
    Tensor t;
    if (spec.kind == InputKind::UserInput) {
      if (next >= userInputs.size())
        return makeError() << "too few user inputs: got " << userInputs.size();
      t = userInputs[next++];
      GC_RETURN_IF_ERROR(bindInputSizes(module, spec.target, in.type, t, bindings));
    } else if (isGeneratorInput(spec.kind)) {
      t = generatorInput(spec.kind, rng);
    } else {
      auto it = weights.find(spec.target);
      if (it == weights.end())
        return makeError() << "no data for " << inputKindName(spec.kind) << " '" << spec.target
                           << "'";
      t = it->second;
    }
    bound.emplace_back(in.buffer, t);
  }
  if (next != userInputs.size())
    return makeError() << "expected " << next << " user inputs, got " << userInputs.size();

  std::vector<Memory> memory(graph.buffers.size());
  for (const auto &[buffer, t] : bound) {
    if (buffer >= graph.buffers.size())
      return makeError() << "an input binding names buffer " << buffer << " of "
                         << graph.buffers.size();
    const Buffer &buf = graph.buffers[buffer];
    Expected<Shape> sizes = evalAll(buf.sizes, bindings);
    Expected<Shape> strides = evalAll(buf.strides, bindings);
    if (!sizes || !strides)
      return makeError() << "buffer '" << buf.name << "': cannot evaluate its layout";
    if (t.dtype() != buf.dtype || t.sizes() != *sizes)
      return makeError() << "buffer '" << buf.name << "': expected " << dtypeName(buf.dtype)
                         << shapeString(*sizes) << ", got " << dtypeName(t.dtype())
                         << shapeString(t.sizes());
    memory[buffer] = inputMemory(t, *strides);
  }
  // A size no input binds is an unbacked symbol, which a call binds when it
  // runs: its buffers are allocated at the symbol's upper bound.
  Expected<Bindings> planning = boundedBindings(module, graph, bindings);
  if (!planning)
    return planning.error();
  for (size_t i = 0; i < graph.buffers.size(); ++i) {
    const Buffer &buf = graph.buffers[i];
    if (buf.kind == BufferKind::Input)
      continue;
    Expected<Shape> sizes = evalAll(buf.sizes, *planning);
    Expected<Shape> strides = evalAll(buf.strides, *planning);
    if (!sizes || !strides)
      return makeError() << "buffer '" << buf.name << "': cannot evaluate its layout";
    int64_t extent = extentOf(*sizes, *strides);
    memory[i] = Memory{Tensor::zeros(buf.dtype, {extent}), 0, extent};
  }

  for (const LoopNode &node : graph.nodes)
    GC_RETURN_IF_ERROR(NodeRunner(module, graph, node, memory, bindings).run());

  std::vector<Tensor> outputs;
  for (const LoopBinding &out : graph.outputs) {
    if (out.buffer >= memory.size())
      return makeError() << "output '" << out.name << "' names a buffer that does not exist";
    Expected<Shape> sizes = evalAll(out.type.sizes, bindings);
    Expected<Shape> strides = evalAll(out.type.strides, bindings);
    Expected<int64_t> offset = evalConst(out.type.storageOffset, bindings);
    if (!sizes || !strides || !offset)
      return makeError() << "output '" << out.name << "': cannot evaluate its layout";
    outputs.push_back(viewOf(memory[out.buffer], *sizes, *strides, *offset));
  }
  return outputs;
}

} // namespace gc
