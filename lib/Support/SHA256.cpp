//===- SHA256.cpp - SHA-256 (FIPS 180-4) ----------------------------------===//
#include "gc/Support/SHA256.h"

#include "gc/Support/FileSystem.h"
#include "gc/Support/Parallel.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

using namespace gc;

namespace {

constexpr uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

constexpr uint32_t rotr(uint32_t x, int n) {
  return (x >> n) | (x << (32 - n));
}

uint32_t be32(const uint8_t *p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 |
         uint32_t(p[3]);
}

} // namespace

SHA256::SHA256()
    : h_{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
         0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19} {}

namespace {

void portableBlock(uint32_t *h_, const uint8_t *p) {
  uint32_t w[64];
  for (int i = 0; i < 16; ++i)
    w[i] = be32(p + 4 * i);
  for (int i = 16; i < 64; ++i) {
    uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }

  uint32_t a = h_[0], b = h_[1], c = h_[2], d = h_[3];
  uint32_t e = h_[4], f = h_[5], g = h_[6], h = h_[7];
  for (int i = 0; i < 64; ++i) {
    uint32_t s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
    uint32_t ch = (e & f) ^ (~e & g);
    uint32_t t1 = h + s1 + ch + K[i] + w[i];
    uint32_t s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
    uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
    uint32_t t2 = s0 + maj;
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  h_[0] += a;
  h_[1] += b;
  h_[2] += c;
  h_[3] += d;
  h_[4] += e;
  h_[5] += f;
  h_[6] += g;
  h_[7] += h;
}

#if defined(__x86_64__)
/// The x86 SHA extensions do two rounds per instruction. The state lives
/// in two registers in the order the instructions want: ABEF and CDGH.
__attribute__((target("sha,sse4.1,ssse3"))) void shaNiBlocks(uint32_t *state,
                                                              const uint8_t *p,
                                                              size_t count) {
  const __m128i byteSwap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  __m128i dcba = _mm_loadu_si128(reinterpret_cast<const __m128i *>(state));
  __m128i hgfe = _mm_loadu_si128(reinterpret_cast<const __m128i *>(state + 4));
  __m128i cdab = _mm_shuffle_epi32(dcba, 0xB1);
  __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);
  __m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
  __m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xF0);
  for (; count; --count, p += 64) {
    __m128i abefSaved = abef, cdghSaved = cdgh;
    __m128i w[4];
    for (int i = 0; i < 4; ++i)
      w[i] = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p + 16 * i)),
                              byteSwap);
    // Group g does rounds 4g..4g+3 with message words w[g % 4]; the message
    // schedule for later groups is computed in the same pass.
    // Unrolled, the message words stay in registers (about 1.3x faster).
#pragma GCC unroll 16
    for (int g = 0; g < 16; ++g) {
      __m128i cur = w[g % 4];
      __m128i msg = _mm_add_epi32(cur, _mm_loadu_si128(reinterpret_cast<const __m128i *>(K + 4 * g)));
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, msg);
      if (g >= 3 && g <= 14) {
        __m128i &next = w[(g + 1) % 4];
        next = _mm_add_epi32(next, _mm_alignr_epi8(cur, w[(g + 3) % 4], 4));
        next = _mm_sha256msg2_epu32(next, cur);
      }
      abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(msg, 0x0E));
      if (g >= 1 && g <= 12)
        w[(g + 3) % 4] = _mm_sha256msg1_epu32(w[(g + 3) % 4], cur);
    }
    abef = _mm_add_epi32(abef, abefSaved);
    cdgh = _mm_add_epi32(cdgh, cdghSaved);
  }
  __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
  __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
  _mm_storeu_si128(reinterpret_cast<__m128i *>(state), _mm_blend_epi16(feba, dchg, 0xF0));
  _mm_storeu_si128(reinterpret_cast<__m128i *>(state + 4), _mm_alignr_epi8(dchg, feba, 8));
}

bool hasShaNi() {
  unsigned a, b, c, d;
  return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 29)) &&
         __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 19)) && (c & (1u << 9));
}
#endif

} // namespace

namespace {
std::atomic<bool> shaExtensionsAllowed{true};
} // namespace

void SHA256::useShaExtensions(bool on) { shaExtensionsAllowed = on; }

void SHA256::blocks(const uint8_t *p, size_t count) {
#if defined(__x86_64__)
  static const bool shaNi = hasShaNi();
  if (shaNi && shaExtensionsAllowed.load(std::memory_order_relaxed))
    return shaNiBlocks(h_, p, count);
#endif
  for (; count; --count, p += 64)
    portableBlock(h_, p);
}

void SHA256::update(std::string_view data) {
  const auto *p = reinterpret_cast<const uint8_t *>(data.data());
  size_t n = data.size();
  // An empty view may have a null data(), which memcpy must not see.
  if (n == 0)
    return;
  total_ += n;
  if (bufLen_) {
    size_t take = std::min(n, sizeof buf_ - bufLen_);
    std::memcpy(buf_ + bufLen_, p, take);
    bufLen_ += take;
    p += take;
    n -= take;
    if (bufLen_ < sizeof buf_)
      return;
    blocks(buf_, 1);
    bufLen_ = 0;
  }
  // Whole blocks are hashed straight from the input, without a copy.
  blocks(p, n / 64);
  p += n / 64 * 64;
  n %= 64;
  std::memcpy(buf_, p, n);
  bufLen_ = n;
}

std::array<uint8_t, 32> SHA256::finish() {
  uint64_t bits = total_ * 8;
  // Padding: a one bit, zeros up to 56 mod 64, then the big-endian length.
  buf_[bufLen_++] = 0x80;
  if (bufLen_ > 56) {
    std::memset(buf_ + bufLen_, 0, sizeof buf_ - bufLen_);
    blocks(buf_, 1);
    bufLen_ = 0;
  }
  std::memset(buf_ + bufLen_, 0, 56 - bufLen_);
  for (int i = 0; i < 8; ++i)
    buf_[56 + i] = uint8_t(bits >> (56 - 8 * i));
  blocks(buf_, 1);
  bufLen_ = 0;

  std::array<uint8_t, 32> digest;
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 4; ++j)
      digest[4 * i + j] = uint8_t(h_[i] >> (24 - 8 * j));
  return digest;
}

namespace {
std::string hex(const std::array<uint8_t, 32> &digest) {
  static constexpr char Hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(64);
  for (uint8_t byte : digest) {
    out.push_back(Hex[byte >> 4]);
    out.push_back(Hex[byte & 0xF]);
  }
  return out;
}
} // namespace

std::string gc::sha256Hex(std::string_view data) {
  SHA256 hasher;
  hasher.update(data);
  return hex(hasher.finish());
}

namespace {
/// Adds `length` bytes of `file` from `offset` to `hasher`.
void updateFromFile(SHA256 &hasher, const MappedFile &file, uint64_t offset, uint64_t length) {
  static const char zeros[1 << 16] = {};
  scanFile(
      file, offset, length, [&](std::string_view piece) { hasher.update(piece); },
      [&](uint64_t hole) {
        for (uint64_t left = hole; left;) {
          uint64_t n = std::min<uint64_t>(left, sizeof zeros);
          hasher.update(std::string_view(zeros, n));
          left -= n;
        }
      });
}

/// The digest of one tree leaf: `length` bytes of `file` from `offset`.
std::array<uint8_t, 32> treeLeaf(const MappedFile &file, uint64_t offset, uint64_t length) {
  // Sparse files (tests' huge archives) are mostly whole-hole leaves.
  static const std::array<uint8_t, 32> zeroLeaf = [] {
    SHA256 hasher;
    hasher.update(std::string(kSha256TreeLeafBytes, '\0'));
    return hasher.finish();
  }();
  std::vector<FileExtent> extents = fileExtents(file, offset, length);
  if (length == kSha256TreeLeafBytes && extents.size() == 1 && extents[0].hole)
    return zeroLeaf;
  SHA256 hasher;
  updateFromFile(hasher, file, offset, length);
  return hasher.finish();
}
} // namespace

std::string gc::sha256Hex(const MappedFile &file, uint64_t offset, uint64_t length) {
  SHA256 hasher;
  updateFromFile(hasher, file, offset, length);
  return hex(hasher.finish());
}

std::array<uint8_t, 32> gc::sha256Tree(const MappedFile &file, unsigned threads) {
  const uint64_t size = file.bytes().size();
  const size_t leaves = size_t((size + kSha256TreeLeafBytes - 1) / kSha256TreeLeafBytes);
  std::vector<std::array<uint8_t, 32>> digests(leaves);
  forEachIndex(leaves, threads, [&](size_t i) {
    uint64_t offset = uint64_t(i) * kSha256TreeLeafBytes;
    digests[i] = treeLeaf(file, offset, std::min(kSha256TreeLeafBytes, size - offset));
  });
  SHA256 root;
  root.update("gc sha256-tree, leaves of " + std::to_string(kSha256TreeLeafBytes) + " bytes\n");
  char length[8];
  for (int i = 0; i < 8; ++i)
    length[i] = char(size >> (8 * i));
  root.update(std::string_view(length, sizeof length));
  for (const auto &d : digests)
    root.update(std::string_view(reinterpret_cast<const char *>(d.data()), d.size()));
  return root.finish();
}
