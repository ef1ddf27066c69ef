//===- CudaLibraries.cpp - Extern steps run by cuBLASLt and cuDNN ---------===//
//
// The toolkit's headers give types and enum values only: both libraries are
// opened with dlopen at first use (CudaLibrariesLoader.h) and called
// through tables of the functions used here. Without those headers (no
// toolkit at build time) every call declines.
//
// Matrix products. cuBLASLt is column-major, and a row-major matrix is its
// own transpose stored column-major. So a product D = A B whose D is
// row-major is asked of cuBLASLt as D^T = B^T A^T, whose column-major
// result is D's memory; a column-major D is asked as it is. Either way an
// operand becomes a matrix cuBLASLt reads as stored or transposed (a
// transposed weight is a view, never a copy). With D row-major, a bias
// along D's last dimension runs along the rows of D^T, which is the bias
// vector cuBLASLt's epilogue adds. A residual Add is the C matrix (beta 1):
// cuBLASLt computes D = act(A B + C + bias).
//
// Convolutions run through cuDNN 9's legacy API (cudnnConvolutionForward);
// the bias, residual adds and ReLU follow as cuDNN calls on the result.
//
//===----------------------------------------------------------------------===//
#include "CudaLibraries.h"

#if !GC_CUDA_LIBRARY_HEADERS

namespace gc {

// Built without the CUDA toolkit's headers: every call declines.
struct CudaLibraries::Impl {};
CudaLibraries::CudaLibraries(CudaLibraryOptions) {}
CudaLibraries::~CudaLibraries() = default;
Expected<std::unique_ptr<CudaLibraryCall>>
CudaLibraries::prepare(const plan::OpStep &, const std::vector<StridedLayout> &,
                       const std::vector<StridedLayout> &) {
  return std::unique_ptr<CudaLibraryCall>();
}
std::string CudaLibraries::describe() const {
  return "no cuBLASLt or cuDNN: gc was built without the CUDA toolkit's headers (GC_CUDA_HOME)";
}

} // namespace gc

#else // GC_CUDA_LIBRARY_HEADERS

#include "CudaLibrariesLoader.h"
#include "ProductEpilogue.h"

#include <cublasLt.h>
#include <cuda.h>
#include <cudnn.h>

#include <climits>
#include <cstdlib>
#include <optional>
#include <utility>

namespace gc {

namespace {

using Prepared = Expected<std::unique_ptr<CudaLibraryCall>>;

/// The null call: the library does not take this step.
Prepared declined() { return std::unique_ptr<CudaLibraryCall>(); }

/// A step of preparing a call: true when done, false when the library
/// refuses the problem, or an error.
using Outcome = Expected<bool>;

/// The most device scratch memory one call may ask for.
constexpr uint64_t kWorkspaceLimit = 32ull << 20;

//===----------------------------------------------------------------------===//
// The libraries' functions
//===----------------------------------------------------------------------===//

#define GC_CUBLASLT_FUNCTIONS(X)                                                                   \
  X(cublasLtGetVersion)                                                                            \
  X(cublasLtCreate)                                                                                \
  X(cublasLtDestroy)                                                                               \
  X(cublasLtMatmulDescCreate)                                                                      \
  X(cublasLtMatmulDescDestroy)                                                                     \
  X(cublasLtMatmulDescSetAttribute)                                                                \
  X(cublasLtMatrixLayoutCreate)                                                                    \
  X(cublasLtMatrixLayoutDestroy)                                                                   \
  X(cublasLtMatrixLayoutSetAttribute)                                                              \
  X(cublasLtMatmulPreferenceCreate)                                                                \
  X(cublasLtMatmulPreferenceDestroy)                                                               \
  X(cublasLtMatmulPreferenceSetAttribute)                                                          \
  X(cublasLtMatmulAlgoGetHeuristic)                                                                \
  X(cublasLtMatmul)

#define GC_CUDNN_FUNCTIONS(X)                                                                      \
  X(cudnnGetVersion)                                                                               \
  X(cudnnGetErrorString)                                                                           \
  X(cudnnCreate)                                                                                   \
  X(cudnnDestroy)                                                                                  \
  X(cudnnSetStream)                                                                                \
  X(cudnnCreateTensorDescriptor)                                                                   \
  X(cudnnSetTensorNdDescriptor)                                                                    \
  X(cudnnDestroyTensorDescriptor)                                                                  \
  X(cudnnCreateFilterDescriptor)                                                                   \
  X(cudnnSetFilterNdDescriptor)                                                                    \
  X(cudnnDestroyFilterDescriptor)                                                                  \
  X(cudnnCreateConvolutionDescriptor)                                                              \
  X(cudnnSetConvolutionNdDescriptor)                                                               \
  X(cudnnSetConvolutionGroupCount)                                                                 \
  X(cudnnSetConvolutionMathType)                                                                   \
  X(cudnnDestroyConvolutionDescriptor)                                                             \
  X(cudnnGetConvolutionNdForwardOutputDim)                                                         \
  X(cudnnGetConvolutionForwardAlgorithm_v7)                                                        \
  X(cudnnGetConvolutionForwardWorkspaceSize)                                                       \
  X(cudnnConvolutionForward)                                                                       \
  X(cudnnAddTensor)                                                                                \
  X(cudnnCreateActivationDescriptor)                                                               \
  X(cudnnSetActivationDescriptor)                                                                  \
  X(cudnnDestroyActivationDescriptor)                                                              \
  X(cudnnActivationForward)

#define GC_FUNCTION_POINTER(f) decltype(&::f) f = nullptr;
struct CublasLt {
  GC_CUBLASLT_FUNCTIONS(GC_FUNCTION_POINTER)
};
struct Cudnn {
  GC_CUDNN_FUNCTIONS(GC_FUNCTION_POINTER)
};
#undef GC_FUNCTION_POINTER

/// A library with its functions resolved, or why it cannot be used.
template <typename Api> struct Library {
  Api api;
  std::string version; ///< "13.1.0"
  std::string problem; ///< empty when usable
};

struct Libraries {
  Library<CublasLt> lt;
  Library<Cudnn> dnn;
};

/// Opens the first of `names` and resolves `api`'s functions (`fill`), then
/// checks the major version of what loaded against the headers'. Both
/// libraries number versions as major * 10000 + minor * 100 + patch.
template <typename Api, typename Fill>
Library<Api> load(std::initializer_list<const char *> names, const std::string &searchPath,
                  const char *title, unsigned headerMajor, Fill fill) {
  Library<Api> lib;
  Expected<void *> handle = openLibrary(names, searchPath);
  if (!handle) {
    lib.problem = handle.error().message();
    return lib;
  }
  Expected<size_t> version = fill(*handle, lib.api);
  if (!version) {
    lib.problem = version.error().message();
    return lib;
  }
  size_t major = *version / 10000;
  lib.version = std::to_string(major) + "." + std::to_string(*version / 100 % 100) + "." +
                std::to_string(*version % 100);
  if (major != headerMajor)
    lib.problem = std::string(title) + " " + lib.version +
                  " was loaded; gc was built for version " + std::to_string(headerMajor);
  return lib;
}

#define GC_RESOLVE(f)                                                                              \
  if (!(api.f = reinterpret_cast<decltype(api.f)>(librarySymbol(handle, #f))))                     \
    return makeError() << "the loaded " << title << " lacks " << #f;

const Libraries &libraries() {
  static const Libraries libs = [] {
    const char *path = std::getenv(kCudaLibraryPathVariable);
    std::string searchPath = path ? path : "";
    Libraries l;
    l.lt = load<CublasLt>({"libcublasLt.so.13", "libcublasLt.so"}, searchPath, "cuBLASLt",
                          CUBLAS_VER_MAJOR, [](void *handle, CublasLt &api) -> Expected<size_t> {
                            const char *title = "cuBLASLt";
                            GC_CUBLASLT_FUNCTIONS(GC_RESOLVE)
                            return api.cublasLtGetVersion();
                          });
    l.dnn = load<Cudnn>({"libcudnn.so.9", "libcudnn.so"}, searchPath, "cuDNN", CUDNN_MAJOR,
                        [](void *handle, Cudnn &api) -> Expected<size_t> {
                          const char *title = "cuDNN";
                          GC_CUDNN_FUNCTIONS(GC_RESOLVE)
                          return api.cudnnGetVersion();
                        });
    return l;
  }();
  return libs;
}

#undef GC_RESOLVE

//===----------------------------------------------------------------------===//
// Statuses
//===----------------------------------------------------------------------===//

const char *statusName(cublasStatus_t s) {
  switch (s) {
  case CUBLAS_STATUS_SUCCESS:
    return "CUBLAS_STATUS_SUCCESS";
  case CUBLAS_STATUS_NOT_INITIALIZED:
    return "CUBLAS_STATUS_NOT_INITIALIZED";
  case CUBLAS_STATUS_ALLOC_FAILED:
    return "CUBLAS_STATUS_ALLOC_FAILED";
  case CUBLAS_STATUS_INVALID_VALUE:
    return "CUBLAS_STATUS_INVALID_VALUE";
  case CUBLAS_STATUS_ARCH_MISMATCH:
    return "CUBLAS_STATUS_ARCH_MISMATCH";
  case CUBLAS_STATUS_MAPPING_ERROR:
    return "CUBLAS_STATUS_MAPPING_ERROR";
  case CUBLAS_STATUS_EXECUTION_FAILED:
    return "CUBLAS_STATUS_EXECUTION_FAILED";
  case CUBLAS_STATUS_INTERNAL_ERROR:
    return "CUBLAS_STATUS_INTERNAL_ERROR";
  case CUBLAS_STATUS_NOT_SUPPORTED:
    return "CUBLAS_STATUS_NOT_SUPPORTED";
  case CUBLAS_STATUS_LICENSE_ERROR:
    return "CUBLAS_STATUS_LICENSE_ERROR";
  }
  return "an unknown cuBLAS status";
}

Error failure(cublasStatus_t s, const char *fn) {
  return makeError() << "cuBLASLt: " << fn << " failed: " << statusName(s) << " ("
                     << static_cast<int>(s) << ")";
}
Error failure(cudnnStatus_t s, const char *fn) {
  return makeError() << "cuDNN: " << fn
                     << " failed: " << libraries().dnn.api.cudnnGetErrorString(s);
}

/// Whether a status met while preparing says the library does not take
/// this problem (then the step runs its reference kernel) rather than that
/// something went wrong.
bool isRefusal(cublasStatus_t s) {
  return s == CUBLAS_STATUS_NOT_SUPPORTED || s == CUBLAS_STATUS_INVALID_VALUE ||
         s == CUBLAS_STATUS_ARCH_MISMATCH;
}
bool isRefusal(cudnnStatus_t s) {
  // cuDNN 9 groups its statuses by thousands: 2xxx bad parameters, 3xxx
  // not supported; those 3xxx that mean a broken installation are errors.
  switch (s) {
  case CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER:
  case CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDART:
  case CUDNN_STATUS_NOT_SUPPORTED_RUNTIME_PREREQUISITE_MISSING:
  case CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE:
    return false;
  default:
    return s / 1000 == 2 || s / 1000 == 3;
  }
}

template <typename Status> Outcome refusedOr(Status s, const char *fn) {
  if (isRefusal(s))
    return false;
  return failure(s, fn);
}

// `api.fn(args...)` while preparing: a refusal returns false, any other
// failure an error.
#define GC_PREPARE(api, fn, ...)                                                                   \
  do {                                                                                             \
    if (auto s_ = (api).fn(__VA_ARGS__); s_ != decltype(s_)(0))                                    \
      return refusedOr(s_, #fn);                                                                   \
  } while (0)

// `api.fn(args...)` while running: any failure returns an error.
#define GC_RUN(api, fn, ...)                                                                       \
  do {                                                                                             \
    if (auto s_ = (api).fn(__VA_ARGS__); s_ != decltype(s_)(0))                                    \
      return failure(s_, #fn);                                                                     \
  } while (0)

/// A library object (handle, descriptor) destroyed with its owner.
template <typename H, typename Status> class Owned {
  Status (*destroy_)(H);

public:
  H h = nullptr;

  explicit Owned(Status (*destroy)(H)) : destroy_(destroy) {}
  Owned(Owned &&o) noexcept : destroy_(o.destroy_), h(std::exchange(o.h, nullptr)) {}
  Owned &operator=(Owned &&) = delete;
  ~Owned() {
    if (h)
      destroy_(h);
  }
};

using LtHandle = Owned<cublasLtHandle_t, cublasStatus_t>;
using LtDesc = Owned<cublasLtMatmulDesc_t, cublasStatus_t>;
using LtLayout = Owned<cublasLtMatrixLayout_t, cublasStatus_t>;
using LtPreference = Owned<cublasLtMatmulPreference_t, cublasStatus_t>;
using DnnHandle = Owned<cudnnHandle_t, cudnnStatus_t>;
using TensorDesc = Owned<cudnnTensorDescriptor_t, cudnnStatus_t>;
using FilterDesc = Owned<cudnnFilterDescriptor_t, cudnnStatus_t>;
using ConvDesc = Owned<cudnnConvolutionDescriptor_t, cudnnStatus_t>;
using ActivationDesc = Owned<cudnnActivationDescriptor_t, cudnnStatus_t>;

/// The handles of one CudaLibraries, made on first need, on the context
/// current then.
class Handles {
public:
  Expected<cublasLtHandle_t> lt() {
    if (!lt_) {
      const CublasLt &api = libraries().lt.api;
      LtHandle h(api.cublasLtDestroy);
      GC_RUN(api, cublasLtCreate, &h.h);
      lt_.emplace(std::move(h));
    }
    return lt_->h;
  }
  Expected<cudnnHandle_t> dnn() {
    if (!dnn_) {
      const Cudnn &api = libraries().dnn.api;
      DnnHandle h(api.cudnnDestroy);
      GC_RUN(api, cudnnCreate, &h.h);
      dnn_.emplace(std::move(h));
    }
    return dnn_->h;
  }

private:
  std::optional<LtHandle> lt_;
  std::optional<DnnHandle> dnn_;
};

//===----------------------------------------------------------------------===//
// Operands
//===----------------------------------------------------------------------===//

/// Where a view's first element lives: a plan buffer and a byte offset.
struct Place {
  uint32_t buffer = 0;
  int64_t byteOffset = 0;

  uint64_t address(const uint64_t *buffers) const { return buffers[buffer] + byteOffset; }
};

/// How the libraries see the one dtype of a step's tensors: the element,
/// and the type they compute and scale in. Float64 computes in float64;
/// float32, bfloat16 and float16 in float32 (half precision rounds once,
/// when the result is stored, as torch's GPU products and convolutions do).
struct Precision {
  plan::DType dtype = plan::DType::Float32;

  static bool takes(plan::DType t) {
    return t == plan::DType::Float32 || t == plan::DType::Float64 ||
           t == plan::DType::BFloat16 || t == plan::DType::Float16;
  }
  bool wide() const { return dtype == plan::DType::Float64; }
  bool half() const { return dtype == plan::DType::BFloat16 || dtype == plan::DType::Float16; }
  int64_t elementBytes() const { return wide() ? 8 : half() ? 2 : 4; }
  cudaDataType ltType() const {
    return wide()                           ? CUDA_R_64F
           : dtype == plan::DType::BFloat16 ? CUDA_R_16BF
           : dtype == plan::DType::Float16  ? CUDA_R_16F
                                            : CUDA_R_32F;
  }
  cudnnDataType_t dnnType() const {
    return wide()                           ? CUDNN_DATA_DOUBLE
           : dtype == plan::DType::BFloat16 ? CUDNN_DATA_BFLOAT16
           : dtype == plan::DType::Float16  ? CUDNN_DATA_HALF
                                            : CUDNN_DATA_FLOAT;
  }
  cudnnDataType_t dnnComputeType() const { return wide() ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT; }
};

/// The views of one step, checked for what every call here needs: one
/// output, every tensor of one dtype the libraries take, none empty.
struct Views {
  const plan::OpStep &step;
  const std::vector<StridedLayout> &inputs;
  const std::vector<StridedLayout> &outputs;
  Precision precision;

  bool usable() {
    if (outputs.size() != 1 || step.outputs()->size() != 1 ||
        inputs.size() != step.inputs()->size())
      return false;
    plan::DType dtype = step.outputs()->Get(0)->dtype();
    if (!Precision::takes(dtype))
      return false;
    precision.dtype = dtype;
    for (size_t i = 0; i < inputs.size(); ++i)
      if (step.inputs()->Get(i)->dtype() != dtype || inputs[i].numel() == 0)
        return false;
    return outputs[0].numel() > 0;
  }
  int64_t elementBytes() const { return precision.elementBytes(); }
  Place input(size_t i) const {
    return {step.inputs()->Get(i)->buffer(), inputs[i].offset * elementBytes()};
  }
  Place output() const {
    return {step.outputs()->Get(0)->buffer(), outputs[0].offset * elementBytes()};
  }
};

/// Host scalars 1 and 0 in the type the libraries scale a dtype's data by:
/// double for float64, float for the others.
struct Scalars {
  float one32 = 1, zero32 = 0;
  double one64 = 1, zero64 = 0;
  bool wide = false;

  const void *one() const { return wide ? static_cast<const void *>(&one64) : &one32; }
  const void *zero() const { return wide ? static_cast<const void *>(&zero64) : &zero32; }
};

//===----------------------------------------------------------------------===//
// Matrix products (cuBLASLt)
//===----------------------------------------------------------------------===//

/// How cuBLASLt, column-major, sees the last two dimensions of a view: as
/// the matrix stored as it is, or as its transpose (a row-major matrix).
struct MatrixView {
  bool rowMajor = false;
  int64_t ld = 0;
};

/// A row-major view has unit stride along its last dimension, a
/// column-major one along the one before; anything else is refused.
std::optional<MatrixView> matrixView(const StridedLayout &l) {
  size_t r = l.sizes.size();
  int64_t rows = l.sizes[r - 2], cols = l.sizes[r - 1];
  int64_t rowStride = l.strides[r - 2], colStride = l.strides[r - 1];
  // A dimension of one element may have any stride.
  if ((cols == 1 || colStride == 1) && (rows == 1 || rowStride >= cols))
    return MatrixView{true, rows == 1 ? cols : rowStride};
  if ((rows == 1 || rowStride == 1) && (cols == 1 || colStride >= rows))
    return MatrixView{false, cols == 1 ? rows : colStride};
  return std::nullopt;
}

/// A cuBLASLt operand: op(stored) is the matrix the product reads.
struct LtOperand {
  cublasOperation_t op = CUBLAS_OP_N;
  uint64_t rows = 0, cols = 0; ///< as stored
  int64_t ld = 0;
  int64_t batchStride = 0;
};

/// The operand reading X (xRows x xCols), where X is the viewed matrix, or
/// its transpose when `transposed`.
LtOperand operandFor(const MatrixView &v, bool transposed, int64_t xRows, int64_t xCols) {
  // A row-major view holds the viewed matrix's transpose, column-major.
  if (v.rowMajor == transposed)
    return {CUBLAS_OP_N, uint64_t(xRows), uint64_t(xCols), v.ld};
  return {CUBLAS_OP_T, uint64_t(xCols), uint64_t(xRows), v.ld};
}

/// The largest power of two up to 256 dividing `address` (cuBLASLt's
/// alignment classes; device allocations are 256-byte aligned).
uint32_t alignmentOf(uint64_t address) {
  uint32_t a = 256;
  while (address % a)
    a /= 2;
  return a;
}

/// The alignments, in bytes, an algorithm was chosen for.
struct Alignments {
  uint32_t a = 0, b = 0, c = 0, d = 0, bias = 0;

  bool atLeast(const Alignments &o) const {
    return a >= o.a && b >= o.b && c >= o.c && d >= o.d && bias >= o.bias;
  }
  bool operator==(const Alignments &) const = default;
};

/// What the post-ops ask of cuBLASLt's epilogue.
struct MatmulEpilogue {
  std::optional<uint32_t> bias; ///< input index
  std::optional<uint32_t> add;  ///< input index: the C matrix
  cublasLtEpilogue_t kind = CUBLASLT_EPILOGUE_DEFAULT;
};

/// The call's bias and post-ops as cuBLASLt's epilogue (cuda::productEpilogue
/// says which it takes).
std::optional<MatmulEpilogue> matmulEpilogue(const Views &v) {
  using Activation = cuda::ProductEpilogue::Activation;
  std::optional<cuda::ProductEpilogue> p = cuda::productEpilogue(*v.step.dnnl(), v.inputs.size());
  // cuBLASLt has no epilogue that multiplies by a second product, and no
  // prologue that normalises the left rows.
  if (!p || p->up || p->rmsNorm)
    return std::nullopt;
  MatmulEpilogue e{p->bias, p->residual};
  switch (p->activation) {
  case Activation::None:
    e.kind = e.bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
    break;
  case Activation::Relu:
    e.kind = e.bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
    break;
  case Activation::GeluTanh:
    e.kind = e.bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
    break;
  }
  return e;
}

/// A product D = A B, 2-d or batched 3-d, with its epilogue, on views of
/// a step's buffers: a matrix product's own views, or a pointwise
/// convolution's seen as matrices.
struct MatmulProblem {
  StridedLayout a, b, d;
  Place aPlace, bPlace, dPlace;
  MatmulEpilogue epilogue;
  /// The residual's view (the C matrix) and the bias's, when added.
  StridedLayout c, bias;
  Place cPlace, biasPlace;
};

/// A step's matrix product as a MatmulProblem.
std::optional<MatmulProblem> productProblem(const Views &v) {
  const plan::DnnlCall &call = *v.step.dnnl();
  size_t ai = call.src(), bi = call.weights();
  std::optional<MatmulEpilogue> epilogue = matmulEpilogue(v);
  if (ai >= v.inputs.size() || bi >= v.inputs.size() || !epilogue)
    return std::nullopt;
  MatmulProblem p{v.inputs[ai], v.inputs[bi], v.outputs[0], v.input(ai), v.input(bi),
                  v.output(), *epilogue};
  if (epilogue->add)
    p.c = v.inputs[*epilogue->add], p.cPlace = v.input(*epilogue->add);
  if (epilogue->bias)
    p.bias = v.inputs[*epilogue->bias], p.biasPlace = v.input(*epilogue->bias);
  return p;
}

/// [N, C, H, W] stored channels-last without gaps (N*H*W rows of C
/// contiguous elements) as the matrix [N*H*W, C]; nullopt otherwise.
std::optional<StridedLayout> channelsLastRows(const StridedLayout &l) {
  if (l.sizes.size() != 4)
    return std::nullopt;
  int64_t n = l.sizes[0], c = l.sizes[1], h = l.sizes[2], w = l.sizes[3];
  int64_t want[4] = {h * w * c, 1, w * c, c};
  for (int d = 0; d < 4; ++d)
    if (l.sizes[d] != 1 && l.strides[d] != want[d])
      return std::nullopt;
  return StridedLayout{{n * h * w, c}, {c, 1}, l.offset};
}

/// A 1x1 convolution (stride 1, no padding, one group) on channels-last
/// activations is the product [N*H*W, Cin] x W^T, W [Cout, Cin]: its bias
/// runs along the product's columns, as a linear layer's does, so that
/// cuBLASLt's epilogue adds it (and the residual, and ReLU) where cuDNN
/// would need calls of their own.
std::optional<MatmulProblem> pointwiseConvolutionProblem(const Views &v) {
  const plan::DnnlCall &call = *v.step.dnnl();
  size_t xi = call.src(), wi = call.weights();
  if (xi >= v.inputs.size() || wi >= v.inputs.size() || call.groups() != 1)
    return std::nullopt;
  const StridedLayout &w = v.inputs[wi];
  if (w.sizes.size() != 4 || w.sizes[2] != 1 || w.sizes[3] != 1)
    return std::nullopt;
  for (const auto *list : {call.stride(), call.dilation()})
    for (size_t i = 0; list && i < list->size(); ++i)
      if (list->Get(i) != 1)
        return std::nullopt;
  for (size_t i = 0; call.padding() && i < call.padding()->size(); ++i)
    if (call.padding()->Get(i) != 0)
      return std::nullopt;
  std::optional<StridedLayout> x = channelsLastRows(v.inputs[xi]);
  std::optional<StridedLayout> y = channelsLastRows(v.outputs[0]);
  std::optional<MatmulEpilogue> epilogue = matmulEpilogue(v);
  if (!x || !y || !epilogue)
    return std::nullopt;
  StridedLayout wt{{w.sizes[1], w.sizes[0]}, {w.strides[1], w.strides[0]}, w.offset};
  MatmulProblem p{*x, wt, *y, v.input(xi), v.input(wi), v.output(), *epilogue};
  if (epilogue->add) {
    std::optional<StridedLayout> c = channelsLastRows(v.inputs[*epilogue->add]);
    if (!c || v.inputs[*epilogue->add].sizes != v.outputs[0].sizes)
      return std::nullopt;
    p.c = *c, p.cPlace = v.input(*epilogue->add);
  }
  if (epilogue->bias)
    p.bias = v.inputs[*epilogue->bias], p.biasPlace = v.input(*epilogue->bias);
  return p;
}

class MatmulCall final : public CudaLibraryCall {
public:
  MatmulCall(const CublasLt &lt, Precision precision)
      : lt_(lt), desc_(lt.cublasLtMatmulDescDestroy), precision_(precision) {
    for (int i = 0; i < 4; ++i)
      layouts_.emplace_back(lt.cublasLtMatrixLayoutDestroy);
    scalars_.wide = precision.wide();
  }

  /// Describes the product: false when cuBLASLt refuses it.
  Outcome init(const MatmulProblem &p, const CudaLibraryOptions &options, Handles &handles);

  uint64_t workspaceBytes() const override { return workspace_; }

  Error enqueue(const uint64_t *buffers, void *stream, uint64_t workspace) override {
    uint64_t first = places_[0].address(buffers), second = places_[1].address(buffers);
    uint64_t d = places_[3].address(buffers);
    uint64_t c = add_ ? places_[2].address(buffers) : d;
    Alignments actual{alignmentOf(first), alignmentOf(second), alignmentOf(c), alignmentOf(d), 256};
    if (bias_) {
      const void *bias = reinterpret_cast<const void *>(bias_->address(buffers));
      actual.bias = alignmentOf(bias_->address(buffers));
      GC_RUN(lt_, cublasLtMatmulDescSetAttribute, desc_.h, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
             sizeof bias);
    }
    // The algorithm was chosen for the alignments the views' offsets give
    // in 256-byte aligned buffers; a caller's tensor may be less aligned.
    const cublasLtMatmulAlgo_t *algo = &algo_;
    if (!actual.atLeast(assumed_)) {
      Expected<const cublasLtMatmulAlgo_t *> other = algorithmFor(actual);
      if (!other)
        return other.error();
      algo = *other;
    }
    GC_RUN(lt_, cublasLtMatmul, handle_, desc_.h, scalars_.one(), reinterpret_cast<void *>(first),
           layouts_[0].h, reinterpret_cast<void *>(second), layouts_[1].h,
           add_ ? scalars_.one() : scalars_.zero(), reinterpret_cast<void *>(c),
           add_ ? layouts_[2].h : layouts_[3].h, reinterpret_cast<void *>(d), layouts_[3].h, algo,
           reinterpret_cast<void *>(workspace), workspace_, static_cast<cudaStream_t>(stream));
    return Error::success();
  }

private:
  /// The first algorithm cuBLASLt's heuristic offers for operands of these
  /// alignments within `maxWorkspace` bytes, if any.
  cublasStatus_t heuristic(const Alignments &al, uint64_t maxWorkspace,
                           std::optional<cublasLtMatmulHeuristicResult_t> &out, const char *&fn);

  /// An algorithm for less aligned operands than the prepared one's,
  /// within the workspace already reported; kept for the next run.
  Expected<const cublasLtMatmulAlgo_t *> algorithmFor(const Alignments &al) {
    for (const auto &[key, algo] : otherAlgorithms_)
      if (key == al)
        return &algo;
    std::optional<cublasLtMatmulHeuristicResult_t> found;
    const char *fn = nullptr;
    if (cublasStatus_t s = heuristic(al, workspace_, found, fn))
      return failure(s, fn);
    if (!found)
      return makeError() << "cuBLASLt: no algorithm for operands aligned to " << al.a << ", "
                         << al.b << ", " << al.c << " and " << al.d << " bytes";
    otherAlgorithms_.emplace_back(al, found->algo);
    return &otherAlgorithms_.back().second;
  }

  const CublasLt &lt_;
  cublasLtHandle_t handle_ = nullptr;
  LtDesc desc_;
  /// cuBLASLt's A, B, C and D, and where they are.
  std::vector<LtLayout> layouts_;
  Place places_[4];
  std::optional<Place> bias_;
  bool add_ = false;
  Precision precision_;
  Scalars scalars_;
  cublasLtMatmulAlgo_t algo_{};
  Alignments assumed_;
  uint64_t workspace_ = 0;
  std::vector<std::pair<Alignments, cublasLtMatmulAlgo_t>> otherAlgorithms_;
};

cublasStatus_t MatmulCall::heuristic(const Alignments &al, uint64_t maxWorkspace,
                                     std::optional<cublasLtMatmulHeuristicResult_t> &out,
                                     const char *&fn) {
  LtPreference pref(lt_.cublasLtMatmulPreferenceDestroy);
#define GC_TRY(f, ...)                                                                             \
  if (cublasStatus_t s_ = lt_.f(__VA_ARGS__); s_ != CUBLAS_STATUS_SUCCESS) {                       \
    fn = #f;                                                                                       \
    return s_;                                                                                     \
  }
  GC_TRY(cublasLtMatmulPreferenceCreate, &pref.h)
  GC_TRY(cublasLtMatmulPreferenceSetAttribute, pref.h, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
         &maxWorkspace, sizeof maxWorkspace)
  std::pair<cublasLtMatmulPreferenceAttributes_t, uint32_t> aligned[] = {
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, al.a},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, al.b},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, al.c},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, al.d}};
  for (auto &[attr, bytes] : aligned)
    GC_TRY(cublasLtMatmulPreferenceSetAttribute, pref.h, attr, &bytes, sizeof bytes)
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  GC_TRY(cublasLtMatmulAlgoGetHeuristic, handle_, desc_.h, layouts_[0].h, layouts_[1].h,
         add_ ? layouts_[2].h : layouts_[3].h, layouts_[3].h, pref.h, 1, &result, &found)
#undef GC_TRY
  out.reset();
  if (found > 0 && result.state == CUBLAS_STATUS_SUCCESS)
    out = result;
  return CUBLAS_STATUS_SUCCESS;
}

Outcome MatmulCall::init(const MatmulProblem &p, const CudaLibraryOptions &options,
                        Handles &handles) {
  const StridedLayout &a = p.a, &b = p.b, &d = p.d;
  size_t rank = d.sizes.size();
  if ((rank != 2 && rank != 3) || a.sizes.size() != rank || b.sizes.size() != rank)
    return false;
  int64_t m = d.sizes[rank - 2], n = d.sizes[rank - 1], k = a.sizes[rank - 1];
  int64_t batch = rank == 3 ? d.sizes[0] : 1;
  if (a.sizes[rank - 2] != m || b.sizes[rank - 2] != k || b.sizes[rank - 1] != n ||
      (rank == 3 && (a.sizes[0] != batch || b.sizes[0] != batch)) || batch > INT32_MAX)
    return false;
  const MatmulEpilogue &epilogue = p.epilogue;
  std::optional<MatrixView> av = matrixView(a), bv = matrixView(b), dv = matrixView(d);
  if (!av || !bv || !dv)
    return false;
  auto batchStride = [&](const StridedLayout &l) {
    return rank == 3 && batch > 1 ? l.strides[0] : 0;
  };
  if (batch > 1 && batchStride(d) == 0)
    return false;

  // D row-major: D^T = B^T A^T. D column-major: D = A B.
  bool t = dv->rowMajor;
  LtOperand ops[4] = {t ? operandFor(*bv, true, n, k) : operandFor(*av, false, m, k),
                      t ? operandFor(*av, true, k, m) : operandFor(*bv, false, k, n),
                      {},
                      operandFor(*dv, t, t ? n : m, t ? m : n)};
  ops[0].batchStride = batchStride(t ? b : a);
  ops[1].batchStride = batchStride(t ? a : b);
  ops[3].batchStride = batchStride(d);
  places_[0] = t ? p.bPlace : p.aPlace;
  places_[1] = t ? p.aPlace : p.bPlace;
  places_[3] = p.dPlace;
  if (epilogue.add) {
    // C reads like D, with leading dimension and batch stride of its own.
    const StridedLayout &c = p.c;
    std::optional<MatrixView> cv = matrixView(c);
    if (c.sizes != d.sizes || !cv || cv->rowMajor != dv->rowMajor)
      return false;
    ops[2] = ops[3];
    ops[2].ld = cv->ld;
    ops[2].batchStride = batchStride(c);
    places_[2] = p.cPlace;
    add_ = true;
  }
  if (epilogue.bias) {
    // The epilogue adds a packed vector along D's stored rows: D^T's.
    const StridedLayout &bias = p.bias;
    if (!t || bias.sizes != std::vector<int64_t>{n} || (n > 1 && bias.strides[0] != 1))
      return false;
    bias_ = p.biasPlace;
  }
  for (const LtOperand &o : ops)
    if (o.batchStride < 0)
      return false;

  // Half-precision operands go to the tensor cores as they are, with
  // float32 accumulation and float32 scalars (bias and C of D's dtype);
  // TF32 concerns float32 operands only.
  cudaDataType type = precision_.ltType();
  cudaDataType scaleType = precision_.wide() ? CUDA_R_64F : CUDA_R_32F;
  bool tf32 = options.allowTF32 && !precision_.half();
  cublasComputeType_t compute = precision_.wide() ? CUBLAS_COMPUTE_64F
                                : tf32            ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                  : CUBLAS_COMPUTE_32F;
  for (int i = 0; i < 4; ++i) {
    if (i == 2 && !add_)
      continue;
    LtLayout &l = layouts_[i];
    int32_t count = static_cast<int32_t>(batch);
    GC_PREPARE(lt_, cublasLtMatrixLayoutCreate, &l.h, type, ops[i].rows, ops[i].cols, ops[i].ld);
    GC_PREPARE(lt_, cublasLtMatrixLayoutSetAttribute, l.h, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
               &count, sizeof count);
    GC_PREPARE(lt_, cublasLtMatrixLayoutSetAttribute, l.h,
               CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &ops[i].batchStride,
               sizeof ops[i].batchStride);
  }
  GC_PREPARE(lt_, cublasLtMatmulDescCreate, &desc_.h, compute, scaleType);
  std::pair<cublasLtMatmulDescAttributes_t, int32_t> attrs[] = {
      {CUBLASLT_MATMUL_DESC_TRANSA, ops[0].op},
      {CUBLASLT_MATMUL_DESC_TRANSB, ops[1].op},
      {CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue.kind}};
  for (auto &[attr, value] : attrs)
    GC_PREPARE(lt_, cublasLtMatmulDescSetAttribute, desc_.h, attr, &value, sizeof value);

  // The heuristic reads the operands' alignment from the preferences, and
  // the bias's from its pointer: an address of the alignment it will have.
  auto offsetAlignment = [](const Place &p) { return alignmentOf(uint64_t(p.byteOffset)); };
  assumed_ = {offsetAlignment(places_[0]), offsetAlignment(places_[1]),
              offsetAlignment(add_ ? places_[2] : places_[3]), offsetAlignment(places_[3]), 256};
  if (bias_) {
    assumed_.bias = offsetAlignment(*bias_);
    const void *standIn = reinterpret_cast<const void *>(uintptr_t(assumed_.bias));
    GC_PREPARE(lt_, cublasLtMatmulDescSetAttribute, desc_.h, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
               &standIn, sizeof standIn);
  }
  Expected<cublasLtHandle_t> handle = handles.lt();
  if (!handle)
    return handle.error();
  handle_ = *handle;
  std::optional<cublasLtMatmulHeuristicResult_t> found;
  const char *fn = nullptr;
  if (cublasStatus_t s = heuristic(assumed_, kWorkspaceLimit, found, fn))
    return refusedOr(s, fn);
  if (!found)
    return false;
  algo_ = found->algo;
  workspace_ = found->workspaceSize;
  return true;
}

//===----------------------------------------------------------------------===//
// Convolutions (cuDNN)
//===----------------------------------------------------------------------===//

/// A layout as cuDNN's int dimensions, with a unit dimension put before the
/// last when `unitHeight` (a 1-d convolution's tensors, run as 2-d ones).
struct DnnShape {
  std::vector<int> dims, strides;
};

std::optional<DnnShape> dnnShape(const std::vector<int64_t> &sizes,
                                 const std::vector<int64_t> &strides, bool unitHeight) {
  DnnShape s;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] > INT_MAX || strides[i] < 0 || strides[i] > INT_MAX)
      return std::nullopt;
    if (unitHeight && i + 1 == sizes.size()) {
      s.dims.push_back(1);
      s.strides.push_back(static_cast<int>(std::min<int64_t>(sizes[i] * strides[i], INT_MAX)));
    }
    s.dims.push_back(static_cast<int>(sizes[i]));
    s.strides.push_back(static_cast<int>(strides[i]));
  }
  return s;
}

class ConvolutionCall final : public CudaLibraryCall {
public:
  ConvolutionCall(const Cudnn &dnn, Precision precision)
      : dnn_(dnn), x_(dnn.cudnnDestroyTensorDescriptor), y_(dnn.cudnnDestroyTensorDescriptor),
        w_(dnn.cudnnDestroyFilterDescriptor), conv_(dnn.cudnnDestroyConvolutionDescriptor),
        relu_(dnn.cudnnDestroyActivationDescriptor), precision_(precision) {
    scalars_.wide = precision.wide();
  }

  /// Describes the convolution and its epilogue: false when cuDNN refuses.
  Outcome init(const Views &v, const CudaLibraryOptions &options, Handles &handles);

  uint64_t workspaceBytes() const override { return workspace_; }

  Error enqueue(const uint64_t *buffers, void *stream, uint64_t workspace) override {
    auto at = [&](const Place &p) { return reinterpret_cast<void *>(p.address(buffers)); };
    void *y = at(yPlace_);
    GC_RUN(dnn_, cudnnSetStream, handle_, static_cast<cudaStream_t>(stream));
    GC_RUN(dnn_, cudnnConvolutionForward, handle_, scalars_.one(), x_.h, at(xPlace_), w_.h,
           at(wPlace_), conv_.h, algo_, reinterpret_cast<void *>(workspace), workspace_,
           scalars_.zero(), y_.h, y);
    for (const Step &s : steps_) {
      if (s.add)
        GC_RUN(dnn_, cudnnAddTensor, handle_, scalars_.one(), s.add->h, at(s.place), scalars_.one(),
               y_.h, y);
      else
        GC_RUN(dnn_, cudnnActivationForward, handle_, relu_.h, scalars_.one(), y_.h, y,
               scalars_.zero(), y_.h, y);
    }
    return Error::success();
  }

private:
  /// An epilogue step on the result: adds the tensor `add` describes, or
  /// applies ReLU.
  struct Step {
    std::optional<TensorDesc> add;
    Place place;
  };

  Outcome setTensor(TensorDesc &d, const std::vector<int64_t> &sizes,
                    const std::vector<int64_t> &strides, bool unitHeight);

  const Cudnn &dnn_;
  cudnnHandle_t handle_ = nullptr;
  TensorDesc x_, y_;
  FilterDesc w_;
  ConvDesc conv_;
  ActivationDesc relu_;
  Place xPlace_, wPlace_, yPlace_;
  std::vector<Step> steps_;
  Precision precision_;
  Scalars scalars_;
  cudnnConvolutionFwdAlgo_t algo_ = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  uint64_t workspace_ = 0;
};

Outcome ConvolutionCall::setTensor(TensorDesc &d, const std::vector<int64_t> &sizes,
                                   const std::vector<int64_t> &strides, bool unitHeight) {
  std::optional<DnnShape> s = dnnShape(sizes, strides, unitHeight);
  if (!s)
    return false;
  GC_PREPARE(dnn_, cudnnCreateTensorDescriptor, &d.h);
  GC_PREPARE(dnn_, cudnnSetTensorNdDescriptor, d.h, precision_.dnnType(), int(s->dims.size()),
             s->dims.data(), s->strides.data());
  return true;
}

Outcome ConvolutionCall::init(const Views &v, const CudaLibraryOptions &options, Handles &handles) {
  const plan::DnnlCall &call = *v.step.dnnl();
  size_t xi = call.src(), wi = call.weights();
  if (xi >= v.inputs.size() || wi >= v.inputs.size())
    return false;
  const StridedLayout &x = v.inputs[xi], &w = v.inputs[wi], &y = v.outputs[0];
  size_t rank = x.sizes.size(), spatial = rank - 2;
  if (rank < 3 || rank > 5 || w.sizes.size() != rank || y.sizes.size() != rank)
    return false;
  int64_t groups = call.groups(), outChannels = w.sizes[0];
  auto count = [](const flatbuffers::Vector<int64_t> *v) { return v ? v->size() : 0; };
  if (count(call.stride()) != spatial || count(call.padding()) != spatial ||
      count(call.dilation()) != spatial || groups < 1 || groups > INT_MAX ||
      outChannels % groups != 0 || x.sizes[1] != w.sizes[1] * groups || y.sizes[1] != outChannels)
    return false;
  // The filter must be dense in [K, C/g, spatial...] order.
  for (int64_t i = int64_t(rank) - 1, dense = 1; i >= 0; dense *= w.sizes[i], --i)
    if (w.sizes[i] != 1 && w.strides[i] != dense)
      return false;

  bool unitHeight = spatial == 1;
  std::vector<int> pad, stride, dilation;
  if (unitHeight)
    pad = {0}, stride = {1}, dilation = {1};
  for (size_t i = 0; i < spatial; ++i) {
    int64_t p = call.padding()->Get(i), s = call.stride()->Get(i), d = call.dilation()->Get(i);
    if (p < 0 || p > INT_MAX || s < 1 || s > INT_MAX || d < 1 || d > INT_MAX)
      return false;
    pad.push_back(int(p)), stride.push_back(int(s)), dilation.push_back(int(d));
  }

  // The epilogue, checked before any library call: the bias, then the
  // post-ops in order, each adding a tensor (the bias seen as [1, K, 1...])
  // or applying ReLU.
  struct Planned {
    std::optional<size_t> add; ///< input added; none: ReLU
    std::vector<int64_t> sizes, strides;
  };
  std::vector<Planned> planned;
  auto bias = [&](size_t i) {
    const StridedLayout &b = v.inputs[i];
    if (b.sizes != std::vector<int64_t>{outChannels})
      return false;
    Planned p{i, std::vector<int64_t>(rank, 1), std::vector<int64_t>(rank, 1)};
    p.sizes[1] = outChannels;
    p.strides[1] = b.strides[0];
    p.strides[0] = outChannels * b.strides[0];
    planned.push_back(std::move(p));
    return true;
  };
  if (call.bias() >= 0 && (size_t(call.bias()) >= v.inputs.size() || !bias(size_t(call.bias()))))
    return false;
  const auto *postOps = call.post_ops();
  for (size_t k = 0; postOps && k < postOps->size(); ++k) {
    const plan::PostOp &p = *postOps->Get(k);
    if (p.kind() != plan::PostOpKind::Relu && p.input() >= v.inputs.size())
      return false;
    switch (p.kind()) {
    case plan::PostOpKind::AddBias:
      if (!bias(p.input()))
        return false;
      break;
    case plan::PostOpKind::Add:
      if (v.inputs[p.input()].sizes != y.sizes)
        return false;
      planned.push_back({p.input(), y.sizes, v.inputs[p.input()].strides});
      break;
    case plan::PostOpKind::Relu:
      planned.push_back({});
      break;
    case plan::PostOpKind::GeluErf:
    case plan::PostOpKind::GeluTanh:
    case plan::PostOpKind::Swish:
      return false; // of cuDNN's legacy activations, only ReLU is set up here
    case plan::PostOpKind::GatedSilu:
      return false; // a matrix product's alone
    }
  }

  xPlace_ = v.input(xi), wPlace_ = v.input(wi), yPlace_ = v.output();
  if (Outcome done = setTensor(x_, x.sizes, x.strides, unitHeight); !done || !*done)
    return done;
  if (Outcome done = setTensor(y_, y.sizes, y.strides, unitHeight); !done || !*done)
    return done;
  std::optional<DnnShape> filter = dnnShape(w.sizes, w.strides, unitHeight);
  if (!filter)
    return false;
  GC_PREPARE(dnn_, cudnnCreateFilterDescriptor, &w_.h);
  GC_PREPARE(dnn_, cudnnSetFilterNdDescriptor, w_.h, precision_.dnnType(), CUDNN_TENSOR_NCHW,
             int(filter->dims.size()), filter->dims.data());
  GC_PREPARE(dnn_, cudnnCreateConvolutionDescriptor, &conv_.h);
  GC_PREPARE(dnn_, cudnnSetConvolutionNdDescriptor, conv_.h, int(pad.size()), pad.data(),
             stride.data(), dilation.data(), CUDNN_CROSS_CORRELATION,
             precision_.dnnComputeType());
  GC_PREPARE(dnn_, cudnnSetConvolutionGroupCount, conv_.h, int(groups));
  // Default math lets float32 use TF32 tensor cores; FMA math keeps full
  // float32 precision. Half precision takes the tensor cores, accumulating
  // in float32 (the compute type above).
  GC_PREPARE(dnn_, cudnnSetConvolutionMathType, conv_.h,
             precision_.half()   ? CUDNN_TENSOR_OP_MATH
             : options.allowTF32 ? CUDNN_DEFAULT_MATH
                                 : CUDNN_FMA_MATH);
  std::vector<int> outDims(filter->dims.size());
  GC_PREPARE(dnn_, cudnnGetConvolutionNdForwardOutputDim, conv_.h, x_.h, w_.h, int(outDims.size()),
             outDims.data());
  if (std::optional<DnnShape> want = dnnShape(y.sizes, y.strides, unitHeight);
      !want || want->dims != outDims)
    return false;
  for (Planned &p : planned) {
    Step step{std::nullopt, {}};
    if (p.add) {
      step.add.emplace(dnn_.cudnnDestroyTensorDescriptor);
      step.place = v.input(*p.add);
      if (Outcome done = setTensor(*step.add, p.sizes, p.strides, unitHeight); !done || !*done)
        return done;
    } else if (!relu_.h) {
      GC_PREPARE(dnn_, cudnnCreateActivationDescriptor, &relu_.h);
      // NaN stays NaN, as torch's relu keeps it.
      GC_PREPARE(dnn_, cudnnSetActivationDescriptor, relu_.h, CUDNN_ACTIVATION_RELU,
                 CUDNN_PROPAGATE_NAN, 0.0);
    }
    steps_.push_back(std::move(step));
  }

  // The first algorithm cuDNN's heuristic ranks, within the workspace limit.
  Expected<cudnnHandle_t> handle = handles.dnn();
  if (!handle)
    return handle.error();
  handle_ = *handle;
  cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT] = {};
  int found = 0;
  GC_PREPARE(dnn_, cudnnGetConvolutionForwardAlgorithm_v7, handle_, x_.h, w_.h, conv_.h, y_.h,
             CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found, perf);
  const cudnnConvolutionFwdAlgoPerf_t *chosen = nullptr;
  for (int i = 0; i < found && !chosen; ++i)
    if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= kWorkspaceLimit)
      chosen = &perf[i];
  if (!chosen)
    return false;
  algo_ = chosen->algo;
  size_t workspace = 0;
  GC_PREPARE(dnn_, cudnnGetConvolutionForwardWorkspaceSize, handle_, x_.h, w_.h, conv_.h, y_.h,
             algo_, &workspace);
  workspace_ = workspace;
  return true;
}

} // namespace

//===----------------------------------------------------------------------===//
// CudaLibraries
//===----------------------------------------------------------------------===//

struct CudaLibraries::Impl {
  CudaLibraryOptions options;
  Handles handles;
};

CudaLibraries::CudaLibraries(CudaLibraryOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = options;
}
CudaLibraries::~CudaLibraries() = default;

namespace {

/// Prepares `call`: the call, null when refused, or an error.
template <typename Call, typename Problem>
Prepared prepared(std::unique_ptr<Call> call, const Problem &problem,
                  const CudaLibraryOptions &options, Handles &handles) {
  Outcome done = call->init(problem, options, handles);
  if (!done)
    return done.error();
  if (!*done)
    return declined();
  return std::unique_ptr<CudaLibraryCall>(std::move(call));
}

} // namespace

Expected<std::unique_ptr<CudaLibraryCall>>
CudaLibraries::prepare(const plan::OpStep &step, const std::vector<StridedLayout> &inputs,
                       const std::vector<StridedLayout> &outputs) {
  Views v{step, inputs, outputs};
  if (!step.dnnl() || !v.usable())
    return declined();
  const Libraries &libs = libraries();
  switch (step.dnnl()->primitive()) {
  case plan::DnnlPrimitive::Matmul: {
    std::optional<MatmulProblem> product = productProblem(v);
    if (!libs.lt.problem.empty() || !product)
      return declined();
    return prepared(std::make_unique<MatmulCall>(libs.lt.api, v.precision), *product,
                    impl_->options, impl_->handles);
  }
  case plan::DnnlPrimitive::Convolution:
    // A pointwise convolution goes to cuBLASLt where it takes it.
    if (std::optional<MatmulProblem> product = pointwiseConvolutionProblem(v);
        product && libs.lt.problem.empty()) {
      Prepared call = prepared(std::make_unique<MatmulCall>(libs.lt.api, v.precision), *product,
                               impl_->options, impl_->handles);
      if (!call || *call)
        return call;
    }
    if (!libs.dnn.problem.empty())
      return declined();
    return prepared(std::make_unique<ConvolutionCall>(libs.dnn.api, v.precision), v, impl_->options,
                    impl_->handles);
  }
  return declined();
}

std::string CudaLibraries::describe() const {
  const Libraries &libs = libraries();
  auto one = [](const char *title, const auto &lib) {
    return lib.problem.empty() ? std::string(title) + " " + lib.version
                               : std::string("no ") + title + " (" + lib.problem + ")";
  };
  return one("cuBLASLt", libs.lt) + ", " + one("cuDNN", libs.dnn);
}

} // namespace gc

#endif // GC_CUDA_LIBRARY_HEADERS
