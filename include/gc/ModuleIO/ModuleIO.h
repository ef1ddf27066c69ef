//===- ModuleIO.h - Reading and writing graph files -------------*- C++ -*-===//
//
// Graph files on disk in either form: the binary one (GraphFile/FlatBufferIO.h)
// or the text one (the parser and the printer). This layer sits above both,
// so that neither form depends on the other.
//
//===----------------------------------------------------------------------===//
#ifndef GC_MODULEIO_MODULEIO_H
#define GC_MODULEIO_MODULEIO_H

#include "gc/IR/Module.h"

#include <memory>
#include <string>

namespace gc {

enum class FileFormat { Binary, Text };

/// Reads a graph file, binary or text (told apart by the file identifier),
/// and verifies it. "-" reads stdin. The module's source base directory is
/// the file's directory (the working directory for stdin).
Expected<std::unique_ptr<Module>> readModuleFile(const std::string &path);
/// readModuleFile without the verifier, for a tool that must look at an
/// invalid module (gc-reduce, shrinking a verifier error).
Expected<std::unique_ptr<Module>> readModuleFileUnverified(const std::string &path);
/// Writes `m` atomically in `format`. "-" writes stdout. Relative weight
/// source paths are written relative to the output's directory (the working
/// directory for stdout), so the written file finds the same weights. A
/// pending blob (Module::pendingBlob) is written first, atomically, to
/// "<path>.weights" and named relative to the output; it needs a file
/// output, and must not overwrite another source of the module.
Error writeModuleFile(Module &m, const std::string &path, FileFormat format);

} // namespace gc

#endif // GC_MODULEIO_MODULEIO_H
