//===- CudaLibrariesTest.cpp - cuBLASLt and cuDNN calls against a reference -===//
//
// Each case is one extern step over buffers of its own (input i views buffer
// i, the output views the last one), run on the GPU and compared with a
// double-precision reference computed here. Without a GPU, or without the
// libraries, the GPU cases skip; what is decided on the layouts alone (the
// steps the libraries decline) and the library search run everywhere.
//
//===----------------------------------------------------------------------===//
#include "Cuda/CudaLibraries.h"
#include "Cuda/CudaLibrariesLoader.h"

#include "gc/Tensor/Tensor.h"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <random>
#include <regex>

using namespace gc;

namespace {

using Sizes = std::vector<int64_t>;

bool haveGpu() {
  static const bool have = [] {
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
  }();
  return have;
}

/// Why GPU cases cannot run here, or "".
std::string gpuMissing() {
  if (!haveGpu())
    return "no CUDA GPU";
  std::string libs = CudaLibraries().describe();
  return libs.find("no ") == std::string::npos ? "" : libs;
}

#define REQUIRE_GPU()                                                                              \
  if (std::string why = gpuMissing(); !why.empty())                                                \
  GTEST_SKIP() << why

Sizes denseStrides(const Sizes &sizes) {
  Sizes strides(sizes.size(), 1);
  for (size_t i = sizes.size(); i-- > 1;)
    strides[i - 1] = strides[i] * sizes[i];
  return strides;
}

StridedLayout layout(Sizes sizes, Sizes strides = {}, int64_t offset = 0) {
  if (strides.empty())
    strides = denseStrides(sizes);
  return {std::move(sizes), std::move(strides), offset};
}

/// One extern step; src is input 0, weights input 1.
struct Case {
  plan::DnnlPrimitive primitive = plan::DnnlPrimitive::Matmul;
  std::vector<StridedLayout> inputs;
  StridedLayout output;
  int32_t bias = -1;
  Sizes stride, padding, dilation;
  int64_t groups = 1;
  std::vector<plan::PostOp> postOps;
  plan::DType dtype = plan::DType::Float32;
  CudaLibraryOptions options;
  /// Largest error allowed, relative to the sum of the magnitudes of the
  /// terms that make an element.
  double tolerance = 1e-5;
  /// Bytes added to input 0's address at run time: less aligned than the
  /// call was prepared for.
  uint64_t misalign = 0;
  /// Run through a CUDA graph captured from the stream, as an executor
  /// replaying a whole plan does, with no run before the capture.
  bool captured = false;
};

plan::PostOp postOp(plan::PostOpKind kind, uint32_t input = 0) { return {kind, input}; }

/// The step as a flatbuffer, as a plan holds it.
std::string stepBytes(const Case &c) {
  flatbuffers::FlatBufferBuilder fbb;
  auto constant = [&](int64_t v) {
    std::vector<plan::SizeInsn> code = {{plan::SizeOp::Const, v}};
    return plan::CreateSizeProgramDirect(fbb, &code);
  };
  auto view = [&](uint32_t buffer, const StridedLayout &l) {
    std::vector<flatbuffers::Offset<plan::SizeProgram>> sizes, strides;
    for (size_t i = 0; i < l.sizes.size(); ++i) {
      sizes.push_back(constant(l.sizes[i]));
      strides.push_back(constant(l.strides[i]));
    }
    return plan::CreateViewDirect(fbb, buffer, c.dtype, &sizes, &strides, constant(l.offset));
  };
  std::vector<flatbuffers::Offset<plan::View>> ins, outs;
  for (size_t i = 0; i < c.inputs.size(); ++i)
    ins.push_back(view(uint32_t(i), c.inputs[i]));
  outs.push_back(view(uint32_t(c.inputs.size()), c.output));
  bool conv = c.primitive == plan::DnnlPrimitive::Convolution;
  auto dnnl = plan::CreateDnnlCallDirect(fbb, c.primitive, 0, 1, c.bias, conv ? &c.stride : nullptr,
                                         conv ? &c.padding : nullptr, conv ? &c.dilation : nullptr,
                                         c.groups, &c.postOps);
  fbb.Finish(plan::CreateOpStepDirect(fbb, "test", &ins, &outs, dnnl));
  return std::string(reinterpret_cast<const char *>(fbb.GetBufferPointer()), fbb.GetSize());
}

const plan::OpStep &stepOf(const std::string &bytes) {
  return *flatbuffers::GetRoot<plan::OpStep>(bytes.data());
}

/// Whether the libraries take the step (on this machine: no GPU is needed
/// for the refusals these tests check).
bool taken(const Case &c) {
  CudaLibraries libs(c.options);
  std::string bytes = stepBytes(c);
  Expected<std::unique_ptr<CudaLibraryCall>> call =
      libs.prepare(stepOf(bytes), c.inputs, {c.output});
  EXPECT_TRUE(bool(call)) << call.error().message();
  return call && *call;
}

void forEachIndex(const Sizes &sizes, const std::function<void(const Sizes &)> &f) {
  Sizes idx(sizes.size(), 0);
  for (int64_t s : sizes)
    if (s == 0)
      return;
  while (true) {
    f(idx);
    size_t d = sizes.size();
    while (d > 0 && ++idx[d - 1] == sizes[d - 1])
      idx[--d] = 0;
    if (d == 0)
      return;
  }
}

double at(const std::vector<double> &data, const StridedLayout &l, const Sizes &idx) {
  int64_t p = l.offset;
  for (size_t i = 0; i < idx.size(); ++i)
    p += idx[i] * l.strides[i];
  return data[p];
}

/// An element of the reference result, with the sum of the magnitudes of
/// the terms it adds up (the scale of its rounding error).
struct Expect {
  double value = 0, magnitude = 0;
};

/// The step computed in double precision, element by element of the output.
Expect reference(const Case &c, const std::vector<std::vector<double>> &data, const Sizes &o) {
  Expect e;
  const StridedLayout &x = c.inputs[0], &w = c.inputs[1];
  size_t rank = o.size();
  auto add = [&](double v) {
    e.value += v;
    e.magnitude += std::abs(v);
  };
  if (c.primitive == plan::DnnlPrimitive::Matmul) {
    Sizes ai = o, bi = o;
    for (int64_t k = 0; k < x.sizes[rank - 1]; ++k) {
      ai[rank - 1] = k, bi[rank - 2] = k;
      add(at(data[0], x, ai) * at(data[1], w, bi));
    }
  } else {
    size_t spatial = rank - 2;
    int64_t perGroup = w.sizes[0] / c.groups, cg = w.sizes[1];
    int64_t group = o[1] / perGroup;
    Sizes window(w.sizes.begin() + 1, w.sizes.end());
    forEachIndex(window, [&](const Sizes &r) {
      Sizes xi = {o[0], group * cg + r[0]}, wi = {o[1], r[0]};
      for (size_t s = 0; s < spatial; ++s) {
        int64_t pos = o[2 + s] * c.stride[s] - c.padding[s] + r[1 + s] * c.dilation[s];
        if (pos < 0 || pos >= x.sizes[2 + s])
          return;
        xi.push_back(pos);
        wi.push_back(r[1 + s]);
      }
      add(at(data[0], x, xi) * at(data[1], w, wi));
    });
  }
  // A bias runs along the channels of a convolution, the columns of a product.
  size_t biasDim = c.primitive == plan::DnnlPrimitive::Matmul ? rank - 1 : 1;
  auto bias = [&](uint32_t i) { add(at(data[i], c.inputs[i], {o[biasDim]})); };
  if (c.bias >= 0)
    bias(uint32_t(c.bias));
  for (const plan::PostOp &p : c.postOps) {
    switch (p.kind()) {
    case plan::PostOpKind::AddBias:
      bias(p.input());
      break;
    case plan::PostOpKind::Add:
      add(at(data[p.input()], c.inputs[p.input()], o));
      break;
    case plan::PostOpKind::Relu:
      e.value = std::max(e.value, 0.0);
      break;
    case plan::PostOpKind::GeluErf:
      e.value = 0.5 * e.value * (1 + std::erf(e.value / std::sqrt(2.0)));
      break;
    case plan::PostOpKind::GeluTanh: {
      double v = e.value;
      e.value = 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
      break;
    }
    }
  }
  return e;
}

/// Elements as the step's dtype stores them: float64, float32, and the 16
/// bits of bfloat16 and float16 (rounded to nearest even).
size_t elementSize(plan::DType t) {
  return t == plan::DType::Float64 ? 8 : t == plan::DType::Float32 ? 4 : 2;
}
void storeElement(plan::DType t, double v, char *p) {
  if (t == plan::DType::Float64)
    return void(std::memcpy(p, &v, 8));
  float f = float(v);
  if (t == plan::DType::Float32)
    return void(std::memcpy(p, &f, 4));
  uint16_t bits = t == plan::DType::BFloat16 ? floatToBFloat16(f) : floatToHalf(f);
  std::memcpy(p, &bits, 2);
}
double loadElement(plan::DType t, const char *p) {
  if (t == plan::DType::Float64) {
    double v;
    std::memcpy(&v, p, 8);
    return v;
  }
  if (t == plan::DType::Float32) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  uint16_t bits;
  std::memcpy(&bits, p, 2);
  return t == plan::DType::BFloat16 ? bfloat16ToFloat(bits) : halfToFloat(bits);
}
/// v as the dtype holds it.
double rounded(plan::DType t, double v) {
  char bytes[8];
  storeElement(t, v, bytes);
  return loadElement(t, bytes);
}

struct DeviceMemory {
  void *p = nullptr;
  explicit DeviceMemory(uint64_t bytes) {
    EXPECT_EQ(cudaMalloc(&p, std::max<uint64_t>(bytes, 1)), cudaSuccess);
  }
  ~DeviceMemory() { cudaFree(p); }
  uint64_t address() const { return reinterpret_cast<uint64_t>(p); }
};

/// Runs the case on the GPU (twice, so that a run which accumulates into
/// its output shows) and checks every element against the reference.
void expectMatchesReference(const Case &c) {
  std::vector<StridedLayout> views = c.inputs;
  views.push_back(c.output);
  size_t elem = elementSize(c.dtype);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> dist(-1, 1);
  std::vector<std::vector<double>> data;
  for (const StridedLayout &l : c.inputs) {
    std::vector<double> d(l.extent());
    for (double &v : d)
      v = rounded(c.dtype, dist(rng));
    data.push_back(std::move(d));
  }

  CudaLibraries libs(c.options);
  std::string bytes = stepBytes(c);
  Expected<std::unique_ptr<CudaLibraryCall>> call =
      libs.prepare(stepOf(bytes), c.inputs, {c.output});
  ASSERT_TRUE(bool(call)) << call.error().message();
  ASSERT_TRUE(*call != nullptr) << "the step was declined";

  std::vector<std::unique_ptr<DeviceMemory>> memory;
  std::vector<uint64_t> buffers;
  for (size_t i = 0; i < views.size(); ++i) {
    uint64_t shift = i == 0 ? c.misalign : 0;
    uint64_t n = views[i].extent();
    memory.push_back(std::make_unique<DeviceMemory>(n * elem + shift));
    buffers.push_back(memory.back()->address() + shift);
    std::vector<char> host(n * elem);
    if (i < c.inputs.size())
      for (uint64_t k = 0; k < n; ++k)
        storeElement(c.dtype, data[i][k], &host[k * elem]);
    else
      std::memset(host.data(), 0xff, host.size()); // NaN: what the call leaves unwritten shows
    ASSERT_EQ(cudaMemcpy(reinterpret_cast<void *>(buffers.back()), host.data(), host.size(),
                         cudaMemcpyHostToDevice),
              cudaSuccess);
  }
  DeviceMemory workspace((*call)->workspaceBytes());
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  if (c.captured) {
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    Error err = (*call)->run(buffers.data(), stream, workspace.address());
    ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
    ASSERT_FALSE(err) << err.message();
    ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
    for (int run = 0; run < 2; ++run)
      ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  } else {
    for (int run = 0; run < 2; ++run) {
      Error err = (*call)->run(buffers.data(), stream, workspace.address());
      ASSERT_FALSE(err) << err.message();
    }
  }
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  cudaStreamDestroy(stream);

  std::vector<char> out(c.output.extent() * elem);
  ASSERT_EQ(cudaMemcpy(out.data(), reinterpret_cast<void *>(buffers.back()), out.size(),
                       cudaMemcpyDeviceToHost),
            cudaSuccess);
  int failures = 0;
  forEachIndex(c.output.sizes, [&](const Sizes &o) {
    int64_t p = c.output.offset;
    for (size_t i = 0; i < o.size(); ++i)
      p += o[i] * c.output.strides[i];
    double got = loadElement(c.dtype, &out[p * elem]);
    Expect want = reference(c, data, o);
    if (!(std::abs(got - want.value) <= c.tolerance * want.magnitude + 1e-30) && failures++ < 5)
      ADD_FAILURE() << "element " << ::testing::PrintToString(o) << ": got " << got << ", want "
                    << want.value << " (terms of magnitude " << want.magnitude << ")";
  });
  EXPECT_EQ(failures, 0);
}

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

/// mm of [m, k] by a [k, n] view of a [n, k] weight (a transposed view).
Case transposedWeight(int64_t m, int64_t k, int64_t n) {
  Case c;
  c.inputs = {layout({m, k}), layout({k, n}, {1, k})};
  c.output = layout({m, n});
  return c;
}

TEST(CudaLibraries, MatmulWithTransposedWeight) {
  REQUIRE_GPU();
  expectMatchesReference(transposedWeight(37, 61, 29));
}

TEST(CudaLibraries, MatmulWithBiasAndRelu) {
  REQUIRE_GPU();
  // addmm(bias, x, w.t()) then relu, as a linear layer.
  Case c = transposedWeight(64, 96, 48);
  c.inputs.push_back(layout({48}));
  c.postOps = {postOp(plan::PostOpKind::AddBias, 2), postOp(plan::PostOpKind::Relu)};
  expectMatchesReference(c);
}

TEST(CudaLibraries, MatmulWithBiasAndGeluTanh) {
  REQUIRE_GPU();
  Case c;
  c.inputs = {layout({33, 40}), layout({40, 24}), layout({24})};
  c.output = layout({33, 24});
  c.postOps = {postOp(plan::PostOpKind::AddBias, 2), postOp(plan::PostOpKind::GeluTanh)};
  expectMatchesReference(c);
}

TEST(CudaLibraries, MatmulWithResidualAddBiasAndRelu) {
  REQUIRE_GPU();
  // The residual is a view with a row stride of its own (a slice of a
  // wider tensor), added before the bias here: addition commutes.
  int64_t m = 20, k = 30, n = 16;
  Case c;
  c.inputs = {layout({m, k}), layout({k, n}), layout({m, n}, {n + 5, 1}, 3), layout({n})};
  c.output = layout({m, n});
  c.postOps = {postOp(plan::PostOpKind::Add, 2), postOp(plan::PostOpKind::AddBias, 3),
               postOp(plan::PostOpKind::Relu)};
  expectMatchesReference(c);
}

TEST(CudaLibraries, MatmulIntoAColumnMajorOutput) {
  REQUIRE_GPU();
  // Column-major input and output views; a residual in the same order.
  int64_t m = 9, k = 14, n = 11;
  Case c;
  c.inputs = {layout({m, k}, {1, m}), layout({k, n}), layout({m, n}, {1, m})};
  c.output = layout({m, n}, {1, m});
  c.postOps = {postOp(plan::PostOpKind::Add, 2)};
  expectMatchesReference(c);
}

TEST(CudaLibraries, BatchedMatmul) {
  REQUIRE_GPU();
  Case c;
  c.inputs = {layout({3, 17, 23}), layout({3, 23, 19}), layout({3, 17, 19})};
  c.output = layout({3, 17, 19});
  c.postOps = {postOp(plan::PostOpKind::Add, 2)};
  expectMatchesReference(c);
}

TEST(CudaLibraries, BatchedMatmulWithABroadcastWeight) {
  REQUIRE_GPU();
  // The weight is expanded along the batch (batch stride 0) and transposed.
  Case c;
  c.inputs = {layout({4, 10, 12}), layout({4, 12, 8}, {0, 1, 12})};
  c.output = layout({4, 10, 8});
  expectMatchesReference(c);
}

TEST(CudaLibraries, MatmulFloat64) {
  REQUIRE_GPU();
  Case c = transposedWeight(21, 34, 13);
  c.dtype = plan::DType::Float64;
  c.tolerance = 1e-12;
  expectMatchesReference(c);
}

TEST(CudaLibraries, MatmulOnALessAlignedOperandThanPrepared) {
  REQUIRE_GPU();
  // Prepared for 256-byte aligned operands, run on one 4 bytes past.
  Case c = transposedWeight(64, 64, 64);
  c.misalign = 4;
  expectMatchesReference(c);
}

TEST(CudaLibraries, MatmulWithTF32) {
  REQUIRE_GPU();
  // TF32 keeps 10 bits of mantissa: about 1e-3 relative.
  Case c = transposedWeight(128, 256, 64);
  c.options.allowTF32 = true;
  c.tolerance = 4e-3;
  expectMatchesReference(c);
}

//===----------------------------------------------------------------------===//
// Convolutions
//===----------------------------------------------------------------------===//

Case convolution(Sizes x, Sizes w, Sizes y, Sizes stride, Sizes padding, Sizes dilation,
                 int64_t groups) {
  Case c;
  c.primitive = plan::DnnlPrimitive::Convolution;
  c.inputs = {layout(std::move(x)), layout(std::move(w))};
  c.output = layout(std::move(y));
  c.stride = std::move(stride), c.padding = std::move(padding), c.dilation = std::move(dilation);
  c.groups = groups;
  return c;
}

TEST(CudaLibraries, Convolution2dStridePaddingDilationGroupsBiasRelu) {
  REQUIRE_GPU();
  // [2, 4, 11, 10] * [6, 2, 3, 3], stride (2, 1), padding (1, 2),
  // dilation (2, 1), 2 groups: out [2, 6, 5, 12].
  Case c = convolution({2, 4, 11, 10}, {6, 2, 3, 3}, {2, 6, 5, 12}, {2, 1}, {1, 2}, {2, 1}, 2);
  c.inputs.push_back(layout({6}));
  c.bias = 2;
  c.postOps = {postOp(plan::PostOpKind::Relu)};
  expectMatchesReference(c);
}

TEST(CudaLibraries, DepthwiseConvolution) {
  REQUIRE_GPU();
  Case c = convolution({2, 8, 9, 9}, {8, 1, 3, 3}, {2, 8, 9, 9}, {1, 1}, {1, 1}, {1, 1}, 8);
  c.inputs.push_back(layout({8}));
  c.bias = 2;
  expectMatchesReference(c);
}

TEST(CudaLibraries, Convolution1d) {
  REQUIRE_GPU();
  Case c = convolution({3, 5, 40}, {7, 5, 4}, {3, 7, 20}, {2}, {1}, {1}, 1);
  expectMatchesReference(c);
}

TEST(CudaLibraries, Convolution3dWithBias) {
  REQUIRE_GPU();
  Case c = convolution({1, 3, 6, 7, 8}, {4, 3, 3, 2, 3}, {1, 4, 4, 6, 6}, {1, 1, 1}, {0, 0, 0},
                       {1, 1, 1}, 1);
  c.inputs.push_back(layout({4}));
  c.bias = 2;
  expectMatchesReference(c);
}

TEST(CudaLibraries, ConvolutionChannelsLastWithBiasPostOpResidualAndRelu) {
  REQUIRE_GPU();
  int64_t n = 2, ch = 3, h = 6, w = 5;
  Case c = convolution({n, ch, h, w}, {4, 3, 3, 3}, {n, 4, h, w}, {1, 1}, {1, 1}, {1, 1}, 1);
  c.inputs[0] = layout({n, ch, h, w}, {h * w * ch, 1, w * ch, ch});
  c.inputs.push_back(layout({4}));
  c.inputs.push_back(layout({n, 4, h, w}));
  c.postOps = {postOp(plan::PostOpKind::AddBias, 2), postOp(plan::PostOpKind::Add, 3),
               postOp(plan::PostOpKind::Relu)};
  expectMatchesReference(c);
}

TEST(CudaLibraries, CapturedInACudaGraph) {
  REQUIRE_GPU();
  Case mm = transposedWeight(48, 40, 24);
  mm.inputs.push_back(layout({24}));
  mm.inputs.push_back(layout({48, 24}));
  mm.postOps = {postOp(plan::PostOpKind::AddBias, 2), postOp(plan::PostOpKind::Add, 3),
                postOp(plan::PostOpKind::GeluTanh)};
  mm.captured = true;
  expectMatchesReference(mm);

  Case conv = convolution({2, 4, 8, 8}, {6, 4, 3, 3}, {2, 6, 8, 8}, {1, 1}, {1, 1}, {1, 1}, 1);
  conv.inputs.push_back(layout({6}));
  conv.inputs.push_back(layout({2, 6, 8, 8}));
  conv.bias = 2;
  conv.postOps = {postOp(plan::PostOpKind::Add, 3), postOp(plan::PostOpKind::Relu)};
  conv.captured = true;
  expectMatchesReference(conv);
}

//===----------------------------------------------------------------------===//
// Half precision: 16-bit operands on the tensor cores, float32 accumulation
//===----------------------------------------------------------------------===//

// The result is rounded once to its dtype (relative 2^-9 for bfloat16,
// 2^-12 for float16), so each element must be within that of a
// double-precision sum of the rounded inputs, and far closer than a sum
// rounded at every step would be over these lengths.
constexpr double kBFloat16Tolerance = 8e-3, kFloat16Tolerance = 1e-3;

TEST(CudaLibraries, HalfPrecisionMatmulsWithBiasResidualAndActivations) {
  REQUIRE_GPU();
  for (plan::DType t : {plan::DType::BFloat16, plan::DType::Float16}) {
    SCOPED_TRACE(t == plan::DType::BFloat16 ? "bfloat16" : "float16");
    double tolerance = t == plan::DType::BFloat16 ? kBFloat16Tolerance : kFloat16Tolerance;
    // A linear layer (transposed weight, bias, GELU), K long enough that
    // float32 accumulation matters.
    Case linear = transposedWeight(64, 768, 96);
    linear.inputs.push_back(layout({96}));
    linear.postOps = {postOp(plan::PostOpKind::AddBias, 2), postOp(plan::PostOpKind::GeluTanh)};
    linear.dtype = t;
    linear.tolerance = tolerance;
    expectMatchesReference(linear);
    // Batched, with a residual and ReLU.
    Case batched;
    batched.inputs = {layout({3, 17, 64}), layout({3, 64, 24}), layout({3, 17, 24})};
    batched.output = layout({3, 17, 24});
    batched.postOps = {postOp(plan::PostOpKind::Add, 2), postOp(plan::PostOpKind::Relu)};
    batched.dtype = t;
    batched.tolerance = tolerance;
    expectMatchesReference(batched);
  }
}

TEST(CudaLibraries, HalfPrecisionConvolutionsWithBiasResidualAndRelu) {
  REQUIRE_GPU();
  for (plan::DType t : {plan::DType::BFloat16, plan::DType::Float16}) {
    SCOPED_TRACE(t == plan::DType::BFloat16 ? "bfloat16" : "float16");
    // A residual block's last convolution: bias, residual, ReLU (each
    // post-op rounds to the dtype on its own; the tolerance covers three).
    Case c = convolution({2, 16, 9, 9}, {32, 16, 3, 3}, {2, 32, 9, 9}, {1, 1}, {1, 1}, {1, 1}, 1);
    c.inputs.push_back(layout({32}));
    c.inputs.push_back(layout({2, 32, 9, 9}));
    c.bias = 2;
    c.postOps = {postOp(plan::PostOpKind::Add, 3), postOp(plan::PostOpKind::Relu)};
    c.dtype = t;
    c.tolerance = 3 * (t == plan::DType::BFloat16 ? kBFloat16Tolerance : kFloat16Tolerance);
    expectMatchesReference(c);
    // Depthwise and strided, captured in a CUDA graph.
    Case depthwise =
        convolution({2, 8, 10, 10}, {8, 1, 3, 3}, {2, 8, 5, 5}, {2, 2}, {1, 1}, {1, 1}, 8);
    depthwise.dtype = t;
    depthwise.tolerance = c.tolerance;
    depthwise.captured = true;
    expectMatchesReference(depthwise);
  }
}

//===----------------------------------------------------------------------===//
// What the libraries decline, decided on the layouts alone
//===----------------------------------------------------------------------===//

TEST(CudaLibraries, DeclinesWhatTheyCannotComputeExactly) {
  // cuBLASLt's GELU is the tanh form.
  Case gelu = transposedWeight(8, 8, 8);
  gelu.postOps = {postOp(plan::PostOpKind::GeluErf)};
  EXPECT_FALSE(taken(gelu));

  // A residual added after the activation.
  Case late = transposedWeight(8, 8, 8);
  late.inputs.push_back(layout({8, 8}));
  late.postOps = {postOp(plan::PostOpKind::Relu), postOp(plan::PostOpKind::Add, 2)};
  EXPECT_FALSE(taken(late));

  // Neither dimension of the weight has unit stride.
  Case strided = transposedWeight(8, 8, 8);
  strided.inputs[1] = layout({8, 8}, {16, 2});
  EXPECT_FALSE(taken(strided));

  // A bias along the rows of a column-major result.
  Case columnBias = transposedWeight(8, 8, 8);
  columnBias.output = layout({8, 8}, {1, 8});
  columnBias.inputs.push_back(layout({8}));
  columnBias.postOps = {postOp(plan::PostOpKind::AddBias, 2)};
  EXPECT_FALSE(taken(columnBias));

  // Empty and integer tensors.
  EXPECT_FALSE(taken(transposedWeight(8, 0, 8)));
  Case ints = transposedWeight(8, 8, 8);
  ints.dtype = plan::DType::Int32;
  EXPECT_FALSE(taken(ints));
  Case bytes = transposedWeight(8, 8, 8);
  bytes.dtype = plan::DType::UInt8;
  EXPECT_FALSE(taken(bytes));

  // cuDNN's legacy activations have no GELU; a filter must be dense.
  Case convGelu = convolution({1, 2, 5, 5}, {2, 2, 3, 3}, {1, 2, 3, 3}, {1, 1}, {0, 0}, {1, 1}, 1);
  convGelu.postOps = {postOp(plan::PostOpKind::GeluTanh)};
  EXPECT_FALSE(taken(convGelu));
  Case convStrided =
      convolution({1, 2, 5, 5}, {2, 2, 3, 3}, {1, 2, 3, 3}, {1, 1}, {0, 0}, {1, 1}, 1);
  convStrided.inputs[1] = layout({2, 2, 3, 3}, {1, 2, 12, 4});
  EXPECT_FALSE(taken(convStrided));
}

//===----------------------------------------------------------------------===//
// Finding the libraries
//===----------------------------------------------------------------------===//

TEST(CudaLibraries, DescribeNamesBothLibraries) {
  std::string d = CudaLibraries().describe();
  std::regex form("(cuBLASLt [0-9]+\\.[0-9]+\\.[0-9]+|no cuBLASLt \\(.+\\)), "
                  "(cuDNN [0-9]+\\.[0-9]+\\.[0-9]+|no cuDNN \\(.+\\))");
  EXPECT_TRUE(std::regex_match(d, form)) << d;
  std::printf("libraries: %s\n", d.c_str());
}

TEST(CudaLibrariesLoader, NamesWhatItCouldNotLoad) {
  Expected<void *> h =
      openLibrary({"libgc-absent.so.1", "libgc-absent.so"}, "/gc-absent-a::/gc-absent-b");
  ASSERT_FALSE(bool(h));
  const std::string &m = h.error().message();
  EXPECT_NE(m.find("cannot load libgc-absent.so.1 (or libgc-absent.so)"), std::string::npos) << m;
  EXPECT_NE(m.find("GC_CUDA_LIBRARY_PATH (/gc-absent-a::/gc-absent-b)"), std::string::npos) << m;

  Expected<void *> bare = openLibrary({"libgc-absent.so.1"}, "");
  ASSERT_FALSE(bool(bare));
  EXPECT_NE(bare.error().message().find("GC_CUDA_LIBRARY_PATH may name its directory"),
            std::string::npos)
      << bare.error().message();
}

TEST(CudaLibrariesLoader, SearchesTheGivenDirectories) {
  // A library that exists (the C library), under a name only a directory
  // of the search path holds.
  Dl_info info{};
  ASSERT_NE(dladdr(reinterpret_cast<void *>(&dladdr), &info), 0);
  std::string dir = ::testing::TempDir() + "gc-loader-XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  std::filesystem::path alias = std::filesystem::path(dir) / "libgc-alias.so.1";
  std::filesystem::create_symlink(std::filesystem::canonical(info.dli_fname), alias);
  Expected<void *> h = openLibrary({"libgc-alias.so.1"}, "/gc-absent:" + dir);
  EXPECT_TRUE(bool(h)) << h.error().message();
  // The first name found in a directory wins over a later name the
  // system knows (libm here, standing for an unversioned soname).
  Expected<void *> first = openLibrary({"libgc-alias.so.1", "libm.so.6"}, dir);
  ASSERT_TRUE(bool(first)) << first.error().message();
  EXPECT_EQ(*first, dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD));
  std::filesystem::remove_all(dir);
}

} // namespace
