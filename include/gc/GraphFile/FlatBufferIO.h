//===- FlatBufferIO.h - The binary graph file -------------------*- C++ -*-===//
#ifndef GC_GRAPHFILE_FLATBUFFERIO_H
#define GC_GRAPHFILE_FLATBUFFERIO_H

#include "gc/IR/Module.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace gc {

/// The format version this build writes. A reader accepts files of the same
/// major version and any minor version up to its own.
inline constexpr uint32_t kFormatMajor = 1;
inline constexpr uint32_t kFormatMinor = 11;
/// The FlatBuffers file identifier of graph files.
inline constexpr const char *kFileIdentifier = "GCGF";

/// Serializes `m`. The bytes depend only on the module's contents.
std::string writeModuleFlatBuffer(const Module &m);
/// True if `bytes` carry the graph-file identifier.
bool isModuleFlatBuffer(std::span<const uint8_t> bytes);
/// Verifies the buffer and rebuilds the module. Errors name `fileName`; a
/// newer format version is refused with both versions in the message.
Expected<std::unique_ptr<Module>>
readModuleFlatBuffer(std::span<const uint8_t> bytes, std::string_view fileName);

} // namespace gc

#endif // GC_GRAPHFILE_FLATBUFFERIO_H
