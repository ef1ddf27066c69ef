//===- CudaFewRowProduct.cpp - Products of a few rows on NVIDIA GPUs ------===//
#include "CudaFewRowProduct.h"
#include "EmbeddedKernels.h"
#include "ProductEpilogue.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <optional>

#ifdef GC_HAVE_FEWROW_FATBIN
// bin2c's array gcFewRowFatbin and its length, made from nvcc's fatbinary.
#include "FewRowFatbin.inc"
#endif

namespace gc::cuda {

namespace {

/// The embedded fatbinary as the driver loads it; empty without one.
const std::vector<uint64_t> &fewRowImage() {
#ifdef GC_HAVE_FEWROW_FATBIN
  static const std::vector<uint64_t> image = alignedImage(gcFewRowFatbin, gcFewRowFatbinLength);
#else
  static const std::vector<uint64_t> image;
#endif
  return image;
}

/// Whether every dimension of `l` before the last two has size 1.
bool batchOfOne(const StridedLayout &l) {
  for (size_t d = 0; d + 2 < l.sizes.size(); ++d)
    if (l.sizes[d] != 1)
      return false;
  return true;
}

/// The few-row kernel's code for an epilogue's activation.
int32_t fewRowActivation(ProductEpilogue::Activation a) {
  switch (a) {
  case ProductEpilogue::Activation::Relu:
    return kFewRowRelu;
  case ProductEpilogue::Activation::GeluTanh:
    return kFewRowGeluTanh;
  case ProductEpilogue::Activation::None:
    break;
  }
  return kFewRowNoActivation;
}

/// Launches `group` through `fn`.
Error launchGroup(const Driver &d, Kernel fn, const FewRowGroup &group, FewRowGroupArgs args,
                  Stream stream) {
  void *params[] = {&args};
  return d.check(d.launch(fn, {group.blocks, 1, kFewRowThreads}, stream, params),
                 "launching the few-row product kernel " + group.entry);
}

/// Runs a group as one launch, or, where its addresses do not allow it,
/// each product alone (`alone`, empty for a group of one, which always
/// runs as one launch).
class FewRowCall final : public ExternCall {
public:
  FewRowCall(const Driver &d, Kernel fn, FewRowGroup group, std::vector<FewRowGroup> alone)
      : d_(d), fn_(fn), group_(std::move(group)), alone_(std::move(alone)) {}

  Error run(const ExternArgs &a) override {
    Stream stream = static_cast<Stream>(a.stream);
    if (std::optional<FewRowGroupArgs> args = fewRowGroupArgs(group_, a.deviceBuffers))
      return launchGroup(d_, fn_, group_, *args, stream);
    for (const FewRowGroup &one : alone_)
      GC_RETURN_IF_ERROR(launchGroup(d_, fn_, one, *fewRowGroupArgs(one, a.deviceBuffers), stream));
    return Error::success();
  }

  /// The product's launch where the call is of one product.
  const FewRowLaunch *single() const {
    return group_.products.size() == 1 ? &group_.products[0] : nullptr;
  }

private:
  const Driver &d_;
  Kernel fn_;
  FewRowGroup group_;
  std::vector<FewRowGroup> alone_;
};

class GroupedStep final : public ExternCall {
public:
  Error run(const ExternArgs &) override { return Error::success(); }
};

/// Thread groups per block for `tiles` tiles of rows `chunks` 16-byte
/// chunks long on `multiprocessors` SMs: where a row's chunks are fewer
/// than a block's threads, as many groups as keep every thread busy;
/// beyond that, doubled while the blocks stay at least kFewRowBlocksPerSM
/// per SM.
int fewRowGroupsFor(int64_t tiles, int64_t chunks, int multiprocessors) {
  int64_t groups = 1, minBlocks = kFewRowBlocksPerSM * std::max(multiprocessors, 1);
  while (groups < kFewRowMaxGroups && kFewRowThreads / groups > chunks)
    groups *= 2;
  while (groups < kFewRowMaxGroups && (tiles + 2 * groups - 1) / (2 * groups) >= minBlocks)
    groups *= 2;
  return static_cast<int>(groups);
}

/// A gated pair's tile is one output column (a row of each weight).
int64_t tilesOf(const FewRowLaunch &l) {
  return l.present[kFewRowUp] ? l.n : (l.n + kFewRowTile - 1) / kFewRowTile;
}

/// Whether [a, a + m) and [b, b + n) share a byte.
bool overlap(uint64_t a, int64_t m, uint64_t b, int64_t n) {
  return m > 0 && n > 0 && a < b + uint64_t(n) && b < a + uint64_t(m);
}

} // namespace

FewRowKernelArgs fewRowArgs(const FewRowLaunch &launch, const uint64_t *buffers) {
  FewRowKernelArgs args = launch.args;
  std::array<uint64_t *, kFewRowOperands> address = fewRowAddresses(args);
  for (int o = 0; o < kFewRowOperands; ++o)
    if (launch.present[o])
      *address[o] += buffers[launch.buffers[o]];
  args.wide = launch.wideStrides && args.a % 16 == 0 && args.w % 16 == 0 && args.up % 16 == 0 &&
              args.norm % 16 == 0;
  return args;
}

FewRowLaunch planFewRowProduct(const plan::OpStep &step, const std::vector<StridedLayout> &inputs,
                               const std::vector<StridedLayout> &outputs, int multiprocessors,
                               FewRowPick pick) {
  FewRowLaunch out;
  auto decline = [&](std::string why) {
    out.entry.clear();
    out.declined = std::move(why);
    return out;
  };
  const plan::DnnlCall *call = step.dnnl();
  if (!call || call->primitive() != plan::DnnlPrimitive::Matmul)
    return decline("not a matrix product");
  if (outputs.size() != 1 || step.outputs()->size() != 1 || inputs.size() != step.inputs()->size())
    return decline("not one output, or views missing");
  plan::DType t = step.outputs()->Get(0)->dtype();
  const char *type = kernelTypeName(t);
  if (!type)
    return decline("the output is neither float32, bfloat16 nor float16");
  for (const plan::View *v : *step.inputs())
    if (v->dtype() != t)
      return decline("the operands differ in type");
  size_t ai = call->src(), wi = call->weights();
  if (ai >= inputs.size() || wi >= inputs.size())
    return decline("no left operand or weight");
  const StridedLayout &a = inputs[ai], &w = inputs[wi], &o = outputs[0];
  size_t rank = o.sizes.size();
  if (rank < 2 || a.sizes.size() != rank || w.sizes.size() != rank)
    return decline("operands of rank under 2 or of different ranks");
  if (!batchOfOne(a) || !batchOfOne(w) || !batchOfOne(o))
    return decline("a batch of more than one product");
  int64_t rows = o.sizes[rank - 2], n = o.sizes[rank - 1], k = a.sizes[rank - 1];
  if (a.sizes[rank - 2] != rows || w.sizes[rank - 2] != k || w.sizes[rank - 1] != n)
    return decline("the operands' sizes do not make the output's");
  if (rows < 1 || rows > kGpuFewRowsMax)
    return decline(std::to_string(rows) + " rows (the kernel takes 1 to " +
                   std::to_string(kGpuFewRowsMax) + ")");
  if (n < 1 || k < 1)
    return decline("an empty product");
  if (n > INT_MAX || k > INT_MAX)
    return decline("more columns or a longer k than the kernel counts");
  // The weight [K, N] must be [N, K] with contiguous rows, seen transposed;
  // the left operand's rows contiguous too.
  if (k > 1 && w.strides[rank - 2] != 1)
    return decline("the weight is not in [N, K] layout with contiguous rows");
  if (k > 1 && a.strides[rank - 1] != 1)
    return decline("the left operand's rows are not contiguous");
  std::optional<ProductEpilogue> e = productEpilogue(*call, inputs.size());
  if (!e)
    return decline("an epilogue other than a bias, a residual add, then ReLU or tanh GELU, "
                   "or a gated pair alone");
  int64_t bytes = t == plan::DType::Float32 ? 4 : 2;
  FewRowKernelArgs &args = out.args;
  if (e->bias) {
    const StridedLayout &b = inputs[*e->bias];
    if (b.sizes != std::vector<int64_t>{n})
      return decline("a bias that is not one value per output column");
    args.biasStride = n > 1 ? b.strides[0] : 0;
  }
  if (e->residual) {
    const StridedLayout &r = inputs[*e->residual];
    if (r.sizes != o.sizes)
      return decline("a residual of other sizes than the output's");
    args.residualRowStride = r.strides[rank - 2];
    args.residualColStride = r.strides[rank - 1];
  }
  if (e->up) {
    const StridedLayout &u = inputs[*e->up];
    if (u.sizes != w.sizes || u.strides != w.strides)
      return decline("a gated pair whose weights are laid out differently");
  }
  std::optional<uint32_t> norm;
  if (e->rmsNorm) {
    const StridedLayout &g = inputs[e->rmsNorm->weight];
    if (g.sizes != std::vector<int64_t>{k} || (k > 1 && g.strides[0] != 1))
      return decline("an RMSNorm weight that is not one contiguous value per k");
    norm = e->rmsNorm->weight;
    args.normEps = e->rmsNorm->eps;
  }
  // cuBLASLt computes no gated pair and no RMSNorm prologue (the compiler
  // makes them only where the rule holds, GpuFewRows.h).
  if (pick == FewRowPick::ByRule && !e->up && !norm && !fewRowKernelWins(rows, n, k, bytes))
    return decline("the rule leaves this shape to cuBLASLt");

  args.aRowStride = rows > 1 ? a.strides[rank - 2] : 0;
  args.wRowStride = n > 1 ? w.strides[rank - 1] : 0;
  args.outRowStride = o.strides[rank - 2];
  args.outColStride = o.strides[rank - 1];
  args.n = static_cast<int32_t>(n);
  args.k = static_cast<int32_t>(k);
  args.activation = fewRowActivation(e->activation);
  // The optional operands: the epilogue's inputs.
  auto layoutOf = [&](std::optional<uint32_t> input) {
    return input ? &inputs[*input] : nullptr;
  };
  auto bufferOf = [&](std::optional<uint32_t> input) {
    return input ? step.inputs()->Get(*input)->buffer() : 0u;
  };
  const StridedLayout *layouts[kFewRowOperands] = {
      &a, &w, &o, layoutOf(e->bias), layoutOf(e->residual), layoutOf(e->up), layoutOf(norm)};
  uint32_t buffers[kFewRowOperands] = {
      step.inputs()->Get(ai)->buffer(), step.inputs()->Get(wi)->buffer(),
      step.outputs()->Get(0)->buffer(), bufferOf(e->bias),
      bufferOf(e->residual),            bufferOf(e->up),
      bufferOf(norm)};
  std::array<uint64_t *, kFewRowOperands> address = fewRowAddresses(args);
  for (int op = 0; op < kFewRowOperands; ++op)
    if (layouts[op]) {
      out.present[op] = true;
      out.buffers[op] = buffers[op];
      *address[op] = static_cast<uint64_t>(layouts[op]->offset * bytes);
      out.spanBytes[op] = (layouts[op]->extent() - layouts[op]->offset) * bytes;
    }
  out.wideStrides = (args.aRowStride * bytes) % 16 == 0 && (args.wRowStride * bytes) % 16 == 0;
  out.n = n;
  setFewRowGroups(out, fewRowGroupsFor(tilesOf(out), (k * bytes + 15) / 16, multiprocessors));
  out.rows = rows;
  out.k = k;
  out.elementBytes = bytes;
  args.rows = static_cast<int32_t>(rows);
  out.entry = std::string("gc_fewrow_") + type + "_r" +
              std::to_string(rows <= kGpuFewRowsExact ? rows : int64_t(kGpuFewRowsMax));
  return out;
}

void setFewRowGroups(FewRowLaunch &launch, int groups) {
  launch.args.groups = groups;
  launch.blocks = static_cast<unsigned>((tilesOf(launch) + groups - 1) / groups);
}

FewRowGroup fewRowGroupOfOne(FewRowLaunch launch) {
  FewRowGroup g;
  g.entry = launch.entry;
  g.blocks = launch.blocks;
  g.products.push_back(std::move(launch));
  return g;
}

FewRowGroup planFewRowGroup(std::vector<FewRowLaunch> products, int multiprocessors) {
  FewRowGroup g;
  if (products.empty())
    return g;
  int64_t tiles = 0;
  for (const FewRowLaunch &p : products)
    tiles += tilesOf(p);
  const FewRowLaunch &first = products[0];
  int groups = fewRowGroupsFor(tiles, (first.k * first.elementBytes + 15) / 16, multiprocessors);
  for (FewRowLaunch &p : products) {
    setFewRowGroups(p, groups);
    g.blocks += p.blocks;
  }
  g.entry = first.entry;
  g.products = std::move(products);
  return g;
}

bool joinsFewRowGroup(const std::vector<const FewRowLaunch *> &group, const FewRowLaunch &next) {
  if (group.empty())
    return true;
  if (group.size() >= size_t(kFewRowMaxProducts))
    return false;
  const FewRowLaunch &first = *group[0];
  if (next.entry != first.entry || next.k != first.k ||
      next.buffers[kFewRowA] != first.buffers[kFewRowA] || next.args.a != first.args.a ||
      next.args.aRowStride != first.args.aRowStride)
    return false;
  // Buffer by buffer: whether `writer`'s output is any operand of `other`.
  auto touches = [](const FewRowLaunch &writer, const FewRowLaunch &other) {
    for (int o = 0; o < kFewRowOperands; ++o)
      if (other.present[o] && other.buffers[o] == writer.buffers[kFewRowOut])
        return true;
    return false;
  };
  for (const FewRowLaunch *g : group)
    if (touches(*g, next) || touches(next, *g))
      return false;
  return true;
}

std::vector<std::pair<size_t, size_t>>
fewRowGroupRuns(const std::vector<const FewRowLaunch *> &launches) {
  std::vector<std::pair<size_t, size_t>> runs;
  for (size_t first = 0; first < launches.size();) {
    std::vector<const FewRowLaunch *> group;
    size_t end = first;
    while (end < launches.size() && launches[end] && joinsFewRowGroup(group, *launches[end]))
      group.push_back(launches[end++]);
    if (group.size() >= 2)
      runs.emplace_back(first, group.size());
    first = std::max(end, first + 1);
  }
  return runs;
}

std::optional<FewRowGroupArgs> fewRowGroupArgs(const FewRowGroup &group,
                                               const uint64_t *buffers) {
  size_t count = group.products.size();
  if (count < 1 || count > size_t(kFewRowMaxProducts))
    return std::nullopt;
  FewRowGroupArgs args{};
  uint32_t block = 0;
  for (size_t i = 0; i < count; ++i) {
    args.products[i] = fewRowArgs(group.products[i], buffers);
    args.firstBlock[i] = block;
    block += group.products[i].blocks;
  }
  args.count = static_cast<int32_t>(count);
  for (size_t i = 0; i < count; ++i)
    for (size_t j = 0; j < count; ++j) {
      if (i == j)
        continue;
      const FewRowKernelArgs &x = args.products[i], &y = args.products[j];
      const FewRowLaunch &lx = group.products[i], &ly = group.products[j];
      FewRowKernelArgs other = y;
      std::array<uint64_t *, kFewRowOperands> operand = fewRowAddresses(other);
      for (int o = 0; o < kFewRowOperands; ++o)
        if (ly.present[o] &&
            overlap(x.out, lx.spanBytes[kFewRowOut], *operand[o], ly.spanBytes[o]))
          return std::nullopt;
    }
  return args;
}

bool haveFewRowKernels() { return !fewRowImage().empty(); }

CudaFewRowKernels::~CudaFewRowKernels() {
  if (module_)
    d_.moduleUnload(module_);
}

Expected<std::unique_ptr<ExternCall>>
CudaFewRowKernels::prepare(const plan::OpStep &step, const std::vector<StridedLayout> &inputs,
                           const std::vector<StridedLayout> &outputs, FewRowPick pick) {
  FewRowLaunch launch = planFewRowProduct(step, inputs, outputs, multiprocessors_, pick);
  if (launch.entry.empty())
    return std::unique_ptr<ExternCall>();
  return call(std::move(launch));
}

Expected<Kernel> CudaFewRowKernels::function(const std::string &entry) {
  return embeddedKernel(d_, module_, fewRowImage(), entry, early_, "few-row product kernel");
}

Expected<std::unique_ptr<ExternCall>> CudaFewRowKernels::call(FewRowLaunch launch) {
  if (!haveFewRowKernels())
    return std::unique_ptr<ExternCall>();
  Expected<Kernel> fn = function(launch.entry);
  if (!fn)
    return fn.error();
  return std::unique_ptr<ExternCall>(std::make_unique<FewRowCall>(
      d_, *fn, fewRowGroupOfOne(std::move(launch)), std::vector<FewRowGroup>{}));
}

Expected<std::unique_ptr<ExternCall>>
CudaFewRowKernels::group(std::vector<FewRowLaunch> products) {
  if (!haveFewRowKernels() || products.empty() || products.size() > size_t(kFewRowMaxProducts))
    return std::unique_ptr<ExternCall>();
  Expected<Kernel> fn = function(products[0].entry);
  if (!fn)
    return fn.error();
  std::vector<FewRowGroup> alone;
  for (const FewRowLaunch &p : products)
    alone.push_back(fewRowGroupOfOne(p));
  return std::unique_ptr<ExternCall>(std::make_unique<FewRowCall>(
      d_, *fn, planFewRowGroup(std::move(products), multiprocessors_), std::move(alone)));
}

const FewRowLaunch *fewRowLaunchOf(const ExternCall *call) {
  auto *c = dynamic_cast<const FewRowCall *>(call);
  return c ? c->single() : nullptr;
}

std::unique_ptr<ExternCall> fewRowGroupedStep() { return std::make_unique<GroupedStep>(); }

} // namespace gc::cuda
