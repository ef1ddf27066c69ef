//===- DocMain.h - The gc-doc driver ----------------------------*- C++ -*-===//
#ifndef GC_TOOLS_DOCMAIN_H
#define GC_TOOLS_DOCMAIN_H

#include <string>

namespace gc {

/// docs/ops.md: every op of OpDefs.def with what each concern registers for
/// it, and the core op set.
std::string renderOpsDoc();
/// docs/passes.md: every pass in Passes.def, and gc-opt's default pipelines.
std::string renderPassesDoc();

/// gc-doc's whole behaviour; the tool's main only calls this.
int docMain(int argc, char **argv);

} // namespace gc

#endif // GC_TOOLS_DOCMAIN_H
