//===- CallerMemory.cpp - Which caller tensors a GPU run uses in place ----===//
#include "CallerMemory.h"

namespace gc::cuda {

namespace {

bool overlap(const CallerTensor &a, const CallerTensor &b) {
  return a.address < b.address + b.spanBytes && b.address < a.address + a.spanBytes;
}

} // namespace

InPlace chooseInPlace(std::span<const BufferFacts> buffers, std::span<const CallerTensor> inputs,
                      std::span<const CallerTensor> outputs, bool capturing, uint64_t alignment,
                      std::vector<uint64_t> &lastAddress) {
  using plan::BufferKind;
  InPlace r{std::vector<bool>(inputs.size(), false), std::vector<bool>(outputs.size(), false)};
  lastAddress.resize(buffers.size(), 0);
  std::vector<bool> bound(buffers.size(), false);
  // Whether `t` may stand for its buffer in this call; records its address.
  auto takes = [&](const CallerTensor &t) {
    const BufferFacts &buf = buffers[t.buffer];
    if (!t.address || !t.asBuffer || bound[t.buffer] || buf.bytes == 0 ||
        t.spanBytes < buf.bytes || t.address % alignment)
      return false;
    bool stable = !capturing || !buf.heldByCalls || lastAddress[t.buffer] == t.address;
    lastAddress[t.buffer] = t.address;
    return stable;
  };
  for (size_t i = 0; i < inputs.size(); ++i) {
    const CallerTensor &in = inputs[i];
    const BufferFacts &buf = buffers[in.buffer];
    if (buf.kind != BufferKind::Input && buf.kind != BufferKind::Weight)
      continue;
    // A buffer the graph writes: only where the caller reads the result
    // back from the same memory.
    std::vector<size_t> sameMemory;
    for (size_t j = 0; j < outputs.size(); ++j)
      if (outputs[j].buffer == in.buffer && outputs[j].address == in.address &&
          outputs[j].asBuffer)
        sameMemory.push_back(j);
    if (buf.written && sameMemory.empty())
      continue;
    if (!takes(in))
      continue;
    bound[in.buffer] = true;
    r.inputs[i] = true;
    for (size_t j : sameMemory)
      r.outputs[j] = true;
  }
  for (size_t j = 0; j < outputs.size(); ++j) {
    const CallerTensor &out = outputs[j];
    if (buffers[out.buffer].kind != BufferKind::Output)
      continue;
    bool clashes = false;
    for (const CallerTensor &in : inputs)
      clashes |= in.address && overlap(in, out);
    if (clashes || !takes(out))
      continue;
    bound[out.buffer] = true;
    r.outputs[j] = true;
  }
  return r;
}

} // namespace gc::cuda
