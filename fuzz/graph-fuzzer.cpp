//===- graph-fuzzer.cpp - Fuzzing the binary graph-file reader ------------===//
//
// Each input is read as a binary graph file (FlatBuffers) of any level and
// verified, as readModuleFile does for every tool. Whatever passes both is
// printed, written in both file forms and read back, and must come back to
// the same text. (The reader alone checks the buffer, not the graph: a
// value defined twice reads, and the verifier refuses it.)
//
//===----------------------------------------------------------------------===//
#include "RoundTrip.h"

#include "gc/IR/Verifier.h"

using namespace gc;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Expected<std::unique_ptr<Module>> m = readModuleFlatBuffer(std::span(data, size), "fuzz.gcm");
  if (m && !verifyModule(**m))
    checkRoundTrip(**m);
  return 0;
}
