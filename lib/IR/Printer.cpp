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
  void printGraph(const Graph &g);
  void printInput(const Value *v, const InputSpec &spec);
  void printNode(const Node &n);
  void printArg(const Arg &a, bool loopArg);
  void printArgElement(const Arg &a, ArgElem elem, size_t i, bool loopArg);
  template <typename NamedArgT>
  void printCallArgs(const std::vector<NamedArgT> &args, bool loopArgs);
  void printValueRef(const Value *v);
  void printInputSpec(const InputSpec &spec);
  void printOutputSpec(const OutputSpec &spec);
  /// ` path("...")` after a spec, if it has a path.
  void printPath(const std::string &path);
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
};

bool Printer::hasContiguousStrides(const TensorType &t) {
  if (t.strides.size() != t.sizes.size())
    return false;
  std::vector<const SymExpr *> sizes;
  // Parsing a canonical expression's text rebuilds it here; an expression
  // that does not parse (a bad symbol name in an unverified module) keeps
  // its strides printed.
  for (const SymExpr *s : t.sizes) {
    Expected<const SymExpr *> e = scratch_.parse(s->str());
    if (!e)
      return false;
    sizes.push_back(*e);
  }
  std::vector<const SymExpr *> expected = contiguousStrides(scratch_, sizes);
  for (size_t i = 0; i < expected.size(); ++i)
    if (SymExpr::compare(t.strides[i], expected[i]) != 0)
      return false;
  return true;
}

void Printer::printTensorType(const TensorType &t) {
  out_ += dtypeName(t.dtype);
  printField(t.sizes, Plain{}, 0);

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
    printField(t.strides, Plain{}, 0);
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
  if (t.isTensor())
    printTensorType(t.tensor);
  else
    out_ += EnumInfo<Type::Kind>::name(t.kind);
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
  const ArgSyntax &syntax = kArgSyntax[static_cast<size_t>(a.kind)];
  if (a.kind == ArgKind::None) {
    out_ += "none";
    return;
  }
  // A loop argument's tensors are indices into its node's inputs, in `ints`.
  size_t n = 1;
  if (syntax.list) {
    switch (syntax.elem) {
    case ArgElem::Tensor:
      n = loopArg ? a.ints.size() : a.values.size();
      break;
    case ArgElem::Float:
      n = a.floats.size();
      break;
    case ArgElem::String:
      n = a.strings.size();
      break;
    default: // A SymInt is a value or an integer; the others are integers.
      n = std::max(a.values.size(), a.ints.size());
      break;
    }
  }
  if (!syntax.bare || n == 0)
    out_ += syntax.keyword;
  out_ += syntax.list ? "[" : syntax.bare ? "" : "(";
  for (size_t i = 0; i < n; ++i) {
    out_ += i ? ", " : "";
    printArgElement(a, syntax.elem, i, loopArg);
  }
  out_ += syntax.list ? "]" : syntax.bare ? "" : ")";
}

void Printer::printArgElement(const Arg &a, ArgElem elem, size_t i, bool loopArg) {
  const Value *value = i < a.values.size() ? a.values[i] : nullptr;
  switch (elem) {
  case ArgElem::None:
    break;
  case ArgElem::Tensor:
    if (!loopArg)
      printValueRef(value);
    else if (i < a.ints.size() && a.ints[i] >= 0)
      out_ += '$' + std::to_string(a.ints[i]);
    else
      out_ += "none";
    break;
  case ArgElem::Int:
    printInt(a.ints[i]);
    break;
  case ArgElem::Float:
    printFloat(a.floats[i]);
    break;
  case ArgElem::Bool:
    printBool(a.ints[i]);
    break;
  case ArgElem::String:
    printString(a.strings[i]);
    break;
  case ArgElem::SymInt:
    if (value)
      printValueRef(value);
    else
      printInt(a.ints[i]);
    break;
  case ArgElem::Value:
    printValueRef(value);
    break;
  case ArgElem::DType:
    out_ += dtypeName(static_cast<DType>(a.ints[i]));
    break;
  case ArgElem::MemoryFormat:
    out_ += memoryFormatName(static_cast<MemoryFormat>(a.ints[i]));
    break;
  case ArgElem::Layout:
    out_ += layoutName(static_cast<Layout>(a.ints[i]));
    break;
  case ArgElem::Device:
    out_ += deviceName(a.device);
    break;
  case ArgElem::Graph:
    out_ += '@' + a.strings[i];
    break;
  }
}

template <typename NamedArgT>
void Printer::printCallArgs(const std::vector<NamedArgT> &args, bool loopArgs) {
  // Positional-or-keyword arguments first, then after ';' the keyword-only
  // ones, as in the op's schema.
  out_ += '(';
  bool any = false;
  for (bool keywordOnly : {false, true}) {
    bool firstOfGroup = true;
    for (const NamedArgT &a : args) {
      if (a.keywordOnly != keywordOnly)
        continue;
      out_ += keywordOnly && firstOfGroup ? "; " : any ? ", " : "";
      firstOfGroup = false;
      any = true;
      out_ += a.name;
      out_ += '=';
      printArg(a.value, loopArgs);
    }
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
  if (!spec.target.empty() || !spec.persistent) {
    out_ += '(';
    printString(spec.target);
    if (!spec.persistent)
      out_ += ", nonpersistent";
    out_ += ')';
  }
  printPath(spec.path);
}

void Printer::printPath(const std::string &path) {
  if (path.empty())
    return;
  out_ += " path(";
  printString(path);
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
  printPath(spec.path);
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
// others mean (a buffer reference left out is the first buffer). A list of
// structs puts each element on a line of its own.
// Tensor types and call arguments keep the syntax they have in graphs.

void Printer::printLoopGraph(const LoopGraph &g) {
  graph_ = &g;
  out_ += "  loops ";
  printField(g, Plain{}, 2);
  out_ += '\n';
}

template <Structured T> void Printer::printField(const T &v, Plain, int indent) {
  [[maybe_unused]] static const T defaults{}; // unused where T has no fields to skip
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
    out_ += std::to_string(v);
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
    out_ += "  source ";
    out_ += EnumInfo<WeightSource::Kind>::name(s.kind);
    out_ += ' ';
    printString(s.path);
    out_ += '\n';
  }

  for (const Weight &w : m.weights()) {
    out_ += "  weight ";
    printString(w.name);
    out_ += " : ";
    printTensorType(w.type);
    out_ += " =";
    // The fields after the name and the type, as `field(value)` in order.
    forEachField<Weight>([&](size_t id, const auto &f) {
      if (id < 2)
        return true;
      out_ += ' ';
      out_ += f.name;
      out_ += '(';
      printField(w.*f.member, Plain{}, 0);
      out_ += ')';
      return true;
    });
    out_ += '\n';
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
