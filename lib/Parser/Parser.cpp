//===- Parser.cpp - Reading the text form ---------------------------------===//
//
// A recursive-descent parser over characters for the syntax described in
// docs/formats.md ("Text form"); lib/IR/Printer.cpp writes it. There is no
// separate token stream: symbolic expressions and device names are taken as
// raw text up to a delimiter and handed to SymContext::parse / parseDevice,
// which own their syntax.
//
// Only graphs, nodes, arguments and the head of a type or spec have a syntax
// of their own; everything else is a record `{field=value, ...}` read field
// by field from include/gc/IR/Fields.h, with one codec per field type.
//
// It fills exactly the fields an importer fills, so that a parsed module
// equals the module that was printed. Semantic checks (argument kinds versus
// op schemas, weight source indices, spec consistency) are the verifier's;
// the parser checks only what it needs to build the module: syntax, names
// defined once and before use, and shapes that are well formed.
//
//===----------------------------------------------------------------------===//

#include "gc/Parser/Parser.h"

#include "gc/GraphFile/FileTables.h"
#include "gc/IR/PluginRows.h"

#include <algorithm>
#include <charconv>
#include <unordered_map>
#include <utility>

namespace gc {
namespace {

bool isIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }
/// Identifiers may hold dots so that op names ("aten.add.Tensor") are one.
bool isIdentChar(char c) { return isIdentStart(c) || isDigit(c) || c == '.'; }

/// The parser's state; its methods follow the grammar, one per construct.
struct Parser {
  Parser(std::string_view text, std::string_view file, Module &m) : text_(text), file_(file), m_(m) {}

  std::string_view text_;
  std::string_view file_;
  size_t pos_ = 0;
  Module &m_;
  /// The current graph's values by name.
  std::unordered_map<std::string, Value *> values_;
  /// The loop graph being read, whose buffers references name.
  LoopGraph *loopGraph_ = nullptr;
  /// Arguments of a loop node name its inputs ("$0") instead of values.
  bool loopArgs_ = false;
  /// The record field being read, which names an unknown enum value.
  std::string_view field_ = "name";

  // Lexical helpers. All of them skip whitespace and comments first.
  Error error(size_t at, const std::string &message) const {
    size_t line = 1, lineStart = 0;
    for (size_t i = 0; i < at && i < text_.size(); ++i)
      if (text_[i] == '\n') {
        ++line;
        lineStart = i + 1;
      }
    return makeError() << file_ << ':' << line << ':' << (at - lineStart + 1) << ": " << message;
  }

  /// Skips whitespace and comments; returns the position reached.
  size_t here() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
        ++pos_;
      else if (text_.substr(pos_, 2) == "//")
        pos_ = std::min(text_.find('\n', pos_), text_.size());
      else
        break;
    }
    return pos_;
  }

  Error errorHere(const std::string &message) { return error(here(), message); }
  char peek() { return here() < text_.size() ? text_[pos_] : '\0'; }
  std::string_view peekIdentifier() { return here() < text_.size() && isIdentStart(text_[pos_]) ? word(pos_) : ""; }

  bool accept(char c) {
    if (peek() != c)
      return false;
    ++pos_;
    return true;
  }

  Error expect(char c) {
    return accept(c) ? Error::success() : errorHere(std::string("expected '") + c + "'");
  }

  /// The run of identifier characters at `from`.
  std::string_view word(size_t from) const {
    size_t end = from;
    while (end < text_.size() && isIdentChar(text_[end]))
      ++end;
    return text_.substr(from, end - from);
  }

  bool acceptKeyword(std::string_view kw) {
    if (peekIdentifier() != kw)
      return false;
    pos_ += kw.size();
    return true;
  }

  Error expectKeyword(std::string_view kw) {
    return acceptKeyword(kw) ? Error::success() : errorHere("expected '" + std::string(kw) + "'");
  }

  Error parseIdentifier(std::string &out, std::string_view what) {
    out = peekIdentifier();
    if (out.empty())
      return errorHere("expected " + std::string(what));
    pos_ += out.size();
    return Error::success();
  }

  /// A value of E by its name in the text form (EnumInfo<E>).
  template <class E> Error parseName(E &out, std::string_view what) {
    size_t at = here();
    std::string name;
    GC_RETURN_IF_ERROR(parseIdentifier(name, what));
    std::optional<E> e = parseEnum<E>(name);
    if (!e)
      return error(at, "unknown " + std::string(what) + " '" + name + "'");
    out = *e;
    return Error::success();
  }

  Error parseSigilName(char sigil, std::string &out) {
    if (peek() != sigil)
      return errorHere(sigil == '%' ? "expected value name '%...'" : "expected graph name '@...'");
    // Torch names may start with a digit.
    out = word(pos_ + 1);
    if (out.empty())
      return error(pos_, std::string("expected a name after '") + sigil + "'");
    pos_ += 1 + out.size();
    return Error::success();
  }

  Error parseString(std::string &out) {
    if (peek() != '"')
      return errorHere("expected string");
    size_t start = pos_++;
    out.clear();
    auto hex = [&](size_t i) {
      char c = i < text_.size() ? text_[i] : '\0';
      return isDigit(c) ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    };
    while (true) {
      if (pos_ >= text_.size() || text_[pos_] == '\n')
        return error(start, "unterminated string");
      char c = text_[pos_++];
      if (c == '"')
        return Error::success();
      if (c != '\\') {
        out += c;
        continue;
      }
      char e = pos_ < text_.size() ? text_[pos_] : '\0';
      if (e == '"' || e == '\\' || e == 'n' || e == 't')
        out += e == 'n' ? '\n' : e == 't' ? '\t' : e;
      else if (e == 'x' && hex(pos_ + 1) >= 0 && hex(pos_ + 2) >= 0)
        out += static_cast<char>(hex(pos_ + 1) * 16 + hex(pos_ + 2));
      else
        return error(pos_ - 1, "invalid escape sequence in string");
      pos_ += e == 'x' ? 3 : 1;
    }
  }

  /// The text of the numeric literal here and whether it is a float (it has
  /// a '.' or an exponent, or is inf/nan); nothing is consumed.
  Error scanNumber(std::string_view &out, bool &isFloat) {
    size_t start = here(), p = pos_ + (text_.substr(pos_, 1) == "-");
    auto digits = [&] {
      size_t from = p;
      while (p < text_.size() && isDigit(text_[p]))
        ++p;
      return p > from;
    };
    isFloat = word(p) == "inf" || word(p) == "nan";
    if (isFloat) {
      p += 3;
    } else {
      if (!digits())
        return error(start, "expected number");
      if (p < text_.size() && text_[p] == '.') {
        isFloat = true;
        ++p;
        digits();
      }
      if (p < text_.size() && (text_[p] == 'e' || text_[p] == 'E')) {
        isFloat = true;
        p += 1 + (p + 1 < text_.size() && (text_[p + 1] == '+' || text_[p + 1] == '-'));
        if (!digits())
          return error(start, "malformed number");
      }
    }
    if (p < text_.size() && isIdentChar(text_[p]))
      return error(start, "malformed number");
    out = text_.substr(start, p - start);
    return Error::success();
  }

  /// An integer (unsigned types refuse a sign) or a float.
  template <class N> Error parseNumber(N &out) {
    size_t at = here();
    if (std::is_unsigned_v<N> && !isDigit(peek()))
      return error(at, "expected unsigned integer");
    std::string_view text;
    bool isFloat;
    GC_RETURN_IF_ERROR(scanNumber(text, isFloat));
    if (std::is_integral_v<N> && isFloat)
      return error(at, "expected integer");
    auto r = std::from_chars(text.data(), text.data() + text.size(), out);
    if (r.ec == std::errc::result_out_of_range)
      return error(at, "number out of range");
    if (r.ec != std::errc() || r.ptr != text.data() + text.size())
      return error(at, "malformed number");
    pos_ += text.size();
    return Error::success();
  }

  /// Text up to a terminator outside parentheses, or to the end of the line.
  std::string_view parseRaw(std::string_view terminators, size_t &at) {
    // Parentheses nest (floordiv(a, b)).
    at = here();
    int depth = 0;
    for (; pos_ < text_.size() && text_[pos_] != '\n'; ++pos_) {
      char c = text_[pos_];
      if (depth == 0 && terminators.find(c) != std::string_view::npos)
        break;
      depth += c == '(' ? 1 : c == ')' && depth > 0 ? -1 : 0;
    }
    std::string_view raw = text_.substr(at, pos_ - at);
    while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\t'))
      raw.remove_suffix(1);
    return raw;
  }

  Error parseExpr(std::string_view terminators, const SymExpr *&out) {
    size_t at;
    std::string_view raw = parseRaw(terminators, at);
    if (raw.empty())
      return error(at, "expected expression");
    Expected<const SymExpr *> e = m_.syms().parse(raw);
    if (!e)
      return error(at, "invalid expression '" + std::string(raw) + "': " + e.error().message());
    out = *e;
    return Error::success();
  }

  // Records.
  /// Fields in any order, each at most once, commas optional; absent ones keep
  /// their value. `at` receives where each field's value starts (0: absent).
  template <Declared T> Error parseStruct(T &out, std::vector<size_t> *at = nullptr) {
    GC_RETURN_IF_ERROR(expect('{'));
    std::vector<size_t> seen(std::tuple_size_v<std::remove_cvref_t<decltype(kFields<T>)>>);
    while (!accept('}')) {
      size_t start = here();
      std::string name;
      GC_RETURN_IF_ERROR(parseIdentifier(name, "field name"));
      Error e = error(start, "unknown field '" + name + "'");
      forEachField<T>([&](size_t id, const auto &f) {
        if (f.name != name)
          return true;
        e = seen[id] ? error(start, "duplicate field '" + name + "'") : expect('=');
        seen[id] = here();
        field_ = f.name;
        if (!e)
          e = parseField(out.*f.member, typename std::remove_cvref_t<decltype(f)>::Codec{});
        return false;
      });
      GC_RETURN_IF_ERROR(std::move(e));
      accept(',');
    }
    if (at)
      *at = std::move(seen);
    return Error::success();
  }

  template <Structured T> Error parseField(T &out, Plain) { return parseStruct(out); }
  template <Structured T> Error parseField(std::optional<T> &out, Plain) {
    return parseStruct(out.emplace());
  }

  template <class M> Error parseField(std::vector<M> &out, auto codec) {
    // Elements are separated by ','; structs, printed one a line, may leave it
    // out. No trailing ','.
    out.clear();
    GC_RETURN_IF_ERROR(expect('['));
    if (accept(']'))
      return Error::success();
    do {
      GC_RETURN_IF_ERROR(parseField(out.emplace_back(), codec));
    } while (accept(',') || (Structured<M> && peek() != ']'));
    return accept(']') ? Error::success() : errorHere("expected ',' or ']'");
  }

  template <class M> Error parseField(M &out, auto codec) {
    size_t at = here();
    if constexpr (std::is_same_v<M, bool>) {
      if (!acceptKeyword("true") && !acceptKeyword("false"))
        return errorHere("expected 'true' or 'false'");
      out = text_[at] == 't';
    } else if constexpr (std::is_same_v<M, OpId>) {
      std::string name;
      GC_RETURN_IF_ERROR(parseIdentifier(name, "op name"));
      std::optional<OpId> id = lookupOp(name);
      if (!id)
        return error(at, unknownOpMessage(name));
      out = *id;
    } else if constexpr (std::is_enum_v<M>) {
      return parseName(out, field_);
    } else if constexpr (std::is_same_v<decltype(codec), BufferRef>) {
      std::string name;
      GC_RETURN_IF_ERROR(parseSigilName('%', name));
      const auto &buffers = loopGraph_->buffers;
      auto it = std::find_if(buffers.begin(), buffers.end(), [&](const Buffer &b) { return b.name == name; });
      if (it == buffers.end())
        return error(at, "use of undefined buffer '%" + name + "'");
      out = static_cast<uint32_t>(it - buffers.begin());
    } else if constexpr (std::is_arithmetic_v<M>) {
      return parseNumber(out);
    } else if constexpr (std::is_same_v<M, const SymExpr *>) {
      return parseExpr(",]}", out);
    } else if constexpr (std::is_same_v<M, const SourceLoc *>) {
      SourceLoc loc;
      GC_RETURN_IF_ERROR(parseStruct(loc));
      out = m_.locations().intern(loc);
    } else if constexpr (std::is_same_v<M, Device>) {
      std::string_view raw = parseRaw(",)]}", at);
      std::optional<Device> d = parseDevice(raw);
      if (!d)
        return error(at, "unknown device '" + std::string(raw) + "'");
      out = *d;
    } else if constexpr (std::is_same_v<M, TensorType>) {
      Type type;
      GC_RETURN_IF_ERROR(parseType(type));
      if (!type.isTensor())
        return error(at, "expected a tensor type");
      out = std::move(type.tensor);
    } else if constexpr (std::is_same_v<M, Arg>) {
      loopArgs_ = true;
      Error e = parseArg(out);
      loopArgs_ = false;
      return e;
    } else if constexpr (std::is_same_v<decltype(codec), Bytes>) {
      return error(at, "object code cannot be read from text; read the binary file");
    } else {
      return parseString(out);
    }
    return Error::success();
  }

  // Types and specs.
  Error parseType(Type &out) {
    size_t start = here();
    std::string name;
    GC_RETURN_IF_ERROR(parseIdentifier(name, "type"));
    if (std::optional<Type::Kind> kind = parseEnum<Type::Kind>(name); kind && kind != Type::Kind::Tensor) {
      out = Type::makeScalar(*kind);
      return Error::success();
    }
    TensorType t;
    if (std::optional<DType> dtype = parseDType(name))
      t.dtype = *dtype;
    else
      return error(start, "unknown dtype '" + name + "'");
    GC_RETURN_IF_ERROR(parseField(t.sizes, Plain{}));
    // The other fields, where they differ from the default, as a record.
    std::vector<size_t> at(std::tuple_size_v<decltype(kFields<TensorType>)>);
    if (peek() == '{')
      GC_RETURN_IF_ERROR(parseStruct(t, &at));
    if (!at[3])
      t.strides = contiguousStrides(m_.syms(), t.sizes);
    else if (t.strides.size() != t.sizes.size())
      return error(at[3], "expected " + std::to_string(t.sizes.size()) + " strides, got " +
                              std::to_string(t.strides.size()));
    if (!t.storageOffset)
      t.storageOffset = m_.syms().constant(0);
    out = Type::makeTensor(std::move(t));
    return Error::success();
  }

  /// An input or output spec: its kind, `("target")`, then other fields.
  template <class S> Error parseSpec(S &spec, std::string_view what) {
    GC_RETURN_IF_ERROR(parseName(spec.kind, what));
    if (accept('(')) {
      GC_RETURN_IF_ERROR(parseString(spec.target));
      GC_RETURN_IF_ERROR(expect(')'));
    }
    // The record follows directly: after a space, `{` is a graph's body.
    return text_.substr(pos_, 1) == "{" ? parseStruct(spec) : Error::success();
  }

  // Arguments.
  Error parseValueRef(Value *&out, bool allowNone) {
    if (allowNone && acceptKeyword("none")) {
      out = nullptr;
      return Error::success();
    }
    size_t start = here();
    std::string name;
    GC_RETURN_IF_ERROR(parseSigilName('%', name));
    auto it = values_.find(name);
    if (it == values_.end())
      return error(start, "use of undefined value '%" + name + "'");
    out = it->second;
    return Error::success();
  }

  /// A loop call's tensor argument: one of its node's inputs, "$N".
  Error parseInputRef(bool allowNone, int64_t &out) {
    if (allowNone && acceptKeyword("none")) {
      out = -1;
      return Error::success();
    }
    if (!accept('$'))
      return errorHere(allowNone ? "expected node input '$N' or 'none'" : "expected node input '$N'");
    size_t at = pos_;
    uint64_t index;
    GC_RETURN_IF_ERROR(parseNumber(index));
    if (index > INT32_MAX)
      return error(at, "input index out of range");
    out = static_cast<int64_t>(index);
    return Error::success();
  }

  Error parseArg(Arg &out) {
    out = Arg{};
    size_t start = here();
    std::string_view id = peekIdentifier();
    const ArgSyntax *syntax = std::find_if(std::begin(kArgSyntax), std::end(kArgSyntax),
                                           [&](const ArgSyntax &s) { return !s.keyword.empty() && s.keyword == id; });
    if (syntax != std::end(kArgSyntax)) {
      pos_ += id.size();
      if (syntax->kind == ArgKind::None)
        return Error::success();
      GC_RETURN_IF_ERROR(expect(syntax->list ? '[' : '('));
    } else {
      // No keyword: the (first) element tells the kind.
      bool list = accept('['), isFloat = false;
      char c = peek();
      std::string_view number;
      ArgElem elem;
      if (c == '%' || (c == '$' && loopArgs_))
        elem = ArgElem::Tensor;
      else if (c == '"')
        elem = ArgElem::String;
      else if (c == '@' && !list)
        elem = ArgElem::Graph;
      else if (peekIdentifier() == "true" || peekIdentifier() == "false")
        elem = ArgElem::Bool;
      else if (c == '-' || isDigit(c) || peekIdentifier() == "inf" || peekIdentifier() == "nan") {
        GC_RETURN_IF_ERROR(scanNumber(number, isFloat));
        elem = isFloat ? ArgElem::Float : ArgElem::Int;
      } else if (list && c == ']')
        return error(start, "an empty list needs its kind, as in 'ints[]' or 'tensors[]'");
      else if (list)
        return errorHere("expected list element");
      else
        return error(start, id.empty() ? std::string("expected argument value")
                                       : "expected argument value, got '" + std::string(id) + "'");
      syntax = std::find_if(std::begin(kArgSyntax), std::end(kArgSyntax),
                            [&](const ArgSyntax &s) { return s.bare && s.list == list && s.elem == elem; });
    }
    out.kind = syntax->kind;
    if (!syntax->list) {
      GC_RETURN_IF_ERROR(parseArgElement(*syntax, out));
      return syntax->bare ? Error::success() : expect(')');
    }
    if (accept(']'))
      return Error::success();
    do {
      GC_RETURN_IF_ERROR(parseArgElement(*syntax, out));
    } while (accept(','));
    return accept(']') ? Error::success() : errorHere("expected ',' or ']'");
  }

  Error parseArgElement(const ArgSyntax &syntax, Arg &out) {
    // Integers, bools, dtypes, memory formats and layouts are held in `ints`.
    auto intoInts = [&]<class V>(V v) -> Error {
      field_ = syntax.keyword;
      GC_RETURN_IF_ERROR(parseField(v, Plain{}));
      out.ints.push_back(static_cast<int64_t>(v));
      return Error::success();
    };
    bool optional = syntax.kind == ArgKind::OptionalTensors;
    Value *v = nullptr;
    switch (syntax.elem) {
    case ArgElem::None: return Error::success();
    case ArgElem::Tensor:
      if (loopArgs_)
        return parseInputRef(optional, out.ints.emplace_back());
      return parseValueRef(out.values.emplace_back(), optional);
    case ArgElem::Int: return intoInts(int64_t{});
    case ArgElem::Float: return parseNumber(out.floats.emplace_back());
    case ArgElem::Bool: return intoInts(false);
    case ArgElem::String: return parseString(out.strings.emplace_back());
    case ArgElem::SymInt:
      // Values and constants stay parallel: one of them is meaningful. Loop
      // arguments hold constants only, and no values at all.
      GC_RETURN_IF_ERROR(peek() == '%' ? parseValueRef(v, false) : parseNumber(out.ints.emplace_back()));
      if (v)
        out.ints.push_back(0);
      if (!loopArgs_)
        out.values.push_back(v);
      return Error::success();
    case ArgElem::Value: return parseValueRef(out.values.emplace_back(), /*allowNone=*/false);
    case ArgElem::DType: return intoInts(DType{});
    case ArgElem::MemoryFormat: return intoInts(MemoryFormat{});
    case ArgElem::Layout: return intoInts(Layout{});
    case ArgElem::Device: return parseField(out.device, Plain{});
    // Only a name: the graph may come later in the module; the verifier checks that it exists.
    case ArgElem::Graph: return parseSigilName('@', out.strings.emplace_back());
    }
    return Error::success();
  }

  // Graphs.
  Error defineValue(const std::string &name, size_t at) {
    return values_.count(name) ? error(at, "redefinition of value '%" + name + "'") : Error::success();
  }

  Error parseNode(Graph &g) {
    std::vector<std::pair<std::string, Type>> results;
    if (peek() == '%') {
      do {
        size_t at = here();
        std::string name;
        GC_RETURN_IF_ERROR(parseSigilName('%', name));
        GC_RETURN_IF_ERROR(defineValue(name, at));
        for (const auto &r : results)
          if (r.first == name)
            return error(at, "redefinition of value '%" + name + "'");
        results.emplace_back(std::move(name), Type{});
      } while (accept(','));
      GC_RETURN_IF_ERROR(expect('='));
    }
    OpId op;
    GC_RETURN_IF_ERROR(parseField(op, Plain{}));

    // Positional-or-keyword arguments, then after ';' keyword-only ones.
    std::vector<NamedArg> args;
    GC_RETURN_IF_ERROR(expect('('));
    bool keywordOnly = accept(';');
    while (!accept(')')) {
      if (!args.empty() && !accept(',') && (keywordOnly || !(keywordOnly = accept(';'))))
        return errorHere(keywordOnly ? "expected ',' or ')'" : "expected ',', ';' or ')'");
      size_t at = here();
      NamedArg &a = args.emplace_back();
      GC_RETURN_IF_ERROR(parseIdentifier(a.name, "argument name"));
      if (std::count_if(args.begin(), args.end(), [&](const NamedArg &b) { return b.name == a.name; }) > 1)
        return error(at, "duplicate argument '" + a.name + "'");
      GC_RETURN_IF_ERROR(expect('='));
      a.keywordOnly = keywordOnly;
      GC_RETURN_IF_ERROR(parseArg(a.value));
    }

    ResultForm form = ResultForm::Single;
    std::vector<Type> types;
    size_t colonAt = here();
    if (accept(':')) {
      char close = accept('(') ? ')' : accept('[') ? ']' : '\0';
      form = close == ')' ? ResultForm::Tuple : close ? ResultForm::List : ResultForm::Single;
      if (!close || !accept(close)) {
        do {
          GC_RETURN_IF_ERROR(parseType(types.emplace_back()));
        } while (accept(','));
        if (close)
          GC_RETURN_IF_ERROR(expect(close));
      }
    } else if (!results.empty()) {
      return error(colonAt, "expected ':' and result types");
    }
    if (types.size() != results.size())
      return error(colonAt, std::to_string(results.size()) + " result name(s) but " +
                                std::to_string(types.size()) + " type(s)");
    for (size_t i = 0; i < types.size(); ++i)
      results[i].second = std::move(types[i]);
    // An optional trailing source location.
    const SourceLoc *loc = nullptr;
    if (acceptKeyword("loc"))
      GC_RETURN_IF_ERROR(parseField(loc, Plain{}));
    Node *n = g.addNode(op, std::move(args), std::move(results), form);
    n->setLoc(loc);
    for (Value *v : n->results())
      values_[v->name()] = v;
    return Error::success();
  }

  Error parseGraph() {
    size_t at = here();
    std::string name;
    GC_RETURN_IF_ERROR(parseSigilName('@', name));
    if (m_.graph(name) || m_.loopGraph(name))
      return error(at, "redefinition of graph '@" + name + "'");
    Graph &g = m_.addGraph(name);
    values_.clear();
    GC_RETURN_IF_ERROR(expect('('));
    while (!accept(')')) {
      if (!g.inputs().empty() && !accept(','))
        return errorHere("expected ')'");
      size_t start = here();
      GC_RETURN_IF_ERROR(parseSigilName('%', name));
      GC_RETURN_IF_ERROR(defineValue(name, start));
      GC_RETURN_IF_ERROR(expect(':'));
      Type type;
      GC_RETURN_IF_ERROR(parseType(type));
      InputSpec spec;
      GC_RETURN_IF_ERROR(parseSpec(spec, "input kind"));
      values_[name] = g.addInput(name, std::move(type), std::move(spec));
    }
    GC_RETURN_IF_ERROR(expect('{'));
    while (peekIdentifier() != "return") {
      char c = peek();
      if (c != '%' && !isIdentStart(c))
        return errorHere("expected node or 'return'");
      GC_RETURN_IF_ERROR(parseNode(g));
    }
    pos_ += 6;
    if (peek() == '%' || peekIdentifier() == "none") {
      do {
        Value *v;
        GC_RETURN_IF_ERROR(parseValueRef(v, /*allowNone=*/true));
        OutputSpec spec;
        GC_RETURN_IF_ERROR(parseSpec(spec, "output kind"));
        g.addOutput(v, std::move(spec));
      } while (accept(','));
    }
    return expect('}');
  }

  // Module.
  Error parseItem() {
    size_t at = here();
    std::vector<size_t> fieldAt;
    if (acceptKeyword("graph"))
      return parseGraph();
    if (acceptKeyword("target")) {
      if (m_.target())
        return error(at, "the module's target is given twice");
      Target t;
      GC_RETURN_IF_ERROR(parseStruct(t));
      m_.setTarget(std::move(t));
      return Error::success();
    }
    if (acceptKeyword("source"))
      return parseStruct(m_.weightSources().emplace_back());
    if (acceptKeyword("weight"))
      return parseStruct(m_.weights().emplace_back());
    if (acceptKeyword("symbol")) {
      FileSymbol s;
      GC_RETURN_IF_ERROR(parseStruct(s, &fieldAt));
      at = fieldAt[0] ? fieldAt[0] : at;
      Expected<const SymExpr *> e = m_.syms().parse(s.name);
      if (!e || !(*e)->isSymbol() || (*e)->symbolName() != s.name)
        return error(at, "invalid symbol name '" + s.name + "'");
      if (m_.syms().range(s.name))
        return error(at, "redefinition of symbol '" + s.name + "'");
      m_.syms().setRange(s.name, {s.min, s.max});
      return Error::success();
    }
    if (acceptKeyword("loops")) {
      LoopGraph &g = m_.addLoopGraph("");
      loopGraph_ = &g;
      GC_RETURN_IF_ERROR(parseStruct(g, &fieldAt));
      size_t same = 0;
      for (const auto &other : m_.loopGraphs())
        same += other->name == g.name;
      if (m_.graph(g.name) || same > 1)
        return error(fieldAt[0] ? fieldAt[0] : at, "redefinition of graph '@" + g.name + "'");
      return Error::success();
    }
    return errorHere("expected 'target', 'symbol', 'source', 'weight', 'graph', 'loops' or '}'");
  }

  Error parseModule() {
    GC_RETURN_IF_ERROR(expectKeyword("module"));
    GC_RETURN_IF_ERROR(expectKeyword("level"));
    GC_RETURN_IF_ERROR(expect('('));
    size_t levelAt = here();
    Level level = Level::Aten;
    GC_RETURN_IF_ERROR(parseName(level, "level"));
    if (level == Level::Kernels)
      return error(levelAt, "the text of a kernels module is for reading only (it "
                            "leaves out the object code); read the binary file");
    m_.setLevel(level);
    GC_RETURN_IF_ERROR(expect(')'));
    if (acceptKeyword("producer")) {
      std::string producer;
      GC_RETURN_IF_ERROR(expect('('));
      GC_RETURN_IF_ERROR(parseString(producer));
      GC_RETURN_IF_ERROR(expect(')'));
      m_.setProducer(std::move(producer));
    }
    GC_RETURN_IF_ERROR(expect('{'));
    while (!accept('}'))
      GC_RETURN_IF_ERROR(parseItem());
    return here() == text_.size() ? Error::success() : errorHere("expected end of file");
  }
};

} // namespace

Expected<std::unique_ptr<Module>> parseModule(std::string_view text, std::string_view fileName) {
  auto m = std::make_unique<Module>();
  if (Error e = Parser(text, fileName, *m).parseModule())
    return e;
  return m;
}

} // namespace gc
