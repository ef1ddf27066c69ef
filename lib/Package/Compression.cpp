//===- Compression.cpp - zstd for package sections ------------------------===//
#include "gc/Package/Compression.h"

#include <zstd.h>

#include <memory>

namespace gc {

namespace {

struct CCtxDeleter {
  void operator()(ZSTD_CCtx *c) const { ZSTD_freeCCtx(c); }
};

} // namespace

std::string compressZstd(std::string_view data, int level) {
  std::unique_ptr<ZSTD_CCtx, CCtxDeleter> ctx(ZSTD_createCCtx());
  ZSTD_CCtx_setParameter(ctx.get(), ZSTD_c_compressionLevel, level);
  ZSTD_CCtx_setParameter(ctx.get(), ZSTD_c_contentSizeFlag, 1);
  ZSTD_CCtx_setParameter(ctx.get(), ZSTD_c_checksumFlag, 1);
  std::string out(ZSTD_compressBound(data.size()), '\0');
  size_t n = ZSTD_compress2(ctx.get(), out.data(), out.size(), data.data(), data.size());
  // With a buffer of ZSTD_compressBound bytes compression cannot fail.
  out.resize(ZSTD_isError(n) ? 0 : n);
  return out;
}

Expected<std::string> decompressZstd(std::string_view frame, uint64_t maxSize,
                                     const std::string &what) {
  unsigned long long size = ZSTD_getFrameContentSize(frame.data(), frame.size());
  if (size == ZSTD_CONTENTSIZE_ERROR)
    return makeError() << what << ": not a zstd frame";
  if (size == ZSTD_CONTENTSIZE_UNKNOWN)
    return makeError() << what << ": the zstd frame does not declare its size";
  if (size > maxSize)
    return makeError() << what << ": declares " << size << " bytes uncompressed, more than the "
                       << maxSize << " allowed";
  size_t frameSize = ZSTD_findFrameCompressedSize(frame.data(), frame.size());
  if (ZSTD_isError(frameSize) || frameSize != frame.size())
    return makeError() << what << ": truncated or trailing bytes after the zstd frame";
  std::string out(size, '\0');
  size_t n = ZSTD_decompress(out.data(), out.size(), frame.data(), frame.size());
  if (ZSTD_isError(n))
    return makeError() << what << ": " << ZSTD_getErrorName(n);
  if (n != size)
    return makeError() << what << ": decompressed to " << n << " bytes, not the " << size
                       << " declared";
  return out;
}

} // namespace gc
