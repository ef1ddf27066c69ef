//===- ObjectLoader.h - Loading kernel object code in process ---*- C++ -*-===//
#ifndef GC_CODEGEN_OBJECTLOADER_H
#define GC_CODEGEN_OBJECTLOADER_H

#include "gc/Runtime/Runtime.h"
#include "gc/Support/Error.h"

#include <memory>
#include <string>

namespace gc {

/// Links the relocatable objects of `objectCode` (from emitKernels: an
/// archive of them, Support/ObjectArchive.h, or one object) into this
/// process with LLVM's JIT linker and resolves its kernels. The library owns
/// the code; function pointers die with it.
Expected<std::unique_ptr<KernelLibrary>> loadObjectCode(const std::string &objectCode);

} // namespace gc

#endif // GC_CODEGEN_OBJECTLOADER_H
