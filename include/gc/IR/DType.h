//===- DType.h - Element types (moved to Support) ---------------*- C++ -*-===//
//
// Dtypes live in gcSupport so that the runtime needs no IR; the IR's
// headers keep including them from here.
//
//===----------------------------------------------------------------------===//
#ifndef GC_IR_DTYPE_H
#define GC_IR_DTYPE_H

#include "gc/Support/DType.h"

#endif // GC_IR_DTYPE_H
