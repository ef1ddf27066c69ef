//===- Names.cpp - What names the text form can hold ----------------------===//
#include "gc/IR/Names.h"

namespace gc {

namespace {
bool isLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }
} // namespace

bool isOpName(std::string_view s) {
  bool partStart = true;
  for (char c : s) {
    if (c == '.') {
      if (partStart)
        return false;
      partStart = true;
      continue;
    }
    if (!isLetter(c) && !(isDigit(c) && !partStart))
      return false;
    partStart = false;
  }
  return !s.empty() && !partStart;
}

bool isValueName(std::string_view s) {
  for (char c : s)
    if (!isLetter(c) && !isDigit(c) && c != '.')
      return false;
  return !s.empty();
}

bool isArgName(std::string_view s) {
  if (s.empty() || !isLetter(s[0]))
    return false;
  for (char c : s)
    if (!isLetter(c) && !isDigit(c))
      return false;
  return true;
}

bool isSymbolName(std::string_view s) {
  return isArgName(s) && s != "floordiv" && s != "mod" && s != "min" && s != "max";
}

} // namespace gc
