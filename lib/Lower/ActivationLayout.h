//===- ActivationLayout.h - Channels-last activations of conv nets -*- C++ -*-===//
//
// Which 4-d activations of a graph gc-lower lays out channels-last (NHWC
// strides: channels innermost) instead of row-major. oneDNN's fast CPU
// convolutions work on channels-last activations; with row-major buffers
// every convolution reorders its input into that layout and its output back,
// on every run. As Inductor's layout optimization does, a graph with 2-d
// convolutions keeps the tensors between them channels-last, so that the
// convolutions read and write them as they are and the pointwise, pooling
// and add kernels between them (whose loads and stores follow any strides)
// walk them in that order too.
//
//===----------------------------------------------------------------------===//
#ifndef GC_LIB_LOWER_ACTIVATIONLAYOUT_H
#define GC_LIB_LOWER_ACTIVATIONLAYOUT_H

#include "gc/IR/Module.h"
#include "gc/Lower/Lowering.h"

#include <unordered_set>

namespace gc {

/// The values of `g` whose buffers, where gc-lower makes one for them,
/// take channels-last strides under `mode`:
/// - Plain: none;
/// - ChannelsLast, and Auto (resolveLayout, gc/IR/LayoutMode.h, gives Auto
///   its meaning for a module): the result of every 2-d convolution (not
///   transposed) of floating-point tensors and every view of a [N, H, W, C]
///   tensor as [N, C, H, W] (what conv-as-product makes of a GPU's
///   convolution), every 4-d floating-point result computed from one of
///   those (pointwise ops, pooling, adds, further convolutions), also
///   through values of a higher rank (windows) but not through a lower rank
///   or another permutation of the dims, and the computed input of every
///   such convolution.
/// Graph inputs and outputs keep the user's layout: gc-lower gives them
/// their own buffers whatever this says.
std::unordered_set<const Value *> channelsLastValues(const Graph &g, LayoutMode mode);

/// Channels-last strides of a 4-d [N, C, H, W] tensor: C innermost, then W,
/// H and N.
std::vector<const SymExpr *> channelsLastStrides(SymContext &sx,
                                                 const std::vector<const SymExpr *> &sizes);

} // namespace gc

#endif // GC_LIB_LOWER_ACTIVATIONLAYOUT_H
