//===- ObjectLoader.cpp - Loading kernel object code in process -----------===//
#include "gc/Codegen/ObjectLoader.h"

#include "TargetSetup.h"

#include "gc/Support/ObjectArchive.h"

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/MemoryBuffer.h>

#include <map>

namespace gc {

namespace {

/// The kernels of one object, linked into the process by an LLJIT that owns
/// their memory. Entry points are resolved once at load time, so lookup is
/// a map search and every unresolved symbol is reported when loading.
class JitKernelLibrary final : public KernelLibrary {
public:
  JitKernelLibrary(std::unique_ptr<llvm::orc::LLJIT> jit,
                   std::map<std::string, KernelEntryFn> entries)
      : jit_(std::move(jit)), entries_(std::move(entries)) {}

  KernelEntryFn lookup(const std::string &name) const override {
    auto it = entries_.find(name);
    return it == entries_.end() ? nullptr : it->second;
  }

private:
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  std::map<std::string, KernelEntryFn> entries_;
};

/// The names of the functions the object defines and exports.
Expected<std::vector<std::string>> exportedFunctions(llvm::MemoryBufferRef bytes) {
  auto object = llvm::object::ObjectFile::createObjectFile(bytes);
  if (!object)
    return makeError() << "kernel object code is not a valid object file: "
                       << llvm::toString(object.takeError());
  std::vector<std::string> names;
  for (const llvm::object::SymbolRef &symbol : (*object)->symbols()) {
    auto flags = symbol.getFlags();
    auto type = symbol.getType();
    auto name = symbol.getName();
    if (!flags || !type || !name) {
      llvm::consumeError(flags.takeError());
      llvm::consumeError(type.takeError());
      llvm::consumeError(name.takeError());
      return makeError() << "kernel object code has an unreadable symbol table";
    }
    bool global = *flags & llvm::object::BasicSymbolRef::SF_Global;
    bool undefined = *flags & llvm::object::BasicSymbolRef::SF_Undefined;
    if (global && !undefined && *type == llvm::object::SymbolRef::ST_Function)
      names.push_back(name->str());
  }
  return names;
}

} // namespace

Expected<std::unique_ptr<KernelLibrary>> loadObjectCode(const std::string &objectCode) {
  initializeX86Target();
  Expected<std::vector<std::string_view>> objects = archivedObjects(objectCode);
  if (!objects)
    return objects.error();

  auto jit = llvm::orc::LLJITBuilder().create();
  if (!jit)
    return makeError() << "cannot start LLVM's JIT linker: " << llvm::toString(jit.takeError());
  // Kernels may call libm (and codegen may add libc calls): resolve those
  // from what this process has loaded.
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      (*jit)->getDataLayout().getGlobalPrefix());
  if (!process)
    return makeError() << "cannot search this process for symbols: "
                       << llvm::toString(process.takeError());
  (*jit)->getMainJITDylib().addGenerator(std::move(*process));
  std::vector<std::string> names;
  for (std::string_view object : *objects) {
    auto buffer = llvm::MemoryBuffer::getMemBufferCopy(object, "kernels.o");
    auto exported = exportedFunctions(buffer->getMemBufferRef());
    if (!exported)
      return exported.error();
    names.insert(names.end(), exported->begin(), exported->end());
    if (llvm::Error err = (*jit)->addObjectFile(std::move(buffer)))
      return makeError() << "cannot load kernel object code: " << llvm::toString(std::move(err));
  }

  std::map<std::string, KernelEntryFn> entries;
  for (const std::string &name : names) {
    auto address = (*jit)->lookup(name);
    if (!address)
      return makeError() << "cannot link kernel '" << name
                         << "': " << llvm::toString(address.takeError());
    entries[name] = address->toPtr<KernelEntryFn>();
  }
  return std::unique_ptr<KernelLibrary>(
      std::make_unique<JitKernelLibrary>(std::move(*jit), std::move(entries)));
}

} // namespace gc
