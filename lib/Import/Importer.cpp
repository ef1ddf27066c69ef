//===- Importer.cpp - torch.export archives to aten-level modules ---------===//
//
// A torch.export archive is a zip with one root folder holding
//   models/<name>.json                          the serialized ExportedProgram
//   data/weights/model_weights_config.json      fqn -> raw file + tensor meta
//   data/weights/<file>                         raw little-endian tensor bytes
//   data/constants/model_constants_config.json  the same, for tensor constants
// The JSON follows torch/_export/serde/schema.py (major version 8).
//
//===----------------------------------------------------------------------===//
#include "gc/Import/Importer.h"

#include "Autocast.h"
#include "NodeMetadata.h"

#include "gc/Import/SympyExpr.h"
#include "gc/IR/Describe.h"
#include "gc/IR/Names.h"
#include "gc/IR/OpSchema.h"
#include "gc/IR/PluginRows.h"
#include "gc/IR/Verifier.h"
#include "gc/Plugin/PluginLibrary.h"
#include "gc/Support/SHA256.h"
#include "gc/Support/Zip.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

namespace gc {

namespace {

// ordered_json keeps the file's member order, so weights keep torch's
// state-dict order.
using json = nlohmann::ordered_json;

constexpr int64_t kSchemaMajor = 8;
/// The newest minor version gc has read (torch 2.15 writes 8.20; the corpus
/// is 8.17). Newer minors only add to the schema, so gc reads them; but what
/// it cannot read in one is more likely a newer construct than a corrupt
/// file, and the error says so.
constexpr int64_t kNewestKnownMinor = 20;
constexpr uint64_t kBlobAlignment = 64;

/// Thrown inside the importer only, caught at its boundary, so that deep
/// JSON walking code can fail in one line; never escapes the library.
struct ImportFailure {
  std::string message;
};

[[noreturn]] void fail(const std::string &message) { throw ImportFailure{message}; }

const json &field(const json &obj, const char *key, const std::string &where) {
  if (!obj.is_object())
    fail(where + ": expected an object");
  auto it = obj.find(key);
  if (it == obj.end())
    fail(where + ": missing field '" + key + "'");
  return *it;
}

int64_t asInt(const json &j, const std::string &where) {
  if (!j.is_number_integer())
    fail(where + ": expected an integer");
  return j.get<int64_t>();
}

const std::string &asString(const json &j, const std::string &where) {
  if (!j.is_string())
    fail(where + ": expected a string");
  return j.get_ref<const std::string &>();
}

/// torch writes non-finite floats as the strings "Infinity", "-Infinity" and
/// "NaN", since JSON has no literal for them.
double asFloat(const json &j, const std::string &where) {
  if (j.is_number())
    return j.get<double>();
  if (j.is_string()) {
    const std::string &s = j.get_ref<const std::string &>();
    if (s == "Infinity")
      return std::numeric_limits<double>::infinity();
    if (s == "-Infinity")
      return -std::numeric_limits<double>::infinity();
    if (s == "NaN")
      return std::numeric_limits<double>::quiet_NaN();
  }
  fail(where + ": expected a float");
}

/// The single member of a union object such as {"as_tensor": {...}}.
std::pair<std::string, const json *> unionMember(const json &j, const std::string &where) {
  if (!j.is_object() || j.size() != 1)
    fail(where + ": expected an object with exactly one member");
  return {j.begin().key(), &j.begin().value()};
}

class Importer {
public:
  Importer(std::shared_ptr<MappedFile> file, const ImportOptions &options)
      : file_(std::move(file)), options_(options) {}

  Expected<ImportResult> run() {
    try {
      ImportResult result = importAll();
      return result;
    } catch (const ImportFailure &f) {
      std::string note;
      if (schemaMinor_ > kNewestKnownMinor)
        note = " (the archive's schema version is " + std::to_string(kSchemaMajor) + "." +
               std::to_string(schemaMinor_) + ", newer than the newest gc knows, " +
               std::to_string(kSchemaMajor) + "." + std::to_string(kNewestKnownMinor) +
               ": it may use a construct gc does not read yet)";
      return Error::failure("'" + file_->path() + "': " + f.message + note);
    } catch (const json::exception &e) {
      return Error::failure("'" + file_->path() + "': malformed JSON: " + e.what());
    }
  }

private:
  ImportResult importAll() {
    Expected<ZipArchive> zip = ZipArchive::open(file_);
    if (!zip)
      throw ImportFailure{stripPath(zip.error().message())};
    zip_ = &*zip;
    findRoot();
    module_ = std::make_unique<Module>();
    module_->setLevel(Level::Aten);

    std::string modelEntry = root_ + "models/" + options_.modelName + ".json";
    json program = parseJsonEntry(modelEntry);
    checkVersion(program, modelEntry);
    if (program.contains("torch_version") && program["torch_version"].is_string())
      module_->setProducer("torch " + program["torch_version"].get<std::string>());
    readRangeConstraints(program);
    readWeights("weights", "model_weights_config.json");
    readWeights("constants", "model_constants_config.json");
    const json &gm = field(program, "graph_module", modelEntry);
    readCallStructure(gm);
    readGraph(field(gm, "graph", "graph_module"), field(gm, "signature", "graph_module"));

    if (Error e = verifyModule(*module_))
      fail("imported module is invalid: " + e.message());
    ImportResult result;
    result.module = std::move(module_);
    result.blob = std::move(blob_);
    return result;
  }

  /// ZipArchive errors start with the quoted path, which run() adds again.
  std::string stripPath(const std::string &msg) const {
    std::string prefix = "'" + file_->path() + "': ";
    return msg.rfind(prefix, 0) == 0 ? msg.substr(prefix.size()) : msg;
  }

  /// The archive's entries live under one folder whose name torch derives
  /// from the file name; find it from the models/ entry.
  void findRoot() {
    std::string suffix = "models/" + options_.modelName + ".json";
    for (const ZipEntry &e : zip_->entries()) {
      if (e.name.size() >= suffix.size() &&
          e.name.compare(e.name.size() - suffix.size(), suffix.size(), suffix) == 0) {
        std::string root = e.name.substr(0, e.name.size() - suffix.size());
        if (root.empty() || (root.back() == '/' && root.find('/') == root.size() - 1)) {
          root_ = root;
          return;
        }
      }
    }
    fail("no '" + suffix + "' entry: not a torch.export archive, or the model has another name");
  }

  std::string_view entryData(const std::string &name) {
    const ZipEntry *e = zip_->find(name);
    if (!e)
      fail("missing entry '" + name + "'");
    Expected<std::string_view> data = zip_->read(*e);
    if (!data)
      fail(stripPath(data.error().message()));
    return *data;
  }

  json parseJsonEntry(const std::string &name) {
    std::string_view text = entryData(name);
    json j = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded())
      fail("entry '" + name + "' is not valid JSON");
    return j;
  }

  void checkVersion(const json &program, const std::string &where) {
    const json &v = field(program, "schema_version", where);
    int64_t major = asInt(field(v, "major", "schema_version"), "schema_version.major");
    int64_t minor = v.contains("minor") && v["minor"].is_number_integer() ? v["minor"].get<int64_t>() : 0;
    if (major != kSchemaMajor) {
      fail("schema version " + std::to_string(major) + "." + std::to_string(minor) +
           " is not supported; gc reads torch.export schema major version " +
           std::to_string(kSchemaMajor) + " (PyTorch 2.8 and later)");
    }
    schemaMinor_ = minor;
  }

  void readRangeConstraints(const json &program) {
    auto it = program.find("range_constraints");
    if (it == program.end() || it->is_null())
      return;
    for (auto &[name, range] : it->items()) {
      SymRange r;
      const json &lo = field(range, "min_val", "range_constraints." + name);
      const json &hi = field(range, "max_val", "range_constraints." + name);
      r.min = lo.is_number_integer() ? lo.get<int64_t>() : 0;
      // torch writes int_oo (no upper bound) as a very large number or null.
      r.max = hi.is_number_integer() ? hi.get<int64_t>() : SymRange::kUnbounded;
      if (hi.is_number_unsigned() && hi.get<uint64_t>() > uint64_t(SymRange::kUnbounded))
        r.max = SymRange::kUnbounded;
      module_->syms().setRange(name, r);
    }
  }

  const SymExpr *symInt(const json &j, const std::string &where) {
    auto [kind, value] = unionMember(j, where);
    if (kind == "as_int")
      return module_->syms().constant(asInt(*value, where));
    if (kind == "as_expr") {
      const std::string &text = asString(field(*value, "expr_str", where), where + ".expr_str");
      Expected<const SymExpr *> e = parseSympyExpr(text, module_->syms());
      if (!e)
        fail(where + ": " + e.error().message());
      return *e;
    }
    fail(where + ": unsupported symbolic int '" + kind + "'");
  }

  Device device(const json &j, const std::string &where) {
    const std::string &type = asString(field(j, "type", where), where + ".type");
    std::optional<Device> d = parseDevice(type);
    if (!d)
      fail(where + ": unsupported device '" + type + "'");
    auto idx = j.find("index");
    if (idx != j.end() && !idx->is_null())
      d->index = static_cast<int32_t>(asInt(*idx, where + ".index"));
    return *d;
  }

  DType dtype(const json &j, const std::string &where) {
    int64_t code = asInt(j, where);
    std::optional<DType> t = dtypeFromTorch(code);
    if (!t)
      fail(where + ": unknown or unsupported dtype " + std::to_string(code) +
           " (torch ScalarType number)");
    return *t;
  }

  TensorType tensorMeta(const json &meta, const std::string &where) {
    TensorType t;
    t.dtype = dtype(field(meta, "dtype", where), where + ": dtype");
    t.device = device(field(meta, "device", where), where + ".device");
    int64_t layout = asInt(field(meta, "layout", where), where + ".layout");
    if (layout != static_cast<int64_t>(Layout::Strided))
      fail(where + ": layout " + std::to_string(layout) + " is not supported; gc handles strided tensors");
    auto list = [&](const char *key) {
      std::vector<const SymExpr *> out;
      const json &a = field(meta, key, where);
      if (!a.is_array())
        fail(where + "." + key + ": expected a list");
      for (const json &s : a)
        out.push_back(symInt(s, where + "." + key));
      return out;
    };
    t.sizes = list("sizes");
    t.strides = list("strides");
    if (t.sizes.size() != t.strides.size())
      fail(where + ": sizes and strides differ in length");
    t.storageOffset = symInt(field(meta, "storage_offset", where), where + ".storage_offset");
    auto rg = meta.find("requires_grad");
    t.requiresGrad = rg != meta.end() && rg->is_boolean() && rg->get<bool>();
    return t;
  }

  /// Bytes a tensor with this metadata spans in its storage.
  uint64_t storageBytes(const TensorType &t, const std::string &where) {
    uint64_t extent = 1;
    for (size_t i = 0; i < t.sizes.size(); ++i) {
      if (!t.sizes[i]->isConst() || !t.strides[i]->isConst())
        fail(where + ": a weight has a symbolic size");
      int64_t size = t.sizes[i]->constant(), stride = t.strides[i]->constant();
      if (size == 0)
        return 0;
      uint64_t span;
      if (size < 0 || stride < 0 ||
          __builtin_mul_overflow(uint64_t(size - 1), uint64_t(stride), &span) ||
          __builtin_add_overflow(extent, span, &extent))
        fail(where + ": implausible size or stride");
    }
    uint64_t bytes;
    if (!t.storageOffset->isConst() || t.storageOffset->constant() < 0 ||
        __builtin_add_overflow(extent, uint64_t(t.storageOffset->constant()), &extent) ||
        __builtin_mul_overflow(extent, uint64_t(dtypeSize(t.dtype)), &bytes))
      fail(where + ": bad storage offset or size");
    return bytes;
  }

  uint32_t archiveSource() {
    if (archiveSource_)
      return *archiveSource_;
    WeightSource s{WeightSource::Kind::Archive, file_->path()};
    module_->weightSources().push_back(s);
    archiveSource_ = module_->weightSources().size() - 1;
    return *archiveSource_;
  }

  uint32_t blobSource() {
    if (blobSource_)
      return *blobSource_;
    WeightSource s{WeightSource::Kind::Blob, options_.blobPath};
    module_->weightSources().push_back(s);
    blobSource_ = module_->weightSources().size() - 1;
    return *blobSource_;
  }

  /// Reads data/<folder>/<config>: each entry names a raw file and its
  /// tensor metadata.
  void readWeights(const std::string &folder, const std::string &configName) {
    std::string configEntry = root_ + "data/" + folder + "/" + configName;
    if (!zip_->find(configEntry)) {
      if (folder == "weights")
        fail("missing entry '" + configEntry + "'");
      return;
    }
    json config = parseJsonEntry(configEntry);
    const json &entries = field(config, "config", configEntry);
    if (!entries.is_object())
      fail(configEntry + ": 'config' is not an object");
    for (auto &[fqn, entry] : entries.items()) {
      std::string where = "weight '" + fqn + "'";
      auto pickle = entry.find("use_pickle");
      if (pickle != entry.end() && pickle->is_boolean() && pickle->get<bool>())
        fail(where + " is pickled (use_pickle: true); gc reads only raw tensor data, "
                     "and tensor subclasses are not supported");
      auto meta = entry.find("tensor_meta");
      if (meta == entry.end() || meta->is_null())
        fail(where + " has no tensor metadata; tensor subclasses and non-tensor "
                     "constants are not supported");
      Weight w;
      w.name = fqn;
      w.type = tensorMeta(*meta, where);
      std::string path = root_ + "data/" + folder + "/" +
                         asString(field(entry, "path_name", where), where + ".path_name");
      std::string_view data = entryData(path);
      uint64_t need = storageBytes(w.type, where);
      if (data.size() != need)
        fail(where + " (entry '" + path + "') has " + std::to_string(data.size()) +
             " bytes, but its metadata needs " + std::to_string(need));
      w.bytes = data.size();
      if (options_.hashWeights)
        w.sha256 = sha256Hex(data);
      if (options_.weights == ImportOptions::WeightMode::Reference) {
        w.source = archiveSource();
        w.offset = static_cast<uint64_t>(data.data() - file_->text().data());
      } else {
        w.source = blobSource();
        blob_.resize((blob_.size() + kBlobAlignment - 1) / kBlobAlignment * kBlobAlignment, '\0');
        w.offset = blob_.size();
        blob_.append(data);
      }
      module_->weights().push_back(std::move(w));
    }
  }

  // ---- graph ----

  Value *lookup(const std::string &name, const std::string &where) {
    auto it = values_.find(name);
    if (it == values_.end())
      fail(where + ": uses '" + name + "', which is not defined before it");
    return it->second;
  }

  Type valueType(const std::string &name, const std::string &where) {
    auto it = tensorValues_->find(name);
    if (it == tensorValues_->end())
      fail(where + ": no tensor metadata for '" + name + "'");
    return Type::makeTensor(tensorMeta(*it, "tensor '" + name + "'"));
  }

  Value *tensorRef(const json &j, const std::string &where) {
    return lookup(asString(field(j, "name", where), where), where);
  }

  Arg symIntArg(const json &j, const std::string &where, Arg &out) {
    auto [kind, v] = unionMember(j, where);
    if (kind == "as_name") {
      out.values.push_back(lookup(asString(*v, where), where));
      out.ints.push_back(0);
    } else if (kind == "as_int") {
      out.values.push_back(nullptr);
      out.ints.push_back(asInt(*v, where));
    } else {
      fail(where + ": unsupported symbolic int argument '" + kind + "'");
    }
    return out;
  }

  Arg argument(const json &j, const std::string &where) {
    auto [kind, v] = unionMember(j, where);
    Arg a;
    if (kind == "as_none") {
      a.kind = ArgKind::None;
    } else if (kind == "as_tensor") {
      a = Arg::tensor(tensorRef(*v, where));
    } else if (kind == "as_tensors") {
      a.kind = ArgKind::Tensors;
      for (const json &t : *v)
        a.values.push_back(tensorRef(t, where));
    } else if (kind == "as_optional_tensor") {
      auto [k2, v2] = unionMember(*v, where);
      if (k2 == "as_tensor")
        a = Arg::tensor(tensorRef(*v2, where));
    } else if (kind == "as_optional_tensors") {
      a.kind = ArgKind::OptionalTensors;
      for (const json &t : *v) {
        auto [k2, v2] = unionMember(t, where);
        a.values.push_back(k2 == "as_tensor" ? tensorRef(*v2, where) : nullptr);
      }
    } else if (kind == "as_int") {
      a = Arg::integer(asInt(*v, where));
    } else if (kind == "as_ints") {
      a.kind = ArgKind::Ints;
      for (const json &i : *v)
        a.ints.push_back(asInt(i, where));
    } else if (kind == "as_float") {
      a = Arg::real(asFloat(*v, where));
    } else if (kind == "as_floats") {
      a.kind = ArgKind::Floats;
      for (const json &f : *v)
        a.floats.push_back(asFloat(f, where));
    } else if (kind == "as_bool") {
      if (!v->is_boolean())
        fail(where + ": expected a boolean");
      a = Arg::boolean(v->get<bool>());
    } else if (kind == "as_bools") {
      a.kind = ArgKind::Bools;
      for (const json &b : *v) {
        if (!b.is_boolean())
          fail(where + ": expected a boolean");
        a.ints.push_back(b.get<bool>() ? 1 : 0);
      }
    } else if (kind == "as_string") {
      a = Arg::string(asString(*v, where));
    } else if (kind == "as_strings") {
      a.kind = ArgKind::Strings;
      for (const json &s : *v)
        a.strings.push_back(asString(s, where));
    } else if (kind == "as_sym_int") {
      a.kind = ArgKind::SymInt;
      symIntArg(*v, where, a);
    } else if (kind == "as_sym_ints") {
      a.kind = ArgKind::SymInts;
      for (const json &s : *v)
        symIntArg(s, where, a);
    } else if (kind == "as_sym_float" || kind == "as_sym_bool") {
      a.kind = kind == "as_sym_float" ? ArgKind::SymFloat : ArgKind::SymBool;
      auto [k2, v2] = unionMember(*v, where);
      if (k2 != "as_name")
        fail(where + ": a constant " + kind + " is not supported");
      a.values.push_back(lookup(asString(*v2, where), where));
    } else if (kind == "as_scalar_type") {
      a = Arg::scalarType(dtype(*v, where));
    } else if (kind == "as_memory_format") {
      int64_t m = asInt(*v, where);
      if (m < 0 || m > static_cast<int64_t>(MemoryFormat::Preserve))
        fail(where + ": unknown memory format " + std::to_string(m));
      a.kind = ArgKind::MemoryFormat;
      a.ints.push_back(m);
    } else if (kind == "as_layout") {
      int64_t l = asInt(*v, where);
      if (l < 0 || l > static_cast<int64_t>(Layout::Strided))
        fail(where + ": unknown layout " + std::to_string(l));
      a.kind = ArgKind::Layout;
      a.ints.push_back(l);
    } else if (kind == "as_device") {
      a.kind = ArgKind::Device;
      a.device = device(*v, where);
    } else {
      fail(where + ": argument kind '" + kind + "' is not supported");
    }
    return a;
  }

  /// A node's results: one tensor, a tuple of tensors (several entries) or a
  /// list (one as_tensors entry); symbolic ints are results too, and a list
  /// within a tuple is flattened into it.
  std::pair<std::vector<std::pair<std::string, Type>>, ResultForm>
  results(const json &outputs, const std::string &where) {
    std::vector<std::pair<std::string, Type>> out;
    if (!outputs.is_array())
      fail(where + ": 'outputs' is not a list");
    auto one = [&](const json &o) {
      auto [kind, v] = unionMember(o, where + " output");
      if (kind == "as_tensor") {
        std::string name = asString(field(*v, "name", where), where);
        out.emplace_back(name, valueType(name, where));
      } else if (kind == "as_sym_int" || kind == "as_sym_float" || kind == "as_sym_bool") {
        auto [k2, v2] = unionMember(*v, where);
        if (k2 != "as_name")
          fail(where + ": a constant output is not supported");
        Type::Kind t = kind == "as_sym_int"     ? Type::Kind::SymInt
                       : kind == "as_sym_float" ? Type::Kind::SymFloat
                                                : Type::Kind::SymBool;
        out.emplace_back(asString(*v2, where), Type::makeScalar(t));
      } else if (kind == "as_tensors" && outputs.size() > 1) {
        // A list inside a tuple (histogramdd's bin edges): its tensors
        // become results of their own, in order.
        for (const json &t : *v) {
          std::string name = asString(field(t, "name", where), where);
          out.emplace_back(name, valueType(name, where));
        }
      } else {
        fail(where + ": output kind '" + kind + "' is not supported");
      }
    };
    if (outputs.size() == 1 && outputs[0].contains("as_tensors")) {
      for (const json &t : outputs[0]["as_tensors"]) {
        std::string name = asString(field(t, "name", where), where);
        out.emplace_back(name, valueType(name, where));
      }
      return {std::move(out), ResultForm::List};
    }
    for (const json &o : outputs)
      one(o);
    return {std::move(out), outputs.size() == 1 ? ResultForm::Single : ResultForm::Tuple};
  }

  InputSpec inputSpec(const json &spec, std::string &argName) {
    auto [kind, v] = unionMember(spec, "input spec");
    std::string where = "input spec '" + kind + "'";
    InputSpec s;
    auto argTensorName = [&]() {
      const json &arg = field(*v, "arg", where);
      // user inputs wrap the argument in a union, the others do not.
      if (arg.contains("as_tensor"))
        return asString(field(arg["as_tensor"], "name", where), where);
      if (arg.contains("name"))
        return asString(arg["name"], where);
      fail(where + ": only tensor inputs are supported");
    };
    if (kind == "user_input") {
      s.kind = InputKind::UserInput;
      argName = argTensorName();
      s.target = argName;
    } else if (kind == "parameter") {
      s.kind = InputKind::Parameter;
      argName = argTensorName();
      s.target = asString(field(*v, "parameter_name", where), where);
    } else if (kind == "buffer") {
      s.kind = InputKind::Buffer;
      argName = argTensorName();
      s.target = asString(field(*v, "buffer_name", where), where);
      auto p = v->find("persistent");
      s.persistent = p == v->end() || !p->is_boolean() || p->get<bool>();
    } else if (kind == "tensor_constant") {
      s.kind = InputKind::Constant;
      argName = argTensorName();
      s.target = asString(field(*v, "tensor_constant_name", where), where);
    } else if (kind == "token") {
      s.kind = InputKind::Token;
      argName = argTensorName();
    } else {
      fail(where + " is not supported (custom objects and constant inputs are not)");
    }
    return s;
  }

  OutputSpec outputSpec(const json &spec, std::string &argName) {
    auto [kind, v] = unionMember(spec, "output spec");
    std::string where = "output spec '" + kind + "'";
    const json &arg = field(*v, "arg", where);
    if (arg.contains("as_tensor"))
      argName = asString(field(arg["as_tensor"], "name", where), where);
    else if (arg.contains("name"))
      argName = asString(arg["name"], where);
    else
      fail(where + ": only tensor outputs are supported");
    static const std::pair<const char *, std::pair<OutputKind, const char *>> kinds[] = {
        {"user_output", {OutputKind::UserOutput, nullptr}},
        {"loss_output", {OutputKind::LossOutput, nullptr}},
        {"buffer_mutation", {OutputKind::BufferMutation, "buffer_name"}},
        {"user_input_mutation", {OutputKind::UserInputMutation, "user_input_name"}},
        {"parameter_mutation", {OutputKind::ParameterMutation, "parameter_name"}},
        {"gradient_to_parameter", {OutputKind::GradientToParameter, "parameter_name"}},
        {"gradient_to_user_input", {OutputKind::GradientToUserInput, "user_input_name"}},
        {"token", {OutputKind::Token, nullptr}},
    };
    for (const auto &[name, info] : kinds) {
      if (kind != name)
        continue;
      OutputSpec s;
      s.kind = info.first;
      if (info.second)
        s.target = asString(field(*v, info.second, where), where);
      return s;
    }
    fail(where + " is not supported");
  }

  /// Imports one node of the graph being read into `g`: an ATen op becomes a
  /// node; a higher-order op that only sets a mode around its subgraph, or
  /// only marks it, is inlined (inlineRegion).
  void importNode(Graph &g, const json &node) {
    std::string name = node.contains("name") && node["name"].is_string()
                           ? node["name"].get<std::string>()
                           : std::string("?");
    const std::string &target = asString(field(node, "target", "node '" + name + "'"), name);
    std::string where = "node '" + name + "' (" + target + ")" + locSuffix(sourceLoc(node));
    static const std::string kTorchOps = "torch.ops.";
    std::string op = target.rfind(kTorchOps, 0) == 0 ? target.substr(kTorchOps.size()) : target;
    if (op == "higher_order.wrap_with_set_grad_enabled") {
      inlineGradModeRegion(g, node, where);
      return;
    }
    if (op == "higher_order.wrap_with_autocast") {
      inlineAutocastRegion(g, node, where);
      return;
    }
    // invoke_subgraph(subgraph, identifier, *operands) and
    // tag_activation_checkpoint(subgraph, *operands) mean "call this
    // subgraph"; the marks ask for sharing or recomputation, which gc's
    // partitioner decides for itself.
    if (op == "higher_order.invoke_subgraph" || op == "higher_order.tag_activation_checkpoint") {
      size_t firstOperand = op == "higher_order.invoke_subgraph" ? 2 : 1;
      bindResults(g, node, where, inlineRegion(g, node, where, 0, firstOperand), false);
      return;
    }
    std::optional<OpId> id = lookupOp(op);
    // Control flow (cond, while_loop) stays an op that calls graphs.
    if (id && callsGraphs(*id)) {
      importGraphCall(g, node, *id, where);
      return;
    }
    // map, scan and the other higher-order ops hold subgraphs that gc
    // neither inlines nor calls yet.
    if (op.rfind("higher_order.", 0) == 0)
      fail(where + ": this higher-order op is not supported yet (it holds a subgraph); gc "
                   "inlines wrap_with_set_grad_enabled, wrap_with_autocast, invoke_subgraph "
                   "and tag_activation_checkpoint, and keeps cond and while_loop");
    // A user's op (torch.library) only a plugin can give.
    if (!id && isTorchOpName(op))
      fail(where + ": gc does not know this op (docs/ops.md lists the ops it compiles)");
    if (!id)
      fail(where + ": gc does not know this op; if a plugin defines it, " + kPluginHint);
    std::vector<NamedArg> args;
    for (const json &in : field(node, "inputs", where)) {
      NamedArg na;
      na.name = asString(field(in, "name", where), where);
      auto kind = in.find("kind");
      na.keywordOnly = kind != in.end() && kind->is_number_integer() && kind->get<int64_t>() == 2;
      na.value = argument(field(in, "arg", where), where + ", argument '" + na.name + "'");
      args.push_back(std::move(na));
    }
    if (!autocast_.empty() && autocast_.back().enabled)
      applyAutocast(g, *id, args);
    addImportedNode(g, *id, std::move(args), node, where, std::nullopt);
  }

  /// The node's place in the user's model (NodeMetadata.h), interned.
  const SourceLoc *sourceLoc(const json &node) {
    std::optional<SourceLoc> loc = sourceLocOf(node);
    return loc ? module_->locations().intern(*loc) : nullptr;
  }

  /// Adds a call of `id` to `g` with the results `node` lists, each under
  /// its own name in the exported graph; `form` overrides the result form
  /// those results are written in.
  void addImportedNode(Graph &g, OpId id, std::vector<NamedArg> args, const json &node,
                       const std::string &where, std::optional<ResultForm> form) {
    auto [res, listed] = results(field(node, "outputs", where), where);
    std::vector<std::string> names;
    for (auto &r : res) {
      if (values_.count(r.first))
        fail(where + ": defines '" + r.first + "' a second time");
      names.push_back(r.first);
      r.first = valueName(r.first);
    }
    Node *n = g.addNode(id, std::move(args), std::move(res), form.value_or(listed));
    n->setLoc(sourceLoc(node));
    for (size_t i = 0; i < names.size(); ++i)
      values_[names[i]] = n->results()[i];
  }


  /// The name of a new value of the graph, given its name in the exported
  /// graph or subgraph that defines it. A value of an inlined subgraph keeps
  /// its own name unless the top-level graph (or an earlier inlined value)
  /// has it; then it takes "<subgraph>_<name>", numbered if need be.
  std::string valueName(const std::string &name) {
    std::string chosen = name;
    if (!regionPrefixes_.empty())
      for (int k = 1; topLevelNames_.count(chosen) || usedNames_.count(chosen); ++k)
        chosen = regionPrefixes_.back() + "_" + name + (k > 1 ? "_" + std::to_string(k) : "");
    usedNames_.insert(chosen);
    return chosen;
  }

  /// A torch.export GraphArgument: the subgraph's name in its exported
  /// program and its graph (inputs, nodes, outputs, tensor metadata).
  struct GraphArgument {
    std::string name;
    const json *body;
    std::string where; ///< names the node and the subgraph, for errors
  };

  GraphArgument graphArgument(const json &arg, const std::string &where,
                              const std::string &argName) {
    auto [kind, sub] = unionMember(arg, where + ", argument '" + argName + "'");
    if (kind != "as_graph")
      fail(where + ": argument '" + argName + "' is not a graph");
    std::string name = asString(field(*sub, "name", where), where);
    return {name, &field(*sub, "graph", where), where + ", subgraph '" + name + "'"};
  }

  /// cond(pred, true_fn, false_fn, operands) and while_loop(cond_fn,
  /// body_fn, carried_inputs, additional_inputs): torch writes the arguments
  /// without names, in the schema's order; they take the schema's names
  /// here. Each subgraph becomes a graph of the module (importCalledGraph)
  /// that the node names.
  void importGraphCall(Graph &g, const json &node, OpId id, const std::string &where) {
    const OpSchema &schema = opSchema(id);
    const json &inputs = field(node, "inputs", where);
    if (!inputs.is_array() || inputs.size() != schema.args.size())
      fail(where + ": expected " + std::to_string(schema.args.size()) + " arguments " +
           schema.schema + ", got " + std::to_string(inputs.is_array() ? inputs.size() : 0));
    std::vector<NamedArg> args;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const ArgDef &def = schema.args[i];
      const json &arg = field(inputs[i], "arg", where);
      std::string argWhere = where + ", argument '" + def.name + "'";
      Arg a;
      if (def.type == "Graph") {
        a = Arg::graph(importCalledGraph(graphArgument(arg, where, def.name)));
      } else {
        a = argument(arg, argWhere);
        bool fits = def.type == "Tensor" ? a.kind == ArgKind::Tensor : a.kind == ArgKind::Tensors;
        if (!fits)
          fail(argWhere + ": expected " + def.type + " (symbolic ints and constants as "
                          "operands of control flow are not supported yet)");
      }
      args.push_back(NamedArg{def.name, false, std::move(a)});
    }
    // The schema returns Tensor[], however torch lists the results.
    addImportedNode(g, id, std::move(args), node, where, ResultForm::List);
  }

  /// Imports a subgraph as a graph of the module with its own scope: its
  /// inputs are user inputs named as in the subgraph, and it reads nothing
  /// of the graph that calls it (torch.export passes every parameter and
  /// captured value as an operand). Returns the graph's name: the
  /// subgraph's, numbered if the module has a graph of that name already
  /// (nested control flow reuses torch's names).
  std::string importCalledGraph(const GraphArgument &sub) {
    std::string name = sub.name;
    for (int k = 2; module_->graph(name); ++k)
      name = sub.name + "_" + std::to_string(k);
    if (!isValueName(name))
      fail(sub.where + ": '" + name + "' is not a valid graph name");
    Graph &callee = module_->addGraph(name);

    auto saved = std::make_tuple(std::move(values_), tensorValues_, std::move(regionPrefixes_),
                                 std::move(topLevelNames_), std::move(usedNames_));
    values_.clear();
    regionPrefixes_.clear();
    topLevelNames_.clear();
    usedNames_.clear();
    const json &body = *sub.body;
    tensorValues_ = &field(body, "tensor_values", sub.where);
    for (const auto &[v, meta] : tensorValues_->items())
      topLevelNames_.insert(v);
    for (const json &in : field(body, "inputs", sub.where)) {
      auto [kind, v] = unionMember(in, sub.where + " input");
      if (kind != "as_tensor")
        fail(sub.where + ": an input of kind '" + kind + "' is not supported yet");
      std::string input = asString(field(*v, "name", sub.where), sub.where);
      if (values_.count(input))
        fail(sub.where + ": input '" + input + "' appears twice");
      values_[input] = callee.addInput(input, valueType(input, sub.where + " input"),
                                       InputSpec{InputKind::UserInput, input, true});
      usedNames_.insert(input);
    }
    for (const json &n : field(body, "nodes", sub.where))
      importNode(callee, n);
    for (const json &o : field(body, "outputs", sub.where)) {
      auto [kind, v] = unionMember(o, sub.where + " output");
      if (kind != "as_tensor")
        fail(sub.where + ": an output of kind '" + kind + "' is not supported yet");
      callee.addOutput(lookup(asString(field(*v, "name", sub.where), sub.where),
                              sub.where + " output"),
                       OutputSpec{});
    }
    std::tie(values_, tensorValues_, regionPrefixes_, topLevelNames_, usedNames_) =
        std::move(saved);
    return name;
  }

  /// Inlines the subgraph that input `subgraphArg` of the higher-order
  /// `node` holds, called on inputs `firstOperand`... of the node (tensors
  /// or symbolic ints, read in the enclosing scope); returns the values of
  /// the subgraph's outputs.
  std::vector<Value *> inlineRegion(Graph &g, const json &node, const std::string &where,
                                    size_t subgraphArg, size_t firstOperand) {
    const json &inputs = field(node, "inputs", where);
    if (!inputs.is_array() || inputs.size() < firstOperand)
      fail(where + ": expected at least " + std::to_string(firstOperand) + " arguments");
    GraphArgument sub = graphArgument(field(inputs[subgraphArg], "arg", where), where, "subgraph");
    const std::string &subName = sub.name;
    const json &body = *sub.body;
    const std::string &inner = sub.where;

    std::vector<Value *> operands;
    for (size_t i = firstOperand; i < inputs.size(); ++i) {
      std::string which = "operand " + std::to_string(i - firstOperand);
      Arg a = argument(field(inputs[i], "arg", where), where + ", " + which);
      if ((a.kind != ArgKind::Tensor && a.kind != ArgKind::SymInt) || a.values.size() != 1 ||
          !a.values[0])
        fail(where + ": " + which + " is not a tensor or symbolic int");
      operands.push_back(a.values[0]);
    }
    const json &params = field(body, "inputs", inner);
    if (!params.is_array() || params.size() != operands.size())
      fail(inner + ": takes " + std::to_string(params.is_array() ? params.size() : 0) +
           " inputs, the node passes " + std::to_string(operands.size()));

    // The subgraph's own scope: its parameters stand for the operands, and
    // its values' metadata is its own.
    std::unordered_map<std::string, Value *> saved = std::move(values_);
    values_.clear();
    const json *savedMeta = tensorValues_;
    regionPrefixes_.push_back(subName);
    for (size_t i = 0; i < params.size(); ++i) {
      auto [pk, pv] = unionMember(params[i], inner + " input");
      if (pk != "as_tensor" && pk != "as_sym_int")
        fail(inner + ": input " + std::to_string(i) + " is a '" + pk + "'");
      std::string pname = asString(pk == "as_tensor" ? field(*pv, "name", inner)
                                                     : field(*pv, "as_name", inner),
                                   inner);
      values_[pname] = operands[i];
    }
    tensorValues_ = &field(body, "tensor_values", inner);
    for (const json &n : field(body, "nodes", inner))
      importNode(g, n);
    std::vector<Value *> produced;
    for (const json &o : field(body, "outputs", inner)) {
      auto [ok, ov] = unionMember(o, inner + " output");
      if (ok != "as_tensor")
        fail(inner + ": an output of kind '" + ok + "' is not supported");
      produced.push_back(lookup(asString(field(*ov, "name", inner), inner), inner + " output"));
    }
    regionPrefixes_.pop_back();
    tensorValues_ = savedMeta;
    values_ = std::move(saved);
    return produced;
  }

  /// Makes the results of the higher-order `node` name the values its
  /// inlined subgraph `produced`; `detach` passes each floating-point one
  /// through aten.detach first.
  void bindResults(Graph &g, const json &node, const std::string &where,
                   const std::vector<Value *> &produced, bool detach) {
    auto [res, form] = results(field(node, "outputs", where), where);
    if (res.size() != produced.size())
      fail(where + ": has " + std::to_string(res.size()) + " results, its subgraph returns " +
           std::to_string(produced.size()));
    for (size_t i = 0; i < res.size(); ++i) {
      const std::string &outer = res[i].first;
      if (values_.count(outer))
        fail(where + ": defines '" + outer + "' a second time");
      Value *v = produced[i];
      if (detach && v->type().kind == Type::Kind::Tensor &&
          isFloatingPoint(v->type().tensor.dtype))
        v = g.addNode(ops::aten_detach_default, {NamedArg{"self", false, Arg::tensor(v)}},
                      {{valueName(outer), res[i].second}}, ResultForm::Single)
                ->results()[0];
      values_[outer] = v;
    }
  }

  /// torch.ops.higher_order.wrap_with_set_grad_enabled(enabled, subgraph,
  /// *operands): runs the subgraph with autograd switched on or off. A graph
  /// of gc is one function with no grad mode, so the subgraph's nodes are
  /// inlined in place. With grad disabled, each result passes through
  /// aten.detach, which the joint graph treats as cutting the gradient, as
  /// torch's autograd does for values made under no_grad.
  void inlineGradModeRegion(Graph &g, const json &node, const std::string &where) {
    const json &inputs = field(node, "inputs", where);
    if (!inputs.is_array() || inputs.size() < 2)
      fail(where + ": expected (enabled, subgraph, operands...)");
    Arg enabled = argument(field(inputs[0], "arg", where), where + ", argument 'enabled'");
    if (enabled.kind != ArgKind::Bool)
      fail(where + ": argument 'enabled' is not a boolean");
    bindResults(g, node, where, inlineRegion(g, node, where, 1, 2), enabled.ints.at(0) == 0);
  }

  /// An autocast region being inlined.
  struct AutocastScope {
    AutocastDevice device;
    DType lower; ///< the region's lower-precision dtype
    bool enabled;
    /// Casts made in the region so far, so that a weight used twice is cast
    /// once, as autocast's cast cache does.
    std::map<std::pair<Value *, DType>, Value *> casts;
  };

  /// torch.ops.higher_order.wrap_with_autocast(device_type, dtype, enabled,
  /// cache_enabled, subgraph, *operands): runs the subgraph under autocast.
  /// The subgraph's ops are inlined with the casts autocast makes (Autocast.h)
  /// written out as aten._to_copy nodes; the subgraph's metadata already
  /// gives their results the dtypes those casts lead to.
  void inlineAutocastRegion(Graph &g, const json &node, const std::string &where) {
    const json &inputs = field(node, "inputs", where);
    if (!inputs.is_array() || inputs.size() < 5)
      fail(where + ": expected (device_type, dtype, enabled, cache_enabled, subgraph, operands...)");
    Arg deviceType = argument(field(inputs[0], "arg", where), where + ", argument 'device_type'");
    Arg dtypeArg = argument(field(inputs[1], "arg", where), where + ", argument 'dtype'");
    Arg enabled = argument(field(inputs[2], "arg", where), where + ", argument 'enabled'");
    if (deviceType.kind != ArgKind::String || enabled.kind != ArgKind::Bool ||
        (dtypeArg.kind != ArgKind::ScalarType && dtypeArg.kind != ArgKind::None))
      fail(where + ": expected a device type string, a dtype or None, and a boolean 'enabled'");
    std::optional<AutocastDevice> device = autocastDevice(deviceType.strings.at(0));
    if (!device)
      fail(where + ": autocast on device '" + deviceType.strings.at(0) +
           "' is not supported (gc knows the rules of 'cpu' and 'cuda')");
    // torch's defaults when the region names no dtype.
    DType lower = dtypeArg.kind == ArgKind::ScalarType
                      ? static_cast<DType>(dtypeArg.ints.at(0))
                      : (*device == AutocastDevice::Cpu ? DType::BFloat16 : DType::Float16);
    if (lower != DType::BFloat16 && lower != DType::Float16)
      fail(where + ": autocast to " + std::string(dtypeName(lower)) +
           " is not supported (float16 or bfloat16)");
    autocast_.push_back(AutocastScope{*device, lower, enabled.ints.at(0) != 0, {}});
    std::vector<Value *> produced = inlineRegion(g, node, where, 4, 5);
    autocast_.pop_back();
    bindResults(g, node, where, produced, false);
  }

  /// Casts the floating-point tensor arguments of a call of `op` as the
  /// innermost autocast region's rule for it says.
  void applyAutocast(Graph &g, OpId op, std::vector<NamedArg> &args) {
    AutocastScope &scope = autocast_.back();
    AutocastRule rule = autocastRule(op, scope.device);
    if (rule == AutocastRule::Keep)
      return;
    // A call that chooses its own dtype is left alone, as autocast leaves it.
    for (const NamedArg &a : args)
      if (a.name == "dtype" && a.value.kind != ArgKind::None)
        return;
    std::vector<Value **> tensors;
    for (NamedArg &a : args)
      if (a.value.kind == ArgKind::Tensor || a.value.kind == ArgKind::Tensors ||
          a.value.kind == ArgKind::OptionalTensors)
        for (Value *&v : a.value.values)
          if (v && v->type().kind == Type::Kind::Tensor && isFloatingPoint(v->type().tensor.dtype))
            tensors.push_back(&v);
    auto dtypeOf = [](Value *v) { return v->type().tensor.dtype; };
    std::optional<DType> to;
    if (rule == AutocastRule::Lower) {
      to = scope.lower;
    } else if (rule == AutocastRule::Float32) {
      to = DType::Float32;
    } else {
      std::set<DType> seen;
      for (Value **v : tensors)
        seen.insert(dtypeOf(*v));
      if (seen.size() > 1)
        to = seen.count(DType::Float64) ? DType::Float64 : DType::Float32;
    }
    if (!to)
      return;
    for (Value **v : tensors) {
      // Lower and Float32 leave float64 alone: autocast casts only the
      // floating types narrower than double.
      if (dtypeOf(*v) == *to || (rule != AutocastRule::Widest && dtypeOf(*v) == DType::Float64))
        continue;
      Value *&cast = scope.casts[{*v, *to}];
      if (!cast) {
        TensorType t = (*v)->type().tensor;
        t.dtype = *to;
        cast = g.addNode(ops::aten__to_copy_default,
                         {NamedArg{"self", false, Arg::tensor(*v)},
                          NamedArg{"dtype", true, Arg::scalarType(*to)}},
                         {{valueName((*v)->name() + "_autocast"), Type::makeTensor(std::move(t))}},
                         ResultForm::Single)
                   ->results()[0];
      }
      *v = cast;
    }
  }

  // ---- the call's structure ----

  /// The names a pytree node gives its `n` children, from its context
  /// (JSON in a string): a dict's keys, a dataclass's field names (the first
  /// of its two lists: fields that hold values); null when the context names
  /// no children (tuples, lists, a named tuple's class), which indices reach.
  json childKeys(const json &spec, size_t n, const std::string &where) {
    const json &ctx = field(spec, "context", where);
    if (!ctx.is_string())
      return nullptr;
    json keys = json::parse(ctx.get_ref<const std::string &>(), nullptr, false);
    if (keys.is_object() && keys.contains("dict_context")) // collections.defaultdict
      keys = keys["dict_context"];
    if (keys.is_array() && keys.size() == 2 && keys[0].is_array() && keys[0].size() == n)
      keys = json(keys[0]);
    bool named = keys.is_array() && keys.size() == n &&
                 std::all_of(keys.begin(), keys.end(), [](const json &k) {
                   return k.is_string() || k.is_number_integer();
                 });
    return named ? keys : json(nullptr);
  }

  /// The paths of a pytree spec's leaves, in flattening order, each
  /// `prefix` followed by the accessors that reach it: [i] for tuples, lists
  /// and named tuples, ['key'] for dicts, .name for other registered types
  /// (dataclasses, Hugging Face's ModelOutput), whose context lists their
  /// field names (childKeys). A node is {"type", "context",
  /// "children_spec"}; a leaf has type null.
  void treeLeafPaths(const json &spec, const std::string &prefix, const std::string &where,
                     std::vector<std::string> &out) {
    const json &type = field(spec, "type", where);
    const json &children = field(spec, "children_spec", where);
    if (!children.is_array())
      fail(where + ": 'children_spec' is not a list");
    if (type.is_null()) {
      out.push_back(prefix);
      return;
    }
    const std::string &typeName = asString(type, where + ".type");
    json keys = childKeys(spec, children.size(), where);
    bool named = !keys.is_null();
    bool dictLike = typeName == "builtins.dict" || typeName == "collections.OrderedDict" ||
                    typeName == "collections.defaultdict";
    for (size_t i = 0; i < children.size(); ++i) {
      std::string step = "[" + std::to_string(i) + "]";
      if (named && (dictLike || keys[i].is_number_integer()))
        step = keys[i].is_string() ? "['" + keys[i].get<std::string>() + "']"
                                   : "[" + std::to_string(keys[i].get<int64_t>()) + "]";
      else if (named && typeName != "builtins.tuple" && typeName != "builtins.list")
        step = "." + keys[i].get<std::string>();
      treeLeafPaths(children[i], prefix + step, where, out);
    }
  }

  /// A spec as torch writes it: the JSON text of [protocol, tree].
  json treeSpec(const json &text, const std::string &where) {
    json spec = json::parse(asString(text, where), nullptr, false);
    if (!spec.is_array() || spec.size() != 2 || !spec[0].is_number_integer() || spec[0] != 1)
      fail(where + ": not a pytree spec of protocol 1");
    return spec[1];
  }

  /// Names each user input and output by its place in the exported call
  /// (InputSpec::path, OutputSpec::path), from the root module's in_spec
  /// and out_spec. Inputs are (args, kwargs): a positional argument is named
  /// by forward_arg_names, a keyword one by its key. An archive without a
  /// call graph (hand-made ones) leaves the paths empty.
  void readCallStructure(const json &gm) {
    auto calls = gm.find("module_call_graph");
    if (calls == gm.end() || !calls->is_array() || calls->empty())
      return;
    const json &root = (*calls)[0];
    auto sig = root.find("signature");
    if (sig == root.end() || sig->is_null())
      return;
    std::string where = "module_call_graph signature";
    std::vector<std::string> argNames;
    if (auto names = sig->find("forward_arg_names"); names != sig->end() && names->is_array())
      for (const json &n : *names)
        argNames.push_back(asString(n, where + ".forward_arg_names"));

    std::vector<std::string> inputs;
    json in = treeSpec(field(*sig, "in_spec", where), where + ".in_spec");
    const json &top = field(in, "children_spec", where + ".in_spec");
    if (!top.is_array() || top.size() != 2)
      fail(where + ".in_spec: expected the pair (args, kwargs)");
    const json &args = field(top[0], "children_spec", where + ".in_spec args");
    for (size_t i = 0; i < args.size(); ++i)
      treeLeafPaths(args[i], i < argNames.size() ? argNames[i] : "args[" + std::to_string(i) + "]",
                    where + ".in_spec", inputs);
    // Keyword arguments are named by their keys, as the call spells them.
    const json &kwargs = field(top[1], "children_spec", where + ".in_spec kwargs");
    if (!kwargs.is_array())
      fail(where + ".in_spec kwargs: 'children_spec' is not a list");
    json kwargNames = childKeys(top[1], kwargs.size(), where + ".in_spec kwargs");
    for (size_t i = 0; i < kwargs.size(); ++i)
      treeLeafPaths(kwargs[i],
                    kwargNames.is_null() || !kwargNames[i].is_string()
                        ? "kwargs[" + std::to_string(i) + "]"
                        : kwargNames[i].get<std::string>(),
                    where + ".in_spec", inputs);
    std::vector<std::string> outputs;
    treeLeafPaths(treeSpec(field(*sig, "out_spec", where), where + ".out_spec"), "",
                  where + ".out_spec", outputs);

    inputPaths_ = std::move(inputs);
    outputPaths_ = std::move(outputs);
  }

  /// The path of the next user input or output the graph reads, from the
  /// call structure, or "" without one; `count` says how many it had.
  std::string nextPath(const std::optional<std::vector<std::string>> &paths, size_t &count,
                       const char *what) {
    if (!paths)
      return {};
    if (count >= paths->size())
      fail("module_call_graph signature: the call structure has " +
           std::to_string(paths->size()) + " " + what + ", the graph more");
    return (*paths)[count++];
  }

  void readGraph(const json &graph, const json &signature) {
    tensorValues_ = &field(graph, "tensor_values", "graph");
    for (const char *kind : {"tensor_values", "sym_int_values", "sym_float_values", "sym_bool_values"})
      if (auto it = graph.find(kind); it != graph.end() && it->is_object())
        for (const auto &[name, meta] : it->items())
          topLevelNames_.insert(name);
    Graph &g = module_->addGraph("forward");

    size_t userInputs = 0, userOutputs = 0;
    const json &inputSpecs = field(signature, "input_specs", "signature");
    for (const json &spec : inputSpecs) {
      std::string name;
      InputSpec s = inputSpec(spec, name);
      if (s.kind == InputKind::UserInput)
        s.path = nextPath(inputPaths_, userInputs, "inputs");
      if (values_.count(name))
        fail("graph input '" + name + "' appears twice");
      values_[name] = g.addInput(name, valueType(name, "graph input"), s);
      usedNames_.insert(name);
    }

    for (const json &node : field(graph, "nodes", "graph"))
      importNode(g, node);

    const json &outputSpecs = field(signature, "output_specs", "signature");
    for (const json &spec : outputSpecs) {
      std::string name;
      OutputSpec s = outputSpec(spec, name);
      if (s.kind == OutputKind::UserOutput)
        s.path = nextPath(outputPaths_, userOutputs, "outputs");
      g.addOutput(lookup(name, "graph output"), s);
    }
    if ((inputPaths_ && userInputs != inputPaths_->size()) ||
        (outputPaths_ && userOutputs != outputPaths_->size()))
      fail("module_call_graph signature: the call structure has " +
           std::to_string(inputPaths_->size()) + " inputs and " +
           std::to_string(outputPaths_->size()) + " outputs, the graph " +
           std::to_string(userInputs) + " and " + std::to_string(userOutputs));
  }

  std::shared_ptr<MappedFile> file_;
  const ImportOptions &options_;
  const ZipArchive *zip_ = nullptr;
  std::string root_;
  std::unique_ptr<Module> module_;
  std::string blob_;
  std::optional<uint32_t> archiveSource_, blobSource_;
  const json *tensorValues_ = nullptr;
  int64_t schemaMinor_ = 0;
  std::unordered_map<std::string, Value *> values_;
  /// The names of the subgraphs being inlined, innermost last.
  std::vector<std::string> regionPrefixes_;
  /// The paths of the user inputs and outputs in the exported call, if the
  /// archive records its structure (readCallStructure).
  std::optional<std::vector<std::string>> inputPaths_, outputPaths_;
  /// The autocast regions being inlined, innermost last.
  std::vector<AutocastScope> autocast_;
  /// Every name the top-level graph's metadata gives a value: an inlined
  /// value never takes one of them.
  std::unordered_set<std::string> topLevelNames_;
  /// The names of the graph's values so far.
  std::unordered_set<std::string> usedNames_;
};

} // namespace

Expected<ImportResult> importArchive(std::shared_ptr<MappedFile> archive,
                                     const ImportOptions &options) {
  return Importer(std::move(archive), options).run();
}

} // namespace gc
