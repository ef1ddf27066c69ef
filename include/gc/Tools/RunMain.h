//===- RunMain.h - The gc-run driver ----------------------------*- C++ -*-===//
#ifndef GC_TOOLS_RUNMAIN_H
#define GC_TOOLS_RUNMAIN_H

namespace gc {
/// gc-run's whole behaviour; the tool's main only calls this.
int runMain(int argc, char **argv);
} // namespace gc

#endif // GC_TOOLS_RUNMAIN_H
