//===- Entry.cpp - libgcrt_fallback.so's one exported function ------------===//
#include "gc/Runtime/Fallback.h"

extern "C" __attribute__((visibility("default"))) const gc::FallbackComponent *
gc_fallback_component_v2() {
  return &gc::linkedFallbackComponent();
}
