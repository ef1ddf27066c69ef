//===- CompileMain.h - The gc-compile driver --------------------*- C++ -*-===//
#ifndef GC_TOOLS_COMPILEMAIN_H
#define GC_TOOLS_COMPILEMAIN_H

namespace gc {
int compileMain(int argc, char **argv);
} // namespace gc

#endif // GC_TOOLS_COMPILEMAIN_H
