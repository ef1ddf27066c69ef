//===- RoundTrip.h - The fuzzers' round-trip check --------------*- C++ -*-===//
//
// A module gc has read must survive being written and read back in both
// file forms (the binary one only, at the kernels level), to the same text;
// anything else is a bug the fuzzers report by aborting.
//
//===----------------------------------------------------------------------===//
#ifndef GC_FUZZ_ROUNDTRIP_H
#define GC_FUZZ_ROUNDTRIP_H

#include "gc/GraphFile/FlatBufferIO.h"
#include "gc/IR/Printer.h"
#include "gc/Parser/Parser.h"

#include <cstdlib>

namespace gc {

inline void checkRoundTrip(const Module &m) {
  std::string binary = writeModuleFlatBuffer(m);
  auto span = std::span(reinterpret_cast<const uint8_t *>(binary.data()), binary.size());
  Expected<std::unique_ptr<Module>> fromBinary = readModuleFlatBuffer(span, "fuzz.gcm");
  std::string text = printModule(m);
  if (!fromBinary || printModule(**fromBinary) != text)
    std::abort();
  // The text of a kernels module leaves out the object code, so it is for
  // reading only: the parser refuses it by design.
  if (m.level() == Level::Kernels)
    return;
  Expected<std::unique_ptr<Module>> fromText = parseModule(text, "fuzz.gcir");
  if (!fromText || printModule(**fromText) != text)
    std::abort();
}

} // namespace gc

#endif // GC_FUZZ_ROUNDTRIP_H
