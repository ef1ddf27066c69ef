//===- Printer.cpp - The text form of a module ----------------------------===//
//
// Writes the syntax described in docs/formats.md ("Text form"). Every choice
// here has a twin in lib/Parser/Parser.cpp: the parser must read back exactly
// the fields printed, and the printer must never print two modules the same
// way. Only graphs, nodes, arguments and the head of a type or spec have a
// syntax of their own; everything else is a record `{field=value, ...}`
// written field by field from include/gc/IR/Fields.h.
//
//===----------------------------------------------------------------------===//

#include "gc/IR/Printer.h"

#include "gc/IR/SymbolRecord.h"
#include "gc/Support/SHA256.h"

#include <charconv>
#include <cmath>

namespace gc {
namespace {

/// The printer's state; its methods follow the grammar, one per construct.
struct Printer {
  std::string take() { return std::move(out_); }
  /// A module item: its keyword, then its record.
  void item(std::string_view keyword, const auto &record) {
    out_ += "  ";
    out_ += keyword;
    out_ += ' ';
    printField(record, Plain{}, 2);
    out_ += '\n';
  }
  void printValueRef(const Value *v) { out_ += v ? "%" + v->name() : "none"; }

  std::string out_;
  /// The loop graph being printed, whose buffers references name.
  const LoopGraph *graph_ = nullptr;
  // Contiguity is decided by building contiguousStrides for a copy of the
  // sizes in a context of our own: the module's context is const here, and
  // canonical form makes structural equality across contexts the same test
  // as pointer equality within one.
  SymContext scratch_;

  // Records.
  /// `{field=value, ...}` with the fields that differ from `defaults`. A full
  /// record also writes `kind`, which says what the others mean; an optional
  /// one (the suffix of a type or spec) writes nothing when none differs.
  template <Declared T> void printStruct(const T &v, const T &defaults, int indent, bool optional) {
    size_t start = out_.size();
    out_ += '{';
    bool first = true;
    forEachField<T>([&](size_t, const auto &f) {
      const auto &value = v.*f.member, &def = defaults.*f.member;
      // -0.0 is not the default 0.
      bool isDefault = value == def;
      if constexpr (std::is_same_v<std::remove_cvref_t<decltype(value)>, double>)
        isDefault = isDefault && std::signbit(value) == std::signbit(def);
      if (isDefault && (optional || f.name != "kind"))
        return true;
      out_ += first ? "" : ", ";
      first = false;
      out_ += f.name;
      out_ += '=';
      printField(value, typename std::remove_cvref_t<decltype(f)>::Codec{}, indent);
      return true;
    });
    if (first && optional)
      out_.resize(start);
    else
      out_ += '}';
  }

  template <Structured T> void printField(const T &v, Plain, int indent) {
    static const T defaults{};
    printStruct(v, defaults, indent, /*optional=*/false);
  }

  /// An optional record is printed only when present (absent is its
  /// default, which the record around it leaves out).
  template <Structured T> void printField(const std::optional<T> &v, Plain, int indent) {
    if (v)
      printField(*v, Plain{}, indent);
  }

  template <class M> void printField(const std::vector<M> &v, auto codec, int indent) {
    // A list of records puts each on a line of its own.
    out_ += '[';
    for (size_t i = 0; i < v.size(); ++i) {
      out_ += Structured<M> ? '\n' + std::string(indent + 2, ' ') : i ? ", " : "";
      printField(v[i], codec, indent + 2);
    }
    if constexpr (Structured<M>)
      out_ += '\n' + std::string(indent, ' ');
    out_ += ']';
  }

  template <class M> void printField(const M &v, auto codec, int indent = 0) {
    if constexpr (std::is_same_v<M, bool>) {
      out_ += v ? "true" : "false";
    } else if constexpr (std::is_same_v<M, double>) {
      printFloat(v);
    } else if constexpr (std::is_same_v<M, OpId>) {
      out_ += opName(v);
    } else if constexpr (std::is_enum_v<M>) {
      out_ += EnumInfo<M>::name(v);
    } else if constexpr (std::is_same_v<decltype(codec), BufferRef>) {
      // Indices are checked by the verifier, not here; an unverified module
      // still prints, with what is wrong visible.
      out_ += '%';
      out_ += v < graph_->buffers.size() ? graph_->buffers[v].name : "<buffer " + std::to_string(v) + ">";
    } else if constexpr (std::is_integral_v<M>) {
      out_ += std::to_string(v);
    } else if constexpr (std::is_same_v<M, const SymExpr *>) {
      out_ += v ? v->str() : "none";
    } else if constexpr (std::is_same_v<M, const SourceLoc *>) {
      // A null location is the field's default and never printed.
      printField(v ? *v : SourceLoc{}, Plain{}, indent);
    } else if constexpr (std::is_same_v<M, Device>) {
      out_ += deviceName(v);
    } else if constexpr (std::is_same_v<M, TensorType>) {
      printTensorType(v);
    } else if constexpr (std::is_same_v<M, Arg>) {
      printArg(v, /*loopArg=*/true);
    } else if constexpr (std::is_same_v<decltype(codec), Bytes>) {
      out_ += "<" + std::to_string(v.size()) + " bytes, sha256 " + sha256Hex(v) + ">";
    } else {
      printString(v);
    }
  }

  void printString(std::string_view s) {
    static constexpr char kHex[] = "0123456789abcdef";
    out_ += '"';
    for (char c : s) {
      auto u = static_cast<unsigned char>(c);
      if (c == '"' || c == '\\')
        out_ += {'\\', c};
      else if (c == '\n' || c == '\t')
        out_ += c == '\n' ? "\\n" : "\\t";
      else if (u < 0x20 || u == 0x7f)
        out_ += {'\\', 'x', kHex[u >> 4], kHex[u & 15]};
      else
        out_ += c;
    }
    out_ += '"';
  }

  void printFloat(double d) {
    // Every float carries a '.', an exponent, or is inf/nan, so that the parser
    // tells 1.0 from the integer 1. The sign of a NaN is not kept.
    if (std::isnan(d) || std::isinf(d)) {
      out_ += std::isnan(d) ? "nan" : d < 0 ? "-inf" : "inf";
      return;
    }
    char buf[64];
    std::string_view text(buf, std::to_chars(buf, buf + sizeof(buf), d).ptr - buf);
    out_ += text;
    if (text.find_first_of(".e") == std::string_view::npos)
      out_ += ".0";
  }

  // Types and specs.
  bool hasContiguousStrides(const TensorType &t) {
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

  void printTensorType(const TensorType &t) {
    out_ += dtypeName(t.dtype);
    printField(t.sizes, Plain{}, 0);
    // Then the fields that differ from the defaults: contiguous strides, a
    // zero storage offset (a null one too: a module never holds one).
    TensorType defaults{t.dtype, {}, t.sizes};
    if (hasContiguousStrides(t))
      defaults.strides = t.strides;
    if (!t.storageOffset || (t.storageOffset->isConst() && t.storageOffset->constant() == 0))
      defaults.storageOffset = t.storageOffset;
    printStruct(t, defaults, 0, /*optional=*/true);
  }

  void printType(const Type &t) {
    if (t.isTensor())
      printTensorType(t.tensor);
    else
      out_ += EnumInfo<Type::Kind>::name(t.kind);
  }

  /// An input or output spec: its kind, `("target")`, then other fields.
  template <class S> void printSpec(const S &spec) {
    out_ += EnumInfo<decltype(spec.kind)>::name(spec.kind);
    if (!spec.target.empty()) {
      out_ += '(';
      printString(spec.target);
      out_ += ')';
    }
    printStruct(spec, S{spec.kind, spec.target}, 0, /*optional=*/true);
  }

  // Graphs.
  void printArg(const Arg &a, bool loopArg) {
    const ArgSyntax &syntax = kArgSyntax[static_cast<size_t>(a.kind)];
    if (a.kind == ArgKind::None) {
      out_ += "none";
      return;
    }
    // A loop argument's tensors are indices into its node's inputs, in `ints`;
    // a SymInt is a value or an integer.
    size_t n = !syntax.list ? 1
               : syntax.elem == ArgElem::Tensor ? (loopArg ? a.ints.size() : a.values.size())
               : syntax.elem == ArgElem::Float  ? a.floats.size()
               : syntax.elem == ArgElem::String ? a.strings.size()
                                                : std::max(a.values.size(), a.ints.size());
    if (!syntax.bare || n == 0)
      out_ += syntax.keyword;
    out_ += syntax.list ? "[" : syntax.bare ? "" : "(";
    for (size_t i = 0; i < n; ++i) {
      out_ += i ? ", " : "";
      printArgElement(a, syntax.elem, i, loopArg);
    }
    out_ += syntax.list ? "]" : syntax.bare ? "" : ")";
  }

  void printArgElement(const Arg &a, ArgElem elem, size_t i, bool loopArg) {
    const Value *value = i < a.values.size() ? a.values[i] : nullptr;
    // Integers, bools, dtypes, memory formats and layouts are held in `ints`.
    int64_t n = i < a.ints.size() ? a.ints[i] : -1;
    switch (elem) {
    case ArgElem::None: return;
    case ArgElem::Tensor:
      if (!loopArg)
        return printValueRef(value);
      out_ += n >= 0 ? '$' + std::to_string(n) : "none";
      return;
    case ArgElem::Int: return printField(n, Plain{});
    case ArgElem::Float: return printFloat(a.floats[i]);
    case ArgElem::Bool: return printField(n != 0, Plain{});
    case ArgElem::String: return printString(a.strings[i]);
    case ArgElem::SymInt: return value ? printValueRef(value) : printField(n, Plain{});
    case ArgElem::Value: return printValueRef(value);
    case ArgElem::DType: return printField(static_cast<DType>(n), Plain{});
    case ArgElem::MemoryFormat: return printField(static_cast<MemoryFormat>(n), Plain{});
    case ArgElem::Layout: return printField(static_cast<Layout>(n), Plain{});
    case ArgElem::Device: return printField(a.device, Plain{});
    case ArgElem::Graph: out_ += '@' + a.strings[i];
    }
  }

  void printNode(const Node &n) {
    out_ += "    ";
    const auto &results = n.results();
    for (size_t i = 0; i < results.size(); ++i) {
      out_ += i ? ", " : "";
      printValueRef(results[i]);
    }
    out_ += results.empty() ? "" : " = ";
    out_ += opName(n.op());
    // Positional-or-keyword arguments first, then after ';' the keyword-only
    // ones, as in the op's schema.
    out_ += '(';
    bool any = false;
    for (bool keywordOnly : {false, true}) {
      bool firstOfGroup = true;
      for (const NamedArg &a : n.args()) {
        if (a.keywordOnly != keywordOnly)
          continue;
        out_ += keywordOnly && firstOfGroup ? "; " : any ? ", " : "";
        firstOfGroup = false;
        any = true;
        out_ += a.name + '=';
        printArg(a.value, /*loopArg=*/false);
      }
    }
    out_ += ')';
    // One type, a tuple `(T, ...)` or a list `[T, ...]`.
    ResultForm form = n.resultForm();
    out_ += form == ResultForm::Tuple ? " : (" : form == ResultForm::List ? " : [" : results.empty() ? "" : " : ";
    for (size_t i = 0; i < results.size(); ++i) {
      out_ += i ? ", " : "";
      printType(results[i]->type());
    }
    out_ += form == ResultForm::Tuple ? ")" : form == ResultForm::List ? "]" : "";
    // The source location, when known, ends the line: `loc{file=..., line=...}`.
    if (n.loc()) {
      out_ += " loc";
      printField(*n.loc(), Plain{}, 4);
    }
    out_ += '\n';
  }

  void printGraph(const Graph &g) {
    out_ += "  graph @" + g.name() + '(';
    // Inputs after the first line up under it.
    std::string indent = ",\n" + std::string(g.name().size() + 10, ' ');
    for (size_t i = 0; i < g.inputs().size(); ++i) {
      out_ += i ? indent : "";
      printValueRef(g.inputs()[i]);
      out_ += ": ";
      printType(g.inputs()[i]->type());
      out_ += ' ';
      printSpec(g.inputSpecs()[i]);
    }
    out_ += ") {\n";
    for (const auto &n : g.nodes())
      printNode(*n);
    out_ += "    return";
    for (size_t i = 0; i < g.outputs().size(); ++i) {
      out_ += i ? ", " : " ";
      printValueRef(g.outputs()[i]);
      out_ += ' ';
      printSpec(g.outputSpecs()[i]);
    }
    out_ += "\n  }\n";
  }

  // Module.
  void printLoopGraph(const LoopGraph &g) {
    graph_ = &g;
    item("loops", g);
  }

  void printSymbolRanges(const Module &m) {
    for (const auto &[name, range] : m.syms().ranges())
      item("symbol", FileSymbol{name, range.min, range.max});
  }

  void printModule(const Module &m) {
    out_ += "module level(" + std::string(levelName(m.level())) + ')';
    if (!m.producer().empty()) {
      out_ += " producer(";
      printString(m.producer());
      out_ += ')';
    }
    out_ += " {\n";
    if (m.target())
      item("target", *m.target());
    printSymbolRanges(m);
    for (const WeightSource &s : m.weightSources())
      item("source", s);
    for (const Weight &w : m.weights())
      item("weight", w);
    for (const auto &g : m.graphs())
      printGraph(*g);
    for (const auto &g : m.loopGraphs())
      printLoopGraph(*g);
    out_ += "}\n";
  }
};

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
