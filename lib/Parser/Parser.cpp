//===- Parser.cpp - Reading the text form ---------------------------------===//
//
// A recursive-descent parser over characters for the syntax described in
// docs/formats.md ("Text form"); lib/IR/Printer.cpp writes it. There is no
// separate token stream: symbolic expressions and device names are taken as
// raw text up to a delimiter and handed to SymContext::parse / parseDevice,
// which own their syntax.
//
// It fills exactly the fields an importer fills, so that a parsed module
// equals the module that was printed. Semantic checks (argument kinds versus
// op schemas, weight source indices, spec consistency) are the verifier's;
// the parser checks only what it needs to build the module: syntax, names
// defined once and before use, and shapes that are well formed.
//
//===----------------------------------------------------------------------===//

#include "gc/Parser/Parser.h"

#include "gc/IR/Fields.h"

#include <algorithm>
#include <utility>

#include <charconv>
#include <unordered_map>

namespace gc {
namespace {

bool isIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool isDigit(char c) { return c >= '0' && c <= '9'; }
/// Identifiers may hold dots so that op names ("aten.add.Tensor") are one.
bool isIdentChar(char c) { return isIdentStart(c) || isDigit(c) || c == '.'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

/// A numeric literal: an integer, or a float when it has a '.', an exponent,
/// or is inf/nan.
struct Number {
  bool isFloat = false;
  int64_t i = 0;
  double d = 0;
};

class Parser {
public:
  Parser(std::string_view text, std::string_view file, Module &m)
      : text_(text), file_(file), m_(m) {}

  Error parseModule();

private:
  // Lexical helpers. All of them skip whitespace and comments first.
  Error error(size_t at, const std::string &message) const;
  Error errorHere(const std::string &message) {
    skipTrivia();
    return error(pos_, message);
  }
  void skipTrivia();
  char peek() {
    skipTrivia();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  bool accept(char c);
  Error expect(char c);
  std::string_view peekIdentifier();
  bool acceptKeyword(std::string_view kw);
  Error expectKeyword(std::string_view kw);
  Error parseIdentifier(std::string &out, std::string_view what);
  /// A value of E by its name in the text form (EnumInfo<E>).
  template <class E> Error parseName(E &out, std::string_view what);
  /// An op name that OpDefs.def defines.
  Error parseOpName(OpId &out);
  Error parseSigilName(char sigil, std::string &out);
  Error parseString(std::string &out);
  Error parseNumber(Number &out);
  Error parseInt(int64_t &out);
  Error parseUnsigned(uint64_t &out);
  void parseRaw(std::string_view terminators, std::string_view &out,
                size_t &at);
  Error parseExpr(std::string_view terminators, const SymExpr *&out);

  // Grammar.
  Error parseSymbol();
  Error parseSource();
  Error parseWeight();
  Error parseGraph();
  Error parseType(Type &out);
  Error parseTypeSuffix(TensorType &t, bool &explicitStrides);
  Error parseInput(Graph &g);
  Error parseNode(Graph &g);
  Error parseReturn(Graph &g);
  Error parseArg(Arg &out);
  Error parseArgElement(const ArgSyntax &syntax, Arg &out);
  Error parseValueRef(Value *&out, bool allowNone);
  Error parseCallArgs(std::vector<NamedArg> &args);
  Error parseInputSpec(InputSpec &spec);
  Error parseOutputSpec(OutputSpec &spec);
  /// An optional ` path("...")` after an input or output spec.
  Error parsePath(std::string &path);
  Error defineValue(const std::string &name, size_t at);

  // Loop graphs (the Loops level).
  Error parseLoopGraph();
  template <Structured T> Error parseField(T &out, Plain);
  template <class M> Error parseField(std::vector<M> &out, auto codec);
  template <class M> Error parseField(M &out, auto codec);
  /// A loop call's tensor argument: one of its node's inputs, "$N".
  Error parseInputRef(bool allowNone, int64_t &out);

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
};

Error Parser::error(size_t at, const std::string &message) const {
  size_t line = 1, lineStart = 0;
  for (size_t i = 0; i < at && i < text_.size(); ++i)
    if (text_[i] == '\n') {
      ++line;
      lineStart = i + 1;
    }
  return makeError() << file_ << ':' << line << ':' << (at - lineStart + 1)
                     << ": " << message;
}

void Parser::skipTrivia() {
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++pos_;
    } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/') {
      while (pos_ < text_.size() && text_[pos_] != '\n')
        ++pos_;
    } else {
      return;
    }
  }
}

bool Parser::accept(char c) {
  if (peek() != c)
    return false;
  ++pos_;
  return true;
}

Error Parser::expect(char c) {
  if (accept(c))
    return Error::success();
  return errorHere(std::string("expected '") + c + "'");
}

std::string_view Parser::peekIdentifier() {
  skipTrivia();
  if (pos_ >= text_.size() || !isIdentStart(text_[pos_]))
    return {};
  size_t end = pos_ + 1;
  while (end < text_.size() && isIdentChar(text_[end]))
    ++end;
  return text_.substr(pos_, end - pos_);
}

bool Parser::acceptKeyword(std::string_view kw) {
  if (peekIdentifier() != kw)
    return false;
  pos_ += kw.size();
  return true;
}

Error Parser::expectKeyword(std::string_view kw) {
  if (acceptKeyword(kw))
    return Error::success();
  return errorHere("expected '" + std::string(kw) + "'");
}

Error Parser::parseIdentifier(std::string &out, std::string_view what) {
  std::string_view id = peekIdentifier();
  if (id.empty())
    return errorHere("expected " + std::string(what));
  out = id;
  pos_ += id.size();
  return Error::success();
}

template <class E> Error Parser::parseName(E &out, std::string_view what) {
  skipTrivia();
  size_t at = pos_;
  std::string name;
  GC_RETURN_IF_ERROR(parseIdentifier(name, what));
  std::optional<E> e = parseEnum<E>(name);
  if (!e)
    return error(at, "unknown " + std::string(what) + " '" + name + "'");
  out = *e;
  return Error::success();
}

Error Parser::parseOpName(OpId &out) {
  size_t at = pos_;
  std::string name;
  GC_RETURN_IF_ERROR(parseIdentifier(name, "op name"));
  std::optional<OpId> id = lookupOp(name);
  if (!id)
    return error(at, "'" + name + "' is not an op gc knows (docs/ops.md lists those it does)");
  out = *id;
  return Error::success();
}

Error Parser::parseSigilName(char sigil, std::string &out) {
  if (peek() != sigil)
    return errorHere(std::string(sigil == '%' ? "expected value name '%...'"
                                              : "expected graph name '@...'"));
  size_t end = pos_ + 1;
  // Torch names may start with a digit.
  while (end < text_.size() && isIdentChar(text_[end]))
    ++end;
  if (end == pos_ + 1)
    return error(pos_, std::string("expected a name after '") + sigil + "'");
  out = text_.substr(pos_ + 1, end - pos_ - 1);
  pos_ = end;
  return Error::success();
}

Error Parser::parseString(std::string &out) {
  if (peek() != '"')
    return errorHere("expected string");
  size_t start = pos_++;
  out.clear();
  auto hexValue = [](char c) -> int {
    if (isDigit(c))
      return c - '0';
    if (c >= 'a' && c <= 'f')
      return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
      return c - 'A' + 10;
    return -1;
  };
  while (true) {
    if (pos_ >= text_.size() || text_[pos_] == '\n')
      return error(start, "unterminated string");
    char c = text_[pos_];
    if (c == '"') {
      ++pos_;
      return Error::success();
    }
    if (c != '\\') {
      out += c;
      ++pos_;
      continue;
    }
    size_t escape = pos_;
    char e = pos_ + 1 < text_.size() ? text_[pos_ + 1] : '\0';
    pos_ += 2;
    if (e == '"' || e == '\\') {
      out += e;
    } else if (e == 'n') {
      out += '\n';
    } else if (e == 't') {
      out += '\t';
    } else if (e == 'x' && pos_ + 1 < text_.size() &&
               hexValue(text_[pos_]) >= 0 && hexValue(text_[pos_ + 1]) >= 0) {
      out += static_cast<char>(hexValue(text_[pos_]) * 16 +
                               hexValue(text_[pos_ + 1]));
      pos_ += 2;
    } else {
      return error(escape, "invalid escape sequence in string");
    }
  }
}

Error Parser::parseNumber(Number &out) {
  skipTrivia();
  size_t start = pos_;
  size_t p = pos_;
  if (p < text_.size() && text_[p] == '-')
    ++p;
  auto word = [&](std::string_view w) {
    return text_.substr(p, w.size()) == w &&
           (p + w.size() >= text_.size() || !isIdentChar(text_[p + w.size()]));
  };
  if (word("inf") || word("nan")) {
    p += 3;
    out.isFloat = true;
  } else {
    if (p >= text_.size() || !isDigit(text_[p]))
      return error(start, "expected number");
    out.isFloat = false;
    while (p < text_.size() && isDigit(text_[p]))
      ++p;
    if (p < text_.size() && text_[p] == '.') {
      out.isFloat = true;
      ++p;
      while (p < text_.size() && isDigit(text_[p]))
        ++p;
    }
    if (p < text_.size() && (text_[p] == 'e' || text_[p] == 'E')) {
      out.isFloat = true;
      ++p;
      if (p < text_.size() && (text_[p] == '+' || text_[p] == '-'))
        ++p;
      if (p >= text_.size() || !isDigit(text_[p]))
        return error(start, "malformed number");
      while (p < text_.size() && isDigit(text_[p]))
        ++p;
    }
  }
  if (p < text_.size() && isIdentChar(text_[p]))
    return error(start, "malformed number");

  const char *first = text_.data() + start;
  const char *last = text_.data() + p;
  std::from_chars_result r;
  if (out.isFloat)
    r = std::from_chars(first, last, out.d);
  else
    r = std::from_chars(first, last, out.i);
  if (r.ec == std::errc::result_out_of_range)
    return error(start, "number out of range");
  if (r.ec != std::errc() || r.ptr != last)
    return error(start, "malformed number");
  pos_ = p;
  return Error::success();
}

Error Parser::parseInt(int64_t &out) {
  size_t start = (skipTrivia(), pos_);
  Number n;
  GC_RETURN_IF_ERROR(parseNumber(n));
  if (n.isFloat)
    return error(start, "expected integer");
  out = n.i;
  return Error::success();
}

Error Parser::parseUnsigned(uint64_t &out) {
  if (!isDigit(peek()))
    return errorHere("expected unsigned integer");
  size_t start = pos_;
  auto r = std::from_chars(text_.data() + pos_, text_.data() + text_.size(), out);
  if (r.ec == std::errc::result_out_of_range)
    return error(start, "number out of range");
  pos_ = r.ptr - text_.data();
  if (pos_ < text_.size() && isIdentChar(text_[pos_]))
    return error(start, "malformed number");
  return Error::success();
}

void Parser::parseRaw(std::string_view terminators, std::string_view &out,
                      size_t &at) {
  // Parentheses nest (floordiv(a, b)); the text ends at a terminator outside
  // them, or at the end of the line.
  skipTrivia();
  at = pos_;
  int depth = 0;
  size_t p = pos_;
  for (; p < text_.size() && text_[p] != '\n'; ++p) {
    char c = text_[p];
    if (depth == 0 && terminators.find(c) != std::string_view::npos)
      break;
    if (c == '(')
      ++depth;
    else if (c == ')' && depth > 0)
      --depth;
  }
  out = trim(text_.substr(pos_, p - pos_));
  pos_ = p;
}

Error Parser::parseExpr(std::string_view terminators, const SymExpr *&out) {
  std::string_view raw;
  size_t at;
  parseRaw(terminators, raw, at);
  if (raw.empty())
    return error(at, "expected expression");
  Expected<const SymExpr *> e = m_.syms().parse(raw);
  if (!e)
    return error(at, "invalid expression '" + std::string(raw) +
                         "': " + e.error().message());
  out = *e;
  return Error::success();
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

Error Parser::parseType(Type &out) {
  skipTrivia();
  size_t start = pos_;
  std::string name;
  GC_RETURN_IF_ERROR(parseIdentifier(name, "type"));
  if (std::optional<Type::Kind> kind = parseEnum<Type::Kind>(name);
      kind && kind != Type::Kind::Tensor) {
    out = Type::makeScalar(*kind);
    return Error::success();
  }
  std::optional<DType> dtype = parseDType(name);
  if (!dtype)
    return error(start, "unknown dtype '" + name + "'");
  TensorType t;
  t.dtype = *dtype;
  GC_RETURN_IF_ERROR(parseField(t.sizes, Plain{}));
  bool explicitStrides = false;
  if (peek() == '{')
    GC_RETURN_IF_ERROR(parseTypeSuffix(t, explicitStrides));
  if (!explicitStrides)
    t.strides = contiguousStrides(m_.syms(), t.sizes);
  if (!t.storageOffset)
    t.storageOffset = m_.syms().constant(0);
  out = Type::makeTensor(std::move(t));
  return Error::success();
}

Error Parser::parseTypeSuffix(TensorType &t, bool &explicitStrides) {
  GC_RETURN_IF_ERROR(expect('{'));
  if (accept('}'))
    return Error::success();
  bool seenDevice = false, seenOffset = false;
  while (true) {
    skipTrivia();
    size_t start = pos_;
    std::string field;
    GC_RETURN_IF_ERROR(parseIdentifier(field, "type field"));
    auto once = [&](bool &seen) -> Error {
      if (seen)
        return error(start, "duplicate type field '" + field + "'");
      seen = true;
      return Error::success();
    };
    if (field == "strides") {
      GC_RETURN_IF_ERROR(once(explicitStrides));
      GC_RETURN_IF_ERROR(expect('='));
      size_t at = (skipTrivia(), pos_);
      GC_RETURN_IF_ERROR(parseField(t.strides, Plain{}));
      if (t.strides.size() != t.sizes.size())
        return error(at, "expected " + std::to_string(t.sizes.size()) +
                             " strides, got " +
                             std::to_string(t.strides.size()));
    } else if (field == "offset") {
      GC_RETURN_IF_ERROR(once(seenOffset));
      GC_RETURN_IF_ERROR(expect('='));
      GC_RETURN_IF_ERROR(parseExpr(",}", t.storageOffset));
    } else if (field == "device") {
      GC_RETURN_IF_ERROR(once(seenDevice));
      GC_RETURN_IF_ERROR(expect('='));
      std::string_view raw;
      size_t at;
      parseRaw(",}", raw, at);
      std::optional<Device> d = parseDevice(raw);
      if (!d)
        return error(at, "unknown device '" + std::string(raw) + "'");
      t.device = *d;
    } else if (field == "requires_grad") {
      GC_RETURN_IF_ERROR(once(t.requiresGrad));
    } else {
      return error(start, "unknown type field '" + field + "'");
    }
    if (accept('}'))
      return Error::success();
    if (!accept(','))
      return errorHere("expected ',' or '}'");
  }
}

//===----------------------------------------------------------------------===//
// Arguments
//===----------------------------------------------------------------------===//

Error Parser::parseValueRef(Value *&out, bool allowNone) {
  if (allowNone && acceptKeyword("none")) {
    out = nullptr;
    return Error::success();
  }
  skipTrivia();
  size_t start = pos_;
  std::string name;
  GC_RETURN_IF_ERROR(parseSigilName('%', name));
  auto it = values_.find(name);
  if (it == values_.end())
    return error(start, "use of undefined value '%" + name + "'");
  out = it->second;
  return Error::success();
}

Error Parser::parseArg(Arg &out) {
  out = Arg{};
  skipTrivia();
  size_t start = pos_;
  std::string_view id = peekIdentifier();
  auto keyword = std::find_if(std::begin(kArgSyntax), std::end(kArgSyntax),
                              [&](const ArgSyntax &s) { return !s.keyword.empty() && s.keyword == id; });
  const ArgSyntax *syntax = keyword == std::end(kArgSyntax) ? nullptr : keyword;
  if (syntax) {
    pos_ += id.size();
    if (syntax->kind == ArgKind::None)
      return Error::success();
    GC_RETURN_IF_ERROR(expect(syntax->list ? '[' : '('));
  } else {
    // No keyword: the (first) element tells the kind.
    bool list = accept('[');
    char c = peek();
    std::string_view word = peekIdentifier();
    std::optional<ArgElem> elem;
    if (c == '%' || (c == '$' && loopArgs_)) {
      elem = ArgElem::Tensor;
    } else if (c == '"') {
      elem = ArgElem::String;
    } else if (c == '@' && !list) {
      elem = ArgElem::Graph;
    } else if (word == "true" || word == "false") {
      elem = ArgElem::Bool;
    } else if (c == '-' || isDigit(c) || word == "inf" || word == "nan") {
      size_t save = pos_;
      Number n;
      GC_RETURN_IF_ERROR(parseNumber(n));
      pos_ = save;
      elem = n.isFloat ? ArgElem::Float : ArgElem::Int;
    } else if (list && c == ']') {
      return error(start, "an empty list needs its kind, as in 'ints[]' or 'tensors[]'");
    } else if (list) {
      return errorHere("expected list element");
    } else {
      return error(start, id.empty() ? std::string("expected argument value")
                                     : "expected argument value, got '" + std::string(id) + "'");
    }
    syntax = std::find_if(std::begin(kArgSyntax), std::end(kArgSyntax), [&](const ArgSyntax &s) {
      return s.bare && s.list == list && s.elem == *elem;
    });
  }
  out.kind = syntax->kind;
  if (!syntax->list) {
    GC_RETURN_IF_ERROR(parseArgElement(*syntax, out));
    return syntax->bare ? Error::success() : expect(')');
  }
  if (accept(']'))
    return Error::success();
  while (true) {
    GC_RETURN_IF_ERROR(parseArgElement(*syntax, out));
    if (accept(']'))
      return Error::success();
    if (!accept(','))
      return errorHere("expected ',' or ']'");
  }
}

Error Parser::parseArgElement(const ArgSyntax &syntax, Arg &out) {
  skipTrivia();
  size_t at = pos_;
  switch (syntax.elem) {
  case ArgElem::None:
    return Error::success();
  case ArgElem::Tensor: {
    bool allowNone = syntax.kind == ArgKind::OptionalTensors;
    if (loopArgs_)
      return parseInputRef(allowNone, out.ints.emplace_back());
    return parseValueRef(out.values.emplace_back(), allowNone);
  }
  case ArgElem::Int:
    return parseInt(out.ints.emplace_back());
  case ArgElem::Float: {
    Number n;
    GC_RETURN_IF_ERROR(parseNumber(n));
    out.floats.push_back(n.isFloat ? n.d : static_cast<double>(n.i));
    return Error::success();
  }
  case ArgElem::Bool:
    if (!acceptKeyword("true") && !acceptKeyword("false"))
      return errorHere("expected 'true' or 'false'");
    out.ints.push_back(text_.substr(at, 4) == "true");
    return Error::success();
  case ArgElem::String:
    return parseString(out.strings.emplace_back());
  case ArgElem::SymInt: {
    // Values and constants stay parallel: one of them is meaningful. Loop
    // arguments hold constants only, and no values at all.
    Value *v = nullptr;
    int64_t i = 0;
    GC_RETURN_IF_ERROR(peek() == '%' ? parseValueRef(v, /*allowNone=*/false) : parseInt(i));
    if (!loopArgs_)
      out.values.push_back(v);
    out.ints.push_back(i);
    return Error::success();
  }
  case ArgElem::Value:
    return parseValueRef(out.values.emplace_back(), /*allowNone=*/false);
  case ArgElem::Graph:
    // Only a name here: the graph may come later in the module, and the
    // verifier checks that it exists.
    return parseSigilName('@', out.strings.emplace_back());
  default:
    break;
  }
  // A name, taken as raw text: device names hold ':'.
  std::string_view raw;
  parseRaw(")", raw, at);
  std::optional<int64_t> value;
  if (syntax.elem == ArgElem::DType) {
    if (std::optional<DType> t = parseDType(raw))
      value = static_cast<int64_t>(*t);
  } else if (syntax.elem == ArgElem::MemoryFormat) {
    if (std::optional<MemoryFormat> f = parseMemoryFormat(raw))
      value = static_cast<int64_t>(*f);
  } else if (syntax.elem == ArgElem::Layout) {
    if (std::optional<Layout> l = parseLayout(raw))
      value = static_cast<int64_t>(*l);
  } else if (std::optional<Device> d = parseDevice(raw)) {
    out.device = *d;
    return Error::success();
  }
  if (!value)
    return error(at, "unknown " + std::string(syntax.keyword) + " '" + std::string(raw) + "'");
  out.ints.push_back(*value);
  return Error::success();
}

//===----------------------------------------------------------------------===//
// Graphs
//===----------------------------------------------------------------------===//

Error Parser::defineValue(const std::string &name, size_t at) {
  if (values_.count(name))
    return error(at, "redefinition of value '%" + name + "'");
  return Error::success();
}

Error Parser::parseInput(Graph &g) {
  skipTrivia();
  size_t start = pos_;
  std::string name;
  GC_RETURN_IF_ERROR(parseSigilName('%', name));
  GC_RETURN_IF_ERROR(defineValue(name, start));
  GC_RETURN_IF_ERROR(expect(':'));
  Type type;
  GC_RETURN_IF_ERROR(parseType(type));
  InputSpec spec;
  GC_RETURN_IF_ERROR(parseInputSpec(spec));
  values_[name] = g.addInput(name, std::move(type), std::move(spec));
  return Error::success();
}

Error Parser::parseInputSpec(InputSpec &spec) {
  GC_RETURN_IF_ERROR(parseName(spec.kind, "input kind"));
  if (accept('(')) {
    GC_RETURN_IF_ERROR(parseString(spec.target));
    if (accept(',')) {
      GC_RETURN_IF_ERROR(expectKeyword("nonpersistent"));
      spec.persistent = false;
    }
    GC_RETURN_IF_ERROR(expect(')'));
  }
  return parsePath(spec.path);
}

Error Parser::parsePath(std::string &path) {
  if (!acceptKeyword("path"))
    return Error::success();
  GC_RETURN_IF_ERROR(expect('('));
  GC_RETURN_IF_ERROR(parseString(path));
  return expect(')');
}

Error Parser::parseCallArgs(std::vector<NamedArg> &args) {
  // Positional-or-keyword arguments, then after ';' keyword-only ones.
  GC_RETURN_IF_ERROR(expect('('));
  bool keywordOnly = accept(';');
  if (!accept(')')) {
    while (true) {
      skipTrivia();
      size_t at = pos_;
      NamedArg a;
      GC_RETURN_IF_ERROR(parseIdentifier(a.name, "argument name"));
      for (const NamedArg &prev : args)
        if (prev.name == a.name)
          return error(at, "duplicate argument '" + a.name + "'");
      GC_RETURN_IF_ERROR(expect('='));
      a.keywordOnly = keywordOnly;
      GC_RETURN_IF_ERROR(parseArg(a.value));
      args.push_back(std::move(a));
      if (accept(')'))
        break;
      if (!keywordOnly && accept(';')) {
        keywordOnly = true;
        continue;
      }
      if (!accept(','))
        return errorHere(keywordOnly ? "expected ',' or ')'"
                                     : "expected ',', ';' or ')'");
    }
  }
  return Error::success();
}

Error Parser::parseNode(Graph &g) {
  std::vector<std::pair<std::string, Type>> results;
  std::vector<size_t> resultAt;
  if (peek() == '%') {
    do {
      skipTrivia();
      size_t at = pos_;
      std::string name;
      GC_RETURN_IF_ERROR(parseSigilName('%', name));
      GC_RETURN_IF_ERROR(defineValue(name, at));
      for (size_t i = 0; i < results.size(); ++i)
        if (results[i].first == name)
          return error(at, "redefinition of value '%" + name + "'");
      results.emplace_back(std::move(name), Type{});
      resultAt.push_back(at);
    } while (accept(','));
    GC_RETURN_IF_ERROR(expect('='));
  }

  OpId op;
  GC_RETURN_IF_ERROR(parseOpName(op));

  std::vector<NamedArg> args;
  GC_RETURN_IF_ERROR(parseCallArgs(args));

  ResultForm form = ResultForm::Single;
  std::vector<Type> types;
  skipTrivia();
  size_t colonAt = pos_;
  if (accept(':')) {
    auto typeList = [&](char close) -> Error {
      if (accept(close))
        return Error::success();
      do {
        GC_RETURN_IF_ERROR(parseType(types.emplace_back()));
      } while (accept(','));
      return expect(close);
    };
    if (accept('(')) {
      form = ResultForm::Tuple;
      GC_RETURN_IF_ERROR(typeList(')'));
    } else if (accept('[')) {
      form = ResultForm::List;
      GC_RETURN_IF_ERROR(typeList(']'));
    } else {
      do {
        GC_RETURN_IF_ERROR(parseType(types.emplace_back()));
      } while (accept(','));
    }
  } else if (!results.empty()) {
    return error(colonAt, "expected ':' and result types");
  }
  if (types.size() != results.size())
    return error(colonAt, std::to_string(results.size()) +
                              " result name(s) but " +
                              std::to_string(types.size()) + " type(s)");
  for (size_t i = 0; i < types.size(); ++i)
    results[i].second = std::move(types[i]);

  Node *n = g.addNode(op, std::move(args), std::move(results), form);
  for (Value *v : n->results())
    values_[v->name()] = v;
  return Error::success();
}

Error Parser::parseReturn(Graph &g) {
  GC_RETURN_IF_ERROR(expectKeyword("return"));
  if (peek() != '%' && peekIdentifier() != "none")
    return Error::success();
  do {
    Value *v;
    GC_RETURN_IF_ERROR(parseValueRef(v, /*allowNone=*/true));
    OutputSpec spec;
    GC_RETURN_IF_ERROR(parseOutputSpec(spec));
    g.addOutput(v, std::move(spec));
  } while (accept(','));
  return Error::success();
}

Error Parser::parseOutputSpec(OutputSpec &spec) {
  GC_RETURN_IF_ERROR(parseName(spec.kind, "output kind"));
  if (accept('(')) {
    GC_RETURN_IF_ERROR(parseString(spec.target));
    GC_RETURN_IF_ERROR(expect(')'));
  }
  if (acceptKeyword("alias_of")) {
    GC_RETURN_IF_ERROR(expect('('));
    GC_RETURN_IF_ERROR(parseSigilName('%', spec.aliasOf));
    GC_RETURN_IF_ERROR(expect(')'));
  }
  return parsePath(spec.path);
}

Error Parser::parseGraph() {
  skipTrivia();
  size_t at = pos_;
  std::string name;
  GC_RETURN_IF_ERROR(parseSigilName('@', name));
  if (m_.graph(name) || m_.loopGraph(name))
    return error(at, "redefinition of graph '@" + name + "'");
  Graph &g = m_.addGraph(name);
  values_.clear();

  GC_RETURN_IF_ERROR(expect('('));
  if (!accept(')')) {
    do {
      GC_RETURN_IF_ERROR(parseInput(g));
    } while (accept(','));
    GC_RETURN_IF_ERROR(expect(')'));
  }
  GC_RETURN_IF_ERROR(expect('{'));
  while (peekIdentifier() != "return") {
    char c = peek();
    if (c != '%' && !isIdentStart(c))
      return errorHere("expected node or 'return'");
    GC_RETURN_IF_ERROR(parseNode(g));
  }
  GC_RETURN_IF_ERROR(parseReturn(g));
  return expect('}');
}

//===----------------------------------------------------------------------===//
// Loop graphs: the field-driven form (lib/IR/Printer.cpp prints it)
//===----------------------------------------------------------------------===//

Error Parser::parseLoopGraph() {
  skipTrivia();
  size_t at = pos_;
  LoopGraph &g = m_.addLoopGraph("");
  loopGraph_ = &g;
  GC_RETURN_IF_ERROR(parseField(g, Plain{}));
  size_t same = 0;
  for (const auto &other : m_.loopGraphs())
    same += other->name == g.name;
  if (m_.graph(g.name) || same > 1)
    return error(at, "redefinition of graph '@" + g.name + "'");
  return Error::success();
}

/// Fields in any order, each at most once; absent ones keep their default.
Error Parser::parseInputRef(bool allowNone, int64_t &out) {
  if (allowNone && acceptKeyword("none")) {
    out = -1;
    return Error::success();
  }
  if (!accept('$'))
    return errorHere(allowNone ? "expected node input '$N' or 'none'" : "expected node input '$N'");
  uint64_t index;
  size_t at = pos_;
  GC_RETURN_IF_ERROR(parseUnsigned(index));
  if (index > INT32_MAX)
    return error(at, "input index out of range");
  out = static_cast<int64_t>(index);
  return Error::success();
}

template <Structured T> Error Parser::parseField(T &out, Plain) {
  GC_RETURN_IF_ERROR(expect('{'));
  std::vector<bool> seen(std::tuple_size_v<std::remove_cvref_t<decltype(kFields<T>)>>);
  while (!accept('}')) {
    skipTrivia();
    size_t at = pos_;
    std::string name;
    GC_RETURN_IF_ERROR(parseIdentifier(name, "field name"));
    Error e = error(at, "unknown field '" + name + "'");
    forEachField<T>([&](size_t id, const auto &f) {
      if (f.name != name)
        return true;
      e = seen[id] ? error(at, "duplicate field '" + name + "'") : expect('=');
      if (!e)
        e = parseField(out.*f.member, typename std::remove_cvref_t<decltype(f)>::Codec{});
      seen[id] = true;
      return false;
    });
    GC_RETURN_IF_ERROR(std::move(e));
    accept(',');
  }
  return Error::success();
}

template <class M> Error Parser::parseField(std::vector<M> &out, auto codec) {
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

template <class M> Error Parser::parseField(M &out, auto codec) {
  skipTrivia();
  size_t at = pos_;
  if constexpr (std::is_same_v<M, bool>) {
    if (!acceptKeyword("true") && !acceptKeyword("false"))
      return errorHere("expected 'true' or 'false'");
    out = text_.substr(at, 4) == "true";
  } else if constexpr (std::is_same_v<M, double>) {
    Number n;
    GC_RETURN_IF_ERROR(parseNumber(n));
    out = n.isFloat ? n.d : static_cast<double>(n.i);
  } else if constexpr (std::is_same_v<M, OpId>) {
    return parseOpName(out);
  } else if constexpr (std::is_enum_v<M>) {
    return parseName(out, "name");
  } else if constexpr (std::is_same_v<decltype(codec), BufferRef>) {
    std::string name;
    GC_RETURN_IF_ERROR(parseSigilName('%', name));
    const auto &buffers = loopGraph_->buffers;
    auto it = std::find_if(buffers.begin(), buffers.end(),
                           [&](const Buffer &b) { return b.name == name; });
    if (it == buffers.end())
      return error(at, "use of undefined buffer '%" + name + "'");
    out = static_cast<uint32_t>(it - buffers.begin());
  } else if constexpr (std::is_integral_v<M>) {
    std::conditional_t<std::is_unsigned_v<M>, uint64_t, int64_t> i;
    if constexpr (std::is_unsigned_v<M>)
      GC_RETURN_IF_ERROR(parseUnsigned(i));
    else
      GC_RETURN_IF_ERROR(parseInt(i));
    if (!std::in_range<M>(i))
      return error(at, "number out of range");
    out = static_cast<M>(i);
  } else if constexpr (std::is_same_v<M, const SymExpr *>) {
    return parseExpr(",]}", out);
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

//===----------------------------------------------------------------------===//
// Module
//===----------------------------------------------------------------------===//

Error Parser::parseSymbol() {
  skipTrivia();
  size_t at = pos_;
  std::string name;
  GC_RETURN_IF_ERROR(parseIdentifier(name, "symbol name"));
  if (m_.syms().range(name))
    return error(at, "redefinition of symbol '" + name + "'");
  GC_RETURN_IF_ERROR(expectKeyword("in"));
  GC_RETURN_IF_ERROR(expect('['));
  SymRange r;
  GC_RETURN_IF_ERROR(parseInt(r.min));
  GC_RETURN_IF_ERROR(expect(','));
  if (acceptKeyword("inf"))
    r.max = SymRange::kUnbounded;
  else
    GC_RETURN_IF_ERROR(parseInt(r.max));
  GC_RETURN_IF_ERROR(expect(']'));
  m_.syms().setRange(name, r);
  return Error::success();
}

Error Parser::parseSource() {
  WeightSource s;
  GC_RETURN_IF_ERROR(parseName(s.kind, "weight source kind"));
  GC_RETURN_IF_ERROR(parseString(s.path));
  m_.weightSources().push_back(std::move(s));
  return Error::success();
}

Error Parser::parseWeight() {
  Weight w;
  GC_RETURN_IF_ERROR(parseString(w.name));
  GC_RETURN_IF_ERROR(expect(':'));
  GC_RETURN_IF_ERROR(parseField(w.type, Plain{}));
  GC_RETURN_IF_ERROR(expect('='));
  // The fields after the name and the type, as `field(value)` in order.
  Error e = Error::success();
  forEachField<Weight>([&](size_t id, const auto &f) {
    if (id < 2)
      return true;
    e = expectKeyword(f.name);
    if (!e)
      e = expect('(');
    if (!e)
      e = parseField(w.*f.member, Plain{});
    if (!e)
      e = expect(')');
    return !e;
  });
  GC_RETURN_IF_ERROR(std::move(e));
  m_.weights().push_back(std::move(w));
  return Error::success();
}

Error Parser::parseModule() {
  GC_RETURN_IF_ERROR(expectKeyword("module"));
  GC_RETURN_IF_ERROR(expectKeyword("level"));
  GC_RETURN_IF_ERROR(expect('('));
  skipTrivia();
  size_t levelAt = pos_;
  Level level = Level::Aten;
  GC_RETURN_IF_ERROR(parseName(level, "level"));
  if (level == Level::Kernels)
    return error(levelAt, "the text of a kernels module is for reading only (it "
                          "leaves out the object code); read the binary file");
  m_.setLevel(level);
  GC_RETURN_IF_ERROR(expect(')'));
  if (acceptKeyword("producer")) {
    GC_RETURN_IF_ERROR(expect('('));
    std::string producer;
    GC_RETURN_IF_ERROR(parseString(producer));
    m_.setProducer(std::move(producer));
    GC_RETURN_IF_ERROR(expect(')'));
  }
  GC_RETURN_IF_ERROR(expect('{'));
  while (!accept('}')) {
    if (acceptKeyword("symbol"))
      GC_RETURN_IF_ERROR(parseSymbol());
    else if (acceptKeyword("source"))
      GC_RETURN_IF_ERROR(parseSource());
    else if (acceptKeyword("weight"))
      GC_RETURN_IF_ERROR(parseWeight());
    else if (acceptKeyword("graph"))
      GC_RETURN_IF_ERROR(parseGraph());
    else if (acceptKeyword("loops"))
      GC_RETURN_IF_ERROR(parseLoopGraph());
    else
      return errorHere("expected 'symbol', 'source', 'weight', 'graph', 'loops' or '}'");
  }
  skipTrivia();
  if (pos_ != text_.size())
    return errorHere("expected end of file");
  return Error::success();
}

} // namespace

Expected<std::unique_ptr<Module>> parseModule(std::string_view text,
                                              std::string_view fileName) {
  auto m = std::make_unique<Module>();
  Parser p(text, fileName, *m);
  if (Error e = p.parseModule())
    return e;
  return m;
}

} // namespace gc
