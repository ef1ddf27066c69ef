//===- SourceLoc.cpp - Source locations and how messages name nodes -------===//
#include "gc/IR/Describe.h"

#include "gc/IR/OpId.h"
#include "gc/Support/SourceText.h"

namespace gc {

std::string describeLoc(const SourceLoc &loc) {
  return describeSource(loc.file, loc.line, loc.function, loc.modulePath, loc.moduleClass);
}

std::string locSuffix(const SourceLoc *loc) {
  std::string text = loc ? describeLoc(*loc) : std::string();
  return text.empty() ? text : " at " + text;
}

std::string describeNode(const Node &n) {
  std::string out = "node ";
  if (!n.results().empty())
    out += "%" + n.results()[0]->name() + " (" + opString(n.op()) + ")";
  else
    out += opString(n.op());
  return out + locSuffix(n.loc());
}

std::string describeNode(const LoopNode &n) {
  return "node '" + n.name + "'" + locSuffix(n.loc);
}

} // namespace gc
