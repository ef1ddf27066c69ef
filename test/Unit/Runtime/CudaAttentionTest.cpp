//===- CudaAttentionTest.cpp - The fused attention kernel on GPUs ---------===//
//
// planAttention's decisions (any machine), then the kernel itself against
// a double-precision reference on random inputs, for every mask form,
// float32, bfloat16 and float16, odd lengths (partial tiles), both
// head-dimension bounds, grouped-query attention, strided operands, keys
// split across blocks, and decode shapes over the valid prefix of a KV
// cache (skipped without a GPU). Tolerances: float32 |got - want| <= 1e-3
// |want| + 1e-4 (1 + max |want|); bfloat16 and float16 (the weights are
// rounded to the type for the tensor cores, and the output once: 2^-8
// relative each for bfloat16) 1e-2 |want| + 1e-2 (1 + max |want|).
//
//===----------------------------------------------------------------------===//
#include "Cuda/CudaAttention.h"
#include "AttentionKernelOnHost.h"
#include "GpuTestKernels.h"
#include "HalfBits.h"

#include "Cuda/CudaDriver.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <tuple>

namespace gc {
namespace {

using test::bits16;
using test::from16;

using cuda::AttentionLaunch;
using cuda::AttentionOperands;
using cuda::planAttention;

StridedLayout contiguous(std::vector<int64_t> sizes) {
  StridedLayout l;
  l.strides.assign(sizes.size(), 1);
  for (size_t d = sizes.size(); d-- > 1;)
    l.strides[d - 1] = l.strides[d] * sizes[d];
  l.sizes = std::move(sizes);
  return l;
}

struct Case {
  StridedLayout q, k, v, mask, out;
  bool hasMask = false;
  plan::DType type = plan::DType::Float32, maskType = plan::DType::Bool;
  bool causal = false;
  double scale = 0.125;
  /// At or above 0: the bool mask keeps keys [0, prefix) of every row
  /// (a KV cache's valid prefix) instead of random ones.
  int64_t prefix = -1;
  /// With a prefix: keys and values past it are NaN (what a cache may hold
  /// there), which the result must not see.
  bool nanPastPrefix = false;

  AttentionOperands operands() const {
    AttentionOperands ops;
    const StridedLayout *ls[] = {&q, &k, &v, hasMask ? &mask : nullptr, &out};
    for (int o = 0; o < cuda::kNumOperands; ++o) {
      ops.layouts[o] = ls[o];
      ops.dtypes[o] = o == cuda::kMask ? maskType : type;
      ops.buffers[o] = static_cast<uint32_t>(o);
    }
    ops.causal = causal;
    ops.scale = scale;
    return ops;
  }
};

/// The H100's and H200's SM count, for the split decisions.
constexpr int kSMs = 132;

Case bhld(int64_t b, int64_t h, int64_t l, int64_t s, int64_t d, int64_t kvHeads = -1) {
  if (kvHeads < 0)
    kvHeads = h;
  Case c;
  c.q = contiguous({b, h, l, d});
  c.k = contiguous({b, kvHeads, s, d});
  c.v = contiguous({b, kvHeads, s, d});
  c.out = contiguous({b, h, l, d});
  return c;
}

TEST(CudaAttentionPlan, PicksTheEntryByTypeAndHeadDim) {
  Case c = bhld(2, 12, 197, 197, 64);
  AttentionLaunch l = planAttention(c.operands(), kSMs);
  ASSERT_EQ(l.entry, "gc_attention_f32_d64") << l.declined;
  EXPECT_EQ(l.blocks, 4u * 2 * 12); // ceil(197 / 64) row blocks per head
  EXPECT_EQ(l.args.group, 1);
  // 96 blocks fill under 2 x 132: 7 key tiles of 32 in splits of 3 tiles.
  EXPECT_EQ(l.args.splits, 3);
  EXPECT_EQ(l.args.keysPerSplit, 96);
  EXPECT_EQ(l.combineEntry, "gc_attention_combine_f32");
  EXPECT_EQ(l.workspaceBytes, 3u * 2 * 12 * 197 * (64 + 2) * 4);
  EXPECT_EQ(l.args.maskKind, cuda::kMaskNone);
  EXPECT_EQ(l.args.strides[cuda::kKey][1], 197 * 64);
  c = bhld(1, 4, 70, 7, 80);
  c.type = plan::DType::BFloat16;
  EXPECT_EQ(planAttention(c.operands(), kSMs).entry, "gc_attention_bf16_d128");
  c.type = plan::DType::Float16;
  EXPECT_EQ(planAttention(c.operands(), kSMs).entry, "gc_attention_f16_d128");
}

TEST(CudaAttentionPlan, SplitsKeysOnlyWhereBlocksAreFew) {
  // bert_base's shape: 24 blocks, but 2 key tiles of 64 make no 2 splits
  // of kMinTilesPerSplit.
  Case c = bhld(1, 12, 128, 128, 64);
  c.type = plan::DType::BFloat16;
  AttentionLaunch l = planAttention(c.operands(), kSMs);
  ASSERT_EQ(l.entry, "gc_attention_bf16_d64") << l.declined;
  EXPECT_EQ(l.blocks, 24u);
  EXPECT_EQ(l.args.splits, 1);
  EXPECT_TRUE(l.combineEntry.empty());
  EXPECT_EQ(l.workspaceBytes, 0u);
  // 17 rows of one key head (over kDecodeRows): the tile kernel; 1 block,
  // 32 key tiles in 16 splits of 2.
  c = bhld(1, 17, 1, 2048, 64, /*kvHeads=*/1);
  c.type = plan::DType::BFloat16;
  l = planAttention(c.operands(), kSMs);
  ASSERT_EQ(l.entry, "gc_attention_bf16_d64") << l.declined;
  EXPECT_EQ(l.args.group, 17);
  EXPECT_EQ(l.args.rowBlocks, 1);
  EXPECT_EQ(l.blocks, 1u);
  EXPECT_EQ(l.args.splits, 16);
  EXPECT_EQ(l.args.keysPerSplit, 128);
  EXPECT_EQ(l.combineEntry, "gc_attention_combine_bf16");
  EXPECT_EQ(l.combineBlocks, (17u * 64 + 127) / 128);
  // Enough blocks already: one split.
  c = bhld(8, 16, 512, 512, 128);
  c.type = plan::DType::Float16;
  l = planAttention(c.operands(), kSMs);
  ASSERT_EQ(l.entry, "gc_attention_f16_d128") << l.declined;
  EXPECT_EQ(l.args.splits, 1);
}

TEST(CudaAttentionPlan, BroadcastsTheMaskAndGroupsHeads) {
  Case c = bhld(2, 8, 9, 11, 32, /*kvHeads=*/2);
  c.hasMask = true;
  c.mask = contiguous({9, 11});
  c.maskType = plan::DType::Float32;
  c.q.offset = 3;
  AttentionLaunch l = planAttention(c.operands(), kSMs);
  ASSERT_FALSE(l.entry.empty()) << l.declined;
  EXPECT_EQ(l.args.group, 4);
  EXPECT_EQ(l.args.maskKind, cuda::kMaskFloat32);
  const int64_t *m = l.args.strides[cuda::kMask];
  EXPECT_EQ(m[0], 0);
  EXPECT_EQ(m[1], 0);
  EXPECT_EQ(m[2], 11);
  EXPECT_EQ(m[3], 1);
  EXPECT_EQ(l.args.address[cuda::kQuery], 12u) << "the view's offset, in bytes";
  // A key-padding mask [b, 1, 1, s].
  c.mask = contiguous({2, 1, 1, 11});
  l = planAttention(c.operands(), kSMs);
  ASSERT_FALSE(l.entry.empty()) << l.declined;
  EXPECT_EQ(l.args.strides[cuda::kMask][0], 11);
  EXPECT_EQ(l.args.strides[cuda::kMask][2], 0);
}

TEST(CudaAttentionPlan, BoolMasksLoad16KeysAtATimeWhereAligned) {
  // A bool mask [L, S] of 64 keys, its buffer at a 16-byte boundary.
  Case c = bhld(1, 2, 70, 64, 64);
  c.hasMask = true;
  c.mask = contiguous({70, 64});
  c.maskType = plan::DType::Bool;
  auto wideMask = [&](uint64_t maskAddress) {
    AttentionLaunch l = planAttention(c.operands(), kSMs);
    EXPECT_FALSE(l.entry.empty()) << l.declined;
    std::vector<uint64_t> addresses(cuda::kNumOperands, 4096);
    addresses[l.buffers[cuda::kMask]] = maskAddress;
    return (cuda::bindAttention(l, addresses.data(), 0, 2).wide >> cuda::kMask) & 1;
  };
  EXPECT_TRUE(wideMask(4096));
  EXPECT_FALSE(wideMask(4100)) << "a row off the 16-byte boundary";
  c.mask.offset = 8;
  EXPECT_FALSE(wideMask(4096)) << "the view starts between boundaries";
  c.mask = contiguous({70, 72});
  c.k = c.v = contiguous({1, 2, 72, 64});
  EXPECT_FALSE(wideMask(4096)) << "rows of 72 keys";
  c.mask = contiguous({70, 64});
  c.k = c.v = contiguous({1, 2, 64, 64});
  c.maskType = plan::DType::Float32;
  EXPECT_FALSE(wideMask(4096)) << "an additive mask";
}

TEST(CudaAttentionPlan, DeclinesWhatTheKernelCannotDo) {
  Case c = bhld(1, 2, 5, 5, 160);
  EXPECT_NE(planAttention(c.operands(), kSMs).declined.find("head dimension 160"), std::string::npos);
  c = bhld(1, 2, 5, 5, 64);
  c.type = plan::DType::Float64;
  EXPECT_TRUE(planAttention(c.operands(), kSMs).entry.empty());
  c = bhld(1, 6, 5, 5, 64, /*kvHeads=*/4);
  EXPECT_TRUE(planAttention(c.operands(), kSMs).entry.empty()) << "6 heads over 4 key heads";
  c = bhld(1, 2, 5, 5, 64);
  c.hasMask = true;
  c.mask = contiguous({3, 5});
  EXPECT_TRUE(planAttention(c.operands(), kSMs).entry.empty()) << "3 mask rows for 5 queries";
  c.mask = contiguous({5, 5});
  c.causal = true;
  EXPECT_TRUE(planAttention(c.operands(), kSMs).entry.empty()) << "a mask and is_causal";
  c = bhld(1, 2, 5, 5, 64);
  c.q = contiguous({1, 1, 2, 5, 64});
  c.k = c.v = c.out = c.q;
  EXPECT_TRUE(planAttention(c.operands(), kSMs).entry.empty()) << "rank 5";
  // The kernels take a row's largest score for its largest weight.
  for (double scale : {0.0, -0.125}) {
    c = bhld(1, 2, 5, 5, 64);
    c.scale = scale;
    EXPECT_NE(planAttention(c.operands(), kSMs).declined.find("scale that is not positive"),
              std::string::npos)
        << scale;
  }
}

//===----------------------------------------------------------------------===//
// On a GPU
//===----------------------------------------------------------------------===//

/// Element (i0, i1, i2, i3) of `l`, right-aligned to four dims, broadcast.
int64_t at(const StridedLayout &l, const int64_t idx[4]) {
  int64_t off = l.offset;
  size_t r = l.sizes.size();
  for (size_t d = 0; d < r; ++d)
    if (l.sizes[d] != 1)
      off += idx[4 - r + d] * l.strides[d];
  return off;
}

/// Runs `c` with random inputs on the GPU, or (`onHost`) through the
/// decode kernel compiled for the host (AttentionKernelOnHost.h), and
/// compares with a double reference.
void run(const Case &c, bool onHost) {
  std::mt19937 rng(42);
  std::normal_distribution<float> normal(0.f, 1.f);
  bool narrow = c.type != plan::DType::Float32;
  const StridedLayout *ls[] = {&c.q, &c.k, &c.v, c.hasMask ? &c.mask : nullptr, &c.out};
  auto dtype = [&](int o) { return o == cuda::kMask ? c.maskType : c.type; };
  auto is16 = [&](int o) {
    return dtype(o) == plan::DType::BFloat16 || dtype(o) == plan::DType::Float16;
  };
  std::vector<std::vector<float>> host(cuda::kNumOperands);
  for (int o = 0; o < cuda::kNumOperands; ++o) {
    if (!ls[o])
      continue;
    host[o].resize(static_cast<size_t>(std::max<int64_t>(ls[o]->extent(), 1)));
    bool boolMask = o == cuda::kMask && c.maskType == plan::DType::Bool;
    for (size_t n = 0; n < host[o].size(); ++n) {
      float &x = host[o][n];
      x = !boolMask         ? normal(rng)
          : c.prefix < 0    ? float(normal(rng) > -0.8f)
                            : float(int64_t(n) < c.prefix); // a [.., 1, S] mask
    }
    if (is16(o))
      for (float &x : host[o])
        x = from16(dtype(o), bits16(dtype(o), x));
  }
  if (c.nanPastPrefix)
    for (int o : {cuda::kKey, cuda::kValue}) {
      const std::vector<int64_t> &sz = ls[o]->sizes;
      for (int64_t b = 0; b < sz[0]; ++b)
        for (int64_t h = 0; h < sz[1]; ++h)
          for (int64_t j = c.prefix; j < sz[2]; ++j)
            for (int64_t e = 0; e < sz[3]; ++e) {
              int64_t i[4] = {b, h, j, e};
              host[o][at(*ls[o], i)] = NAN;
            }
    }
  // Device images: float32 as is, 16-bit types packed two to a float, the
  // bool mask one byte each.
  auto image = [&](int o) {
    std::vector<float> words;
    if (o == cuda::kMask && c.maskType == plan::DType::Bool) {
      words.resize((host[o].size() + 3) / 4);
      auto *b = reinterpret_cast<uint8_t *>(words.data());
      for (size_t i = 0; i < host[o].size(); ++i)
        b[i] = host[o][i] != 0;
    } else if (is16(o)) {
      words.resize((host[o].size() + 1) / 2);
      auto *h = reinterpret_cast<uint16_t *>(words.data());
      for (size_t i = 0; i < host[o].size(); ++i)
        h[i] = bits16(dtype(o), host[o][i]);
    } else {
      words = host[o];
    }
    return words;
  };
  std::vector<float> words;
  if (onHost) {
    AttentionLaunch l = planAttention(c.operands(), kSMs);
    ASSERT_FALSE(l.entry.empty()) << l.declined;
    std::vector<std::vector<float>> images(cuda::kNumOperands);
    std::vector<uint64_t> addresses(cuda::kNumOperands, 0);
    for (int o = 0; o < cuda::kNumOperands; ++o)
      if (ls[o]) {
        images[o] = image(o);
        addresses[o] = reinterpret_cast<uint64_t>(images[o].data());
      }
    // NaNs show a partial result the combine reads but no block wrote.
    std::vector<float> workspace(l.workspaceBytes / 4 + 1, NAN);
    cuda::AttentionKernelArgs args =
        cuda::bindAttention(l, addresses.data(), reinterpret_cast<uint64_t>(workspace.data()),
                            narrow ? 2 : 4);
    ASSERT_TRUE(test::runAttentionKernelOnHost(l.entry, l.blocks, args.splits, args))
        << l.entry << " does not run on the host";
    if (args.splits > 1) {
      ASSERT_TRUE(test::runAttentionKernelOnHost(l.combineEntry, l.combineBlocks, 1, args));
    }
    words = images[cuda::kOutput];
  } else {
    std::vector<std::unique_ptr<test::DeviceMemory>> mem;
    std::vector<uint64_t> addresses(cuda::kNumOperands, 0);
    for (int o = 0; o < cuda::kNumOperands; ++o)
      if (ls[o]) {
        mem.push_back(std::make_unique<test::DeviceMemory>(image(o)));
        addresses[o] = reinterpret_cast<uint64_t>(mem.back()->data());
      }
    const cuda::Driver &d = **cuda::driver();
    cuda::Device device = 0;
    int sms = 0;
    ASSERT_EQ(d.deviceGet(&device, 0), cuda::Success);
    ASSERT_EQ(d.deviceGetAttribute(&sms, cuda::AttrMultiprocessorCount, device), cuda::Success);
    cuda::CudaAttentionKernels kernels(d, sms, /*early=*/true);
    // A one-step plan whose views name buffers 0 to 4 (sizes are read from
    // the layouts, not the views).
    flatbuffers::FlatBufferBuilder fbb;
    std::vector<flatbuffers::Offset<plan::View>> ins, outs;
    auto view = [&](int o) {
      auto none = fbb.CreateVector(std::vector<flatbuffers::Offset<plan::SizeProgram>>{});
      return plan::CreateView(fbb, static_cast<uint32_t>(o),
                              o == cuda::kMask ? c.maskType : c.type, none, none);
    };
    for (int o : {cuda::kQuery, cuda::kKey, cuda::kValue, cuda::kMask})
      if (ls[o])
        ins.push_back(view(o));
    outs.push_back(view(cuda::kOutput));
    auto attention = plan::CreateAttentionCall(fbb, 0, 1, 2, c.hasMask ? 3 : -1, c.causal, c.scale);
    auto name = fbb.CreateString("aten.scaled_dot_product_attention.default");
    auto insV = fbb.CreateVector(ins), outsV = fbb.CreateVector(outs);
    fbb.Finish(plan::CreateOpStep(fbb, name, insV, outsV, 0, 0, 0, attention));
    const auto *step = flatbuffers::GetRoot<plan::OpStep>(fbb.GetBufferPointer());
    std::vector<StridedLayout> inputs;
    for (int o : {cuda::kQuery, cuda::kKey, cuda::kValue, cuda::kMask})
      if (ls[o])
        inputs.push_back(*ls[o]);
    Expected<std::unique_ptr<ExternCall>> call = kernels.prepare(*step, inputs, {c.out});
    ASSERT_TRUE(bool(call)) << call.error().message();
    ASSERT_TRUE(*call) << "the kernel declined: " << planAttention(c.operands(), sms).declined;
    // Splits write their partial results here; filled with NaNs, so that a
    // partial result the combine reads but no block wrote shows.
    uint64_t scratch = (*call)->workspaceBytes();
    EXPECT_EQ(scratch, planAttention(c.operands(), sms).workspaceBytes);
    test::DeviceMemory workspace(std::vector<float>(scratch / 4 + 1, NAN));
    ASSERT_FALSE((*call)->run({.deviceBuffers = addresses.data(),
                               .stream = nullptr,
                               .workspace = reinterpret_cast<uint64_t>(workspace.data())}));
    ASSERT_EQ(d.streamSynchronize(nullptr), cuda::Success);
    words = mem.back()->read();
  }
  // The reference, in double.
  const std::vector<int64_t> &os = c.out.sizes;
  int64_t rank = static_cast<int64_t>(os.size());
  // Rank 3 is [batch, rows, columns]: its batch takes the head's place.
  int64_t B = rank == 4 ? os[0] : 1, H = rank == 4 ? os[1] : rank == 3 ? os[0] : 1,
          L = os[rank - 2], D = os[rank - 1], S = c.k.sizes[rank - 2];
  int64_t group = rank == 4 ? H / c.k.sizes[1] : 1;
  double maxAbs = 0;
  std::vector<double> want, got;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < L; ++i) {
        std::vector<double> s(S);
        double mx = -INFINITY;
        for (int64_t j = 0; j < S; ++j) {
          double dot = 0;
          for (int64_t e = 0; e < D; ++e) {
            int64_t qi[4] = {b, h, i, e}, ki[4] = {b, h / group, j, e};
            dot += double(host[0][at(c.q, qi)]) * host[1][at(c.k, ki)];
          }
          s[j] = dot * c.scale;
          int64_t mi[4] = {b, h, i, j};
          if (c.causal && j > i)
            s[j] = -INFINITY;
          else if (c.hasMask && c.maskType == plan::DType::Bool)
            s[j] = host[3][at(c.mask, mi)] != 0 ? s[j] : -INFINITY;
          else if (c.hasMask)
            s[j] += host[3][at(c.mask, mi)];
          mx = std::max(mx, s[j]);
        }
        double sum = 0;
        for (double &x : s)
          sum += x = std::isinf(mx) ? 0 : std::exp(x - mx);
        for (int64_t e = 0; e < D; ++e) {
          double o = 0;
          for (int64_t j = 0; j < S; ++j) {
            int64_t vi[4] = {b, h / group, j, e};
            if (s[j] != 0) // a dropped key's value is not read
              o += s[j] * host[2][at(c.v, vi)];
          }
          o = sum > 0 ? o / sum : 0;
          int64_t oi[4] = {b, h, i, e};
          int64_t where = at(c.out, oi);
          float g = narrow ? from16(c.type, reinterpret_cast<const uint16_t *>(words.data())[where])
                           : words[where];
          want.push_back(o);
          got.push_back(g);
          maxAbs = std::max(maxAbs, std::abs(o));
        }
      }
  double rtol = narrow ? 1e-2 : 1e-3, atol = (narrow ? 1e-2 : 1e-4) * (1 + maxAbs);
  for (size_t n = 0; n < want.size(); ++n)
    ASSERT_LE(std::abs(got[n] - want[n]), rtol * std::abs(want[n]) + atol)
        << "element " << n << ": got " << got[n] << ", want " << want[n];
}

const char *typeName(plan::DType t) {
  return t == plan::DType::Float32 ? "float32" : t == plan::DType::BFloat16 ? "bfloat16" : "float16";
}

/// Every mask form on one shape, as float32, bfloat16 and float16.
void everyMask(Case base, bool onHost = false) {
  for (plan::DType t : {plan::DType::Float32, plan::DType::BFloat16, plan::DType::Float16}) {
    Case c = base;
    c.type = t;
    SCOPED_TRACE(typeName(t));
    {
      SCOPED_TRACE("no mask");
      run(c, onHost);
    }
    {
      SCOPED_TRACE("causal");
      c.causal = true;
      run(c, onHost);
      c.causal = false;
    }
    int64_t r = static_cast<int64_t>(c.out.sizes.size());
    int64_t L = c.out.sizes[r - 2], S = c.k.sizes[r - 2];
    c.hasMask = true;
    {
      SCOPED_TRACE("bool mask [L, S]");
      c.mask = contiguous({L, S});
      c.maskType = plan::DType::Bool;
      run(c, onHost);
    }
    {
      SCOPED_TRACE("float32 mask [B, 1, 1, S]");
      c.mask = contiguous({c.out.sizes[0], 1, 1, S});
      if (r == 3)
        c.mask = contiguous({c.out.sizes[0], 1, S});
      c.maskType = plan::DType::Float32;
      run(c, onHost);
    }
    if (t != plan::DType::Float32) {
      SCOPED_TRACE("additive mask [L, S] of the inputs' type");
      c.mask = contiguous({L, S});
      c.maskType = t;
      run(c, onHost);
    }
  }
}

TEST(CudaAttention, MatchesTheReferenceHeadDim64) {
  GC_REQUIRE_GPU();
  everyMask(bhld(2, 3, 37, 53, 64));
}

TEST(CudaAttention, MatchesTheReferenceHeadDim80AndGroupedHeads) {
  GC_REQUIRE_GPU();
  everyMask(bhld(1, 4, 33, 17, 80, /*kvHeads=*/2));
}

TEST(CudaAttention, MatchesTheReferenceHeadDim128Rank3) {
  GC_REQUIRE_GPU();
  Case c;
  c.q = contiguous({3, 70, 128});
  c.k = c.v = contiguous({3, 45, 128});
  c.out = contiguous({3, 70, 128});
  everyMask(c);
}

TEST(CudaAttention, SplitKeys) {
  GC_REQUIRE_GPU();
  // Two blocks and 300 keys: split across blocks and combined, under every
  // mask form (causal: the later splits of 5 queries keep nothing).
  everyMask(bhld(1, 2, 5, 300, 64));
  everyMask(bhld(1, 2, 19, 301, 128, /*kvHeads=*/1));
}

TEST(CudaAttention, BoolMasksOfWhole16KeyChunks) {
  GC_REQUIRE_GPU();
  // Key counts of whole 16-key chunks: a bool mask's rows load 16 keys at a
  // time (AttentionKernelArgs::wide), rows past the last block's end and
  // keys split across blocks included.
  everyMask(bhld(1, 3, 70, 96, 64));
  everyMask(bhld(1, 4, 33, 128, 128, /*kvHeads=*/2));
  everyMask(bhld(1, 1, 9, 320, 64));
}

/// A bool mask [1, 1, 1, S] keeping the first `prefix` keys of the cache.
Case decodeCase(Case c, plan::DType t, int64_t prefix) {
  int64_t keys = c.k.sizes[2];
  c.type = t;
  c.hasMask = true;
  c.mask = contiguous({1, 1, 1, keys});
  c.prefix = prefix;
  return c;
}

TEST(CudaAttention, DecodeOverTheValidPrefixOfACache) {
  GC_REQUIRE_GPU();
  // One query per head, 32 query heads over 8 key heads.
  for (int64_t dim : {64, 128})
    for (auto [keys, prefix] :
         {std::pair<int64_t, int64_t>{17, 9}, {700, 333}, {2048, 128}, {2048, 2000}})
      for (plan::DType t : {plan::DType::Float32, plan::DType::BFloat16, plan::DType::Float16}) {
        SCOPED_TRACE(std::string(typeName(t)) + " head dim " + std::to_string(dim) + ", " +
                     std::to_string(prefix) + " of " + std::to_string(keys) + " keys");
        run(decodeCase(bhld(1, 32, 1, keys, dim, /*kvHeads=*/8), t, prefix), false);
      }
}

TEST(CudaAttention, StridedOperands) {
  GC_REQUIRE_GPU();
  // The query a permuted [b, l, h, d] tensor, the output too, head dim 40.
  Case c = bhld(2, 3, 21, 19, 40);
  c.q.strides = {21 * 3 * 40, 40, 3 * 40, 1};
  c.out.strides = c.q.strides;
  c.out.offset = 5;
  everyMask(c);
}


//===----------------------------------------------------------------------===//
// The decode kernel compiled for the host (any machine)
//===----------------------------------------------------------------------===//

TEST(CudaAttentionPlan, DecodeStepsTakeTheDecodeKernel) {
  // Llama-1B's decode: the 4 query heads of a key head are one block's 4
  // rows; 8 blocks, 32 chunks of 64 keys in 32 splits (256 blocks).
  Case c = bhld(1, 32, 1, 2048, 64, /*kvHeads=*/8);
  c.type = plan::DType::BFloat16;
  AttentionLaunch l = planAttention(c.operands(), kSMs);
  ASSERT_EQ(l.entry, "gc_attention_decode_bf16_d64_r4") << l.declined;
  EXPECT_EQ(l.args.group, 4);
  EXPECT_EQ(l.blocks, 8u);
  EXPECT_EQ(l.args.splits, 32);
  EXPECT_EQ(l.args.keysPerSplit, 64);
  EXPECT_EQ(l.combineEntry, "gc_attention_combine_bf16");
  // Folded (8 heads of 4 query rows), float32, head dim 128; 16 rows; 17.
  c = bhld(1, 8, 4, 2048, 128);
  EXPECT_EQ(planAttention(c.operands(), kSMs).entry, "gc_attention_decode_f32_d128_r4");
  c = bhld(2, 16, 1, 100, 64, /*kvHeads=*/1);
  l = planAttention(c.operands(), kSMs);
  EXPECT_EQ(l.entry, "gc_attention_decode_f32_d64_r16");
  EXPECT_EQ(l.args.splits, 2); // 2 chunks of 64 keys
  c = bhld(1, 17, 1, 100, 64, /*kvHeads=*/1);
  EXPECT_EQ(planAttention(c.operands(), kSMs).entry, "gc_attention_f32_d64");
}

/// A decode shape over a cache of 2048 keys, on the host.
struct DecodeShape {
  const char *what;
  int64_t heads, queries, kvHeads, dim;
  plan::DType type;
  int64_t prefix;
};
void decodeOnHost(const DecodeShape &s) {
  SCOPED_TRACE(std::string(s.what) + ", " + typeName(s.type) + ", prefix " +
               std::to_string(s.prefix) + " of 2048");
  run(decodeCase(bhld(1, s.heads, s.queries, 2048, s.dim, s.kvHeads), s.type, s.prefix), true);
}

// Host threads make each key cost far more than on a GPU: the long prefix
// runs once per form.
TEST(CudaAttentionOnHost, Llama1BDecodeGroupedHeads) {
  decodeOnHost({"1B, grouped query heads", 32, 1, 8, 64, plan::DType::BFloat16, 17});
  decodeOnHost({"1B, grouped query heads", 32, 1, 8, 64, plan::DType::BFloat16, 2000});
  decodeOnHost({"1B, grouped query heads", 32, 1, 8, 64, plan::DType::Float32, 128});
}

TEST(CudaAttentionOnHost, Llama1BDecodeFolded) {
  // make-llm-models' form: 8 heads of 4 query rows, no grouping.
  decodeOnHost({"1B, folded", 8, 4, 8, 64, plan::DType::BFloat16, 128});
  decodeOnHost({"1B, folded", 8, 4, 8, 64, plan::DType::Float32, 17});
}

TEST(CudaAttentionOnHost, Llama8BDecodeHeadDim128) {
  decodeOnHost({"8B", 32, 1, 8, 128, plan::DType::BFloat16, 128});
  decodeOnHost({"8B", 32, 1, 8, 128, plan::DType::Float32, 2000});
}

TEST(CudaAttentionOnHost, EveryMaskAndSplit) {
  // 5 rows (the 16-row entry), 300 keys in 5 splits, every mask form.
  everyMask(bhld(1, 2, 5, 300, 64), true);
  // 6 rows of grouped heads over a head dimension of 20: element loads.
  everyMask(bhld(1, 4, 3, 70, 20, /*kvHeads=*/2), true);
}

TEST(CudaAttentionOnHost, NothingPastTheValidPrefixCounts) {
  // A decode step over a cache holding NaN past its prefix (gpu-check-HF's
  // check): grouped heads (2 rows a key head) and folded ones (4).
  for (auto [heads, queries, kvHeads] : {std::tuple<int64_t, int64_t, int64_t>{4, 1, 2}, {2, 4, 2}})
    for (plan::DType t : {plan::DType::Float32, plan::DType::BFloat16}) {
      Case c = decodeCase(bhld(1, heads, queries, 64, 16, kvHeads), t, 33);
      c.nanPastPrefix = true;
      SCOPED_TRACE(std::to_string(heads) + " heads of " + std::to_string(queries) + " rows, " +
                   typeName(t));
      run(c, true);
    }
}

TEST(CudaAttentionOnHost, NoMaskAndAdditiveMaskAtDecode) {
  Case c = bhld(1, 32, 1, 2048, 64, /*kvHeads=*/8);
  c.type = plan::DType::BFloat16;
  run(c, true);
  c.hasMask = true;
  c.mask = contiguous({1, 1, 1, 2048});
  c.maskType = plan::DType::Float32;
  run(c, true);
}

} // namespace
} // namespace gc
