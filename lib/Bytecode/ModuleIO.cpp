//===- ModuleIO.cpp - Reading and writing graph files ---------------------===//
#include "gc/Bytecode/ModuleIO.h"

#include "gc/Bytecode/FlatBufferIO.h"
#include "gc/IR/Printer.h"
#include "gc/IR/Verifier.h"
#include "gc/Parser/Parser.h"
#include "gc/Support/FileSystem.h"

namespace gc {

Expected<std::unique_ptr<Module>> readModuleFile(const std::string &path) {
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
  if (Error e = verifyModule(**m))
    return e.withContext("'" + name + "'");
  return m;
}

Error writeModuleFile(Module &m, const std::string &path, FileFormat format) {
  std::string outDir = path == "-" ? "." : parentDirectory(path);
  std::vector<WeightSource> inMemory = m.weightSources();
  for (WeightSource &s : m.weightSources())
    s.path = relativePath(resolvePath(s.path, m.sourceBaseDir()), outDir);
  std::string bytes = format == FileFormat::Binary ? writeModuleFlatBuffer(m) : printModule(m);
  m.weightSources() = std::move(inMemory);
  return writeFileAtomic(path, bytes);
}

} // namespace gc
