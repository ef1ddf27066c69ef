//===- ModuleIO.cpp - Reading and writing graph files ---------------------===//
#include "gc/ModuleIO/ModuleIO.h"

#include "gc/GraphFile/FlatBufferIO.h"
#include "gc/IR/Printer.h"
#include "gc/IR/Verifier.h"
#include "gc/Parser/Parser.h"
#include "gc/Support/FileSystem.h"

#include <cstdio>

namespace gc {

Expected<std::unique_ptr<Module>> readModuleFileUnverified(const std::string &path) {
  Expected<std::shared_ptr<MappedFile>> file = MappedFile::open(path);
  if (!file)
    return file.error();
  std::string name = path == "-" ? "<stdin>" : path;
  Expected<std::unique_ptr<Module>> m =
      isModuleFlatBuffer((*file)->bytes())
          ? readModuleFlatBuffer((*file)->bytes(), name)
          : parseModule((*file)->text(), name);
  if (!m)
    return m;
  (**m).setSourceBaseDir(path == "-" ? "." : parentDirectory(path));
  return m;
}

Expected<std::unique_ptr<Module>> readModuleFile(const std::string &path) {
  Expected<std::unique_ptr<Module>> m = readModuleFileUnverified(path);
  if (!m)
    return m;
  if (Error e = verifyModule(**m))
    return e.withContext("'" + (path == "-" ? std::string("<stdin>") : path) + "'");
  return m;
}

Error writeModuleFile(Module &m, const std::string &path, FileFormat format) {
  std::string outDir = path == "-" ? "." : parentDirectory(path);
  std::vector<WeightSource> inMemory = m.weightSources();
  for (WeightSource &s : m.weightSources())
    if (!s.path.empty())
      s.path = relativePath(resolvePath(s.path, m.sourceBaseDir()), outDir);
  // Constants computed in memory go beside the output, written first, so
  // the module never names a blob that is not there.
  std::string blobPath;
  if (const auto &pending = m.pendingBlob()) {
    Error e = Error::success();
    if (path == "-")
      e = makeError() << "the module holds constants computed in memory; they are written "
                      << "beside the output file, so give one with -o";
    blobPath = path + ".weights";
    for (size_t i = 0; !e && i < inMemory.size(); ++i)
      if (i != pending->source && !inMemory[i].path.empty() &&
          relativePath(resolvePath(inMemory[i].path, m.sourceBaseDir()), outDir) ==
              relativePath(blobPath, outDir))
        e = makeError() << "'" << blobPath << "' is a weight source of the module; writing the "
                        << "constants computed in memory there would overwrite it";
    if (!e)
      e = writeFileAtomic(blobPath, pending->bytes);
    if (e) {
      m.weightSources() = std::move(inMemory);
      return e;
    }
    m.weightSources()[pending->source].path = relativePath(blobPath, outDir);
  }
  std::string bytes = format == FileFormat::Binary ? writeModuleFlatBuffer(m) : printModule(m);
  m.weightSources() = std::move(inMemory);
  Error e = writeFileAtomic(path, bytes);
  if (e && !blobPath.empty())
    std::remove(blobPath.c_str()); // the blob and the module are one output
  return e;
}

} // namespace gc
