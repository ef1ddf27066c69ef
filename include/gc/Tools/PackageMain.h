//===- PackageMain.h - The gc-package driver --------------------*- C++ -*-===//
#ifndef GC_TOOLS_PACKAGEMAIN_H
#define GC_TOOLS_PACKAGEMAIN_H

namespace gc {
int packageMain(int argc, char **argv);
} // namespace gc

#endif // GC_TOOLS_PACKAGEMAIN_H
