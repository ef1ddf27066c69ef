//===- Zip.cpp - Reading zip archives in place ----------------------------===//
//
// The format follows PKWARE's APPNOTE.TXT. The reader trusts nothing in the
// file: every offset and length is checked against the bounds it must fit in
// before a byte is read, since archives come from users (and fuzzers).
//
//===----------------------------------------------------------------------===//
#include "gc/Support/Zip.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstdio>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

using namespace gc;

namespace {

constexpr uint32_t LocalHeaderSig = 0x04034b50;
constexpr uint32_t CentralHeaderSig = 0x02014b50;
constexpr uint32_t EocdSig = 0x06054b50;
constexpr uint32_t Zip64EocdSig = 0x06064b50;
constexpr uint32_t Zip64LocatorSig = 0x07064b50;

constexpr uint64_t LocalHeaderSize = 30;
constexpr uint64_t CentralHeaderSize = 46;
constexpr uint64_t EocdSize = 22;
constexpr uint64_t Zip64LocatorSize = 20;
constexpr uint64_t Zip64EocdSize = 56;
constexpr uint64_t MaxCommentSize = 0xFFFF;

constexpr uint16_t Zip64ExtraId = 0x0001;
// Android zipalign's extra block: a 16-bit alignment, then zero padding.
// Reusing a known id keeps tools that list extra fields from guessing.
constexpr uint16_t AlignmentExtraId = 0xD935;
constexpr uint64_t AlignmentExtraMinSize = 6;

// DOS date 1980-01-01 (year 0, month 1, day 1), time 00:00:00: the earliest
// valid stamp, so output does not depend on the clock.
constexpr uint16_t FixedDosDate = (1 << 5) | 1;
constexpr uint16_t FixedDosTime = 0;

uint16_t le16(const uint8_t *p) { return uint16_t(p[0] | p[1] << 8); }
uint32_t le32(const uint8_t *p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 |
         uint32_t(p[3]) << 24;
}
uint64_t le64(const uint8_t *p) {
  return uint64_t(le32(p)) | uint64_t(le32(p + 4)) << 32;
}

void put16(std::string &out, uint16_t v) {
  out.push_back(char(v & 0xFF));
  out.push_back(char(v >> 8));
}
void put32(std::string &out, uint32_t v) {
  put16(out, uint16_t(v & 0xFFFF));
  put16(out, uint16_t(v >> 16));
}

/// Whether [offset, offset + length) lies within [0, limit), without
/// overflowing on hostile values.
bool fits(uint64_t offset, uint64_t length, uint64_t limit) {
  return offset <= limit && length <= limit - offset;
}

/// An entry name for a message: quoted, with control and non-ASCII bytes
/// escaped so that a hostile name cannot garble the terminal.
std::string quoted(std::string_view name) {
  std::string s = "'";
  for (unsigned char c : name) {
    if (c >= 0x20 && c < 0x7F) {
      s.push_back(char(c));
      continue;
    }
    char buf[5];
    std::snprintf(buf, sizeof buf, "\\x%02X", c);
    s += buf;
  }
  return s + "'";
}

struct CrcTables {
  uint32_t t[8][256];
};

// Slicing-by-8 tables: t[0] is the classic byte table of the reflected
// polynomial 0xEDB88320; t[k] advances a byte that is k positions further
// from the end, so eight bytes are folded per step.
constexpr CrcTables makeCrcTables() {
  CrcTables tables{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int bit = 0; bit < 8; ++bit)
      c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
    tables.t[0][i] = c;
  }
  for (int k = 1; k < 8; ++k)
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t prev = tables.t[k - 1][i];
      tables.t[k][i] = (prev >> 8) ^ tables.t[0][prev & 0xFF];
    }
  return tables;
}

constexpr CrcTables Crc = makeCrcTables();

/// Values from a central directory entry's zip64 extended-information
/// block, which replace the 32-bit fields set to all ones.
struct CentralFields {
  uint64_t compressedSize;
  uint64_t uncompressedSize;
  uint64_t localHeaderOffset;
};

/// Applies the zip64 block in `extra`, if any, to `f`. Returns false when
/// a needed value is missing or a block runs past the extra field.
bool applyZip64Extra(const uint8_t *extra, uint64_t extraLen,
                     CentralFields &f) {
  uint64_t pos = 0;
  while (pos + 4 <= extraLen) {
    uint16_t id = le16(extra + pos);
    uint16_t size = le16(extra + pos + 2);
    pos += 4;
    if (size > extraLen - pos)
      return false;
    if (id == Zip64ExtraId) {
      // The block holds only the values whose 32-bit field overflowed, in
      // this fixed order.
      const uint8_t *p = extra + pos;
      uint64_t left = size;
      for (uint64_t *field :
           {&f.uncompressedSize, &f.compressedSize, &f.localHeaderOffset}) {
        if (*field != 0xFFFFFFFFu)
          continue;
        if (left < 8)
          return false;
        *field = le64(p);
        p += 8;
        left -= 8;
      }
      return true;
    }
    pos += size;
  }
  return true;
}

/// Slicing-by-8 over the tables above: the portable CRC-32.
uint32_t crc32Table(std::string_view data, uint32_t crc) {
  const auto *p = reinterpret_cast<const uint8_t *>(data.data());
  size_t n = data.size();
  uint32_t c = ~crc;
  for (; n >= 8; p += 8, n -= 8) {
    uint32_t lo = le32(p) ^ c;
    uint32_t hi = le32(p + 4);
    c = Crc.t[7][lo & 0xFF] ^ Crc.t[6][(lo >> 8) & 0xFF] ^
        Crc.t[5][(lo >> 16) & 0xFF] ^ Crc.t[4][lo >> 24] ^ Crc.t[3][hi & 0xFF] ^
        Crc.t[2][(hi >> 8) & 0xFF] ^ Crc.t[1][(hi >> 16) & 0xFF] ^
        Crc.t[0][hi >> 24];
  }
  for (; n; ++p, --n)
    c = (c >> 8) ^ Crc.t[0][(c ^ *p) & 0xFF];
  return ~c;
}

#if defined(__x86_64__)
/// x^n modulo the CRC-32 polynomial (x^32 + 0x04C11DB7), bit i holding the
/// coefficient of x^i.
constexpr uint32_t xPowerModP(unsigned n) {
  uint64_t r = 1;
  for (; n; --n) {
    r <<= 1;
    if (r >> 32)
      r ^= 0x104C11DB7ull;
  }
  return uint32_t(r);
}

/// `k` as a carry-less multiplier of one 64-bit half of a block: the CRC is
/// reflected, so a block's bit j is the coefficient of x^(127 - j) and the
/// multiplier holds x^i at bit 63 - i.
constexpr uint64_t reflectedMultiplier(uint32_t k) {
  uint64_t r = 0;
  for (unsigned i = 0; i < 32; ++i)
    if ((k >> i) & 1)
      r |= uint64_t(1) << (63 - i);
  return r;
}

/// The multipliers that carry a 16-byte block `bits` further along the
/// message modulo P: its first half (the low quadword, the higher powers)
/// times x^(64 + bits), its second half times x^bits. The product of two
/// reflected 64-bit values lands one bit short of the 128-bit block, which
/// the exponents make up for with one x fewer.
struct FoldMultipliers {
  uint64_t first, second;
};
constexpr FoldMultipliers foldMultipliers(unsigned bits) {
  return {reflectedMultiplier(xPowerModP(64 + bits - 1)),
          reflectedMultiplier(xPowerModP(bits - 1))};
}

__attribute__((target("pclmul"))) __m128i fold(__m128i block, __m128i multipliers) {
  return _mm_xor_si128(_mm_clmulepi64_si128(block, multipliers, 0x00),
                       _mm_clmulepi64_si128(block, multipliers, 0x11));
}

__attribute__((target("pclmul"))) __m128i load(const char *p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i *>(p));
}

/// The CRC-32 of at least 64 bytes by folding with carry-less
/// multiplication (Gopal et al., "Fast CRC Computation for Generic
/// Polynomials Using PCLMULQDQ Instruction", Intel, 2009): four 16-byte
/// lanes are carried 64 bytes further each step, merged into one, which
/// takes the remaining whole blocks; the table code finishes the last
/// block and the tail, as the message they stand for modulo P.
__attribute__((target("pclmul"))) uint32_t crc32Carryless(std::string_view data, uint32_t crc) {
  constexpr FoldMultipliers by512 = foldMultipliers(512), by128 = foldMultipliers(128);
  const __m128i k512 = _mm_set_epi64x(int64_t(by512.second), int64_t(by512.first));
  const __m128i k128 = _mm_set_epi64x(int64_t(by128.second), int64_t(by128.first));
  const char *p = data.data();
  size_t n = data.size();
  __m128i lane[4];
  for (int i = 0; i < 4; ++i)
    lane[i] = load(p + 16 * i);
  lane[0] = _mm_xor_si128(lane[0], _mm_cvtsi32_si128(int(~crc)));
  for (p += 64, n -= 64; n >= 64; p += 64, n -= 64)
    for (int i = 0; i < 4; ++i)
      lane[i] = _mm_xor_si128(fold(lane[i], k512), load(p + 16 * i));
  __m128i acc = lane[0];
  for (int i = 1; i < 4; ++i)
    acc = _mm_xor_si128(fold(acc, k128), lane[i]);
  for (; n >= 16; p += 16, n -= 16)
    acc = _mm_xor_si128(fold(acc, k128), load(p));
  char last[16];
  _mm_storeu_si128(reinterpret_cast<__m128i *>(last), acc);
  // The folded block already holds the initial value: its CRC starts from
  // a zero register (~0 in crc32's terms).
  return crc32Table(std::string_view(p, n), crc32Table(std::string_view(last, 16), ~0u));
}

bool hasCarrylessMultiply() {
  unsigned a, b, c, d;
  return __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 1));
}
#endif

std::atomic<bool> carrylessCrcAllowed{true};

} // namespace

void gc::useCarrylessCrc32(bool on) { carrylessCrcAllowed = on; }

uint32_t gc::crc32(std::string_view data, uint32_t crc) {
#if defined(__x86_64__)
  static const bool clmul = hasCarrylessMultiply();
  if (data.size() >= 64 && clmul && carrylessCrcAllowed.load(std::memory_order_relaxed))
    return crc32Carryless(data, crc);
#endif
  return crc32Table(data, crc);
}

Expected<ZipArchive> ZipArchive::open(std::shared_ptr<MappedFile> file) {
  const uint8_t *base = file->bytes().data();
  const uint64_t size = file->bytes().size();
  const std::string where = "'" + file->path() + "': ";
  auto notZip = [&](const char *why) -> Error {
    return makeError() << where << "not a zip archive (" << why << ")";
  };
  auto corrupt = [&]() {
    ErrorBuilder b;
    b << where << "corrupt zip archive: ";
    return b;
  };
  auto truncated = [&]() {
    ErrorBuilder b;
    b << where << "truncated zip archive: ";
    return b;
  };

  if (size == 0)
    return notZip("empty file");
  if (size < EocdSize)
    return notZip("no end-of-central-directory record");

  // The record ends the file, unless a comment of up to 64 KiB follows it.
  // Scanning backwards finds the last candidate whose comment fits.
  uint64_t eocd = size - EocdSize;
  uint64_t lowest =
      size > EocdSize + MaxCommentSize ? size - EocdSize - MaxCommentSize : 0;
  for (;; --eocd) {
    if (le32(base + eocd) == EocdSig &&
        fits(eocd + EocdSize, le16(base + eocd + 20), size))
      break;
    if (eocd == lowest)
      return notZip("no end-of-central-directory record");
  }

  uint64_t entryCount = le16(base + eocd + 10);
  uint64_t cdSize = le32(base + eocd + 12);
  uint64_t cdOffset = le32(base + eocd + 16);
  // The central directory must end before the records that describe it.
  uint64_t cdLimit = eocd;

  if (eocd >= Zip64LocatorSize &&
      le32(base + eocd - Zip64LocatorSize) == Zip64LocatorSig) {
    uint64_t locator = eocd - Zip64LocatorSize;
    uint64_t record = le64(base + locator + 8);
    if (!fits(record, Zip64EocdSize, locator) ||
        le32(base + record) != Zip64EocdSig)
      return corrupt() << "bad zip64 end-of-central-directory record";
    entryCount = le64(base + record + 32);
    cdSize = le64(base + record + 40);
    cdOffset = le64(base + record + 48);
    cdLimit = record;
  }

  if (!fits(cdOffset, cdSize, cdLimit))
    return corrupt() << "central directory (offset " << cdOffset << ", size "
                     << cdSize << ") lies outside the file";
  // Bounds the allocation below by the file size, whatever the count says.
  if (entryCount > cdSize / CentralHeaderSize)
    return corrupt() << "central directory is too small for " << entryCount
                     << " entries";

  ZipArchive archive;
  archive.file_ = file;
  archive.entries_.reserve(entryCount);
  const uint64_t cdEnd = cdOffset + cdSize;
  uint64_t pos = cdOffset;
  for (uint64_t i = 0; i < entryCount; ++i) {
    if (!fits(pos, CentralHeaderSize, cdEnd) ||
        le32(base + pos) != CentralHeaderSig)
      return corrupt() << "bad central directory entry #" << i;
    const uint8_t *h = base + pos;
    uint16_t flags = le16(h + 8);
    uint64_t nameLen = le16(h + 28);
    uint64_t extraLen = le16(h + 30);
    uint64_t commentLen = le16(h + 32);
    if (!fits(pos + CentralHeaderSize, nameLen + extraLen + commentLen, cdEnd))
      return corrupt() << "central directory entry #" << i
                       << " runs past the central directory";

    ZipEntry e;
    e.name.assign(reinterpret_cast<const char *>(h + CentralHeaderSize),
                  nameLen);
    e.method = le16(h + 10);
    e.crc32 = le32(h + 16);
    CentralFields f{le32(h + 20), le32(h + 24), le32(h + 42)};
    if (!applyZip64Extra(h + CentralHeaderSize + nameLen, extraLen, f))
      return corrupt() << "bad zip64 extra field for entry " << quoted(e.name);
    e.compressedSize = f.compressedSize;
    e.uncompressedSize = f.uncompressedSize;
    pos += CentralHeaderSize + nameLen + extraLen + commentLen;

    if (flags & 1)
      return makeError() << where << "entry " << quoted(e.name)
                         << " is encrypted";
    if (e.method == 0 && e.compressedSize != e.uncompressedSize)
      return corrupt() << "stored entry " << quoted(e.name)
                       << " has different compressed and uncompressed sizes";

    // Sizes and CRC come from the central directory only: with flag bit 3
    // (torch.export sets it) the local header holds zeros for them. The
    // local header still decides where the data starts, as its extra field
    // (the alignment padding) differs from the central one.
    uint64_t local = f.localHeaderOffset;
    if (!fits(local, LocalHeaderSize, size))
      return truncated() << "entry " << quoted(e.name)
                         << " runs past the end of the file";
    const uint8_t *lh = base + local;
    uint64_t localNameLen = le16(lh + 26);
    uint64_t localExtraLen = le16(lh + 28);
    if (le32(lh) != LocalHeaderSig)
      return corrupt() << "bad local header for entry " << quoted(e.name);
    if (!fits(local + LocalHeaderSize, localNameLen + localExtraLen, size))
      return truncated() << "entry " << quoted(e.name)
                         << " runs past the end of the file";
    std::string_view localName(
        reinterpret_cast<const char *>(lh + LocalHeaderSize), localNameLen);
    if (localName != e.name)
      return corrupt() << "bad local header for entry " << quoted(e.name);
    e.dataOffset = local + LocalHeaderSize + localNameLen + localExtraLen;
    if (!fits(e.dataOffset, e.compressedSize, size))
      return truncated() << "entry " << quoted(e.name)
                         << " runs past the end of the file";
    archive.entries_.push_back(std::move(e));
  }
  // The local headers lie all over the file, and a fault maps a whole block
  // of the page cache around the byte read (fault-around, large folios):
  // about 100 MB for BERT's 200 entries. What the caller reads next maps
  // again.
  file->release(0, size);

  archive.byName_.resize(archive.entries_.size());
  for (size_t i = 0; i < archive.byName_.size(); ++i)
    archive.byName_[i] = i;
  const auto &entries = archive.entries_;
  std::sort(
      archive.byName_.begin(), archive.byName_.end(),
      [&](size_t a, size_t b) { return entries[a].name < entries[b].name; });
  // Two entries with one name would make find() ambiguous; tools disagree
  // about which one wins, so refuse the archive instead.
  auto dup = std::adjacent_find(
      archive.byName_.begin(), archive.byName_.end(),
      [&](size_t a, size_t b) { return entries[a].name == entries[b].name; });
  if (dup != archive.byName_.end())
    return corrupt() << "duplicate entry " << quoted(entries[*dup].name);
  return archive;
}

const ZipEntry *ZipArchive::find(std::string_view name) const {
  auto it = std::lower_bound(
      byName_.begin(), byName_.end(), name,
      [&](size_t i, std::string_view n) { return entries_[i].name < n; });
  if (it == byName_.end() || entries_[*it].name != name)
    return nullptr;
  return &entries_[*it];
}

Expected<std::string_view> ZipArchive::read(const ZipEntry &e,
                                            bool checkCrc) const {
  if (e.method != 0)
    return makeError() << "'" << path() << "': entry " << quoted(e.name)
                       << " is compressed (method " << e.method
                       << "); gc needs stored entries";
  if (checkCrc) {
    uint32_t actual = crc32(*file_, e.dataOffset, e.compressedSize);
    if (actual != e.crc32) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "(stored %08x, computed %08x)", e.crc32,
                    actual);
      return makeError() << "'" << path() << "': entry " << quoted(e.name)
                         << " fails its CRC-32 check " << buf
                         << ": the file was damaged or changed after it was written; "
                            "copy it again or make it again";
    }
  }
  return file_->text().substr(e.dataOffset, e.compressedSize);
}

namespace {

/// The classic format's 32-bit fields hold this to say "see zip64".
constexpr uint64_t Zip64Marker = 0xFFFFFFFFu;
constexpr uint64_t MaxClassicEntries = 0xFFFF;
/// A local header's zip64 block: uncompressed and compressed size.
constexpr uint64_t LocalZip64ExtraSize = 4 + 16;
// "Version needed to extract": 1.0 for stored entries, 4.5 for zip64.
constexpr uint16_t VersionStored = 10;
constexpr uint16_t VersionZip64 = 45;

bool needsZip64(uint64_t value) { return value >= Zip64Marker; }

void put64(std::string &out, uint64_t v) {
  put32(out, uint32_t(v & 0xFFFFFFFFu));
  put32(out, uint32_t(v >> 32));
}

/// A 32-bit field: the value, or the marker when zip64 holds it.
uint32_t classic32(uint64_t v) { return needsZip64(v) ? uint32_t(Zip64Marker) : uint32_t(v); }

/// A linear map on CRC registers over GF(2), as the images of its 32 basis
/// bits.
struct CrcOperator {
  uint32_t column[32];

  uint32_t apply(uint32_t v) const {
    uint32_t r = 0;
    for (int i = 0; v; ++i, v >>= 1)
      if (v & 1)
        r ^= column[i];
    return r;
  }
  CrcOperator then(const CrcOperator &next) const {
    CrcOperator r;
    for (int i = 0; i < 32; ++i)
      r.column[i] = next.apply(column[i]);
    return r;
  }
};

} // namespace

uint32_t gc::crc32Zeros(uint32_t crc, uint64_t count) {
  // Feeding a zero byte shifts the register and folds in the table entry of
  // the byte shifted out: linear in the register. Squaring that map gives
  // the maps of 2, 4, 8... zero bytes; count's bits pick which to apply.
  CrcOperator step;
  for (int i = 0; i < 32; ++i) {
    uint32_t bit = 1u << i;
    step.column[i] = (bit >> 8) ^ Crc.t[0][bit & 0xFF];
  }
  uint32_t reg = ~crc;
  for (; count; count >>= 1, step = step.then(step))
    if (count & 1)
      reg = step.apply(reg);
  return ~reg;
}

uint32_t gc::crc32(const MappedFile &file, uint64_t offset, uint64_t length, uint32_t crc) {
  scanFile(
      file, offset, length, [&](std::string_view piece) { crc = crc32(piece, crc); },
      [&](uint64_t hole) { crc = crc32Zeros(crc, hole); });
  return crc;
}

std::string ZipWriter::localExtra(std::string_view name, uint64_t size) const {
  std::string extra;
  if (needsZip64(size)) {
    put16(extra, Zip64ExtraId);
    put16(extra, 16);
    put64(extra, size);
    put64(extra, size);
  }
  // Pad with one extra block (4-byte block header, 2-byte alignment, zeros)
  // so the data starts on an alignment boundary.
  if (alignment_ > 1) {
    uint64_t unpadded =
        out_.size() + LocalHeaderSize + name.size() + extra.size() + AlignmentExtraMinSize;
    uint64_t padding = (alignment_ - unpadded % alignment_) % alignment_;
    put16(extra, AlignmentExtraId);
    put16(extra, uint16_t(AlignmentExtraMinSize - 4 + padding));
    put16(extra, uint16_t(std::min<uint32_t>(alignment_, 0xFFFF)));
    extra.append(padding, '\0');
  }
  assert(extra.size() <= 0xFFFF && "alignment too large for one extra field");
  return extra;
}

uint64_t ZipWriter::nextDataOffset(std::string_view name, uint64_t size) const {
  return out_.size() + LocalHeaderSize + name.size() + localExtra(name, size).size();
}

Error ZipWriter::add(std::string name, std::string_view data) {
  ZipPiece piece{data};
  return add(std::move(name), std::span(&piece, 1));
}

Error ZipWriter::add(std::string name, std::span<const ZipPiece> pieces) {
  assert(name.size() <= 0xFFFF && "entry name too long");
  uint64_t size = 0;
  uint32_t crc = 0;
  // The CRC goes in the local header, before the data: one pass over the
  // bytes (holes count as zeros without being read), then the copy.
  for (const ZipPiece &p : pieces) {
    size += p.bytes.size();
    crc = p.file ? crc32(*p.file, uint64_t(p.bytes.data() - p.file->text().data()),
                         p.bytes.size(), crc)
                 : crc32(p.bytes, crc);
  }

  uint64_t headerOffset = out_.size();
  std::string extra = localExtra(name, size);
  std::string header;
  put32(header, LocalHeaderSig);
  put16(header, needsZip64(size) ? VersionZip64 : VersionStored);
  put16(header, 0); // flags: sizes are known, no data descriptor
  put16(header, 0); // method: stored
  put16(header, FixedDosTime);
  put16(header, FixedDosDate);
  put32(header, crc);
  put32(header, classic32(size));
  put32(header, classic32(size));
  put16(header, uint16_t(name.size()));
  put16(header, uint16_t(extra.size()));
  header += name;
  header += extra;
  GC_RETURN_IF_ERROR(out_.write(header));
  for (const ZipPiece &p : pieces) {
    if (p.file)
      GC_RETURN_IF_ERROR(
          out_.copyFrom(*p.file, uint64_t(p.bytes.data() - p.file->text().data()), p.bytes.size()));
    else
      GC_RETURN_IF_ERROR(out_.write(p.bytes));
  }
  entries_.push_back({std::move(name), headerOffset, size, crc});
  return Error::success();
}

Error ZipWriter::finish() {
  uint64_t cdOffset = out_.size();
  std::string cd;
  for (const Pending &e : entries_) {
    // The zip64 block holds, in this order, the values whose field holds
    // the marker.
    std::string extra;
    for (uint64_t v : {e.size, e.size, e.headerOffset})
      if (needsZip64(v))
        put64(extra, v);
    if (!extra.empty()) {
      std::string block;
      put16(block, Zip64ExtraId);
      put16(block, uint16_t(extra.size()));
      extra = block + extra;
    }
    bool zip64 = !extra.empty();
    put32(cd, CentralHeaderSig);
    // Made by: MS-DOS, 2.0 (4.5 with zip64). With zero external attributes,
    // unzip then extracts with default permissions rather than mode 0000.
    put16(cd, zip64 ? VersionZip64 : 20);
    put16(cd, zip64 ? VersionZip64 : VersionStored);
    put16(cd, 0);
    put16(cd, 0);
    put16(cd, FixedDosTime);
    put16(cd, FixedDosDate);
    put32(cd, e.crc);
    put32(cd, classic32(e.size));
    put32(cd, classic32(e.size));
    put16(cd, uint16_t(e.name.size()));
    put16(cd, uint16_t(extra.size()));
    put16(cd, 0); // comment length
    put16(cd, 0); // disk number start
    put16(cd, 0); // internal attributes
    put32(cd, 0); // external attributes
    put32(cd, classic32(e.headerOffset));
    cd += e.name;
    cd += extra;
  }
  uint64_t cdSize = cd.size();
  uint64_t count = entries_.size();
  std::string end;
  if (count >= MaxClassicEntries || needsZip64(cdSize) || needsZip64(cdOffset)) {
    uint64_t record = cdOffset + cdSize;
    put32(end, Zip64EocdSig);
    put64(end, Zip64EocdSize - 12); // the record's size after this field
    put16(end, VersionZip64);        // made by
    put16(end, VersionZip64);        // needed to extract
    put32(end, 0);                   // this disk
    put32(end, 0);                   // disk with the central directory
    put64(end, count);
    put64(end, count);
    put64(end, cdSize);
    put64(end, cdOffset);
    put32(end, Zip64LocatorSig);
    put32(end, 0); // disk with the zip64 record
    put64(end, record);
    put32(end, 1); // disks in all
  }
  uint16_t classicCount = uint16_t(std::min(count, MaxClassicEntries));
  put32(end, EocdSig);
  put16(end, 0); // this disk
  put16(end, 0); // disk with the central directory
  put16(end, classicCount);
  put16(end, classicCount);
  put32(end, classic32(cdSize));
  put32(end, classic32(cdOffset));
  put16(end, 0); // comment length
  entries_.clear();
  GC_RETURN_IF_ERROR(out_.write(cd));
  return out_.write(end);
}
