//===- ReduceMain.h - The gc-reduce driver ----------------------*- C++ -*-===//
#ifndef GC_TOOLS_REDUCEMAIN_H
#define GC_TOOLS_REDUCEMAIN_H

namespace gc {
/// gc-reduce's whole behaviour; the tool's main only calls this.
int reduceMain(int argc, char **argv);
} // namespace gc

#endif // GC_TOOLS_REDUCEMAIN_H
