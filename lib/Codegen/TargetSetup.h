//===- TargetSetup.h - LLVM target machines for gc's CPU targets -*- C++ -*-===//
#ifndef GC_LIB_CODEGEN_TARGETSETUP_H
#define GC_LIB_CODEGEN_TARGETSETUP_H

#include "gc/Support/Error.h"

#include <llvm/Target/TargetMachine.h>

#include <memory>
#include <string_view>

namespace gc {

/// Registers LLVM's x86 target once per process.
void initializeX86Target();

/// A PIC x86-64 ELF target machine at O3 for a name of cpuTargetNames().
Expected<std::unique_ptr<llvm::TargetMachine>> createTargetMachine(std::string_view target);

} // namespace gc

#endif // GC_LIB_CODEGEN_TARGETSETUP_H
