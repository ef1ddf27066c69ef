//===- import-fuzzer.cpp - Fuzzing the archive and JSON readers -----------===//
//
// An input starting with the zip signature "PK" is read as a whole archive.
// Any other input is taken as the model JSON and wrapped in a well-formed
// archive with an empty weights config, so that mutations reach the JSON
// reader instead of dying in the zip reader. Whatever imports is also
// written and read back in both file forms.
//
//===----------------------------------------------------------------------===//
#include "RoundTrip.h"

#include "gc/Import/Importer.h"
#include "gc/Support/Zip.h"

using namespace gc;

static std::string wrapModelJson(std::string_view json) {
  ZipBuffer zip;
  zip.add("model/data/weights/model_weights_config.json", R"({"config": {}})");
  zip.add("model/models/model.json", json);
  return zip.finish();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string bytes(reinterpret_cast<const char *>(data), size);
  if (bytes.rfind("PK", 0) != 0)
    bytes = wrapModelJson(bytes);
  ImportOptions options;
  options.weights = ImportOptions::WeightMode::Blob;
  options.blobPath = "fuzz.weights";
  Expected<ImportResult> r = importArchive(MappedFile::fromBuffer("fuzz.pt2", bytes), options);
  if (r)
    checkRoundTrip(*r->module);
  return 0;
}
