//===- AttentionStep.cpp - Fused attention on the CPU ---------------------===//
//
// Each run first bounds the keys it reads by the mask (visibleKeys: up to
// the last key some row keeps, a decode step's valid cache prefix). The
// step packs the keys of each batch entry transposed ([E, S], rows padded
// to whole vectors) and its values ([S, Ev] padded), once for the entries
// that read the same ones (grouped-query heads, keys broadcast over
// heads), then splits the (batch entry, block of kBlockRows query rows)
// pairs over the threads.
// Per pair: scores = (query * scale) keys^T into a per-thread buffer
// (kBlockRows x S floats: in L2 for a few thousand keys), the mask and the
// causal bound applied, one softmax pass per row, and probabilities times
// values accumulated in registers. The products are register-tiled on
// vectors (GCC's vector extensions); the code is compiled three times, for
// x86-64-v4, v3 and the baseline, and the host's level (or $GC_CPU_TARGET,
// as for a package's kernels) picks one. Operands in bfloat16 or float16
// are widened to float32 as they are packed (keys, values), copied (the
// query rows) or read (the mask); scores, softmax and sums stay float32,
// and each output element is rounded once, to nearest even, as it is
// stored.
//
//===----------------------------------------------------------------------===//
#include "AttentionStep.h"

#include "BFloat16.h"

#include "gc/Support/Target.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

namespace gc {

namespace {

/// The math library of the generated kernels (branch-free, so the row loop
/// below vectorizes through it), shared rather than written again: its
/// exponential of non-positive arguments, which a softmax's shifted scores
/// are.
#pragma GCC diagnostic ignored "-Wunused-function"
namespace math {
// Inlined into the row loop, which it would otherwise keep scalar.
inline float gc_expf_nonpositive(float x) __attribute__((always_inline));
#include "MathLibrary.c"
} // namespace math
// Vec values never cross a call between code of different levels (the
// helpers are inlined), so the ABI note on 64-byte vectors does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"

/// Packed rows are padded to a multiple of kPad floats: whole vectors on
/// every level.
constexpr int64_t kPad = 16;
/// Query rows per task: their scores (kBlockRows x S floats) stay in cache.
constexpr int64_t kBlockRows = 32;
/// Keys per pass of the keys' packing: their rows (kPackKeys x E) stay in
/// L1 while each packed row takes its part.
constexpr int64_t kPackKeys = 64;
/// The values of one pass of the probabilities-times-values product (keys
/// x Ev floats), which stay in L1 across the block's row tiles: half of a
/// 48 KiB L1, three quarters of a 32 KiB one. (Ev = 64 on the Zen 5 VM:
/// 96 keys a pass took 6% less time than 64, 256 as long as 128.)
constexpr int64_t kValueBytes = 24 << 10;

#define GC_INLINE inline __attribute__((always_inline))

/// The vectors of each level (GCC's vector extensions; an attribute on a
/// dependent type would be dropped, so they are spelled out here).
typedef float Floats16 __attribute__((vector_size(64)));
typedef float Floats8 __attribute__((vector_size(32)));
typedef float Floats4 __attribute__((vector_size(16)));

/// The vector type and register tiles of one CPU level: scores in tiles
/// of ScoreRows x ScoreVecs vectors, probabilities times values in tiles
/// of ValueRows x ValueVecs vectors, each tile's accumulators in
/// registers (32 vector registers with AVX-512, 16 below).
template <typename V, int ScoreRows, int ScoreVecs, int ValueRows, int ValueVecs> struct Level {
  using Vec = V;
  static constexpr int kWidth = sizeof(V) / sizeof(float), kScoreRows = ScoreRows,
                       kScoreVecs = ScoreVecs, kValueRows = ValueRows, kValueVecs = ValueVecs;
  static_assert(kPad % kWidth == 0, "padding must hold whole vectors");

  static GC_INLINE Vec load(const float *p) {
    Vec v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  static GC_INLINE void store(float *p, Vec v) { std::memcpy(p, &v, sizeof v); }
  /// x in every lane, as a shuffle of lane 0: GCC makes one broadcast and
  /// keeps the tiles' accumulators in registers (`Vec{} + x` costs a
  /// scalar add on a floating-point port, since 0 + x is not x for x = -0;
  /// an initializer of x in every lane made GCC spill the accumulators).
  static GC_INLINE Vec splat(float x) {
    return [x]<size_t... I>(std::index_sequence<I...>) {
      Vec v = {x};
      return __builtin_shufflevector(v, v, ((void)I, 0)...);
    }(std::make_index_sequence<kWidth>());
  }
};
using LevelV4 = Level<Floats16, 8, 2, 4, 4>;
using LevelV3 = Level<Floats8, 4, 2, 4, 2>;
using LevelBase = Level<Floats4, 4, 2, 4, 2>;

int64_t roundUp(int64_t n, int64_t m) { return (n + m - 1) / m * m; }

/// How an operand's elements are stored.
enum class Element : uint8_t { Float32, BFloat16, Float16, Bool };

/// Element `i` of a floating-point operand, widened to float32.
template <Element E> GC_INLINE float readAs(const char *base, int64_t i) {
  if constexpr (E == Element::Float32) {
    float x;
    std::memcpy(&x, base + i * sizeof x, sizeof x);
    return x;
  } else if constexpr (E == Element::BFloat16) {
    uint16_t x;
    std::memcpy(&x, base + i * sizeof x, sizeof x);
    return widenBFloat16(x);
  } else {
    static_assert(E == Element::Float16, "a floating-point element");
    _Float16 x;
    std::memcpy(&x, base + i * sizeof x, sizeof x);
    return static_cast<float>(x);
  }
}

/// Stores `x` as element `i` of a floating-point operand, rounded to
/// nearest even where the operand is narrower.
template <Element E> GC_INLINE void writeAs(char *base, int64_t i, float x) {
  if constexpr (E == Element::Float32) {
    std::memcpy(base + i * sizeof x, &x, sizeof x);
  } else if constexpr (E == Element::BFloat16) {
    uint16_t h = narrowToBFloat16(x);
    std::memcpy(base + i * sizeof h, &h, sizeof h);
  } else {
    static_assert(E == Element::Float16, "a floating-point element");
    _Float16 h = static_cast<_Float16>(x);
    std::memcpy(base + i * sizeof h, &h, sizeof h);
  }
}

/// Runs `fn.template operator()<E>()` for an element type known only at
/// run time: one copy of the loop in `fn` per type, so that no element
/// pays for a switch. Bool only where `fn` takes it (the mask).
template <bool WithBool = false, typename Fn> GC_INLINE void withElement(Element e, Fn &&fn) {
  switch (e) {
  case Element::BFloat16:
    return fn.template operator()<Element::BFloat16>();
  case Element::Float16:
    return fn.template operator()<Element::Float16>();
  case Element::Bool:
    if constexpr (WithBool)
      return fn.template operator()<Element::Bool>();
    [[fallthrough]];
  case Element::Float32:
    return fn.template operator()<Element::Float32>();
  }
}

/// Where one operand's batch entries lie: an element stride per batch
/// dimension of the output (0 where the operand broadcasts), and the
/// strides of its two matrix dimensions.
struct Operand {
  uint32_t buffer = 0;
  Element element = Element::Float32;
  int64_t offset = 0;
  std::vector<int64_t> batchStrides;
  int64_t rowStride = 0, colStride = 0;
};

/// Everything one run needs, evaluated once per step instance.
struct Geometry {
  std::vector<int64_t> batchSizes;
  int64_t batch = 1;
  /// Consecutive batch entries that read the same keys and values (the
  /// innermost batch dimensions along which both broadcast), which share
  /// one packed copy of them.
  int64_t shared = 1;
  int64_t l = 0, s = 0, e = 0, ev = 0;
  int64_t sPadded = 0, evPadded = 0;
  float scale = 1;
  bool causal = false;
  bool hasMask = false;
  Operand layouts[5]; ///< by OperandIndex
};

enum OperandIndex { kQuery, kKey, kValue, kMask, kOut };

/// Element offset of batch entry `b` in operand `o`.
int64_t batchOffset(const Geometry &g, const Operand &o, int64_t b) {
  int64_t off = o.offset;
  for (size_t d = g.batchSizes.size(); d-- > 0;) {
    int64_t size = g.batchSizes[d];
    off += (b % size) * o.batchStrides[d];
    b /= size;
  }
  return off;
}

/// Runs `fn.template operator()<R>()` for a row count 1..Max known only at
/// run time.
template <int Max, typename Fn> GC_INLINE void withRows(int64_t rows, Fn &&fn) {
  if constexpr (Max > 1)
    if (rows < Max)
      return withRows<Max - 1>(rows, fn);
  fn.template operator()<Max>();
}

/// out[r][:] = (with Accumulate: out[r][:] +) sum_k a[r][k] b[k][:] for R
/// rows of `a` and N vectors of columns of `b`, over `depth` values of k;
/// the accumulators stay in registers.
template <typename L, int R, int N, bool Accumulate>
GC_INLINE void productTile(const float *a, int64_t aStride, int64_t depth, const float *b,
                           int64_t bStride, float *out, int64_t outStride) {
  typename L::Vec acc[R][N] = {};
  if (Accumulate)
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < N; ++c)
        acc[r][c] = L::load(out + r * outStride + c * L::kWidth);
  for (int64_t k = 0; k < depth; ++k) {
    typename L::Vec bv[N];
    for (int c = 0; c < N; ++c)
      bv[c] = L::load(b + k * bStride + c * L::kWidth);
    for (int r = 0; r < R; ++r) {
      typename L::Vec av = L::splat(a[r * aStride + k]);
      for (int c = 0; c < N; ++c)
        acc[r][c] += av * bv[c];
    }
  }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < N; ++c)
      L::store(out + r * outStride + c * L::kWidth, acc[r][c]);
}

/// The product of `rows` rows of `a` (depth columns) and `b` (depth rows of
/// `cols` columns, a multiple of kPad) in tiles of Rows x Vecs vectors.
/// Columns outermost: a slice of `b` stays in L1 while every row tile
/// reads it.
template <typename L, int Rows, int Vecs, bool Accumulate>
GC_INLINE void product(const float *a, int64_t aStride, int64_t rows, int64_t depth,
                       const float *b, int64_t bStride, int64_t cols, float *out,
                       int64_t outStride) {
  constexpr int64_t wide = Vecs * L::kWidth;
  for (int64_t c = 0; c < cols;) {
    bool whole = c + wide <= cols;
    for (int64_t r = 0; r < rows; r += Rows)
      withRows<Rows>(rows - r, [&]<int R>() {
        const float *ar = a + r * aStride;
        float *o = out + r * outStride + c;
        if (whole)
          productTile<L, R, Vecs, Accumulate>(ar, aStride, depth, b + c, bStride, o, outStride);
        else
          productTile<L, R, 1, Accumulate>(ar, aStride, depth, b + c, bStride, o, outStride);
      });
    c += whole ? wide : L::kWidth;
  }
}

/// The reduction of `n` floats of `row` (a multiple of the vector width)
/// by `op` from `init`: four vectors at a time, whose chains run side by
/// side (one chain would wait out the operation's latency at every
/// vector), then across the lanes by `scalar`.
template <typename L, typename Op, typename ScalarOp>
GC_INLINE float rowReduce(const float *row, int64_t n, float init, Op op, ScalarOp scalar) {
  using Vec = typename L::Vec;
  constexpr int64_t W = L::kWidth;
  Vec acc[4] = {L::splat(init), L::splat(init), L::splat(init), L::splat(init)};
  int64_t j = 0;
  for (; j + 4 * W <= n; j += 4 * W)
    for (int a = 0; a < 4; ++a)
      acc[a] = op(acc[a], L::load(row + j + a * W));
  for (; j < n; j += W)
    acc[0] = op(acc[0], L::load(row + j));
  Vec v = op(op(acc[0], acc[1]), op(acc[2], acc[3]));
  float lanes[W];
  L::store(lanes, v);
  float result = lanes[0];
  for (int64_t i = 1; i < W; ++i)
    result = scalar(result, lanes[i]);
  return result;
}

/// The per-thread memory of one task.
struct Scratch {
  std::vector<float> query, scores, out, inverse;
};

/// One (batch entry, block of query rows) task. `kt` and `vp` are the
/// packed keys and values of every batch entry.
template <typename L>
GC_INLINE void runTask(const Geometry &g, char *const *buffers, const float *ktAll,
                       const float *vpAll, int64_t task, Scratch &sc) {
  using Vec = typename L::Vec;
  int64_t blocks = (g.l + kBlockRows - 1) / kBlockRows;
  int64_t b = task / blocks, i0 = task % blocks * kBlockRows;
  int64_t rows = std::min(kBlockRows, g.l - i0);
  const Operand &qo = g.layouts[kQuery], &mo = g.layouts[kMask], &oo = g.layouts[kOut];
  const char *q = buffers[qo.buffer];
  int64_t qOffset = batchOffset(g, qo, b);
  const float *kt = ktAll + b / g.shared * g.e * g.sPadded;
  const float *vp = vpAll + b / g.shared * g.s * g.evPadded;
  // Keys past the block's last row are masked for all of its rows.
  int64_t keys = g.causal ? std::min(g.s, i0 + rows) : g.s;
  int64_t keysPadded = roundUp(keys, kPad);

  sc.query.resize(kBlockRows * g.e);
  sc.scores.resize(kBlockRows * g.sPadded);
  sc.out.resize(kBlockRows * g.evPadded);
  sc.inverse.resize(kBlockRows);
  // Plain pointers: through the thread_local scratch, every element's
  // access would look the thread's copy up again.
  float *__restrict qs = sc.query.data(), *__restrict out = sc.out.data();
  float *__restrict scores = sc.scores.data(), *__restrict inverse = sc.inverse.data();
  const float scale = g.scale;
  withElement(qo.element, [&]<Element E>() {
    for (int64_t r = 0; r < rows; ++r) {
      int64_t at = qOffset + (i0 + r) * qo.rowStride;
      float *__restrict dst = qs + r * g.e;
      if (E == Element::Float32 && qo.colStride == 1) {
        const float *src = reinterpret_cast<const float *>(q) + at;
        for (int64_t c = 0; c < g.e; ++c)
          dst[c] = src[c] * scale;
      } else {
        for (int64_t c = 0; c < g.e; ++c)
          dst[c] = readAs<E>(q, at + c * qo.colStride) * scale;
      }
    }
  });

  // Scores: the scaled query rows times the keys.
  product<L, L::kScoreRows, L::kScoreVecs, false>(qs, g.e, rows, g.e, kt, g.sPadded, keysPadded,
                                                  scores, g.sPadded);

  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  const char *maskBase = g.hasMask ? buffers[mo.buffer] : nullptr;
  int64_t maskOffset = maskBase ? batchOffset(g, mo, b) : 0;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t i = i0 + r;
    float *__restrict row = scores + r * g.sPadded;
    int64_t kept = g.causal ? std::min(g.s, i + 1) : g.s;
    if (maskBase) {
      int64_t at = maskOffset + i * mo.rowStride;
      withElement<true>(mo.element, [&]<Element E>() {
        if constexpr (E == Element::Bool) {
          const uint8_t *m = reinterpret_cast<const uint8_t *>(maskBase);
          for (int64_t j = 0; j < kept; ++j)
            row[j] = m[at + j * mo.colStride] ? row[j] : kNegInf;
        } else {
          for (int64_t j = 0; j < kept; ++j)
            row[j] += readAs<E>(maskBase, at + j * mo.colStride);
        }
      });
    }
    // Whole vectors from here on: the keys up to the next vector boundary
    // count as masked (the scores buffer has room: sPadded).
    int64_t keptPadded = roundUp(kept, kPad);
    std::fill(row + kept, row + keptPadded, kNegInf);
    float max = rowReduce<L>(row, keptPadded, kNegInf,
                             [](Vec a, Vec b) { return a > b ? a : b; },
                             [](float a, float b) { return std::max(a, b); });
    float sum = 0;
    if (max != kNegInf) {
      for (int64_t j = 0; j < keptPadded; ++j)
        row[j] = math::gc_expf_nonpositive(row[j] - max);
      sum = rowReduce<L>(row, keptPadded, 0.0f, [](Vec a, Vec b) { return a + b; },
                         [](float a, float b) { return a + b; });
    }
    // Masked keys and those past the causal bound weigh nothing; a row
    // masked entirely gives zeros, as torch's math kernel does.
    for (int64_t j = max != kNegInf ? kept : 0; j < keys; ++j)
      row[j] = 0;
    inverse[r] = max != kNegInf ? 1 / sum : 0;
  }

  // Probabilities times values, kValueBytes of values at a time, so that
  // they stay in L1 across the row tiles.
  std::fill(out, out + rows * g.evPadded, 0.0f);
  int64_t valueKeys =
      std::max<int64_t>(kPad, kValueBytes / int64_t(g.evPadded * sizeof(float)) / kPad * kPad);
  for (int64_t j = 0; j < keys; j += valueKeys)
    product<L, L::kValueRows, L::kValueVecs, true>(scores + j, g.sPadded, rows,
                                                   std::min(valueKeys, keys - j),
                                                   vp + j * g.evPadded, g.evPadded, g.evPadded,
                                                   out, g.evPadded);

  char *dst = buffers[oo.buffer];
  int64_t dstOffset = batchOffset(g, oo, b);
  withElement(oo.element, [&]<Element E>() {
    for (int64_t r = 0; r < rows; ++r) {
      int64_t at = dstOffset + (i0 + r) * oo.rowStride;
      const float *__restrict sums = out + r * g.evPadded;
      float inv = inverse[r];
      if (E == Element::Float32 && oo.colStride == 1) {
        float *__restrict d = reinterpret_cast<float *>(dst) + at;
        for (int64_t c = 0; c < g.ev; ++c)
          d[c] = sums[c] * inv;
      } else {
        for (int64_t c = 0; c < g.ev; ++c)
          writeAs<E>(dst, at + c * oo.colStride, sums[c] * inv);
      }
    }
  });
}

/// Packs the keys transposed and the values of the `p`-th run of
/// g.shared batch entries, widened to float32 and zero-padded.
GC_INLINE void packTask(const Geometry &g, char *const *buffers, float *ktAll, float *vpAll,
                        int64_t p) {
  const Operand &ko = g.layouts[kKey], &vo = g.layouts[kValue];
  const char *k = buffers[ko.buffer], *v = buffers[vo.buffer];
  int64_t b = p * g.shared;
  int64_t kOffset = batchOffset(g, ko, b), vOffset = batchOffset(g, vo, b);
  float *kt = ktAll + p * g.e * g.sPadded, *vp = vpAll + p * g.s * g.evPadded;
  // Only the keys this run reads, and the padding to their next vector
  // boundary, which the score tiles read.
  int64_t padded = roundUp(g.s, kPad);
  for (int64_t c = 0; c < g.e; ++c)
    std::fill(kt + c * g.sPadded + g.s, kt + c * g.sPadded + padded, 0.0f);
  // kPackKeys keys at a time, each packed row's part written in one
  // stretch while the keys' rows stay in L1: key by key, each write would
  // go to another packed row, sPadded floats on (with a power-of-two
  // cache length, the same few L1 sets for every row, so that every
  // write missed).
  withElement(ko.element, [&]<Element E>() {
    for (int64_t j0 = 0; j0 < g.s; j0 += kPackKeys)
      for (int64_t c = 0; c < g.e; ++c)
        for (int64_t j = j0; j < std::min(g.s, j0 + kPackKeys); ++j)
          kt[c * g.sPadded + j] = readAs<E>(k, kOffset + j * ko.rowStride + c * ko.colStride);
  });
  withElement(vo.element, [&]<Element E>() {
    for (int64_t j = 0; j < g.s; ++j) {
      float *row = vp + j * g.evPadded;
      for (int64_t c = 0; c < g.ev; ++c)
        row[c] = readAs<E>(v, vOffset + j * vo.rowStride + c * vo.colStride);
      std::fill(row + g.ev, row + g.evPadded, 0.0f);
    }
  });
}

/// Runs tasks [begin, end): packing (pack set) or attention blocks.
template <typename L>
GC_INLINE void runTasks(const Geometry &g, char *const *buffers, float *kt, float *vp, bool pack,
                        int64_t begin, int64_t end) {
  if (pack) {
    for (int64_t b = begin; b < end; ++b)
      packTask(g, buffers, kt, vp, b);
    return;
  }
  thread_local Scratch scratch;
  for (int64_t t = begin; t < end; ++t)
    runTask<L>(g, buffers, kt, vp, t, scratch);
}

using TasksFn = void (*)(const Geometry &, char *const *, float *, float *, bool, int64_t,
                         int64_t);

// One copy per CPU level; the ISA lists are x86-64-v4's and v3's.
__attribute__((target("avx512f,avx512bw,avx512cd,avx512dq,avx512vl,avx2,fma,bmi,bmi2,lzcnt,"
                      "movbe,f16c"))) void
runTasksV4(const Geometry &g, char *const *buffers, float *kt, float *vp, bool pack,
           int64_t begin, int64_t end) {
  runTasks<LevelV4>(g, buffers, kt, vp, pack, begin, end);
}
__attribute__((target("avx2,fma,bmi,bmi2,lzcnt,movbe,f16c"))) void
runTasksV3(const Geometry &g, char *const *buffers, float *kt, float *vp, bool pack,
           int64_t begin, int64_t end) {
  runTasks<LevelV3>(g, buffers, kt, vp, pack, begin, end);
}
void runTasksBase(const Geometry &g, char *const *buffers, float *kt, float *vp, bool pack,
                  int64_t begin, int64_t end) {
  runTasks<LevelBase>(g, buffers, kt, vp, pack, begin, end);
}

/// The copy for the highest level this CPU runs, or the one
/// $GC_CPU_TARGET names (as for a package's kernels).
Expected<TasksFn> levelTasks() {
  Expected<std::string> level = selectCpuTarget("x86-64,x86-64-v3,x86-64-v4");
  if (!level)
    return level.error();
  if (*level == "x86-64-v4")
    return runTasksV4;
  if (*level == "x86-64-v3")
    return runTasksV3;
  return runTasksBase;
}

/// visibleKeys on a mask of elements E.
template <Element E> int64_t visibleKeysOf(const Geometry &g, char *const *buffers) {
  const Operand &mo = g.layouts[kMask];
  const char *base = buffers[mo.buffer];
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  int64_t bound = std::min<int64_t>(1, g.s);
  for (int64_t b = 0; b < g.batch && bound < g.s; ++b) {
    int64_t at = batchOffset(g, mo, b);
    // The last rows first: a causal mask's last row keeps the most keys,
    // and each row is read from its end down to the bound found so far
    // only (a decode step's rows: about s - pos checks each).
    for (int64_t i = g.l - 1; i >= 0 && bound < g.s; --i) {
      int64_t row = at + i * mo.rowStride;
      for (int64_t j = g.s - 1; j >= bound; --j) {
        int64_t e = row + j * mo.colStride;
        bool kept;
        if constexpr (E == Element::Bool)
          kept = reinterpret_cast<const uint8_t *>(base)[e] != 0;
        else
          kept = readAs<E>(base, e) != kNegInf;
        if (kept) {
          bound = j + 1;
          break;
        }
      }
      // Broadcast rows and entries are the same memory: one look is enough.
      if (mo.rowStride == 0)
        break;
    }
    if (std::all_of(mo.batchStrides.begin(), mo.batchStrides.end(),
                    [](int64_t s) { return s == 0; }))
      break;
  }
  return bound;
}

/// The keys a run reads: up to the last one that some query row's mask
/// keeps (true, or a float above -inf), at least one where there is one.
/// Keys past it weigh nothing in any row, so leaving them out changes no
/// result; a decode step's mask keeps the cache's positions up to the
/// current one (a mask built from the position input), so the step reads
/// the valid prefix of a static cache rather than all of it. Without a
/// mask, every key counts.
int64_t visibleKeys(const Geometry &g, char *const *buffers) {
  if (!g.hasMask)
    return g.s;
  int64_t bound = 0;
  withElement<true>(g.layouts[kMask].element,
                    [&]<Element E>() { bound = visibleKeysOf<E>(g, buffers); });
  return bound;
}

class AttentionStep final : public CpuCall {
public:
  AttentionStep(Geometry g, const ThreadPool &pool, TasksFn tasks)
      : g_(std::move(g)), pool_(pool), tasks_(tasks),
        kt_(g_.batch / g_.shared * g_.e * g_.sPadded),
        vp_(g_.batch / g_.shared * g_.s * g_.evPadded) {}

  Error execute(char *const *buffers, ExternReorders *) override {
    // This run's geometry: the keys it reads (the packed keys keep their
    // row stride, sPadded; the packed values are as many as the keys).
    Geometry run = g_;
    run.s = visibleKeys(g_, buffers);
    int64_t blocks = (run.l + kBlockRows - 1) / kBlockRows;
    for (bool pack : {true, false})
      pool_.parallelFor(pack ? run.batch / run.shared : run.batch * blocks,
                        [&](int64_t begin, int64_t end) {
        tasks_(run, buffers, kt_.data(), vp_.data(), pack, begin, end);
      });
    return Error::success();
  }

private:
  Geometry g_;
  const ThreadPool &pool_;
  TasksFn tasks_;
  std::vector<float> kt_, vp_;
};

std::string shapeText(const std::vector<int64_t> &sizes) {
  std::string t = "[";
  for (size_t d = 0; d < sizes.size(); ++d)
    t += (d ? ", " : "") + std::to_string(sizes[d]);
  return t + "]";
}

} // namespace

Expected<std::unique_ptr<CpuCall>> prepareAttention(const plan::OpStep &step,
                                                     const std::vector<StridedLayout> &inputs,
                                                     const std::vector<StridedLayout> &outputs,
                                                     const ThreadPool &pool) {
  const plan::AttentionCall &call = *step.attention();
  constexpr const char *kRefuses = "the fused attention step refuses this call: ";
  int32_t mask = call.mask();
  for (int64_t i : {int64_t(call.query()), int64_t(call.key()), int64_t(call.value()),
                    int64_t(mask)})
    if (i >= static_cast<int64_t>(inputs.size()))
      return makeError() << kRefuses << "input " << i << " of " << inputs.size();
  if (outputs.size() != 1)
    return makeError() << kRefuses << outputs.size() << " outputs, not 1";
  const StridedLayout *views[5] = {&inputs[call.query()], &inputs[call.key()],
                                   &inputs[call.value()], mask >= 0 ? &inputs[mask] : nullptr,
                                   &outputs[0]};
  const plan::View *planViews[5] = {step.inputs()->Get(call.query()),
                                    step.inputs()->Get(call.key()),
                                    step.inputs()->Get(call.value()),
                                    mask >= 0 ? step.inputs()->Get(mask) : nullptr,
                                    step.outputs()->Get(0)};
  static constexpr const char *kNames[5] = {"query", "key", "value", "attn_mask", "output"};
  // Each operand is read (or the output written) in its own type.
  Element elements[5] = {};
  for (int o = 0; o < 5; ++o) {
    if (!views[o])
      continue;
    plan::DType t = planViews[o]->dtype();
    if (t == plan::DType::Float32)
      elements[o] = Element::Float32;
    else if (t == plan::DType::BFloat16)
      elements[o] = Element::BFloat16;
    else if (t == plan::DType::Float16)
      elements[o] = Element::Float16;
    else if (o == kMask && t == plan::DType::Bool)
      elements[o] = Element::Bool;
    else
      return makeError() << kRefuses << kNames[o] << " is " << plan::EnumNameDType(t) << ", not "
                         << (o == kMask ? "bool or " : "") << "float32, bfloat16 or float16";
  }
  const StridedLayout &out = outputs[0];
  size_t rank = out.sizes.size();
  if (rank < 2)
    return makeError() << kRefuses << "the output " << shapeText(out.sizes) << " has rank below 2";
  Geometry g;
  g.batchSizes.assign(out.sizes.begin(), out.sizes.end() - 2);
  // Grouped-query heads (enable_gqa): keys and values with fewer heads
  // than the query, a divisor, each read by `group` consecutive query
  // heads. The heads' batch dimension is then two, (key heads, group),
  // along the second of which the keys and values broadcast.
  size_t heads = rank >= 3 ? rank - 3 : 0; // the output's dimension of the heads
  int64_t group = 1;
  if (rank >= 3 && views[kKey]->sizes.size() == rank && views[kValue]->sizes.size() == rank) {
    int64_t kvHeads = views[kKey]->sizes[heads];
    if (kvHeads > 1 && views[kValue]->sizes[heads] == kvHeads && out.sizes[heads] != kvHeads &&
        out.sizes[heads] % kvHeads == 0)
      group = out.sizes[heads] / kvHeads;
  }
  if (group > 1) {
    g.batchSizes.back() /= group;
    g.batchSizes.push_back(group);
  }
  for (int64_t n : g.batchSizes)
    g.batch *= n;
  g.l = out.sizes[rank - 2];
  g.ev = out.sizes[rank - 1];
  g.e = views[kQuery]->sizes.empty() ? 0 : views[kQuery]->sizes.back();
  // What each operand's two matrix dimensions must be.
  int64_t want[5][2] = {{g.l, g.e}, {0, g.e}, {0, g.ev}, {g.l, 0}, {g.l, g.ev}};
  if (views[kKey]->sizes.size() >= 2)
    g.s = views[kKey]->sizes[views[kKey]->sizes.size() - 2];
  want[kKey][0] = want[kValue][0] = want[kMask][1] = g.s;
  for (int o = 0; o < 5; ++o) {
    if (!views[o])
      continue;
    const StridedLayout &l = *views[o];
    size_t r = l.sizes.size();
    Operand &op = g.layouts[o];
    op.buffer = planViews[o]->buffer();
    op.element = elements[o];
    op.offset = l.offset;
    op.batchStrides.assign(g.batchSizes.size(), 0);
    bool keyHeads = group > 1 && (o == kKey || o == kValue);
    // A mask may have fewer dimensions (it broadcasts from the right);
    // the others have the output's rank.
    bool fits = o == kMask ? r <= rank : r == rank;
    for (size_t d = 0; fits && d < r; ++d) {
      size_t od = rank - r + d;
      int64_t size = l.sizes[d];
      int64_t expect = od < rank - 2 ? out.sizes[od] : want[o][od - (rank - 2)];
      if (keyHeads && od == heads)
        expect /= group;
      if (size != expect && !(o == kMask && size == 1) && !(od < rank - 2 && size == 1))
        fits = false;
      int64_t stride = size == 1 ? 0 : l.strides[d];
      if (group > 1 && od == heads) {
        // Query head h is (h / group, h % group).
        op.batchStrides[od] = keyHeads ? stride : stride * group;
        op.batchStrides[od + 1] = keyHeads ? 0 : stride;
      } else if (od < rank - 2) {
        op.batchStrides[od] = stride;
      } else if (od == rank - 2) {
        op.rowStride = stride;
      } else {
        op.colStride = stride;
      }
    }
    if (!fits)
      return makeError() << kRefuses << kNames[o] << " " << shapeText(l.sizes) << " does not fit the output "
                      << shapeText(out.sizes) << " with " << g.s << " keys of size " << g.e;
  }
  if (g.batch == 0 || g.l == 0 || g.ev == 0)
    return makeError() << kRefuses << "the output " << shapeText(out.sizes) << " is empty";
  // Entries that read the same keys and values share their packed copy.
  const std::vector<int64_t> &kb = g.layouts[kKey].batchStrides,
                             &vb = g.layouts[kValue].batchStrides;
  for (size_t d = g.batchSizes.size(); d-- > 0 && kb[d] == 0 && vb[d] == 0;)
    g.shared *= g.batchSizes[d];
  g.sPadded = roundUp(std::max<int64_t>(g.s, 1), kPad);
  g.evPadded = roundUp(g.ev, kPad);
  g.scale = static_cast<float>(call.scale());
  g.causal = call.causal();
  g.hasMask = mask >= 0;
  Expected<TasksFn> tasks = levelTasks();
  if (!tasks)
    return tasks.error();
  return std::unique_ptr<CpuCall>(std::make_unique<AttentionStep>(std::move(g), pool, *tasks));
}

} // namespace gc
