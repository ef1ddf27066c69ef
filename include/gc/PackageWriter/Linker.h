//===- Linker.h - Kernel object code to a shared library --------*- C++ -*-===//
#ifndef GC_PACKAGEWRITER_LINKER_H
#define GC_PACKAGEWRITER_LINKER_H

#include "gc/Support/Error.h"

#include <string>
#include <string_view>

namespace gc {

/// Links the ELF relocatables of `objectCode` (an archive of them,
/// Support/ObjectArchive.h, or one object) into a shared library with the
/// system linker `linker` (an ld-compatible program, found on PATH unless
/// it holds a '/'), and returns the library's bytes. The output depends only
/// on the object code and the linker: no build id, fixed file names. A
/// missing linker or a failed link is an error quoting the linker.
Expected<std::string> linkSharedLibrary(std::string_view objectCode, const std::string &linker);

} // namespace gc

#endif // GC_PACKAGEWRITER_LINKER_H
