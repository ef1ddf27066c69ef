//===- Printer.cpp - The text form of a module ----------------------------===//
//
// Writes the syntax described in docs/formats.md ("Text form"). Every choice
// here has a twin in lib/Parser/Parser.cpp: the parser must read back exactly
// the fields printed, and the printer must never print two modules the same
// way.
//
//===----------------------------------------------------------------------===//

#include "gc/IR/Printer.h"

#include "gc/IR/Fields.h"
#include "gc/Support/SHA256.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <unordered_map>

namespace gc {
namespace {

class Printer {
public:
  std::string take() { return std::move(out_); }

  void printModule(const Module &m);
  void printType(const Type &t);
  void printSymbolRanges(const Module &m);
  void printLoopGraph(const LoopGraph &g);

private:
  void printTensorType(const TensorType &t);
  bool hasContiguousStrides(const TensorType &t);
  const SymExpr *importExpr(const SymExpr *e);
  void printExprList(const std::vector<const SymExpr *> &exprs);
  void printGraph(const Graph &g);
  void printInput(const Value *v, const InputSpec &spec);
  void printNode(const Node &n);
  void printArg(const Arg &a, bool loopArg);
  template <typename NamedArgT>
  void printCallArgs(const std::vector<NamedArgT> &args, bool loopArgs);
  void printValueRef(const Value *v);
  void printInputSpec(const InputSpec &spec);
  void printOutputSpec(const OutputSpec &spec);
  // The field-driven form of loop graphs.
  template <Structured T> void printField(const T &v, Plain, int indent);
  template <class M> void printField(const std::vector<M> &v, auto codec, int indent);
  template <class M> void printField(const M &v, auto codec, int indent);
  template <class M> static bool isDefault(const M &v, const M &def) {
    // -0.0 is not the default 0.
    if constexpr (std::is_same_v<M, double>)
      return v == def && std::signbit(v) == std::signbit(def);
    else
      return v == def;
  }
  void printBufferRef(uint32_t buffer);
  void printString(std::string_view s);
  void printFloat(double d);
  void printBool(int64_t b) { out_ += b ? "true" : "false"; }
  void printInt(int64_t i) { out_ += std::to_string(i); }

  std::string out_;
  /// The loop graph being printed, whose buffers references name.
  const LoopGraph *graph_ = nullptr;
  // Contiguity is decided by building contiguousStrides for a copy of the
  // sizes in a context of our own: the module's context is const here, and
  // canonical form makes structural equality across contexts the same test
  // as pointer equality within one.
  SymContext scratch_;
  std::unordered_map<const SymExpr *, const SymExpr *> imported_;
};

const SymExpr *Printer::importExpr(const SymExpr *e) {
  if (auto it = imported_.find(e); it != imported_.end())
    return it->second;
  const SymExpr *r = nullptr;
  auto ops = e->operands();
  switch (e->kind()) {
  case SymExpr::Kind::Const:
    r = scratch_.constant(e->constant());
    break;
  case SymExpr::Kind::Symbol:
    r = scratch_.symbol(e->symbolName());
    break;
  case SymExpr::Kind::Add:
  case SymExpr::Kind::Mul:
  case SymExpr::Kind::Min:
  case SymExpr::Kind::Max: {
    r = importExpr(ops[0]);
    for (size_t i = 1; i < ops.size(); ++i) {
      const SymExpr *o = importExpr(ops[i]);
      switch (e->kind()) {
      case SymExpr::Kind::Add:
        r = scratch_.add(r, o);
        break;
      case SymExpr::Kind::Mul:
        r = scratch_.mul(r, o);
        break;
      case SymExpr::Kind::Min:
        r = scratch_.min(r, o);
        break;
      default:
        r = scratch_.max(r, o);
        break;
      }
    }
    break;
  }
  case SymExpr::Kind::FloorDiv:
    r = scratch_.floorDiv(importExpr(ops[0]), importExpr(ops[1]));
    break;
  case SymExpr::Kind::Mod:
    r = scratch_.mod(importExpr(ops[0]), importExpr(ops[1]));
    break;
  }
  imported_.emplace(e, r);
  return r;
}

bool Printer::hasContiguousStrides(const TensorType &t) {
  if (t.strides.size() != t.sizes.size())
    return false;
  std::vector<const SymExpr *> sizes;
  sizes.reserve(t.sizes.size());
  for (const SymExpr *s : t.sizes)
    sizes.push_back(importExpr(s));
  std::vector<const SymExpr *> expected = contiguousStrides(scratch_, sizes);
  for (size_t i = 0; i < expected.size(); ++i)
    if (SymExpr::compare(t.strides[i], expected[i]) != 0)
      return false;
  return true;
}

void Printer::printExprList(const std::vector<const SymExpr *> &exprs) {
  out_ += '[';
  for (size_t i = 0; i < exprs.size(); ++i) {
    if (i)
      out_ += ", ";
    out_ += exprs[i]->str();
  }
  out_ += ']';
}

void Printer::printTensorType(const TensorType &t) {
  out_ += dtypeName(t.dtype);
  printExprList(t.sizes);

  // The suffix lists only what differs from the default, in a fixed order.
  // A null storage offset prints as the default 0: a module never holds one.
  bool stridesDiffer = !hasContiguousStrides(t);
  bool offsetDiffers = t.storageOffset && !(t.storageOffset->isConst() &&
                                            t.storageOffset->constant() == 0);
  bool deviceDiffers = t.device != Device{};
  if (!stridesDiffer && !offsetDiffers && !deviceDiffers && !t.requiresGrad)
    return;
  out_ += '{';
  bool first = true;
  auto field = [&](std::string_view name) {
    if (!first)
      out_ += ", ";
    first = false;
    out_ += name;
  };
  if (stridesDiffer) {
    field("strides=");
    printExprList(t.strides);
  }
  if (offsetDiffers) {
    field("offset=");
    out_ += t.storageOffset->str();
  }
  if (deviceDiffers) {
    field("device=");
    out_ += deviceName(t.device);
  }
  if (t.requiresGrad)
    field("requires_grad");
  out_ += '}';
}

void Printer::printType(const Type &t) {
  switch (t.kind) {
  case Type::Kind::Tensor:
    printTensorType(t.tensor);
    return;
  case Type::Kind::SymInt:
    out_ += "sym_int";
    return;
  case Type::Kind::SymFloat:
    out_ += "sym_float";
    return;
  case Type::Kind::SymBool:
    out_ += "sym_bool";
    return;
  }
}

void Printer::printString(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out_ += '"';
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out_ += '\\';
      out_ += c;
    } else if (c == '\n') {
      out_ += "\\n";
    } else if (c == '\t') {
      out_ += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      out_ += "\\x";
      out_ += kHex[u >> 4];
      out_ += kHex[u & 15];
    } else {
      out_ += c;
    }
  }
  out_ += '"';
}

void Printer::printFloat(double d) {
  // Every float carries a '.', an exponent, or is inf/nan, so that the parser
  // tells 1.0 from the integer 1. The sign of a NaN is not kept.
  if (std::isnan(d)) {
    out_ += "nan";
    return;
  }
  if (std::isinf(d)) {
    out_ += d < 0 ? "-inf" : "inf";
    return;
  }
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), d);
  std::string_view text(buf, end - buf);
  out_ += text;
  if (text.find_first_of(".e") == std::string_view::npos)
    out_ += ".0";
}

void Printer::printValueRef(const Value *v) {
  if (!v) {
    out_ += "none";
    return;
  }
  out_ += '%';
  out_ += v->name();
}

void Printer::printArg(const Arg &a, bool loopArg) {
  // Lists of the unprefixed kinds are told apart by their first element, so
  // only an empty one needs its kind spelled out.
  auto list = [&](std::string_view emptyPrefix, size_t n, auto &&element) {
    if (n == 0) {
      out_ += emptyPrefix;
      out_ += "[]";
      return;
    }
    out_ += '[';
    for (size_t i = 0; i < n; ++i) {
      if (i)
        out_ += ", ";
      element(i);
    }
    out_ += ']';
  };
  // A loop argument's tensors are indices into its node's inputs, in `ints`.
  auto tensorRef = [&](size_t i) {
    if (!loopArg) {
      printValueRef(i < a.values.size() ? a.values[i] : nullptr);
    } else if (i < a.ints.size() && a.ints[i] >= 0) {
      out_ += '$';
      printInt(a.ints[i]);
    } else {
      out_ += "none";
    }
  };
  size_t numTensors = loopArg ? a.ints.size() : a.values.size();
  // A SymInt entry is the value if there is one, else the constant.
  auto symInt = [&](size_t i) {
    if (i < a.values.size() && a.values[i])
      printValueRef(a.values[i]);
    else
      printInt(a.ints[i]);
  };

  switch (a.kind) {
  case ArgKind::None:
    out_ += "none";
    return;
  case ArgKind::Tensor:
    tensorRef(0);
    return;
  case ArgKind::Tensors:
    list("tensors", numTensors, tensorRef);
    return;
  case ArgKind::OptionalTensors:
    out_ += "opt_tensors[";
    for (size_t i = 0; i < numTensors; ++i) {
      if (i)
        out_ += ", ";
      tensorRef(i);
    }
    out_ += ']';
    return;
  case ArgKind::Int:
    printInt(a.ints[0]);
    return;
  case ArgKind::Ints:
    list("ints", a.ints.size(), [&](size_t i) { printInt(a.ints[i]); });
    return;
  case ArgKind::Float:
    printFloat(a.floats[0]);
    return;
  case ArgKind::Floats:
    list("floats", a.floats.size(), [&](size_t i) { printFloat(a.floats[i]); });
    return;
  case ArgKind::Bool:
    printBool(a.ints[0]);
    return;
  case ArgKind::Bools:
    list("bools", a.ints.size(), [&](size_t i) { printBool(a.ints[i]); });
    return;
  case ArgKind::String:
    printString(a.strings[0]);
    return;
  case ArgKind::Strings:
    list("strings", a.strings.size(), [&](size_t i) { printString(a.strings[i]); });
    return;
  case ArgKind::SymInt:
    out_ += "symint(";
    symInt(0);
    out_ += ')';
    return;
  case ArgKind::SymInts: {
    out_ += "symints[";
    size_t n = std::max(a.values.size(), a.ints.size());
    for (size_t i = 0; i < n; ++i) {
      if (i)
        out_ += ", ";
      symInt(i);
    }
    out_ += ']';
    return;
  }
  case ArgKind::SymFloat:
    out_ += "symfloat(";
    printValueRef(a.values.empty() ? nullptr : a.values[0]);
    out_ += ')';
    return;
  case ArgKind::SymBool:
    out_ += "symbool(";
    printValueRef(a.values.empty() ? nullptr : a.values[0]);
    out_ += ')';
    return;
  case ArgKind::ScalarType:
    out_ += "dtype(";
    out_ += dtypeName(static_cast<DType>(a.ints[0]));
    out_ += ')';
    return;
  case ArgKind::MemoryFormat:
    out_ += "memory_format(";
    out_ += memoryFormatName(static_cast<MemoryFormat>(a.ints[0]));
    out_ += ')';
    return;
  case ArgKind::Layout:
    out_ += "layout(";
    out_ += layoutName(static_cast<Layout>(a.ints[0]));
    out_ += ')';
    return;
  case ArgKind::Device:
    out_ += "device(";
    out_ += deviceName(a.device);
    out_ += ')';
    return;
  }
}

template <typename NamedArgT>
void Printer::printCallArgs(const std::vector<NamedArgT> &args, bool loopArgs) {
  // Positional-or-keyword arguments first, then after ';' the keyword-only
  // ones, as in the op's schema.
  out_ += '(';
  bool first = true;
  for (const NamedArgT &a : args) {
    if (a.keywordOnly)
      continue;
    if (!first)
      out_ += ", ";
    first = false;
    out_ += a.name;
    out_ += '=';
    printArg(a.value, loopArgs);
  }
  bool anyKeywordOnly = false;
  for (const NamedArgT &a : args) {
    if (!a.keywordOnly)
      continue;
    out_ += anyKeywordOnly ? ", " : "; ";
    anyKeywordOnly = true;
    out_ += a.name;
    out_ += '=';
    printArg(a.value, loopArgs);
  }
  out_ += ')';
}

void Printer::printNode(const Node &n) {
  out_ += "    ";
  const auto &results = n.results();
  for (size_t i = 0; i < results.size(); ++i) {
    if (i)
      out_ += ", ";
    printValueRef(results[i]);
  }
  if (!results.empty())
    out_ += " = ";
  out_ += opName(n.op());

  printCallArgs(n.args(), /*loopArgs=*/false);

  auto types = [&] {
    for (size_t i = 0; i < results.size(); ++i) {
      if (i)
        out_ += ", ";
      printType(results[i]->type());
    }
  };
  switch (n.resultForm()) {
  case ResultForm::Single:
    if (!results.empty()) {
      out_ += " : ";
      types();
    }
    break;
  case ResultForm::Tuple:
    out_ += " : (";
    types();
    out_ += ')';
    break;
  case ResultForm::List:
    out_ += " : [";
    types();
    out_ += ']';
    break;
  }
  out_ += '\n';
}

void Printer::printInput(const Value *v, const InputSpec &spec) {
  printValueRef(v);
  out_ += ": ";
  printType(v->type());
  out_ += ' ';
  printInputSpec(spec);
}

void Printer::printInputSpec(const InputSpec &spec) {
  out_ += inputKindName(spec.kind);
  if (spec.target.empty() && spec.persistent)
    return;
  out_ += '(';
  printString(spec.target);
  if (!spec.persistent)
    out_ += ", nonpersistent";
  out_ += ')';
}

void Printer::printOutputSpec(const OutputSpec &spec) {
  out_ += outputKindName(spec.kind);
  if (!spec.target.empty()) {
    out_ += '(';
    printString(spec.target);
    out_ += ')';
  }
  if (!spec.aliasOf.empty()) {
    out_ += " alias_of(%";
    out_ += spec.aliasOf;
    out_ += ')';
  }
}

void Printer::printGraph(const Graph &g) {
  out_ += "  graph @";
  out_ += g.name();
  out_ += '(';
  // Inputs after the first line up under it.
  std::string indent(out_.size() - (out_.rfind('\n') + 1), ' ');
  const auto &inputs = g.inputs();
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (i) {
      out_ += ",\n";
      out_ += indent;
    }
    printInput(inputs[i], g.inputSpecs()[i]);
  }
  out_ += ") {\n";

  for (const auto &n : g.nodes())
    printNode(*n);

  out_ += "    return";
  const auto &outputs = g.outputs();
  for (size_t i = 0; i < outputs.size(); ++i) {
    out_ += i ? ", " : " ";
    printValueRef(outputs[i]);
    out_ += ' ';
    printOutputSpec(g.outputSpecs()[i]);
  }
  out_ += "\n  }\n";
}

//===----------------------------------------------------------------------===//
// Loop graphs: the field-driven form
//===----------------------------------------------------------------------===//
// A declared struct (gc/IR/Fields.h) prints as {field=value, ...}, leaving
// out fields that hold their default except `kind`, which says what the
// others mean (a buffer reference left out is the first buffer). A list of structs puts each element on a line of its own.
// Tensor types and call arguments keep the syntax they have in graphs.

void Printer::printLoopGraph(const LoopGraph &g) {
  graph_ = &g;
  out_ += "  loops ";
  printField(g, Plain{}, 2);
  out_ += '\n';
}

template <Structured T> void Printer::printField(const T &v, Plain, int indent) {
  static const T defaults{};
  out_ += '{';
  bool first = true;
  forEachField<T>([&](size_t, const auto &f) {
    using Codec = typename std::remove_cvref_t<decltype(f)>::Codec;
    if (f.name != "kind" &&
        isDefault(v.*f.member, defaults.*f.member))
      return true;
    out_ += first ? "" : ", ";
    first = false;
    out_ += f.name;
    out_ += '=';
    printField(v.*f.member, Codec{}, indent);
    return true;
  });
  out_ += '}';
}

template <class M> void Printer::printField(const std::vector<M> &v, auto codec, int indent) {
  out_ += '[';
  for (size_t i = 0; i < v.size(); ++i) {
    if constexpr (Structured<M>) {
      out_ += '\n' + std::string(indent + 2, ' ');
      printField(v[i], codec, indent + 2);
    } else {
      out_ += i ? ", " : "";
      printField(v[i], codec, indent);
    }
  }
  if constexpr (Structured<M>)
    out_ += '\n' + std::string(indent, ' ');
  out_ += ']';
}

template <class M> void Printer::printField(const M &v, auto codec, int) {
  if constexpr (std::is_same_v<M, bool>)
    printBool(v);
  else if constexpr (std::is_same_v<M, double>)
    printFloat(v);
  else if constexpr (std::is_same_v<M, OpId>)
    out_ += opName(v);
  else if constexpr (std::is_enum_v<M>)
    out_ += EnumInfo<M>::name(v);
  else if constexpr (std::is_same_v<decltype(codec), BufferRef>)
    printBufferRef(v);
  else if constexpr (std::is_integral_v<M>)
    printInt(static_cast<int64_t>(v));
  else if constexpr (std::is_same_v<M, const SymExpr *>)
    out_ += v ? v->str() : "none";
  else if constexpr (std::is_same_v<M, TensorType>)
    printTensorType(v);
  else if constexpr (std::is_same_v<M, Arg>)
    printArg(v, /*loopArg=*/true);
  else if constexpr (std::is_same_v<decltype(codec), Bytes>)
    out_ += "<" + std::to_string(v.size()) + " bytes, sha256 " + sha256Hex(v) + ">";
  else
    printString(v);
}

void Printer::printBufferRef(uint32_t buffer) {
  // Indices are checked by the verifier, not here; an unverified module
  // still prints, with what is wrong visible.
  out_ += '%';
  if (buffer < graph_->buffers.size())
    out_ += graph_->buffers[buffer].name;
  else
    out_ += "<buffer " + std::to_string(buffer) + ">";
}

void Printer::printSymbolRanges(const Module &m) {
  for (const auto &[name, range] : m.syms().ranges()) {
    out_ += "  symbol ";
    out_ += name;
    out_ += " in [";
    printInt(range.min);
    out_ += ", ";
    if (range.max == SymRange::kUnbounded)
      out_ += "inf";
    else
      printInt(range.max);
    out_ += "]\n";
  }
}

void Printer::printModule(const Module &m) {
  out_ += "module level(";
  out_ += levelName(m.level());
  out_ += ')';
  if (!m.producer().empty()) {
    out_ += " producer(";
    printString(m.producer());
    out_ += ')';
  }
  out_ += " {\n";
  printSymbolRanges(m);

  for (const WeightSource &s : m.weightSources()) {
    out_ += s.kind == WeightSource::Kind::Archive ? "  source archive "
                                                  : "  source blob ";
    printString(s.path);
    out_ += '\n';
  }

  for (const Weight &w : m.weights()) {
    out_ += "  weight ";
    printString(w.name);
    out_ += " : ";
    printTensorType(w.type);
    out_ += " = source(" + std::to_string(w.source) + ") offset(" +
            std::to_string(w.offset) + ") bytes(" + std::to_string(w.bytes) +
            ") sha256(";
    printString(w.sha256);
    out_ += ")\n";
  }

  for (const auto &g : m.graphs())
    printGraph(*g);
  for (const auto &g : m.loopGraphs())
    printLoopGraph(*g);
  out_ += "}\n";
}

} // namespace

std::string printModule(const Module &m) {
  Printer p;
  p.printModule(m);
  return p.take();
}

std::string printLoopGraph(const Module &m, const LoopGraph &g) {
  Printer p;
  p.printSymbolRanges(m);
  p.printLoopGraph(g);
  return p.take();
}

std::string printType(const Type &t) {
  Printer p;
  p.printType(t);
  return p.take();
}

} // namespace gc
