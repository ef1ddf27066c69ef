//===- CudaAttention.cpp - The fused attention step on NVIDIA GPUs --------===//
#include "CudaAttention.h"
#include "EmbeddedKernels.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <vector>

#ifdef GC_HAVE_ATTENTION_FATBIN
// bin2c's array gcAttentionFatbin and its length, made from nvcc's fatbinary.
#include "AttentionFatbin.inc"
#endif

namespace gc::cuda {

namespace {

/// The embedded fatbinary as the driver loads it; empty without one.
const std::vector<uint64_t> &attentionImage() {
#ifdef GC_HAVE_ATTENTION_FATBIN
  static const std::vector<uint64_t> image = alignedImage(gcAttentionFatbin, gcAttentionFatbinLength);
#else
  static const std::vector<uint64_t> image;
#endif
  return image;
}

int32_t maskKind(plan::DType t) {
  switch (t) {
  case plan::DType::Bool:
    return kMaskBool;
  case plan::DType::Float32:
    return kMaskFloat32;
  case plan::DType::BFloat16:
    return kMaskBFloat16;
  case plan::DType::Float16:
    return kMaskFloat16;
  default:
    return -1;
  }
}

int64_t elementBytes(plan::DType t) {
  return t == plan::DType::Bool ? 1 : t == plan::DType::Float32 ? 4 : 2;
}

/// Fills `strides` (batch, head, row, column) of a view laid against the
/// output's dimensions from the right: each of its sizes must equal
/// `want`'s or (where `broadcasts` allows) be 1; a missing or size-1
/// dimension gets stride 0. `want` holds the output rank's sizes, with -1
/// for a size still to be learnt (key heads), which `learnt` receives.
bool placeStrides(const StridedLayout &l, const std::vector<int64_t> &want, bool broadcasts,
                  int64_t strides[4], int64_t *learnt = nullptr) {
  size_t rank = want.size(), r = l.sizes.size();
  if (r > rank || (!broadcasts && r != rank))
    return false;
  // The output rank's dimensions in kernel order: the last two are row and
  // column, the ones before them batch and (at rank 4) head.
  for (int k = 0; k < 4; ++k)
    strides[k] = 0;
  for (size_t d = 0; d < r; ++d) {
    size_t od = rank - r + d;
    int64_t size = l.sizes[d], expect = want[od];
    if (expect < 0) {
      *learnt = size;
      expect = size;
    }
    if (size != expect && !(broadcasts && size == 1))
      return false;
    int slot = od + 2 >= rank ? static_cast<int>(4 - (rank - od)) : static_cast<int>(od);
    if (size != 1)
      strides[slot] = l.strides[d];
  }
  return true;
}

/// Whether operand `o`'s rows load 16 bytes at a time from `address`:
/// unit column stride, whole 16-byte chunks per row, every row aligned.
bool loadsWide(const AttentionKernelArgs &a, int o, uint64_t address, int64_t bytes) {
  const int64_t *s = a.strides[o];
  if (s[3] != 1 || address % 16 != 0 || (a.headDim * bytes) % 16 != 0)
    return false;
  for (int k = 0; k < 3; ++k)
    if ((s[k] * bytes) % 16 != 0)
      return false;
  return true;
}

/// Whether a bool mask's rows load 16 keys at a time from `address`
/// (AttentionKernelArgs::wide's kMask bit).
bool boolMaskLoadsWide(const AttentionKernelArgs &a, uint64_t address) {
  const int64_t *s = a.strides[kMask];
  if (a.maskKind != kMaskBool || s[3] != 1 || address % 16 != 0 || a.keys % 16 != 0)
    return false;
  for (int k = 0; k < 3; ++k)
    if (s[k] % 16 != 0)
      return false;
  return true;
}

class AttentionCall final : public ExternCall {
public:
  AttentionCall(const Driver &d, Kernel fn, Kernel combine, AttentionLaunch launch,
                int64_t bytes)
      : d_(d), fn_(fn), combine_(combine), launch_(std::move(launch)), bytes_(bytes) {}

  uint64_t workspaceBytes() const override { return launch_.workspaceBytes; }

  Error run(const ExternArgs &a) override {
    AttentionKernelArgs args = bindAttention(launch_, a.deviceBuffers, a.workspace, bytes_);
    void *params[] = {&args};
    Stream stream = static_cast<Stream>(a.stream);
    GC_RETURN_IF_ERROR(d_.check(
        d_.launch(fn_, {launch_.blocks, static_cast<unsigned>(args.splits), kAttentionThreads},
                  stream, params),
        "launching the fused attention kernel " + launch_.entry));
    if (args.splits == 1)
      return Error::success();
    return d_.check(d_.launch(combine_, {launch_.combineBlocks, 1, kAttentionThreads}, stream,
                              params),
                    "launching the fused attention kernel " + launch_.combineEntry);
  }

private:
  const Driver &d_;
  Kernel fn_, combine_;
  AttentionLaunch launch_;
  int64_t bytes_;
};

} // namespace

AttentionKernelArgs bindAttention(const AttentionLaunch &launch, const uint64_t *buffers,
                                  uint64_t workspace, int64_t elementBytes) {
  AttentionKernelArgs args = launch.args;
  for (int o = 0; o < kNumOperands; ++o)
    if (o != kMask || args.maskKind >= kMaskBool)
      args.address[o] += buffers[launch.buffers[o]];
  args.wide = 0;
  for (int o : {kKey, kValue})
    if (loadsWide(args, o, args.address[o], elementBytes))
      args.wide |= 1 << o;
  if (boolMaskLoadsWide(args, args.address[kMask]))
    args.wide |= 1 << kMask;
  args.workspace = workspace;
  return args;
}

AttentionLaunch planAttention(const AttentionOperands &ops, int multiprocessors) {
  AttentionLaunch out;
  auto decline = [&](std::string why) {
    out.entry.clear();
    out.declined = std::move(why);
    return out;
  };
  const StridedLayout &q = *ops.layouts[kQuery], &result = *ops.layouts[kOutput];
  plan::DType t = ops.dtypes[kQuery];
  const char *type = kernelTypeName(t);
  if (!type)
    return decline("the query is neither float32, bfloat16 nor float16");
  for (int o : {kKey, kValue, kOutput})
    if (ops.dtypes[o] != t)
      return decline("query, key, value and output differ in type");
  size_t rank = result.sizes.size();
  if (rank < 2 || rank > 4)
    return decline("rank " + std::to_string(rank) + " (the kernel takes 2 to 4)");
  // Sizes in the output's rank: [batch, heads,] queries, head dim.
  std::vector<int64_t> want(result.sizes.begin(), result.sizes.end());
  int64_t queries = want[rank - 2], dim = want[rank - 1];
  int64_t heads = rank == 4 ? want[1] : 1, batch = rank >= 3 ? want[0] : 1;
  if (q.sizes != result.sizes)
    return decline("the query's sizes are not the output's");
  if (dim > 128 || dim < 1)
    return decline("head dimension " + std::to_string(dim) + " (the kernel takes 1 to 128)");
  AttentionKernelArgs &a = out.args;
  if (!placeStrides(q, want, false, a.strides[kQuery]) ||
      !placeStrides(result, want, false, a.strides[kOutput]))
    return decline("the query or output does not fit");
  // Key and value: any batch broadcast, their own key count and head count
  // (a divisor of the query's under grouped-query attention).
  const StridedLayout &k = *ops.layouts[kKey], &v = *ops.layouts[kValue];
  if (k.sizes.size() != rank || v.sizes.size() != rank || k.sizes != v.sizes)
    return decline("key and value differ in sizes (or from the query in rank)");
  int64_t keys = k.sizes[rank - 2];
  std::vector<int64_t> kvWant = want;
  kvWant[rank - 2] = keys;
  int64_t kvHeads = heads;
  if (rank == 4)
    kvWant[1] = -1;
  if (!placeStrides(k, kvWant, true, a.strides[kKey], &kvHeads) ||
      !placeStrides(v, kvWant, true, a.strides[kValue], &kvHeads))
    return decline("key or value does not fit the query");
  if (kvHeads < 1 || heads % kvHeads != 0)
    return decline("query heads are no multiple of key heads");
  a.group = static_cast<int32_t>(heads / kvHeads);
  // The kernels find each row's largest weight at its largest score.
  if (!(ops.scale > 0))
    return decline("a scale that is not positive");
  if (const StridedLayout *m = ops.layouts[kMask]) {
    if (ops.causal)
      return decline("both a mask and is_causal");
    a.maskKind = maskKind(ops.dtypes[kMask]);
    if (a.maskKind < 0)
      return decline("the mask is neither bool nor a float type");
    std::vector<int64_t> maskWant = want;
    maskWant[rank - 1] = keys;
    if (!placeStrides(*m, maskWant, true, a.strides[kMask]))
      return decline("the mask does not broadcast to the scores");
  } else {
    a.maskKind = ops.causal ? kMaskCausal : kMaskNone;
  }
  // A block takes kAttentionBlockRows rows of one (batch, key head): the
  // rows of its query heads (AttentionKernelArgs.h). Up to kDecodeRows of
  // them (a decode step) go to the decode kernel instead: one block per
  // (batch, key head) and split, its key ranges whole mask chunks.
  int64_t rows = a.group * queries;
  bool decode = rows <= kDecodeRows;
  int64_t rowBlocks = decode ? 1 : (rows + kAttentionBlockRows - 1) / kAttentionBlockRows;
  int64_t blocks = rowBlocks * batch * kvHeads;
  if (blocks == 0 || keys == 0)
    return decline("an empty tensor");
  int64_t totalRows = batch * heads * queries;
  if (blocks > INT_MAX || keys > INT_MAX || totalRows * dim > INT_MAX)
    return decline("more blocks, keys or output elements than the kernel counts");
  int bound = dim <= 64 ? 64 : 128;
  int64_t keyTile = decode ? kDecodeKeyChunk
                           : attentionKeyTile(static_cast<int>(elementBytes(t)), bound);
  int64_t minTiles = decode ? 1 : kMinTilesPerSplit;
  // Splits fill about two blocks per multiprocessor: at the Llama decode
  // shapes (8 key heads, 2048 keys) 32 splits of one 64-key chunk, 256
  // blocks on the H200's 132; a split's 64 keys are 16 per warp, enough
  // loads in flight to hide their latency, and a dropped chunk costs one
  // read of its mask.
  int64_t tiles = (keys + keyTile - 1) / keyTile, splits = 1;
  int64_t target = 2 * static_cast<int64_t>(std::max(multiprocessors, 1));
  if (blocks < target)
    splits = std::max<int64_t>(1, std::min((target + blocks - 1) / blocks, tiles / minTiles));
  int64_t tilesPerSplit = (tiles + splits - 1) / splits;
  splits = (tiles + tilesPerSplit - 1) / tilesPerSplit;
  a.batch = static_cast<int32_t>(batch);
  a.heads = static_cast<int32_t>(heads);
  a.queries = static_cast<int32_t>(queries);
  a.keys = static_cast<int32_t>(keys);
  a.headDim = static_cast<int32_t>(dim);
  a.rowBlocks = static_cast<int32_t>(rowBlocks);
  a.splits = static_cast<int32_t>(splits);
  a.keysPerSplit = static_cast<int32_t>(tilesPerSplit * keyTile);
  a.scale = static_cast<float>(ops.scale);
  for (int o = 0; o < kNumOperands; ++o)
    if (ops.layouts[o]) {
      a.address[o] = static_cast<uint64_t>(ops.layouts[o]->offset * elementBytes(ops.dtypes[o]));
      out.buffers[o] = ops.buffers[o];
    }
  out.blocks = static_cast<unsigned>(blocks);
  out.entry = std::string(decode ? "gc_attention_decode_" : "gc_attention_") + type + "_d" +
              std::to_string(bound) +
              (decode ? "_r" + std::to_string(rows <= 4 ? 4 : kDecodeRows) : "");
  if (splits > 1) {
    out.combineEntry = std::string("gc_attention_combine_") + type;
    out.combineBlocks =
        static_cast<unsigned>((totalRows * dim + kAttentionThreads - 1) / kAttentionThreads);
    out.workspaceBytes = static_cast<uint64_t>(splits * totalRows * (dim + 2) * 4);
  }
  return out;
}

bool haveAttentionKernels() { return !attentionImage().empty(); }

CudaAttentionKernels::~CudaAttentionKernels() {
  if (module_)
    d_.moduleUnload(module_);
}

Expected<std::unique_ptr<ExternCall>>
CudaAttentionKernels::prepare(const plan::OpStep &step, const std::vector<StridedLayout> &inputs,
                              const std::vector<StridedLayout> &outputs) {
  const plan::AttentionCall &call = *step.attention();
  AttentionOperands ops;
  uint32_t index[kNumOperands] = {call.query(), call.key(), call.value(), 0, 0};
  if (outputs.size() != 1 || inputs.size() != step.inputs()->size() ||
      call.mask() >= static_cast<int32_t>(inputs.size()))
    return std::unique_ptr<ExternCall>();
  for (int o : {kQuery, kKey, kValue, kMask}) {
    if (o == kMask) {
      if (call.mask() < 0)
        continue;
      index[o] = static_cast<uint32_t>(call.mask());
    }
    if (index[o] >= inputs.size())
      return std::unique_ptr<ExternCall>();
    const plan::View &view = *step.inputs()->Get(index[o]);
    ops.layouts[o] = &inputs[index[o]];
    ops.dtypes[o] = view.dtype();
    ops.buffers[o] = view.buffer();
  }
  ops.layouts[kOutput] = &outputs[0];
  ops.dtypes[kOutput] = step.outputs()->Get(0)->dtype();
  ops.buffers[kOutput] = step.outputs()->Get(0)->buffer();
  ops.causal = call.causal();
  ops.scale = call.scale();
  AttentionLaunch launch = planAttention(ops, multiprocessors_);
  if (launch.entry.empty() || !haveAttentionKernels())
    return std::unique_ptr<ExternCall>();
  Expected<Kernel> fn = kernel(launch.entry);
  if (!fn)
    return fn.error();
  Kernel combine;
  if (!launch.combineEntry.empty()) {
    Expected<Kernel> k = kernel(launch.combineEntry);
    if (!k)
      return k.error();
    combine = *k;
  }
  int64_t bytes = elementBytes(ops.dtypes[kQuery]);
  return std::unique_ptr<ExternCall>(
      std::make_unique<AttentionCall>(d_, *fn, combine, std::move(launch), bytes));
}

Expected<Kernel> CudaAttentionKernels::kernel(const std::string &entry) {
  return embeddedKernel(d_, module_, attentionImage(), entry, early_, "fused attention kernel");
}

} // namespace gc::cuda
