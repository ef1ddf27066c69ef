//===- FewRowProduct.cpp - Products of a few rows with weights in place ---===//
//
// The left operand (at most kFewRowsMax rows) is first widened into a
// float32 scratch matrix: it is small beside the weight and then stays in
// cache. The weight's rows are split over the threads in tiles of
// kTileRows; for each tile, every block of left rows (as many as the
// level's registers hold with the tile, or with half of it) runs down K
// with one vector accumulator per (row, weight row) pair, so the tile is
// read from memory once and from cache for the other blocks. bfloat16
// weights are read as 32-bit words, each holding two elements that a
// shift and a mask make float32, against the left rows with their even
// and odd elements split apart to match. Each task then applies the
// post-ops to its columns and stores them in the output's type. The loops
// use GCC's vector extensions, compiled for x86-64-v4, v3 and the
// baseline; the host's level (or $GC_CPU_TARGET, as for a package's
// kernels) picks one.
//
//===----------------------------------------------------------------------===//
#include "FewRowProduct.h"

#include "BFloat16.h"

#include "gc/Support/Target.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

namespace gc {

namespace {

#pragma GCC diagnostic ignored "-Wpsabi" // vectors never cross a call between levels

#define GC_INLINE inline __attribute__((always_inline))

/// Weight rows per tile and per parallel task unit: eight streams of
/// weight rows in flight per thread (four read bfloat16 rows at 80% of a
/// plain sum's rate on one Zen 5 core, eight at 92%: fewrow-bench).
constexpr int64_t kTileRows = 8;

typedef float Floats16 __attribute__((vector_size(64)));
typedef float Floats8 __attribute__((vector_size(32)));
typedef float Floats4 __attribute__((vector_size(16)));
typedef uint32_t Words16 __attribute__((vector_size(64)));
typedef uint32_t Words8 __attribute__((vector_size(32)));
typedef uint32_t Words4 __attribute__((vector_size(16)));

GC_INLINE float widen(float x) { return x; }
GC_INLINE float widen(uint16_t x) { return widenBFloat16(x); }

/// One CPU level: its float vector, the 32-bit vector of the same lane
/// count (an attribute on a dependent type would be dropped, so it is
/// spelled out), and the left rows per block against a tile of kTileRows
/// weight rows (Wide) and against half a tile (Rows): accumulators are
/// rows x weight rows vectors, in 32 registers with AVX-512 and 16 below.
///
/// bfloat16 weights are read in blocks of 2W elements, W 32-bit words of
/// two elements each, in one of two forms:
/// - split (every level): a word's lower half shifted up is its even
///   element, the word masked its odd one, each exactly a float32; the
///   left rows hold each block's W even elements, then its W odd ones, in
///   float32. (GCC widens 16 bfloat16 to a 512-bit vector in two halves
///   re-joined, twice the work, and the product was bound by it.)
/// - Dot (x86-64-v4 on CPUs with AVX-512 BF16): vdpbf16ps multiplies the
///   pairs in place, against left rows in bfloat16 in their own order:
///   fewer instructions, which two threads sharing a Zen 5 core's
///   neighbour need (fewrow-bench: 43 -> 49 GB/s on 2 threads).
/// Both add a pair's odd product and then its even one to its lane, each
/// rounded to float32 (the instruction's order; the products are exact),
/// so the two forms give the same sums but where a product is subnormal
/// (which the instruction flushes to zero).
template <typename F, typename W, int Rows, int Wide, bool Dot = false> struct Level {
  using Vec = F;
  using Words = W;
  static constexpr int kWidth = sizeof(F) / sizeof(float), kRows = Rows, kWideRows = Wide;
  static constexpr int64_t kBlock = 2 * kWidth;
  /// A left element beside bfloat16 weights.
  using Left = std::conditional_t<Dot, uint16_t, float>;

  static GC_INLINE Vec load(const float *p) {
    Vec v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  static GC_INLINE float sum(Vec v) {
    float s = 0;
    for (int i = 0; i < kWidth; ++i)
      s += v[i];
    return s;
  }

  /// A block of bfloat16 weights as `dot` takes them: the even and odd
  /// elements (split), or the words as they are in `even` (Dot).
  struct Pairs {
    Vec even, odd;
  };
  static GC_INLINE Pairs loadPairs(const uint16_t *w) {
    Words words;
    std::memcpy(&words, w, sizeof words);
    Pairs p;
    if constexpr (Dot) {
      std::memcpy(&p.even, &words, sizeof words);
    } else {
      Words lo = words << 16, hi = words & 0xffff0000u;
      std::memcpy(&p.even, &lo, sizeof lo);
      std::memcpy(&p.odd, &hi, sizeof hi);
    }
    return p;
  }
  /// acc plus the products of the left block at `a` with the weights `p`.
  static GC_INLINE Vec dot(Vec acc, const Left *a, const Pairs &p) {
    if constexpr (Dot) {
      Vec pairs;
      std::memcpy(&pairs, a, sizeof pairs);
      // Inline assembly: an intrinsic would need the target on every
      // template between here and the level's entry point.
      asm("vdpbf16ps %2, %1, %0" : "+v"(acc) : "v"(pairs), "v"(p.even));
    } else {
      acc += load(a + kWidth) * p.odd;
      acc += load(a) * p.even;
    }
    return acc;
  }
  /// Element j of a left row of length k in the level's form.
  static GC_INLINE float leftAt(const Left *a, int64_t j, int64_t k) {
    if constexpr (!Dot)
      if (j < k / kBlock * kBlock) {
        int64_t within = j % kBlock;
        return a[j - within + (within & 1) * kWidth + within / 2];
      }
    return widen(a[j]);
  }
  /// `rows` left rows (stride lda; bfloat16 values in float32) in the
  /// level's form, with stride k, into `to`.
  static GC_INLINE void prepareLeft(const float *a, int64_t lda, int64_t rows, int64_t k,
                                    Left *to) {
    for (int64_t m = 0; m < rows; ++m, to += k) {
      const float *from = a + m * lda;
      int64_t i = 0;
      if constexpr (Dot) {
        for (; i < k; ++i) // exact: the values are bfloat16's
          to[i] = static_cast<uint16_t>(std::bit_cast<uint32_t>(from[i]) >> 16);
      } else {
        for (; i + kBlock <= k; i += kBlock)
          for (int64_t j = 0; j < kWidth; ++j) {
            to[i + j] = from[i + 2 * j];
            to[i + kWidth + j] = from[i + 2 * j + 1];
          }
        for (; i < k; ++i)
          to[i] = from[i];
      }
    }
  }
};
using LevelV4 = Level<Floats16, Words16, 4, 2>;
using LevelV4Dot = Level<Floats16, Words16, 4, 2, true>;
using LevelV3 = Level<Floats8, Words8, 2, 1>;
using LevelBase = Level<Floats4, Words4, 2, 1>;

/// The left operand's element beside weights of type T.
template <typename L, typename T>
using LeftOf = std::conditional_t<std::is_same_v<T, uint16_t>, typename L::Left, float>;

template <typename L, typename T>
GC_INLINE float leftValue(const LeftOf<L, T> *a, int64_t j, int64_t k) {
  if constexpr (std::is_same_v<T, uint16_t>)
    return L::leftAt(a, j, k);
  else
    return a[j];
}

/// Rows x NR dot products of length k: left rows a (stride lda, in the
/// level's form) by weight rows w (stride ldw), into out (row stride ldo).
template <typename L, typename T, int Rows, int NR>
GC_INLINE void tile(const LeftOf<L, T> *a, int64_t lda, int64_t k, const T *w, int64_t ldw,
                    float *out, int64_t ldo) {
  using Vec = typename L::Vec;
  Vec acc[Rows][NR] = {};
  int64_t i = 0;
  if constexpr (std::is_same_v<T, uint16_t>) {
    for (; i + L::kBlock <= k; i += L::kBlock) {
      typename L::Pairs p[NR];
      for (int r = 0; r < NR; ++r)
        p[r] = L::loadPairs(w + r * ldw + i);
      for (int m = 0; m < Rows; ++m)
        for (int r = 0; r < NR; ++r)
          acc[m][r] = L::dot(acc[m][r], a + m * lda + i, p[r]);
    }
  } else {
    for (; i + L::kWidth <= k; i += L::kWidth) {
      Vec wv[NR];
      for (int r = 0; r < NR; ++r)
        wv[r] = L::load(w + r * ldw + i);
      for (int m = 0; m < Rows; ++m) {
        Vec av = L::load(a + m * lda + i);
        for (int r = 0; r < NR; ++r)
          acc[m][r] += av * wv[r];
      }
    }
  }
  float tail[Rows][NR] = {};
  for (; i < k; ++i)
    for (int m = 0; m < Rows; ++m)
      for (int r = 0; r < NR; ++r)
        tail[m][r] += leftValue<L, T>(a + m * lda, i, k) * widen(w[r * ldw + i]);
  for (int m = 0; m < Rows; ++m)
    for (int r = 0; r < NR; ++r)
      out[m * ldo + r] = L::sum(acc[m][r]) + tail[m][r];
}

/// One left row (in the level's form) by NR bfloat16 weight rows, one
/// weight row after the other, each read down K as a single stream (U
/// blocks a step, one accumulator each). On one Zen 5 core this reads at
/// a plain sum's rate where eight rows read side by side reach 90% of it;
/// with two left rows and more, the side-by-side tile, which loads each
/// weight block once for all of them, is faster (fewrow-bench).
template <typename L, int NR>
GC_INLINE void streamRow(const typename L::Left *a, int64_t k, const uint16_t *w, int64_t ldw,
                         float *out) {
  using Vec = typename L::Vec;
  constexpr int64_t U = 4;
  for (int r = 0; r < NR; ++r) {
    const uint16_t *wr = w + r * ldw;
    Vec acc[U] = {};
    int64_t i = 0;
    for (; i + L::kBlock * U <= k; i += L::kBlock * U)
      for (int u = 0; u < U; ++u)
        acc[u] = L::dot(acc[u], a + i + L::kBlock * u, L::loadPairs(wr + i + L::kBlock * u));
    float tail = 0;
    for (; i < k; ++i)
      tail += L::leftAt(a, i, k) * widen(wr[i]);
    Vec all = acc[0];
    for (int u = 1; u < U; ++u)
      all += acc[u];
    out[r] = L::sum(all) + tail;
  }
}

/// A tile of NR weight rows against `rows` left rows (at most L::kWideRows
/// for a whole tile, L::kRows for less).
template <typename L, typename T, int NR>
GC_INLINE void tileRows(int64_t rows, const LeftOf<L, T> *a, int64_t lda, int64_t k, const T *w,
                        int64_t ldw, float *out, int64_t ldo) {
  // Whole tiles take at most kWideRows rows, half tiles kRows.
  constexpr int most = NR == kTileRows ? L::kWideRows : L::kRows;
  switch (rows) {
  case 1:
    return tile<L, T, 1, NR>(a, lda, k, w, ldw, out, ldo);
  case 2:
    if constexpr (most >= 2)
      return tile<L, T, 2, NR>(a, lda, k, w, ldw, out, ldo);
    break;
  case 3:
    if constexpr (most >= 3)
      return tile<L, T, 3, NR>(a, lda, k, w, ldw, out, ldo);
    break;
  case 4:
    if constexpr (most >= 4)
      return tile<L, T, 4, NR>(a, lda, k, w, ldw, out, ldo);
    break;
  }
}

template <typename L, typename T>
GC_INLINE void product(const LeftOf<L, T> *a, int64_t rows, int64_t k, const T *w, int64_t ldw,
                       float *out, int64_t ldo, int64_t nBegin, int64_t nEnd) {
  int64_t lda = k;
  for (int64_t n = nBegin; n < nEnd;) {
    bool whole = n + kTileRows <= nEnd;
    for (int64_t m = 0; m < rows; m += L::kRows) {
      int64_t block = std::min<int64_t>(L::kRows, rows - m);
      const LeftOf<L, T> *am = a + m * lda;
      float *o = out + m * ldo + n;
      const T *wn = w + n * ldw;
      constexpr int64_t half = kTileRows / 2;
      if constexpr (std::is_same_v<T, uint16_t>)
        if (whole && block == 1) {
          streamRow<L, kTileRows>(am, k, wn, ldw, o);
          continue;
        }
      if (whole && block <= L::kWideRows) {
        tileRows<L, T, kTileRows>(block, am, lda, k, wn, ldw, o, ldo);
      } else if (whole) {
        tileRows<L, T, half>(block, am, lda, k, wn, ldw, o, ldo);
        tileRows<L, T, half>(block, am, lda, k, wn + half * ldw, ldw, o + half, ldo);
      } else {
        tileRows<L, T, 1>(block, am, lda, k, wn, ldw, o, ldo);
      }
    }
    n += whole ? kTileRows : 1;
  }
}

template <typename L>
GC_INLINE void prepareOf(const float *a, int64_t lda, int64_t rows, int64_t k, bool bf16,
                         void *left) {
  if (bf16) {
    L::prepareLeft(a, lda, rows, k, static_cast<typename L::Left *>(left));
    return;
  }
  for (int64_t m = 0; m < rows; ++m)
    std::memcpy(static_cast<float *>(left) + m * k, a + m * lda, k * sizeof(float));
}

template <typename L>
GC_INLINE void productOf(const void *left, int64_t rows, int64_t k, const void *w, int64_t ldw,
                         bool bf16, float *out, int64_t ldo, int64_t nBegin, int64_t nEnd) {
  if (bf16)
    product<L>(static_cast<const typename L::Left *>(left), rows, k,
               static_cast<const uint16_t *>(w), ldw, out, ldo, nBegin, nEnd);
  else
    product<L>(static_cast<const float *>(left), rows, k, static_cast<const float *>(w), ldw, out,
               ldo, nBegin, nEnd);
}

// One copy per CPU level; the ISA lists are x86-64-v4's and v3's.
#define GC_X86_64_V4                                                                               \
  "avx512f,avx512bw,avx512cd,avx512dq,avx512vl,avx2,fma,bmi,bmi2,lzcnt,movbe,f16c"
#define GC_X86_64_V3 "avx2,fma,bmi,bmi2,lzcnt,movbe,f16c"
#define GC_FEW_ROW_LEVEL(NAME, LEVEL, ...)                                                         \
  __VA_ARGS__ void NAME##Prepare(const float *a, int64_t lda, int64_t rows, int64_t k, bool bf16,  \
                                 void *left) {                                                     \
    prepareOf<LEVEL>(a, lda, rows, k, bf16, left);                                                 \
  }                                                                                                \
  __VA_ARGS__ void NAME##Run(const void *left, int64_t rows, int64_t k, const void *w,             \
                             int64_t ldw, bool bf16, float *out, int64_t ldo, int64_t nBegin,      \
                             int64_t nEnd) {                                                       \
    productOf<LEVEL>(left, rows, k, w, ldw, bf16, out, ldo, nBegin, nEnd);                         \
  }                                                                                                \
  constexpr FewRowLevel NAME{NAME##Prepare, NAME##Run};
GC_FEW_ROW_LEVEL(levelV4, LevelV4, __attribute__((target(GC_X86_64_V4))))
GC_FEW_ROW_LEVEL(levelV4Dot, LevelV4Dot, __attribute__((target(GC_X86_64_V4))))
GC_FEW_ROW_LEVEL(levelV3, LevelV3, __attribute__((target(GC_X86_64_V3))))
GC_FEW_ROW_LEVEL(levelBase, LevelBase)

/// A 2-d view of one operand: element (r, c) of buffer `buffer` at
/// offset + r * rowStride + c * colStride.
struct Matrix {
  uint32_t buffer = 0;
  int64_t offset = 0, rowStride = 0, colStride = 0;
  bool bf16 = false;

  const char *at(char *const *buffers, int64_t r, int64_t c) const {
    return buffers[buffer] + (offset + r * rowStride + c * colStride) * (bf16 ? 2 : 4);
  }
  float get(char *const *buffers, int64_t r, int64_t c) const {
    const char *p = at(buffers, r, c);
    if (bf16) {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return widen(h);
    }
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  void set(char *const *buffers, int64_t r, int64_t c, float v) const {
    char *p = const_cast<char *>(at(buffers, r, c));
    if (bf16) {
      uint16_t h = narrowToBFloat16(v);
      std::memcpy(p, &h, 2);
    } else {
      std::memcpy(p, &v, 4);
    }
  }
};

/// A post-op as the epilogue applies it; AddBias and Add read `operand`
/// (a bias is a matrix of row stride 0).
struct Epilogue {
  plan::PostOpKind kind;
  bool reads = false;
  Matrix operand;
};

float apply(plan::PostOpKind kind, float x, float operand) {
  switch (kind) {
  case plan::PostOpKind::AddBias:
  case plan::PostOpKind::Add:
    return x + operand;
  case plan::PostOpKind::Relu:
    return x > 0 ? x : 0;
  case plan::PostOpKind::GeluErf:
    return 0.5f * x * (1 + std::erf(x * 0.70710678f));
  case plan::PostOpKind::GeluTanh:
    return 0.5f * x * (1 + std::tanh(0.79788456f * (x + 0.044715f * x * x * x)));
  case plan::PostOpKind::Swish:
    return x / (1 + std::exp(-x));
  case plan::PostOpKind::GatedSilu:
    break; // never planned (prepareFewRowProduct declines it)
  }
  return x;
}

class FewRowProduct final : public CpuCall {
public:
  FewRowProduct(Matrix a, Matrix w, Matrix out, int64_t rows, int64_t k, int64_t n,
                std::vector<Epilogue> epilogue, const ThreadPool &pool, FewRowKernel kernel)
      : a_(a), w_(w), out_(out), rows_(rows), k_(k), n_(n), epilogue_(std::move(epilogue)),
        pool_(pool), kernel_(kernel), left_(rows * k), sums_(rows * n) {}

  Error execute(char *const *buffers, ExternReorders *) override {
    for (int64_t m = 0; m < rows_; ++m)
      for (int64_t i = 0; i < k_; ++i)
        left_[m * k_ + i] = a_.get(buffers, m, i);
    runFewRowProduct(kernel_, pool_, left_.data(), k_, rows_, k_, w_.at(buffers, 0, 0),
                     w_.rowStride, w_.bf16, sums_.data(), n_, n_,
                     [&](int64_t nBegin, int64_t nEnd) {
                       for (int64_t m = 0; m < rows_; ++m)
                         for (int64_t c = nBegin; c < nEnd; ++c) {
                           float x = sums_[m * n_ + c];
                           for (const Epilogue &e : epilogue_)
                             x = apply(e.kind, x, e.reads ? e.operand.get(buffers, m, c) : 0.f);
                           out_.set(buffers, m, c, x);
                         }
                     });
    return Error::success();
  }

private:
  Matrix a_, w_, out_;
  int64_t rows_, k_, n_;
  std::vector<Epilogue> epilogue_;
  const ThreadPool &pool_;
  FewRowKernel kernel_;
  std::vector<float> left_, sums_;
};

/// The two matrix dims of `l` as a Matrix, when every dim before them
/// has size 1 (a batch of one).
std::optional<Matrix> matrixOf(const StridedLayout &l, const plan::View &v) {
  size_t rank = l.sizes.size();
  if (rank < 2)
    return std::nullopt;
  for (size_t d = 0; d + 2 < rank; ++d)
    if (l.sizes[d] != 1)
      return std::nullopt;
  return Matrix{v.buffer(), l.offset, l.strides[rank - 2], l.strides[rank - 1],
                v.dtype() == plan::DType::BFloat16};
}

} // namespace

void runFewRowProduct(FewRowKernel kernel, const ThreadPool &pool, const float *a, int64_t lda,
                      int64_t rows, int64_t k, const void *w, int64_t ldw, bool bf16, float *out,
                      int64_t ldo, int64_t n,
                      const std::function<void(int64_t, int64_t)> &done) {
  // Once per product, on the calling thread: the tasks share it.
  // (The tasks read it through `prepared`: in them `left` would name
  // their own thread's.)
  thread_local std::vector<float> left;
  left.resize(rows * k);
  kernel->prepare(a, lda, rows, k, bf16, left.data());
  const float *prepared = left.data();
  pool.parallelFor((n + kTileRows - 1) / kTileRows, [&](int64_t begin, int64_t end) {
    int64_t nBegin = begin * kTileRows, nEnd = std::min(end * kTileRows, n);
    kernel->run(prepared, rows, k, w, ldw, bf16, out, ldo, nBegin, nEnd);
    done(nBegin, nEnd);
  });
}

FewRowKernel fewRowKernel(std::string_view level, FewRowForm form) {
  if (level == "x86-64-v4") {
    __builtin_cpu_init();
    if (form == FewRowForm::Best && __builtin_cpu_supports("avx512bf16"))
      return &levelV4Dot;
    return &levelV4;
  }
  if (level == "x86-64-v3")
    return &levelV3;
  if (level == "x86-64")
    return &levelBase;
  return nullptr;
}

Expected<std::unique_ptr<CpuCall>> prepareFewRowProduct(const plan::OpStep &step,
                                                         const std::vector<StridedLayout> &inputs,
                                                         const std::vector<StridedLayout> &outputs,
                                                         const std::vector<bool> &constant,
                                                         std::string_view targets,
                                                         const ThreadPool &pool) {
  const plan::DnnlCall *call = step.dnnl();
  std::unique_ptr<CpuCall> none;
  // An RMSNorm of the left rows: the fallback computes it.
  if (!call || call->primitive() != plan::DnnlPrimitive::Matmul || outputs.size() != 1 ||
      call->rms_norm())
    return none;
  size_t ai = call->src(), wi = call->weights();
  if (ai >= inputs.size() || wi >= inputs.size() || wi >= constant.size() || !constant[wi])
    return none;
  // Float32 or bfloat16 operands, the left one of the weight's type (the
  // kernel packs both alike); the result and the post-ops' operands each
  // of either type (an epilogue may have widened a bfloat16 result).
  auto floating = [](plan::DType t) {
    return t == plan::DType::Float32 || t == plan::DType::BFloat16;
  };
  plan::DType type = step.inputs()->Get(wi)->dtype();
  if (!floating(step.outputs()->Get(0)->dtype()) || step.inputs()->Get(ai)->dtype() != type)
    return none;
  for (const plan::View *v : *step.inputs())
    if (!floating(v->dtype()))
      return none;
  const StridedLayout &out = outputs[0];
  std::optional<Matrix> a = matrixOf(inputs[ai], *step.inputs()->Get(ai));
  std::optional<Matrix> w = matrixOf(inputs[wi], *step.inputs()->Get(wi));
  std::optional<Matrix> o = matrixOf(out, *step.outputs()->Get(0));
  size_t rank = out.sizes.size();
  if (!a || !w || !o || inputs[ai].sizes.size() != rank || inputs[wi].sizes.size() != rank)
    return none;
  int64_t rows = out.sizes[rank - 2], n = out.sizes[rank - 1], k = inputs[ai].sizes[rank - 1];
  if (rows < 1 || rows > kFewRowsMax || n < 1 || k < 1 || inputs[wi].sizes[rank - 2] != k ||
      inputs[wi].sizes[rank - 1] != n)
    return none;
  // The weight [K, N] must be [N, K] with contiguous rows, seen transposed.
  if (k > 1 && w->rowStride != 1)
    return none;
  std::swap(w->rowStride, w->colStride);

  std::vector<Epilogue> epilogue;
  const auto *postOps = call->post_ops();
  for (size_t p = 0; postOps && p < postOps->size(); ++p) {
    const plan::PostOp &op = *postOps->Get(p);
    if (op.kind() == plan::PostOpKind::GatedSilu)
      return none; // a second product: the fallback computes it
    Epilogue e{op.kind(), false, {}};
    if (op.kind() == plan::PostOpKind::AddBias || op.kind() == plan::PostOpKind::Add) {
      if (op.input() >= inputs.size())
        return none;
      const StridedLayout &l = inputs[op.input()];
      const plan::View &v = *step.inputs()->Get(op.input());
      e.reads = true;
      if (op.kind() == plan::PostOpKind::AddBias) {
        if (l.sizes != std::vector<int64_t>{n})
          return none;
        e.operand = {v.buffer(), l.offset, 0, l.strides[0], v.dtype() == plan::DType::BFloat16};
      } else {
        std::optional<Matrix> r = matrixOf(l, v);
        if (!r || l.sizes != out.sizes)
          return none;
        e.operand = *r;
      }
    }
    epilogue.push_back(e);
  }
  Expected<std::string> level = selectCpuTarget(targets);
  FewRowKernel kernel = level ? fewRowKernel(*level) : nullptr;
  if (!kernel) {
    level = selectCpuTarget("x86-64,x86-64-v3,x86-64-v4");
    if (!level)
      return level.error();
    kernel = fewRowKernel(*level);
  }
  return std::unique_ptr<CpuCall>(std::make_unique<FewRowProduct>(
      *a, *w, *o, rows, k, n, std::move(epilogue), pool, kernel));
}

} // namespace gc
