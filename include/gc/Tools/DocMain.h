//===- DocMain.h - The gc-doc driver ----------------------------*- C++ -*-===//
#ifndef GC_TOOLS_DOCMAIN_H
#define GC_TOOLS_DOCMAIN_H

#include "gc/Support/Error.h"

#include <string>
#include <string_view>

namespace gc {

/// docs/ops.md: every op of OpDefs.def with what each concern registers for
/// it, and the core op set; `opSuiteSection` (renderOpSuiteResults) goes at
/// the end.
std::string renderOpsDoc(std::string_view opSuiteSection = {});
/// The markdown section on a generated op suite's results, from the JSON
/// that utils/check-opsuite.py --json writes (`path` names it in errors):
/// the share through each stage, per op family, and the failing ops.
Expected<std::string> renderOpSuiteResults(std::string_view json, const std::string &path);
/// docs/passes.md: every pass in Passes.def, and gc-opt's default pipelines.
std::string renderPassesDoc();

/// gc-doc's whole behaviour; the tool's main only calls this.
int docMain(int argc, char **argv);

} // namespace gc

#endif // GC_TOOLS_DOCMAIN_H
