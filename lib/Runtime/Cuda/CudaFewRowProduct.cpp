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

class FewRowCall final : public ExternCall {
public:
  FewRowCall(const Driver &d, Function fn, FewRowLaunch launch)
      : d_(d), fn_(fn), launch_(std::move(launch)) {}

  Error run(const ExternArgs &a) override {
    FewRowKernelArgs args = fewRowArgs(launch_, a.deviceBuffers);
    void *params[] = {&args};
    return d_.check(d_.launchKernel(fn_, launch_.blocks, 1, 1, kFewRowThreads, 1, 1, 0,
                                    static_cast<Stream>(a.stream), params, nullptr),
                    "launching the few-row product kernel " + launch_.entry);
  }

private:
  const Driver &d_;
  Function fn_;
  FewRowLaunch launch_;
};

} // namespace

FewRowKernelArgs fewRowArgs(const FewRowLaunch &launch, const uint64_t *buffers) {
  FewRowKernelArgs args = launch.args;
  uint64_t *address[kFewRowOperands] = {&args.a, &args.w, &args.out, &args.bias, &args.residual};
  for (int o = 0; o < kFewRowOperands; ++o)
    if (launch.present[o])
      *address[o] += buffers[launch.buffers[o]];
  args.wide = launch.wideStrides && args.a % 16 == 0 && args.w % 16 == 0;
  return args;
}

bool fewRowKernelWins(int64_t rows, int64_t, int64_t, int64_t elementBytes) {
  return rows == 1 || elementBytes == 4;
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
    return decline("an epilogue other than a bias, a residual add, then ReLU or tanh GELU");
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
  if (pick == FewRowPick::ByRule && !fewRowKernelWins(rows, n, k, bytes))
    return decline("the rule leaves this shape to cuBLASLt");

  args.aRowStride = rows > 1 ? a.strides[rank - 2] : 0;
  args.wRowStride = n > 1 ? w.strides[rank - 1] : 0;
  args.outRowStride = o.strides[rank - 2];
  args.outColStride = o.strides[rank - 1];
  args.n = static_cast<int32_t>(n);
  args.k = static_cast<int32_t>(k);
  args.activation = fewRowActivation(e->activation);
  const StridedLayout *layouts[kFewRowOperands] = {&a, &w, &o,
                                                   e->bias ? &inputs[*e->bias] : nullptr,
                                                   e->residual ? &inputs[*e->residual] : nullptr};
  uint32_t buffers[kFewRowOperands] = {
      step.inputs()->Get(ai)->buffer(), step.inputs()->Get(wi)->buffer(),
      step.outputs()->Get(0)->buffer(), e->bias ? step.inputs()->Get(*e->bias)->buffer() : 0,
      e->residual ? step.inputs()->Get(*e->residual)->buffer() : 0};
  uint64_t *address[kFewRowOperands] = {&args.a, &args.w, &args.out, &args.bias, &args.residual};
  for (int op = 0; op < kFewRowOperands; ++op)
    if (layouts[op]) {
      out.present[op] = true;
      out.buffers[op] = buffers[op];
      *address[op] = static_cast<uint64_t>(layouts[op]->offset * bytes);
    }
  out.wideStrides = (args.aRowStride * bytes) % 16 == 0 && (args.wRowStride * bytes) % 16 == 0;
  out.n = n;
  int64_t chunks = (k * bytes + 15) / 16, tiles = (n + kFewRowTile - 1) / kFewRowTile;
  int64_t groups = 1, minBlocks = kFewRowBlocksPerSM * std::max(multiprocessors, 1);
  while (groups < kFewRowMaxGroups && kFewRowThreads / groups > chunks)
    groups *= 2;
  while (groups < kFewRowMaxGroups && (tiles + 2 * groups - 1) / (2 * groups) >= minBlocks)
    groups *= 2;
  setFewRowGroups(out, static_cast<int>(groups));
  out.rows = rows;
  out.k = k;
  out.elementBytes = bytes;
  out.entry = std::string("gc_fewrow_") + type + "_r" + std::to_string(rows);
  return out;
}

void setFewRowGroups(FewRowLaunch &launch, int groups) {
  int64_t tiles = (launch.n + kFewRowTile - 1) / kFewRowTile;
  launch.args.groups = groups;
  launch.blocks = static_cast<unsigned>((tiles + groups - 1) / groups);
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

Expected<std::unique_ptr<ExternCall>> CudaFewRowKernels::call(FewRowLaunch launch) {
  if (!haveFewRowKernels())
    return std::unique_ptr<ExternCall>();
  if (!module_)
    GC_RETURN_IF_ERROR(d_.check(d_.moduleLoadData(&module_, fewRowImage().data()),
                                "loading gc's few-row product kernels"));
  Function fn = nullptr;
  GC_RETURN_IF_ERROR(d_.check(d_.moduleGetFunction(&fn, module_, launch.entry.c_str()),
                              "finding the few-row product kernel " + launch.entry));
  return std::unique_ptr<ExternCall>(std::make_unique<FewRowCall>(d_, fn, std::move(launch)));
}

} // namespace gc::cuda
