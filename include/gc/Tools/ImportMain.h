//===- ImportMain.h - The gc-import driver ----------------------*- C++ -*-===//
#ifndef GC_TOOLS_IMPORTMAIN_H
#define GC_TOOLS_IMPORTMAIN_H

namespace gc {
/// gc-import's whole behaviour; the tool's main only calls this.
int importMain(int argc, char **argv);
} // namespace gc

#endif // GC_TOOLS_IMPORTMAIN_H
