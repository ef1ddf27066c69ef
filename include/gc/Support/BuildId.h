//===- BuildId.h - The identity of the running gc binary --------*- C++ -*-===//
#ifndef GC_SUPPORT_BUILDID_H
#define GC_SUPPORT_BUILDID_H

#include <string_view>

namespace gc {

/// The GNU build ID the linker wrote into the running executable (a hash of
/// its contents, in hex), or empty if it has none. Two builds of gc from
/// different sources have different IDs even where GC_VERSION is the same,
/// which is what a cache of gc's own results must tell apart.
std::string_view executableBuildId();

} // namespace gc

#endif // GC_SUPPORT_BUILDID_H
