//===- PartitionMain.h - The gc-partition driver ----------------*- C++ -*-===//
#ifndef GC_TOOLS_PARTITIONMAIN_H
#define GC_TOOLS_PARTITIONMAIN_H

namespace gc {
/// gc-partition's whole behaviour; the tool's main only calls this.
int partitionMain(int argc, char **argv);
} // namespace gc

#endif // GC_TOOLS_PARTITIONMAIN_H
