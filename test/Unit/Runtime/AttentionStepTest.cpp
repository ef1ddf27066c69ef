//===- AttentionStepTest.cpp - The fused attention step against the reference -===//
//
// scaled_dot_product_attention as an Extern step (the runtime's fused
// attention) and as a Fallback step (the reference interpreter's kernel) on
// the same inputs: sizes that are not multiples of the step's vectors and
// blocks, strided and broadcast operands, each mask form, a row masked
// entirely, and a mask that keeps a prefix of the keys (which the step
// reads alone). The same in bfloat16 and float16, against the reference on
// the same values in float32.
//
//===----------------------------------------------------------------------===//
#include "LoopGraphMaker.h"

#include "gc/Support/Target.h"
#include "gc/Tensor/Tensor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>

using namespace gc;
using namespace gc::test;

namespace {

/// One operand: its sizes, its strides (empty: contiguous, also its
/// buffer's layout), its dtype and its contents.
struct Operand {
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  DType dtype = DType::Float32;
  std::vector<float> data; ///< for Bool: 0 or 1 per element
};

struct AttentionCase {
  Operand query, key, value;
  std::optional<Operand> mask;
  std::vector<int64_t> outShape;
  bool causal = false;
  std::optional<double> scale;
  DType outType = DType::Float32;
  bool enableGqa = false;
};

int64_t product(const std::vector<int64_t> &sizes) {
  int64_t n = 1;
  for (int64_t s : sizes)
    n *= s;
  return n;
}

/// Elements a strided view reaches, from 0.
int64_t extent(const Operand &o) {
  if (o.strides.empty())
    return product(o.sizes);
  int64_t last = 0;
  for (size_t d = 0; d < o.sizes.size(); ++d)
    last += (o.sizes[d] - 1) * o.strides[d];
  return last + 1;
}

/// Runs the case as a step of `kind`; the result, or the error of making
/// the executor or running it.
Expected<std::vector<float>> run(const AttentionCase &c, LoopNode::Kind kind) {
  LoopGraphMaker g;
  std::vector<const Operand *> operands = {&c.query, &c.key, &c.value};
  if (c.mask)
    operands.push_back(&*c.mask);
  std::vector<BufferView> views;
  std::vector<std::vector<uint8_t>> bytes;
  std::vector<TensorRef> refs;
  for (size_t i = 0; i < operands.size(); ++i) {
    const Operand &o = *operands[i];
    int64_t n = extent(o);
    uint32_t b = g.input("in" + std::to_string(i), o.dtype, g.ks({n}));
    BufferView v = g.whole(b);
    std::vector<int64_t> strides = o.strides;
    if (strides.empty())
      for (int64_t d = o.sizes.size(), step = 1; d-- > 0; step *= o.sizes[d])
        strides.insert(strides.begin(), step);
    v.type = g.view(o.dtype, g.ks(o.sizes), g.ks(strides));
    views.push_back(v);
    std::vector<uint8_t> &raw = bytes.emplace_back();
    if (o.dtype == DType::Bool) {
      raw.assign(o.data.begin(), o.data.end());
    } else if (isHalfPrecision(o.dtype)) {
      std::vector<uint16_t> halves;
      for (float x : o.data)
        halves.push_back(o.dtype == DType::BFloat16 ? floatToBFloat16(x) : floatToHalf(x));
      raw.resize(halves.size() * sizeof(uint16_t));
      std::memcpy(raw.data(), halves.data(), raw.size());
    } else {
      raw.resize(o.data.size() * sizeof(float));
      std::memcpy(raw.data(), o.data.data(), raw.size());
    }
    refs.push_back({raw.data(), o.dtype, {n}, {}});
  }
  uint32_t out = g.buffer("out", BufferKind::Output, c.outType, g.ks(c.outShape));
  LoopNode &node = g.callNode(kind, ops::aten_scaled_dot_product_attention_default, views,
                              {g.whole(out)});
  node.args = {tensorArg("query", 0), tensorArg("key", 1), tensorArg("value", 2)};
  if (c.mask)
    node.args.push_back(tensorArg("attn_mask", 3));
  node.args.push_back(boolArg("is_causal", c.causal));
  if (c.enableGqa)
    node.args.push_back({"enable_gqa", true, Arg::boolean(true)});
  if (c.scale)
    node.args.push_back({"scale", true, Arg::real(*c.scale)});
  g.output("out", out, g.whole(out).type);
  FakeLibrary lib;
  Expected<std::unique_ptr<Executor>> exec = g.executor(lib, {2});
  if (!exec)
    return exec.error();
  std::vector<float> result(product(c.outShape), NAN);
  if (!isHalfPrecision(c.outType)) {
    if (Error e = (*exec)->run(refs, std::vector<TensorRef>{ref(result, c.outShape)}))
      return e;
    return result;
  }
  std::vector<uint16_t> halves(result.size(), 0xffff);
  if (Error e = (*exec)->run(refs, std::vector<TensorRef>{{halves.data(), c.outType, c.outShape, {}}}))
    return e;
  for (size_t i = 0; i < halves.size(); ++i)
    result[i] = c.outType == DType::BFloat16 ? bfloat16ToFloat(halves[i]) : halfToFloat(halves[i]);
  return result;
}

/// The fused step on `c` against the reference kernel on `reference`, at
/// float32's tolerance (rtol 1e-4, atol 1e-5) plus, for an output in a
/// narrower type, its one rounding: a relative 2^-8 in bfloat16 (8
/// significant bits), 2^-11 in float16.
void expectMatchesReference(const AttentionCase &c, const AttentionCase &reference) {
  double rtol = 1e-4 + (c.outType == DType::BFloat16  ? std::ldexp(1.0, -8)
                        : c.outType == DType::Float16 ? std::ldexp(1.0, -11)
                                                      : 0.0);
  Expected<std::vector<float>> got = run(c, LoopNode::Kind::Extern);
  Expected<std::vector<float>> want = run(reference, LoopNode::Kind::Fallback);
  ASSERT_TRUE(bool(got)) << got.error().message();
  ASSERT_TRUE(bool(want)) << want.error().message();
  ASSERT_EQ(got->size(), want->size());
  for (size_t i = 0; i < got->size(); ++i)
    ASSERT_NEAR((*got)[i], (*want)[i], 1e-5 + rtol * std::abs((*want)[i])) << "element " << i;
}

void expectMatchesReference(const AttentionCase &c) { expectMatchesReference(c, c); }

Operand floats(std::vector<int64_t> sizes, unsigned seed, std::vector<int64_t> strides = {}) {
  Operand o{std::move(sizes), std::move(strides), DType::Float32, {}};
  o.data = randomFloats(extent(o), seed);
  // Scores spread beyond [-1, 1], so that softmax is far from uniform.
  for (float &x : o.data)
    x *= 3;
  return o;
}

// Query rows 37 (a block of 32 and 5 more), keys 45 (not whole vectors),
// head dim 20 and value dim 24 (neither).
constexpr int64_t kL = 37, kS = 45, kE = 20, kEv = 24;

AttentionCase plainCase() {
  return {floats({2, 3, kL, kE}, 1), floats({2, 3, kS, kE}, 2), floats({2, 3, kS, kEv}, 3),
          std::nullopt, {2, 3, kL, kEv}};
}

TEST(AttentionStep, NoMask) { expectMatchesReference(plainCase()); }

TEST(AttentionStep, AdditiveMaskBroadcastOverBatch) {
  AttentionCase c = plainCase();
  c.mask = floats({kL, kS}, 4);
  c.scale = 0.3;
  expectMatchesReference(c);
}

/// A bool mask per batch entry that masks row 3 entirely.
AttentionCase boolMaskCase() {
  AttentionCase c = plainCase();
  Operand m{{2, 1, kL, kS}, {}, DType::Bool, {}};
  std::vector<float> r = randomFloats(product(m.sizes), 5);
  for (size_t i = 0; i < r.size(); ++i) {
    int64_t row = (i / kS) % kL;
    m.data.push_back(row != 3 && r[i] > -0.4f ? 1 : 0);
  }
  c.mask = m;
  return c;
}

TEST(AttentionStep, BoolMaskWithARowMaskedEntirely) {
  AttentionCase c = boolMaskCase();
  expectMatchesReference(c);
  // That row is zeros, as torch's math kernel gives.
  Expected<std::vector<float>> got = run(c, LoopNode::Kind::Extern);
  ASSERT_TRUE(bool(got));
  for (int64_t col = 0; col < kEv; ++col)
    EXPECT_EQ((*got)[3 * kEv + col], 0.0f);
}

TEST(AttentionStep, Causal) {
  AttentionCase c = plainCase();
  c.causal = true;
  expectMatchesReference(c);
}

/// The query as a [2, 37, 3, 20] tensor seen as [2, 3, 37, 20], as a
/// transformer's head split leaves it; keys and values shared by the batch.
AttentionCase stridedCase() {
  AttentionCase c = plainCase();
  c.query = floats({2, 3, kL, kE}, 6, {kL * 3 * kE, kE, 3 * kE, 1});
  c.key = floats({1, 3, kS, kE}, 7);
  c.value = floats({1, 3, kS, kEv}, 8);
  return c;
}

TEST(AttentionStep, StridedQueryAndBroadcastKeysAndValues) {
  expectMatchesReference(stridedCase());
}

/// A decode step's mask over a static cache: every row of batch entry 1
/// keeps the keys before `longest`, those of entry 0 fewer. The keys and
/// values past `longest` are NaN in the first case (the step's) and clean
/// in the second (the reference's): the step matches only if it never
/// reads them (a masked key's weight, 0, times NaN is NaN), and it must
/// read every key before.
std::pair<AttentionCase, AttentionCase> prefixCases(bool boolMask, int64_t longest) {
  AttentionCase clean = plainCase();
  Operand m{{2, 1, kL, kS}, {}, boolMask ? DType::Bool : DType::Float32, {}};
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t i = 0; i < kL; ++i)
      for (int64_t j = 0; j < kS; ++j) {
        bool keep = j < (b == 1 ? longest : std::max<int64_t>(1, longest / 2));
        m.data.push_back(boolMask ? keep : keep ? 0.5f : -INFINITY);
      }
  clean.mask = m;
  AttentionCase poisoned = clean;
  for (Operand *o : {&poisoned.key, &poisoned.value}) {
    int64_t width = o->sizes.back();
    for (size_t e = 0; e < o->data.size(); ++e)
      if (static_cast<int64_t>(e) / width % kS >= longest)
        o->data[e] = NAN;
  }
  return {poisoned, clean};
}

/// Prefixes of 1 key, a whole vector, a vector and a tail, and all keys.
constexpr int64_t kPrefixes[] = {1, 16, 30, kS};

TEST(AttentionStep, ReadsOnlyTheKeysTheMaskKeeps) {
  for (bool boolMask : {true, false})
    for (int64_t longest : kPrefixes) {
      SCOPED_TRACE((boolMask ? "bool mask, " : "float mask, ") + std::to_string(longest) +
                   " keys");
      auto [poisoned, clean] = prefixCases(boolMask, longest);
      expectMatchesReference(poisoned, clean);
    }
}

/// `c` in `type` (query, key, value, a float mask, the output), each input
/// element rounded to `type`, and the reference's case: `c` in float32 on
/// the same rounded values.
std::pair<AttentionCase, AttentionCase> inType(AttentionCase c, DType type) {
  AttentionCase reference = c;
  std::vector<std::pair<Operand *, Operand *>> operands = {{&c.query, &reference.query},
                                                           {&c.key, &reference.key},
                                                           {&c.value, &reference.value}};
  if (c.mask && c.mask->dtype != DType::Bool)
    operands.push_back({&*c.mask, &*reference.mask});
  for (auto [o, r] : operands) {
    o->dtype = type;
    for (float &x : o->data)
      x = type == DType::BFloat16 ? bfloat16ToFloat(floatToBFloat16(x))
                                  : halfToFloat(floatToHalf(x));
    r->data = o->data;
  }
  c.outType = type;
  return {c, reference};
}

constexpr DType kHalfTypes[] = {DType::BFloat16, DType::Float16};

TEST(AttentionStep, HalfPrecisionEachMaskForm) {
  AttentionCase additive = plainCase(), causal = plainCase();
  additive.mask = floats({kL, kS}, 4);
  additive.scale = 0.3;
  causal.causal = true;
  for (DType type : kHalfTypes) {
    SCOPED_TRACE(std::string(dtypeName(type)));
    for (const AttentionCase &c :
         {plainCase(), additive, boolMaskCase(), causal, stridedCase()}) {
      auto [half, reference] = inType(c, type);
      expectMatchesReference(half, reference);
    }
  }
}

TEST(AttentionStep, HalfPrecisionReadsOnlyTheKeysTheMaskKeeps) {
  for (DType type : kHalfTypes)
    for (bool boolMask : {true, false})
      for (int64_t longest : kPrefixes) {
        SCOPED_TRACE(std::string(dtypeName(type)) + (boolMask ? ", bool mask, " : ", float mask, ") +
                     std::to_string(longest) + " keys");
        auto [poisoned, clean] = prefixCases(boolMask, longest);
        expectMatchesReference(inType(poisoned, type).first, inType(clean, type).second);
      }
}

/// Grouped-query heads (enable_gqa): 6 query heads over 2 key heads, each
/// key head read by 3 consecutive query heads; the query strided as a head
/// split leaves it, and a bool mask per head that masks a row of head 4
/// entirely.
AttentionCase groupedCase() {
  AttentionCase c{floats({2, 6, kL, kE}, 13, {kL * 6 * kE, kE, 6 * kE, 1}),
                  floats({2, 2, kS, kE}, 14), floats({2, 2, kS, kEv}, 15), std::nullopt,
                  {2, 6, kL, kEv}};
  c.enableGqa = true;
  Operand m{{2, 6, kL, kS}, {}, DType::Bool, {}};
  std::vector<float> r = randomFloats(product(m.sizes), 16);
  for (size_t i = 0; i < r.size(); ++i) {
    bool dropped = (i / (kL * kS)) % 6 == 4 && (i / kS) % kL == 7;
    m.data.push_back(!dropped && r[i] > -0.4f ? 1 : 0);
  }
  c.mask = m;
  return c;
}

TEST(AttentionStep, GroupedQueryHeads) {
  expectMatchesReference(groupedCase());
  AttentionCase causal = groupedCase();
  causal.mask.reset();
  causal.causal = true;
  expectMatchesReference(causal);
  for (DType type : kHalfTypes) {
    SCOPED_TRACE(std::string(dtypeName(type)));
    auto [half, reference] = inType(groupedCase(), type);
    expectMatchesReference(half, reference);
  }
}

TEST(AttentionStep, KeysBroadcastOverHeads) {
  // One key head for all three query heads (multi-query attention), read
  // through a broadcast rather than enable_gqa.
  AttentionCase c = plainCase();
  c.key = floats({2, 1, kS, kE}, 17);
  c.value = floats({2, 1, kS, kEv}, 18);
  expectMatchesReference(c);
}

TEST(AttentionStep, GroupedDecodeStepReadsOnlyTheCachePrefix) {
  // A decode step of grouped heads over a static cache, as a decoder runs
  // it: one query row per head, 8 heads over 2 key heads, a mask [1, 1, 1,
  // S] that keeps the first `longest` positions; past them the cache holds
  // NaN, which the step must never read.
  for (int64_t longest : kPrefixes) {
    SCOPED_TRACE(std::to_string(longest) + " keys");
    AttentionCase clean{floats({1, 8, 1, kE}, 19), floats({1, 2, kS, kE}, 20),
                        floats({1, 2, kS, kEv}, 21), std::nullopt, {1, 8, 1, kEv}};
    clean.enableGqa = true;
    Operand m{{1, 1, 1, kS}, {}, DType::Bool, {}};
    for (int64_t j = 0; j < kS; ++j)
      m.data.push_back(j < longest ? 1 : 0);
    clean.mask = m;
    AttentionCase poisoned = clean;
    for (Operand *o : {&poisoned.key, &poisoned.value}) {
      int64_t width = o->sizes.back();
      for (size_t e = 0; e < o->data.size(); ++e)
        if (static_cast<int64_t>(e) / width % kS >= longest)
          o->data[e] = NAN;
    }
    expectMatchesReference(poisoned, clean);
    expectMatchesReference(inType(poisoned, DType::BFloat16).first,
                           inType(clean, DType::BFloat16).second);
  }
}

TEST(AttentionStep, KeysOverSeveralPackingPasses) {
  // 150 keys: the keys are packed 64 at a time, so two whole passes and a
  // tail; in float32 and in bfloat16.
  AttentionCase c{floats({1, 2, 5, kE}, 10), floats({1, 2, 150, kE}, 11),
                  floats({1, 2, 150, kEv}, 12), std::nullopt, {1, 2, 5, kEv}};
  expectMatchesReference(c);
  auto [half, reference] = inType(c, DType::BFloat16);
  expectMatchesReference(half, reference);
}

TEST(AttentionStep, EveryCpuLevel) {
  // The step's copies for lower levels than this CPU's, as $GC_CPU_TARGET
  // picks them (a level above the CPU's is an error there, so it is left
  // out).
  AttentionCase c = plainCase();
  c.mask = floats({kL, kS}, 9);
  for (const char *level : {"x86-64", "x86-64-v3"}) {
    if (level == std::string("x86-64-v3") && hostCpuLevel() == "x86-64")
      continue;
    setenv("GC_CPU_TARGET", level, 1);
    expectMatchesReference(c);
    for (DType type : kHalfTypes) {
      auto [half, reference] = inType(c, type);
      expectMatchesReference(half, reference);
    }
    unsetenv("GC_CPU_TARGET");
  }
}

TEST(AttentionStep, RefusesValuesThatDoNotFitTheOutput) {
  AttentionCase c = plainCase();
  c.outShape = {2, 3, kL, kEv + 1};
  Expected<std::vector<float>> got = run(c, LoopNode::Kind::Extern);
  ASSERT_FALSE(bool(got));
  EXPECT_NE(got.error().message().find("the fused attention step refuses this call: value "
                                       "[2, 3, 45, 24] does not fit the output [2, 3, 37, 25]"),
            std::string::npos)
      << got.error().message();
}

TEST(AttentionStep, RefusesAnIntegerQuery) {
  AttentionCase c = plainCase();
  c.query.dtype = DType::Int32;
  Expected<std::vector<float>> got = run(c, LoopNode::Kind::Extern);
  ASSERT_FALSE(bool(got));
  EXPECT_NE(got.error().message().find("the fused attention step refuses this call: query is "
                                       "Int32, not float32, bfloat16 or float16"),
            std::string::npos)
      << got.error().message();
}

} // namespace
