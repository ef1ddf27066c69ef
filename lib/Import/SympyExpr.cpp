//===- SympyExpr.cpp - Reading torch's symbolic size expressions ----------===//
#include "gc/Import/SympyExpr.h"

#include <cctype>
#include <charconv>
#include <vector>

namespace gc {

namespace {

/// Recursive descent over sympy's srepr and infix forms. Grammar:
///   sum     := product (('+' | '-') product)*
///   product := power (('*' | '//' | '%') power)*
///   power   := unary ('**' unary)?
///   unary   := '-' unary | atom
///   atom    := INT | IDENT | IDENT '(' args ')' | STRING | '(' sum ')'
class SympyParser {
public:
  SympyParser(std::string_view text, SymContext &ctx) : text_(text), ctx_(ctx) {}

  Expected<const SymExpr *> parse() {
    Expected<const SymExpr *> e = parseSum();
    if (!e)
      return e;
    skipSpace();
    if (pos_ != text_.size())
      return fail("unexpected text");
    return e;
  }

private:
  Error fail(const std::string &what) const {
    return makeError() << "cannot read symbolic expression '" << text_ << "': " << what
                       << " at column " << pos_ + 1;
  }

  void skipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_])))
      ++pos_;
  }
  bool consume(std::string_view tok) {
    skipSpace();
    if (text_.substr(pos_, tok.size()) != tok)
      return false;
    pos_ += tok.size();
    return true;
  }
  bool peekIs(char c) {
    skipSpace();
    return pos_ < text_.size() && text_[pos_] == c;
  }

  Expected<const SymExpr *> parseSum() {
    Expected<const SymExpr *> lhs = parseProduct();
    while (lhs) {
      if (consume("+")) {
        Expected<const SymExpr *> rhs = parseProduct();
        if (!rhs)
          return rhs;
        lhs = ctx_.add(*lhs, *rhs);
      } else if (consume("-")) {
        Expected<const SymExpr *> rhs = parseProduct();
        if (!rhs)
          return rhs;
        lhs = ctx_.sub(*lhs, *rhs);
      } else {
        break;
      }
    }
    return lhs;
  }

  Expected<const SymExpr *> parseProduct() {
    Expected<const SymExpr *> lhs = parsePower();
    while (lhs) {
      enum { Mul, Div, Mod } op;
      skipSpace();
      if (text_.substr(pos_, 2) == "**")
        break;
      if (consume("//"))
        op = Div;
      else if (consume("*"))
        op = Mul;
      else if (consume("%"))
        op = Mod;
      else
        break;
      Expected<const SymExpr *> rhs = parsePower();
      if (!rhs)
        return rhs;
      lhs = op == Mul ? ctx_.mul(*lhs, *rhs)
            : op == Div ? ctx_.floorDiv(*lhs, *rhs)
                        : ctx_.mod(*lhs, *rhs);
    }
    return lhs;
  }

  Expected<const SymExpr *> power(const SymExpr *base, const SymExpr *exp) {
    if (!exp->isConst() || exp->constant() < 0 || exp->constant() > 64)
      return fail("only small non-negative integer powers are supported");
    const SymExpr *r = ctx_.constant(1);
    for (int64_t i = 0; i < exp->constant(); ++i)
      r = ctx_.mul(r, base);
    return r;
  }

  Expected<const SymExpr *> parsePower() {
    Expected<const SymExpr *> base = parseUnary();
    if (!base || !consume("**"))
      return base;
    Expected<const SymExpr *> exp = parseUnary();
    if (!exp)
      return exp;
    return power(*base, *exp);
  }

  Expected<const SymExpr *> parseUnary() {
    if (consume("-")) {
      Expected<const SymExpr *> e = parseUnary();
      if (!e)
        return e;
      return ctx_.mul(ctx_.constant(-1), *e);
    }
    return parseAtom();
  }

  Expected<const SymExpr *> parseAtom() {
    skipSpace();
    if (pos_ >= text_.size())
      return fail("unexpected end");
    char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      Expected<const SymExpr *> e = parseSum();
      if (e && !consume(")"))
        return fail("expected ')'");
      return e;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      int64_t v = 0;
      auto [end, ec] = std::from_chars(text_.data() + pos_, text_.data() + text_.size(), v);
      if (ec != std::errc())
        return fail("bad integer");
      pos_ = end - text_.data();
      return ctx_.constant(v);
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::string name = identifier();
      if (!peekIs('('))
        return ctx_.symbol(name);
      ++pos_;
      return parseCall(name);
    }
    return fail(std::string("unexpected '") + c + "'");
  }

  std::string identifier() {
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
      ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }

  /// A quoted name, as in Symbol('s0').
  Expected<std::string> quoted() {
    skipSpace();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"'))
      return fail("expected a quoted name");
    char q = text_[pos_++];
    size_t end = text_.find(q, pos_);
    if (end == std::string_view::npos)
      return fail("unterminated string");
    std::string s(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return s;
  }

  /// Skips `name=value` keyword arguments such as `integer=True`.
  void skipKeywordArgs() {
    while (consume(",")) {
      skipSpace();
      identifier();
      if (consume("="))
        identifier();
    }
  }

  Expected<const SymExpr *> parseCall(const std::string &fn) {
    if (fn == "Symbol") {
      Expected<std::string> name = quoted();
      if (!name)
        return name.error();
      skipKeywordArgs();
      if (!consume(")"))
        return fail("expected ')'");
      return ctx_.symbol(*name);
    }
    std::vector<const SymExpr *> args;
    if (!consume(")")) {
      do {
        Expected<const SymExpr *> a = parseSum();
        if (!a)
          return a;
        args.push_back(*a);
      } while (consume(","));
      if (!consume(")"))
        return fail("expected ')'");
    }
    auto need = [&](size_t n) { return args.size() == n; };
    if (fn == "Integer" && need(1) && args[0]->isConst())
      return args[0];
    if ((fn == "Add" || fn == "Mul" || fn == "Max" || fn == "Min") && !args.empty()) {
      const SymExpr *r = args[0];
      for (size_t i = 1; i < args.size(); ++i)
        r = fn == "Add"   ? ctx_.add(r, args[i])
            : fn == "Mul" ? ctx_.mul(r, args[i])
            : fn == "Max" ? ctx_.max(r, args[i])
                          : ctx_.min(r, args[i]);
      return r;
    }
    if (fn == "FloorDiv" && need(2))
      return ctx_.floorDiv(args[0], args[1]);
    if ((fn == "Mod" || fn == "PythonMod") && need(2))
      return ctx_.mod(args[0], args[1]);
    if (fn == "Pow" && need(2))
      return power(args[0], args[1]);
    return fail("unsupported function '" + fn + "' with " + std::to_string(args.size()) +
                " arguments");
  }

  std::string_view text_;
  SymContext &ctx_;
  size_t pos_ = 0;
};

} // namespace

Expected<const SymExpr *> parseSympyExpr(std::string_view text, SymContext &ctx) {
  return SympyParser(text, ctx).parse();
}

} // namespace gc
