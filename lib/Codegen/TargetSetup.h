//===- TargetSetup.h - LLVM target machines for gc's targets ----*- C++ -*-===//
#ifndef GC_LIB_CODEGEN_TARGETSETUP_H
#define GC_LIB_CODEGEN_TARGETSETUP_H

#include "gc/Support/Error.h"

#include <llvm/Target/TargetMachine.h>

#include <memory>
#include <string_view>

namespace gc {

/// Registers LLVM's x86 target once per process.
void initializeX86Target();

/// A PIC x86-64 ELF target machine at O3 for a name of cpuTargetNames();
/// CUDA targets are refused (createGpuTargetMachine).
Expected<std::unique_ptr<llvm::TargetMachine>> createTargetMachine(std::string_view target);

/// An NVPTX target machine (nvptx64-nvidia-cuda) at O3 whose PTX runs on
/// sm_<arch> and newer: PTX ISA 7.8, the newest LLVM 16 writes and the
/// first that knows sm_90.
Expected<std::unique_ptr<llvm::TargetMachine>> createGpuTargetMachine(int arch);

} // namespace gc

#endif // GC_LIB_CODEGEN_TARGETSETUP_H
