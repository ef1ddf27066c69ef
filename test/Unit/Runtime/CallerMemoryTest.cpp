//===- CallerMemoryTest.cpp - Which caller tensors a GPU run uses in place ===//
//
// The rules of CallerMemory.h on made-up calls: which inputs and outputs a
// run reads and writes where they lie, and which it copies. That the run
// then gives the same results is CudaExecutorTest's, on a GPU.
//
//===----------------------------------------------------------------------===//
#include "Cuda/CallerMemory.h"

#include <gtest/gtest.h>

using namespace gc;
using namespace gc::cuda;
using plan::BufferKind;

namespace {

constexpr uint64_t kAlign = 256;

BufferFacts buf(BufferKind kind, uint64_t bytes = 1024) {
  BufferFacts f;
  f.kind = kind;
  f.bytes = bytes;
  return f;
}

CallerTensor at(uint32_t buffer, uint64_t address, uint64_t bytes = 1024, bool asBuffer = true) {
  return CallerTensor{buffer, address, bytes, asBuffer};
}

struct Call {
  std::vector<BufferFacts> buffers;
  std::vector<CallerTensor> inputs, outputs;
  bool capturing = false;
  std::vector<uint64_t> last;

  InPlace run() { return chooseInPlace(buffers, inputs, outputs, capturing, kAlign, last); }
};

TEST(CallerMemory, AlignedWholeTensorsAreUsedInPlace) {
  Call c{{buf(BufferKind::Input), buf(BufferKind::Weight), buf(BufferKind::Output)},
         {at(0, 0x10000), at(1, 0x20000)},
         {at(2, 0x30000)}};
  InPlace r = c.run();
  EXPECT_EQ(r.inputs, (std::vector<bool>{true, true}));
  EXPECT_EQ(r.outputs, (std::vector<bool>{true}));
}

TEST(CallerMemory, HostTensorsAndOtherLayoutsAreCopied) {
  Call c{{buf(BufferKind::Input), buf(BufferKind::Input), buf(BufferKind::Output)},
         {at(0, 0), at(1, 0x20000, 1024, /*asBuffer=*/false)},
         {at(2, 0x30000, 1024, /*asBuffer=*/false)}};
  InPlace r = c.run();
  EXPECT_EQ(r.inputs, (std::vector<bool>{false, false}));
  EXPECT_EQ(r.outputs, (std::vector<bool>{false}));
}

TEST(CallerMemory, MisalignedOrShortMemoryIsCopied) {
  Call c{{buf(BufferKind::Input), buf(BufferKind::Output)},
         {at(0, 0x10000 + 16)},
         {at(1, 0x30000, 512)}};
  InPlace r = c.run();
  EXPECT_FALSE(r.inputs[0]);
  EXPECT_FALSE(r.outputs[0]);
}

TEST(CallerMemory, OutputOverlappingAnInputIsCopied) {
  // out= the input's own memory: the steps may read the input after
  // writing the output.
  Call c{{buf(BufferKind::Input), buf(BufferKind::Output)}, {at(0, 0x10000)}, {at(1, 0x10000)}};
  InPlace r = c.run();
  EXPECT_TRUE(r.inputs[0]);
  EXPECT_FALSE(r.outputs[0]);
  // Overlapping from below, by one element's worth.
  Call d{{buf(BufferKind::Input), buf(BufferKind::Output)},
         {at(0, 0x10000)},
         {at(1, 0x10000 - 1024 + 256, 1024)}};
  EXPECT_FALSE(d.run().outputs[0]);
}

TEST(CallerMemory, MutatedBufferInPlaceOnlyWithItsOutputInTheSameMemory) {
  BufferFacts state = buf(BufferKind::Input);
  state.written = true;
  // The caller reads the new state from where it passed the old one.
  Call same{{state}, {at(0, 0x10000)}, {at(0, 0x10000)}};
  InPlace r = same.run();
  EXPECT_TRUE(r.inputs[0]);
  EXPECT_TRUE(r.outputs[0]);
  // Elsewhere: the caller's input must not change; both are copied.
  Call other{{state}, {at(0, 0x10000)}, {at(0, 0x20000)}};
  r = other.run();
  EXPECT_FALSE(r.inputs[0]);
  EXPECT_FALSE(r.outputs[0]);
}

TEST(CallerMemory, IntermediatesAndInputOutputsAreNotBound) {
  // An output that views an input buffer without being the same memory,
  // and a tensor naming an intermediate, take copies.
  Call c{{buf(BufferKind::Intermediate), buf(BufferKind::Output)},
         {at(0, 0x10000)},
         {at(1, 0x20000), at(1, 0x30000)}};
  InPlace r = c.run();
  EXPECT_FALSE(r.inputs[0]);
  // One buffer, two outputs: the first is written in place, the second
  // copied from it.
  EXPECT_EQ(r.outputs, (std::vector<bool>{true, false}));
}

TEST(CallerMemory, CapturedLibraryCallsTakeOnlyStableAddresses) {
  BufferFacts held = buf(BufferKind::Input);
  held.heldByCalls = true;
  Call c{{held, buf(BufferKind::Input)}, {at(0, 0x10000), at(1, 0x20000)}, {}};
  c.capturing = true;
  // First call: the library call's operand is new, so copied; the
  // kernel-only one is in place.
  InPlace r = c.run();
  EXPECT_EQ(r.inputs, (std::vector<bool>{false, true}));
  // Same address again: in place.
  r = c.run();
  EXPECT_EQ(r.inputs, (std::vector<bool>{true, true}));
  // Moved: copied again, and the kernel-only input follows its tensor.
  c.inputs = {at(0, 0x40000), at(1, 0x50000)};
  r = c.run();
  EXPECT_EQ(r.inputs, (std::vector<bool>{false, true}));
  // Without capture, addresses may change freely.
  c.capturing = false;
  c.inputs = {at(0, 0x60000), at(1, 0x70000)};
  r = c.run();
  EXPECT_EQ(r.inputs, (std::vector<bool>{true, true}));
}

TEST(CallerMemory, EmptyBuffersAreLeftAlone) {
  Call c{{buf(BufferKind::Input, 0), buf(BufferKind::Output, 0)},
         {at(0, 0x10000, 0)},
         {at(1, 0x20000, 0)}};
  InPlace r = c.run();
  EXPECT_FALSE(r.inputs[0]);
  EXPECT_FALSE(r.outputs[0]);
}

} // namespace
