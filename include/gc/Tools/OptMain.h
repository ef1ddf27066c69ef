//===- OptMain.h - The gc-opt driver ----------------------------*- C++ -*-===//
#ifndef GC_TOOLS_OPTMAIN_H
#define GC_TOOLS_OPTMAIN_H

namespace gc {
/// gc-opt's whole behaviour; the tool's main only calls this.
int optMain(int argc, char **argv);
} // namespace gc

#endif // GC_TOOLS_OPTMAIN_H
