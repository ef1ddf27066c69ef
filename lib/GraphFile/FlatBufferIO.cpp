//===- FlatBufferIO.cpp - The binary graph file ---------------------------===//
//
// The layout is formats/graph.fbs. Tables are written and read field by
// field from the declarations of include/gc/IR/Fields.h (field id i lives at
// vtable offset 4 + 2i), with one codec per field type; the few records whose
// C++ form is a class (graph values, nodes, outputs, symbols, expressions)
// get small mirror structs declared the same way. Writing walks the module in
// one fixed order, so the bytes depend only on the module. Reading trusts
// nothing: the verifier flatc generates from graph.fbs checks that every
// table, vector and string lies in the buffer, and the codecs then check what
// it cannot (enum values, expression and value indices, canonical
// expressions, definition before use) before the module is rebuilt through
// the IR's own API. Other indices are the verifier's (gc/IR/Verifier.h).
//
//===----------------------------------------------------------------------===//

#include "gc/GraphFile/FlatBufferIO.h"

#include "gc/GraphFile/FileTables.h"
#include "gc/IR/PluginRows.h"
#include "gc/GraphFile/graph_generated.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_map>

namespace gc {
namespace {

using flatbuffers::uoffset_t;
using flatbuffers::voffset_t;
using TableVector = flatbuffers::Vector<flatbuffers::Offset<flatbuffers::Table>>;

/// Where field `id` of a table lives in its vtable.
constexpr voffset_t slot(size_t id) { return static_cast<voffset_t>(4 + 2 * id); }

/// Expressions deeper than this are refused on reading, so that the
/// recursive walks over expressions (printing, comparing, writing) cannot
/// exhaust the stack on a hostile file. Real sizes are a few levels deep.
constexpr unsigned kMaxExprDepth = 512;

/// Fields the codecs write as scalars in the table itself; the rest are
/// offsets to strings, vectors or tables written before it (an op is
/// stored by name, so that OpDefs.def may gain rows anywhere).
template <class M>
constexpr bool kScalar = std::is_arithmetic_v<M> || (std::is_enum_v<M> && !std::is_same_v<M, OpId>) ||
                         std::is_same_v<M, const SymExpr *> || std::is_same_v<M, const SourceLoc *> ||
                         std::is_same_v<M, Device>;

/// The value a scalar field takes when the file leaves it out: an enum's
/// first value, as in every FlatBuffers schema, else the IR struct's default
/// (graph.fbs gives the same: persistent = true, offset = -1, ...).
template <class M> M fileDefault(const M &structDefault) {
  return std::is_enum_v<M> ? M{} : structDefault;
}

/// What a scalar is stored as: enums as their underlying type, bools as
/// bytes (a hostile byte other than 0 or 1 must not become a bool).
template <class M> auto underlying(M v) {
  if constexpr (std::is_enum_v<M>)
    return static_cast<std::underlying_type_t<M>>(v);
  else if constexpr (std::is_same_v<M, bool>)
    return static_cast<uint8_t>(v);
  else
    return v;
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

class ModuleWriter {
public:
  std::string write(const Module &m) {
    // Offsets first, in one fixed order; the expression and location tables
    // last, since writing the rest numbers the entries it uses.
    std::vector<uoffset_t> graphs;
    for (const auto &g : m.graphs())
      graphs.push_back(writeGraph(*g));
    uoffset_t offsets[kLocations + 1] = {};
    offsets[kGraphs] = offsetsVector(graphs);
    offsets[kSources] = put(m.weightSources(), Plain{});
    offsets[kWeights] = put(m.weights(), Plain{});
    offsets[kLoopGraphs] = put(m.loopGraphs(), Plain{});
    offsets[kProducer] = put(m.producer(), Plain{});
    offsets[kTarget] = put(m.target(), Plain{});
    std::vector<FileSymbol> symbols;
    for (const auto &[name, range] : m.syms().ranges())
      symbols.push_back({name, range.min, range.max});
    offsets[kSymbols] = put(symbols, Plain{});
    offsets[kExpressions] = put(exprs_, Plain{});
    offsets[kLocations] = put(locs_, Plain{});

    uoffset_t start = fbb_.StartTable();
    fb::FormatVersion version(kFormatMajor, kFormatMinor);
    fbb_.AddStruct(slot(kVersion), &version);
    fbb_.AddElement<uint8_t>(slot(kLevel), underlying(m.level()), 0);
    for (size_t id = kProducer; id <= kLocations; ++id)
      addOffset(id, offsets[id]);
    fbb_.Finish(flatbuffers::Offset<fb::Module>(fbb_.EndTable(start)), kFileIdentifier);
    return std::string(reinterpret_cast<const char *>(fbb_.GetBufferPointer()), fbb_.GetSize());
  }

private:
  void addOffset(size_t id, uoffset_t offset) {
    if (offset)
      fbb_.AddOffset(slot(id), flatbuffers::Offset<void>(offset));
  }

  /// A declared struct as a table: its offsets first (a table cannot be
  /// built while another is), then the table.
  template <Declared T> uoffset_t table(const T &v) {
    std::array<uoffset_t, std::tuple_size_v<std::remove_cvref_t<decltype(kFields<T>)>>> offsets{};
    forEachField<T>([&](size_t id, const auto &f) {
      if constexpr (!kScalar<std::remove_cvref_t<decltype(v.*f.member)>>)
        offsets[id] = put(v.*f.member, typename std::remove_cvref_t<decltype(f)>::Codec{});
      return true;
    });
    uoffset_t start = fbb_.StartTable();
    static const T defaults{};
    forEachField<T>([&](size_t id, const auto &f) {
      if constexpr (kScalar<std::remove_cvref_t<decltype(v.*f.member)>>)
        addScalar(id, v.*f.member, fileDefault(defaults.*f.member));
      else
        addOffset(id, offsets[id]);
      return true;
    });
    return fbb_.EndTable(start);
  }

  // Scalars, left out where they hold the struct's default.
  template <class M> void addScalar(size_t id, M v, M def) {
    fbb_.AddElement(slot(id), underlying(v), underlying(def));
  }
  void addScalar(size_t id, double v, double def) {
    // -0.0 equals the default 0 and would be left out, losing its sign.
    fbb_.ForceDefaults(v == def && std::signbit(v) != std::signbit(def));
    fbb_.AddElement(slot(id), v, def);
    fbb_.ForceDefaults(false);
  }
  void addScalar(size_t id, const SymExpr *e, const SymExpr *) {
    fbb_.AddElement<int32_t>(slot(id), exprIndex(e), -1);
  }
  void addScalar(size_t id, const SourceLoc *l, const SourceLoc *) {
    fbb_.AddElement<int32_t>(slot(id), locIndex(l), -1);
  }
  void addScalar(size_t id, Device d, Device def) {
    fb::Device device(static_cast<fb::DeviceKind>(d.kind), d.index);
    if (d != def)
      fbb_.AddStruct(slot(id), &device);
  }

  // Everything else, as an offset; empty strings, vectors and default
  // tables are left out, and readers take absent as empty.
  uoffset_t put(const std::string &s, Plain) {
    return s.empty() ? 0 : fbb_.CreateString(s).o;
  }
  uoffset_t put(const std::string &s, Bytes) {
    return s.empty() ? 0
                     : fbb_.CreateVector(reinterpret_cast<const uint8_t *>(s.data()), s.size()).o;
  }
  uoffset_t put(OpId op, Plain) { return op == OpId{} ? 0 : fbb_.CreateString(opName(op)).o; }
  template <class M>
    requires std::is_arithmetic_v<M>
  uoffset_t put(const std::vector<M> &v, auto) {
    return v.empty() ? 0 : fbb_.CreateVector(v).o;
  }
  uoffset_t put(const std::vector<std::string> &v, Plain) {
    return v.empty() ? 0 : fbb_.CreateVectorOfStrings(v).o;
  }
  uoffset_t put(const std::vector<const SymExpr *> &v, Plain) {
    std::vector<int32_t> indices;
    for (const SymExpr *e : v)
      indices.push_back(exprIndex(e));
    return put(indices, Plain{});
  }
  uoffset_t put(const std::vector<Value *> &v, Plain) {
    std::vector<int32_t> indices;
    for (const Value *value : v)
      indices.push_back(value ? valueIndex_.at(value) : -1);
    return put(indices, Plain{});
  }
  uoffset_t put(const std::vector<InplacePair> &v, Plain) {
    std::vector<fb::InplacePair> pairs;
    for (const InplacePair &p : v)
      pairs.emplace_back(p.output, p.input);
    return v.empty() ? 0 : fbb_.CreateVectorOfStructs(pairs).o;
  }
  template <Declared T> uoffset_t put(const T &v, Plain) { return v == T{} ? 0 : table(v); }
  /// An optional record is written whenever it is there, default or not.
  template <Declared T> uoffset_t put(const std::optional<T> &v, Plain) {
    return v ? table(*v) : 0;
  }
  template <Declared T> uoffset_t put(const std::vector<T> &v, Plain) {
    std::vector<uoffset_t> tables;
    for (const T &t : v)
      tables.push_back(table(t));
    return offsetsVector(tables);
  }
  template <Declared T> uoffset_t put(const std::vector<std::unique_ptr<T>> &v, Plain) {
    std::vector<uoffset_t> tables;
    for (const auto &t : v)
      tables.push_back(table(*t));
    return offsetsVector(tables);
  }
  uoffset_t offsetsVector(const std::vector<uoffset_t> &tables) {
    std::vector<flatbuffers::Offset<flatbuffers::Table>> offsets(tables.begin(), tables.end());
    return offsets.empty() ? 0 : fbb_.CreateVector(offsets).o;
  }

  /// Numbers expressions in post-order of first use, so that operands come
  /// before their users; the map only answers lookups, never decides order.
  int32_t exprIndex(const SymExpr *e) {
    if (!e)
      return -1;
    if (auto it = exprIndex_.find(e); it != exprIndex_.end())
      return it->second;
    FileExpr node{e->kind(), e->isConst() ? e->constant() : 0,
                  e->isSymbol() ? e->symbolName() : std::string(), {}};
    for (const SymExpr *op : e->operands())
      node.operands.push_back(static_cast<uint32_t>(exprIndex(op)));
    exprs_.push_back(std::move(node));
    return exprIndex_[e] = static_cast<int32_t>(exprs_.size() - 1);
  }

  /// Numbers locations in order of first use.
  int32_t locIndex(const SourceLoc *l) {
    if (!l)
      return -1;
    auto [it, fresh] = locIndex_.try_emplace(l, static_cast<int32_t>(locs_.size()));
    if (fresh)
      locs_.push_back(*l);
    return it->second;
  }

  /// A graph's values are listed inputs first, then node results in order;
  /// arguments and outputs refer to them by index.
  uoffset_t writeGraph(const Graph &g) {
    FileGraph file{g.name(), {}, g.inputSpecs(), {}, {}};
    valueIndex_.clear();
    auto define = [&](const Value *v) {
      valueIndex_[v] = static_cast<int32_t>(file.values.size());
      // Only a tensor's type has contents; a scalar's `tensor` is unused.
      file.values.push_back({v->name(), v->type().kind,
                             v->type().isTensor() ? v->type().tensor : TensorType{}});
    };
    for (const Value *v : g.inputs())
      define(v);
    for (const auto &n : g.nodes()) {
      FileNode &node =
          file.nodes.emplace_back(FileNode{n->op(), n->resultForm(), n->args(), {}, n->loc()});
      for (const Value *v : n->results()) {
        node.results.push_back(static_cast<uint32_t>(file.values.size()));
        define(v);
      }
    }
    for (size_t i = 0; i < g.outputs().size(); ++i) {
      const OutputSpec &spec = g.outputSpecs()[i];
      const Value *v = g.outputs()[i];
      file.outputs.push_back({v ? valueIndex_.at(v) : -1, spec.kind, spec.target, spec.aliasOf, spec.path});
    }
    return table(file);
  }

  flatbuffers::FlatBufferBuilder fbb_;
  std::vector<FileExpr> exprs_;
  std::unordered_map<const SymExpr *, int32_t> exprIndex_;
  std::vector<SourceLoc> locs_;
  std::unordered_map<const SourceLoc *, int32_t> locIndex_;
  /// Values of the graph being written, by index.
  std::unordered_map<const Value *, int32_t> valueIndex_;
};

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

/// Symbol names must print and parse back in the text form: the name alone
/// must parse as that symbol (which refuses "min", "2x", "a.b", ...).
bool isValidSymbolName(std::string_view name) {
  SymContext scratch;
  Expected<const SymExpr *> e = scratch.parse(name);
  return e && (*e)->isSymbol() && (*e)->symbolName() == name;
}

/// Rebuilds a module from a verified buffer. Errors name the path of the
/// field at fault ("loop_graphs[0].nodes[2].ranges[1]: ..."), without the
/// file name, which the caller puts in front.
class ModuleReader {
public:
  Expected<std::unique_ptr<Module>> read(const flatbuffers::Table &root) {
    auto m = std::make_unique<Module>();
    module_ = m.get();
    Level level{};
    std::string producer;
    std::vector<FileSymbol> symbols;
    std::vector<FileExpr> exprs;
    GC_RETURN_IF_ERROR(field(&root, kLevel, kModuleFields[kLevel], level, Level{}));
    GC_RETURN_IF_ERROR(field(&root, kProducer, kModuleFields[kProducer], producer));
    GC_RETURN_IF_ERROR(field(&root, kSymbols, kModuleFields[kSymbols], symbols));
    GC_RETURN_IF_ERROR(field(&root, kExpressions, kModuleFields[kExpressions], exprs));
    std::optional<Target> target;
    GC_RETURN_IF_ERROR(field(&root, kTarget, kModuleFields[kTarget], target));
    if (target)
      m->setTarget(std::move(*target));
    m->setLevel(level);
    m->setProducer(std::move(producer));
    for (const FileSymbol &s : symbols) {
      if (!isValidSymbolName(s.name))
        return makeError() << "invalid symbol name '" << s.name << "'";
      if (m->syms().range(s.name))
        return makeError() << "symbol '" << s.name << "' is listed twice";
      m->syms().setRange(s.name, {s.min, s.max});
    }
    GC_RETURN_IF_ERROR(buildExpressions(exprs));
    std::vector<SourceLoc> locs;
    GC_RETURN_IF_ERROR(field(&root, kLocations, kModuleFields[kLocations], locs));
    for (const SourceLoc &l : locs)
      locs_.push_back(m->locations().intern(l));
    GC_RETURN_IF_ERROR(field(&root, kSources, kModuleFields[kSources], m->weightSources()));
    GC_RETURN_IF_ERROR(field(&root, kWeights, kModuleFields[kWeights], m->weights()));
    const auto *graphs = root.GetPointer<const TableVector *>(slot(kGraphs));
    for (uint32_t i = 0; graphs && i < graphs->size(); ++i)
      GC_RETURN_IF_ERROR(readGraph(*graphs->Get(i), std::string(kModuleFields[kGraphs]) + index(i)));
    // Loop graphs hold no values, so an argument naming one is refused.
    defined_.clear();
    std::vector<LoopGraph> loopGraphs;
    GC_RETURN_IF_ERROR(field(&root, kLoopGraphs, kModuleFields[kLoopGraphs], loopGraphs));
    for (LoopGraph &g : loopGraphs)
      m->addLoopGraph(g.name) = std::move(g);
    return m;
  }

private:
  /// Reads field `id` of `t` into `out`, with `name` on the error path.
  template <class M, class C = Plain>
  Error field(const flatbuffers::Table *t, size_t id, std::string_view name, M &out,
              const M &def = M{}, C codec = {}) {
    OnPath on(path_, (path_.empty() ? "" : ".") + std::string(name));
    return get(*t, slot(id), out, def, codec);
  }
  /// Reads field I of the declared struct T alone.
  template <size_t I, Declared T> Error member(const flatbuffers::Table &t, T &out) {
    const auto &f = std::get<I>(kFields<T>);
    return field(&t, I, f.name, out.*f.member);
  }
  ErrorBuilder fail() const {
    ErrorBuilder b;
    b << path_ << ": ";
    return b;
  }

  template <Declared T> Error table(const flatbuffers::Table &t, T &out) {
    [[maybe_unused]] static const T defaults{};
    Error e = Error::success();
    forEachField<T>([&](size_t id, const auto &f) {
      e = field(&t, id, f.name, out.*f.member, fileDefault(defaults.*f.member),
                typename std::remove_cvref_t<decltype(f)>::Codec{});
      return !e;
    });
    return e;
  }

  // One codec per field type.
  template <class M>
    requires(std::is_arithmetic_v<M> || std::is_enum_v<M>)
  Error get(const flatbuffers::Table &t, voffset_t at, M &out, M def, auto) {
    auto v = t.GetField(at, underlying(def));
    if constexpr (std::is_enum_v<M>)
      if (v >= EnumInfo<M>::count)
        return fail() << "unknown value " << static_cast<int>(v);
    out = static_cast<M>(v);
    return Error::success();
  }
  Error get(const flatbuffers::Table &t, voffset_t at, const SymExpr *&out, const SymExpr *,
            Plain) {
    return expr(t.GetField<int32_t>(at, -1), /*optional=*/true, out);
  }
  Error get(const flatbuffers::Table &t, voffset_t at, const SourceLoc *&out, const SourceLoc *,
            Plain) {
    int32_t index = t.GetField<int32_t>(at, -1);
    if (index != -1 && (index < 0 || static_cast<size_t>(index) >= locs_.size()))
      return fail() << "location index " << index << " is out of range (the file has "
                    << locs_.size() << ")";
    out = index == -1 ? nullptr : locs_[index];
    return Error::success();
  }
  Error get(const flatbuffers::Table &t, voffset_t at, Device &out, const Device &, Plain) {
    const auto *d = t.GetStruct<const fb::Device *>(at);
    if (!d)
      return Error::success();
    if (static_cast<size_t>(d->kind()) >= EnumInfo<DeviceKind>::count)
      return fail() << "unknown device kind " << static_cast<int>(d->kind());
    // An index is 0 or more, or -1 for none: the text form ("cpu", "cuda:1")
    // has no way to hold another (found by graph-fuzzer).
    if (d->index() < -1)
      return fail() << "device index " << d->index() << " is negative";
    out = {static_cast<DeviceKind>(d->kind()), d->index()};
    return Error::success();
  }
  Error get(const flatbuffers::Table &t, voffset_t at, std::string &out, const std::string &,
            Plain) {
    const auto *s = t.GetPointer<const flatbuffers::String *>(at);
    out = s ? s->str() : std::string();
    return Error::success();
  }
  Error get(const flatbuffers::Table &t, voffset_t at, std::string &out, const std::string &,
            Bytes) {
    const auto *v = t.GetPointer<const flatbuffers::Vector<uint8_t> *>(at);
    out = v ? std::string(reinterpret_cast<const char *>(v->data()), v->size()) : "";
    return Error::success();
  }
  Error get(const flatbuffers::Table &t, voffset_t at, OpId &out, OpId, Plain) {
    const auto *s = t.GetPointer<const flatbuffers::String *>(at);
    std::optional<OpId> op = s ? lookupOp(s->string_view()) : OpId{};
    if (!op)
      return fail() << unknownOpMessage(s->string_view());
    out = *op;
    return Error::success();
  }
  /// The verifier aligns vectors to 4 bytes only, so a hostile file can
  /// misplace one of 8-byte scalars; elements are copied bytewise.
  template <class M>
    requires std::is_arithmetic_v<M>
  Error get(const flatbuffers::Table &t, voffset_t at, std::vector<M> &out,
            const std::vector<M> &, auto) {
    const auto *v = t.GetPointer<const flatbuffers::Vector<M> *>(at);
    out.resize(v ? v->size() : 0);
    for (size_t i = 0; i < out.size(); ++i) {
      M x;
      std::memcpy(&x, v->Data() + i * sizeof(M), sizeof(M));
      out[i] = flatbuffers::EndianScalar(x);
    }
    return Error::success();
  }
  Error get(const flatbuffers::Table &t, voffset_t at, std::vector<std::string> &out,
            const std::vector<std::string> &, Plain) {
    const auto *v = t.GetPointer<const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>> *>(at);
    for (uint32_t i = 0; v && i < v->size(); ++i)
      out.push_back(v->Get(i)->str());
    return Error::success();
  }
  /// Every size, stride and range is an expression; none may be missing
  /// (the printer would follow a null one: found by graph-fuzzer).
  Error get(const flatbuffers::Table &t, voffset_t at, std::vector<const SymExpr *> &out,
            const std::vector<const SymExpr *> &, Plain) {
    std::vector<int32_t> indices;
    GC_RETURN_IF_ERROR(get(t, at, indices, {}, Plain{}));
    for (size_t i = 0; i < indices.size(); ++i) {
      OnPath on(path_, index(i));
      GC_RETURN_IF_ERROR(expr(indices[i], /*optional=*/false, out.emplace_back()));
    }
    return Error::success();
  }
  Error get(const flatbuffers::Table &t, voffset_t at, std::vector<Value *> &out,
            const std::vector<Value *> &, Plain) {
    std::vector<int32_t> indices;
    GC_RETURN_IF_ERROR(get(t, at, indices, {}, Plain{}));
    for (size_t i = 0; i < indices.size(); ++i) {
      OnPath on(path_, index(i));
      int32_t index = indices[i];
      if (index != -1 && (index < 0 || static_cast<size_t>(index) >= defined_.size()))
        return fail() << "value index " << index << " is not a value defined before the node";
      out.push_back(index == -1 ? nullptr : defined_[index]);
    }
    return Error::success();
  }
  Error get(const flatbuffers::Table &t, voffset_t at, std::vector<InplacePair> &out,
            const std::vector<InplacePair> &, Plain) {
    const auto *v = t.GetPointer<const flatbuffers::Vector<const fb::InplacePair *> *>(at);
    for (uint32_t i = 0; v && i < v->size(); ++i)
      out.push_back({v->Get(i)->output(), v->Get(i)->input()});
    return Error::success();
  }
  template <Declared T>
  Error get(const flatbuffers::Table &t, voffset_t at, T &out, const T &, Plain) {
    const auto *sub = t.GetPointer<const flatbuffers::Table *>(at);
    return sub ? table(*sub, out) : Error::success();
  }
  template <Declared T>
  Error get(const flatbuffers::Table &t, voffset_t at, std::optional<T> &out,
            const std::optional<T> &, Plain) {
    const auto *sub = t.GetPointer<const flatbuffers::Table *>(at);
    return sub ? table(*sub, out.emplace()) : Error::success();
  }
  template <Declared T>
  Error get(const flatbuffers::Table &t, voffset_t at, std::vector<T> &out,
            const std::vector<T> &, Plain) {
    const auto *v = t.GetPointer<const TableVector *>(at);
    out.resize(v ? v->size() : 0);
    for (uint32_t i = 0; i < out.size(); ++i) {
      OnPath on(path_, index(i));
      GC_RETURN_IF_ERROR(table(*v->Get(i), out[i]));
    }
    return Error::success();
  }
  /// Puts `part` on the error path while it lives.
  struct OnPath {
    OnPath(std::string &path, const std::string &part) : path(path), depth(path.size()) { path += part; }
    ~OnPath() { path.resize(depth); }
    std::string &path;
    size_t depth;
  };
  static std::string index(size_t i) { return "[" + std::to_string(i) + "]"; }

  Error expr(int32_t index, bool optional, const SymExpr *&out) const {
    if (index == -1 && optional) {
      out = nullptr;
      return Error::success();
    }
    if (index < 0 || static_cast<size_t>(index) >= exprs_.size())
      return fail() << "expression index " << index << " is out of range (the file has "
                    << exprs_.size() << ")";
    out = exprs_[index];
    return Error::success();
  }

  /// Builds expression `node` from already built operands through the
  /// canonical builders.
  Expected<const SymExpr *> buildExpr(const FileExpr &node,
                                      const std::vector<const SymExpr *> &ops) {
    SymContext &ctx = module_->syms();
    using Kind = SymExpr::Kind;
    Kind kind = node.kind;
    bool binary = kind == Kind::FloorDiv || kind == Kind::Mod;
    bool leaf = kind == Kind::Const || kind == Kind::Symbol;
    if (leaf ? !ops.empty() : binary ? ops.size() != 2 : ops.size() < 2)
      return makeError() << "has " << ops.size() << " operands";
    switch (kind) {
    case Kind::Const:
      return ctx.constant(node.constant);
    case Kind::Symbol:
      if (!isValidSymbolName(node.symbol))
        return makeError() << "has an invalid symbol name '" << node.symbol << "'";
      return ctx.symbol(node.symbol);
    case Kind::FloorDiv:
      return ctx.floorDiv(ops[0], ops[1]);
    case Kind::Mod:
      return ctx.mod(ops[0], ops[1]);
    default:
      break;
    }
    // A canonical product has no sum among its factors. Checking first keeps
    // a hostile product of sums from expanding before it is refused.
    if (kind == Kind::Mul)
      for (const SymExpr *op : ops)
        if (op->kind() == Kind::Add)
          return makeError() << "is not in canonical form";
    // Combine pairwise: these are associative and commutative on the
    // canonical form, and pairs keep long sums O(n log n).
    std::vector<const SymExpr *> work = ops;
    while (work.size() > 1) {
      size_t n = 0;
      for (size_t i = 0; i + 1 < work.size(); i += 2) {
        const SymExpr *a = work[i], *b = work[i + 1];
        work[n++] = kind == Kind::Add   ? ctx.add(a, b)
                    : kind == Kind::Mul ? ctx.mul(a, b)
                    : kind == Kind::Min ? ctx.min(a, b)
                                        : ctx.max(a, b);
      }
      if (work.size() % 2)
        work[n++] = work.back();
      work.resize(n);
    }
    return work[0];
  }

  Error buildExpressions(const std::vector<FileExpr> &nodes) {
    std::vector<unsigned> depth;
    std::vector<const SymExpr *> ops;
    for (uint32_t i = 0; i < nodes.size(); ++i) {
      auto failExpr = [i]() {
        ErrorBuilder b;
        b << "expression " << i << " ";
        return b;
      };
      ops.clear();
      unsigned d = 0;
      for (uint32_t op : nodes[i].operands) {
        if (op >= i)
          return failExpr() << "uses expression " << op << ", which does not come before it";
        ops.push_back(exprs_[op]);
        d = std::max(d, depth[op]);
      }
      if (d + 1 > kMaxExprDepth)
        return failExpr() << "is nested too deeply";
      Expected<const SymExpr *> e = buildExpr(nodes[i], ops);
      if (!e)
        return failExpr() << e.error().message();
      // The builders return what the file holds only if it was canonical.
      auto builtOps = (*e)->operands();
      if ((*e)->kind() != nodes[i].kind ||
          !std::equal(builtOps.begin(), builtOps.end(), ops.begin(), ops.end()))
        return failExpr() << "is not in canonical form";
      exprs_.push_back(*e);
      depth.push_back(d + 1);
    }
    return Error::success();
  }

  /// A graph is rebuilt node by node: an argument may only name a value
  /// defined before its node, and a node's results are the next values.
  Error readGraph(const flatbuffers::Table &t, std::string path) {
    path_ = std::move(path);
    FileGraph file;
    GC_RETURN_IF_ERROR(member<0>(t, file));
    GC_RETURN_IF_ERROR(member<1>(t, file));
    GC_RETURN_IF_ERROR(member<2>(t, file));
    GC_RETURN_IF_ERROR(member<4>(t, file));
    [[maybe_unused]] auto &[name, values, inputs, nodesRead, outputs] = file;
    Graph &graph = module_->addGraph(name);
    auto type = [&](uint32_t index, Type &out) -> Error {
      const FileValue &v = values[index];
      if (v.kind != Type::Kind::Tensor && v.tensor != TensorType{})
        return fail() << "value " << index << " (%" << v.name << ") is a scalar with a tensor type";
      out = {v.kind, v.tensor};
      return Error::success();
    };
    if (inputs.size() > values.size())
      return fail() << inputs.size() << " inputs but only " << values.size() << " values";
    defined_.clear();
    for (uint32_t i = 0; i < inputs.size(); ++i) {
      Type t;
      GC_RETURN_IF_ERROR(type(i, t));
      defined_.push_back(graph.addInput(values[i].name, std::move(t), std::move(inputs[i])));
    }
    const auto *nodes = t.GetPointer<const TableVector *>(slot(3)); // FileGraph::nodes
    for (uint32_t k = 0; nodes && k < nodes->size(); ++k) {
      FileNode n;
      {
        OnPath on(path_, ".nodes" + index(k));
        GC_RETURN_IF_ERROR(table(*nodes->Get(k), n));
      }
      std::vector<std::pair<std::string, Type>> results;
      for (uint32_t index : n.results) {
        size_t next = defined_.size() + results.size();
        if (index != next || index >= values.size())
          return fail() << "node " << k << ": result " << results.size() << " is value " << index
                        << ", but the next value is " << next << " of " << values.size();
        results.emplace_back(values[index].name, Type{});
        GC_RETURN_IF_ERROR(type(index, results.back().second));
      }
      Node *node = graph.addNode(n.op, std::move(n.args), std::move(results), n.form);
      node->setLoc(n.loc);
      defined_.insert(defined_.end(), node->results().begin(), node->results().end());
    }
    if (defined_.size() != values.size())
      return fail() << values.size() << " values, but inputs and nodes define " << defined_.size();
    for (size_t i = 0; i < outputs.size(); ++i) {
      const FileOutput &o = outputs[i];
      if (o.value != -1 && (o.value < 0 || static_cast<size_t>(o.value) >= values.size()))
        return fail() << "output " << i << " is value " << o.value
                      << ", which is out of range (the graph has " << values.size() << ")";
      graph.addOutput(o.value == -1 ? nullptr : defined_[o.value], {o.kind, o.target, o.aliasOf, o.path});
    }
    path_.clear();
    return Error::success();
  }

  Module *module_ = nullptr;
  /// The expression table, by index.
  std::vector<const SymExpr *> exprs_;
  /// The location table, by index.
  std::vector<const SourceLoc *> locs_;
  /// The values of the graph being read that a node's arguments may name.
  std::vector<Value *> defined_;
  /// The field being read, for messages.
  std::string path_;
};

/// Checks the format version, reading only the root table's version field
/// (verified on its own), so that a newer file is told apart from a corrupt
/// one even if the rest of its layout changed.
Error checkVersion(const uint8_t *data, size_t size) {
  flatbuffers::Verifier verifier(data, size);
  flatbuffers::uoffset_t rootOffset = verifier.VerifyOffset(0);
  if (!rootOffset)
    return makeError() << "corrupt gc graph file (bad root offset)";
  const auto *root = reinterpret_cast<const flatbuffers::Table *>(data + rootOffset);
  if (!root->VerifyTableStart(verifier) ||
      !root->VerifyField<fb::FormatVersion>(verifier, slot(kVersion), alignof(fb::FormatVersion)))
    return makeError() << "corrupt gc graph file (bad root table)";
  const auto *version = root->GetStruct<const fb::FormatVersion *>(slot(kVersion));
  if (!version)
    return makeError() << "corrupt gc graph file (no format version)";
  uint32_t major = version->major_version(), minor = version->minor_version();
  if (major > kFormatMajor || (major == kFormatMajor && minor > kFormatMinor))
    return makeError() << "graph file format version " << major << "." << minor
                       << " is newer than this gc supports (" << kFormatMajor << "."
                       << kFormatMinor << "); use a newer gc";
  if (major < kFormatMajor)
    return makeError() << "graph file format version " << major << "." << minor
                       << " is older than this gc supports (" << kFormatMajor << ".x)";
  return Error::success();
}

Expected<std::unique_ptr<Module>> readVerified(const uint8_t *data, size_t size) {
  GC_RETURN_IF_ERROR(checkVersion(data, size));
  flatbuffers::Verifier::Options options;
  // A table takes at least 4 bytes, so a file written by gc never has more
  // tables than this; the bound stops a hostile file of shared tables from
  // making verification quadratic.
  options.max_tables = static_cast<flatbuffers::uoffset_t>(size / 4 + 1);
  flatbuffers::Verifier verifier(data, size, options);
  if (!fb::VerifyModuleBuffer(verifier))
    return makeError() << "corrupt gc graph file (its structure does not verify)";
  return ModuleReader().read(*flatbuffers::GetRoot<flatbuffers::Table>(data));
}

} // namespace

std::string writeModuleFlatBuffer(const Module &m) { return ModuleWriter().write(m); }

bool isModuleFlatBuffer(std::span<const uint8_t> bytes) {
  return bytes.size() >= 2 * sizeof(flatbuffers::uoffset_t) &&
         flatbuffers::BufferHasIdentifier(bytes.data(), kFileIdentifier);
}

Expected<std::unique_ptr<Module>>
readModuleFlatBuffer(std::span<const uint8_t> bytes, std::string_view fileName) {
  std::string prefix = "'" + std::string(fileName) + "'";
  if (!isModuleFlatBuffer(bytes))
    return makeError() << prefix << ": not a gc graph file";
  if (bytes.size() >= FLATBUFFERS_MAX_BUFFER_SIZE)
    return makeError() << prefix << ": too large for a gc graph file";
  // FlatBuffers pads a finished buffer to a multiple of its alignment, and
  // the padding is the one part of a file the verifier does not cover; this
  // catches a file cut within it.
  if (bytes.size() % sizeof(flatbuffers::uoffset_t) != 0)
    return makeError() << prefix << ": truncated gc graph file";
  // FlatBuffers reads scalars in place; give it an 8-byte aligned copy if
  // the caller's bytes are not aligned (mapped files and heap buffers are).
  std::vector<uint64_t> aligned;
  const uint8_t *data = bytes.data();
  if (reinterpret_cast<uintptr_t>(data) % alignof(uint64_t) != 0) {
    aligned.resize((bytes.size() + 7) / 8);
    std::memcpy(aligned.data(), bytes.data(), bytes.size());
    data = reinterpret_cast<const uint8_t *>(aligned.data());
  }
  Expected<std::unique_ptr<Module>> m = readVerified(data, bytes.size());
  if (!m)
    return m.error().withContext(prefix);
  return m;
}

} // namespace gc
