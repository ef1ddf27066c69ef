//===- BuildId.cpp - The identity of the running gc binary ----------------===//
#include "gc/Support/BuildId.h"

#include <cstdint>
#include <cstring>
#include <elf.h>
#include <link.h>
#include <string>

namespace gc {

namespace {

/// Reads NT_GNU_BUILD_ID from the PT_NOTE segments of the first object
/// dl_iterate_phdr reports, which is the executable itself.
int findBuildId(dl_phdr_info *info, size_t, void *data) {
  auto *out = static_cast<std::string *>(data);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr) &ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE)
      continue;
    const char *p = reinterpret_cast<const char *>(info->dlpi_addr + ph.p_vaddr);
    const char *end = p + ph.p_memsz;
    auto align4 = [](size_t n) { return (n + 3) & ~size_t{3}; };
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      ElfW(Nhdr) note;
      std::memcpy(&note, p, sizeof note);
      const char *name = p + sizeof note;
      const char *desc = name + align4(note.n_namesz);
      if (desc + note.n_descsz > end)
        break;
      if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
        static const char kHex[] = "0123456789abcdef";
        for (size_t k = 0; k < note.n_descsz; ++k) {
          auto byte = static_cast<uint8_t>(desc[k]);
          out->push_back(kHex[byte >> 4]);
          out->push_back(kHex[byte & 15]);
        }
        return 1;
      }
      p = desc + align4(note.n_descsz);
    }
  }
  return 1; // only the executable is of interest
}

} // namespace

std::string_view executableBuildId() {
  static const std::string id = [] {
    std::string s;
    dl_iterate_phdr(findBuildId, &s);
    return s;
  }();
  return id;
}

} // namespace gc
