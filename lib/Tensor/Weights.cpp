//===- Weights.cpp - A module's weights as tensors ------------------------===//
#include "gc/Tensor/Weights.h"

#include "gc/Support/FileSystem.h"

#include <algorithm>

namespace gc {

Expected<std::map<std::string, Tensor>> loadWeights(const Module &m,
                                                    std::span<const std::string> names) {
  std::map<std::string, Tensor> out;
  std::vector<std::shared_ptr<MappedFile>> files(m.weightSources().size());
  const auto &pending = m.pendingBlob();
  for (const Weight &w : m.weights()) {
    if (!names.empty() && std::find(names.begin(), names.end(), w.name) == names.end())
      continue;
    const WeightSource &src = m.weightSources()[w.source];
    if (src.kind == WeightSource::Kind::Program)
      continue;
    std::string path = resolvePath(src.path, m.sourceBaseDir());
    if (!files[w.source] && pending && pending->source == w.source)
      files[w.source] = MappedFile::fromBuffer("<constants in memory>", pending->bytes);
    if (!files[w.source]) {
      Expected<std::shared_ptr<MappedFile>> f = MappedFile::open(path);
      if (!f)
        return makeError() << "weight '" << w.name << "': its source is missing: "
                           << f.error().message();
      files[w.source] = *f;
    }
    std::span<const uint8_t> bytes = files[w.source]->bytes();
    if (w.offset > bytes.size() || w.bytes > bytes.size() - w.offset)
      return makeError() << "weight '" << w.name << "': source '" << path << "' has "
                         << bytes.size() << " bytes, too few for " << w.bytes
                         << " bytes at offset " << w.offset;
    Shape sizes, strides;
    for (size_t i = 0; i < w.type.rank(); ++i) {
      if (!w.type.sizes[i]->isConst() || !w.type.strides[i]->isConst())
        return makeError() << "weight '" << w.name << "' has a symbolic size";
      sizes.push_back(w.type.sizes[i]->constant());
      strides.push_back(w.type.strides[i]->constant());
    }
    unsigned elem = dtypeSize(w.type.dtype);
    Tensor storage = Tensor::zeros(w.type.dtype, {static_cast<int64_t>(w.bytes / elem)});
    std::copy_n(bytes.data() + w.offset, w.bytes, storage.storage()->data());
    try {
      out[w.name] = storage.asStrided(sizes, strides, w.type.storageOffset->constant());
    } catch (const TensorError &e) {
      return makeError() << "weight '" << w.name << "': " << e.what();
    }
  }
  return out;
}

} // namespace gc
