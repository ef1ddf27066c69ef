//===- BackendMain.h - The gc-lower and gc-codegen drivers ------*- C++ -*-===//
#ifndef GC_TOOLS_BACKENDMAIN_H
#define GC_TOOLS_BACKENDMAIN_H

namespace gc {
int lowerMain(int argc, char **argv);
int codegenMain(int argc, char **argv);
} // namespace gc

#endif // GC_TOOLS_BACKENDMAIN_H
