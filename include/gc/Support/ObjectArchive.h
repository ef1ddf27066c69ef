//===- ObjectArchive.h - Several kernel objects in one byte string -*- C++ -*-===//
//
// Kernels are compiled in batches, one relocatable object each; a graph's
// object code holds them all as a Unix `ar` archive (the format ar, ld and
// LLVM's tools read), members named b0.o, b1.o, ... in batch order, with
// zero dates, owners and fixed modes so that the same objects give the same
// bytes. No symbol index: the linker is handed the members one by one.
//
//===----------------------------------------------------------------------===//
#ifndef GC_SUPPORT_OBJECTARCHIVE_H
#define GC_SUPPORT_OBJECTARCHIVE_H

#include "gc/Support/Error.h"

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gc {

/// A member of an archive: a name that fits ar's 16-byte field (at most 15
/// characters, no '/') and its bytes.
struct ArchiveMember {
  std::string name;
  std::string bytes;
};

/// The archive of `members`, in their order.
std::string archiveMembers(std::span<const ArchiveMember> members);
/// The members of the archive `bytes`, in order, viewing into it. Errors
/// name `what` (what the archive holds, for messages) and the member that
/// is malformed; bytes that are not an archive are an error too.
struct ArchiveView {
  std::string_view name;
  std::string_view bytes;
};
Expected<std::vector<ArchiveView>> archiveMembersOf(std::string_view bytes, std::string_view what);
/// Whether `bytes` start as an ar archive does.
bool isArchive(std::string_view bytes);

/// The archive of kernel batch objects, members b0.o, b1.o, ... in order.
std::string archiveObjects(std::span<const std::string> objects);
/// The objects `bytes` holds: the members of an archive, or `bytes` itself
/// when it is a single object (what gc wrote before batches). Errors say
/// what is malformed.
Expected<std::vector<std::string_view>> archivedObjects(std::string_view bytes);

} // namespace gc

#endif // GC_SUPPORT_OBJECTARCHIVE_H
