//===- OpSchema.cpp - The one definition of each op -----------------------===//
#include "gc/IR/OpSchema.h"
#include "gc/IR/PluginRows.h"
#include "gc/IR/OpVariants.h"
#include "gc/Plugin/PluginLibrary.h"

#include <ostream>

#include <algorithm>
#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <cassert>
#include <cctype>

namespace gc {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ')
    s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ')
    s.remove_suffix(1);
  return s;
}

/// Splits at top-level commas (not inside brackets, parentheses or string
/// defaults); nothing if the brackets do not balance.
std::optional<std::vector<std::string_view>> splitTopLevel(std::string_view s) {
  std::vector<std::string_view> parts;
  int depth = 0;
  bool quoted = false;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '"')
      quoted = !quoted;
    else if (quoted)
      continue;
    else if (s[i] == '(' || s[i] == '[')
      ++depth;
    else if ((s[i] == ')' || s[i] == ']') && --depth < 0)
      return std::nullopt;
    else if (s[i] == ',' && depth == 0) {
      parts.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  if (depth != 0 || quoted)
    return std::nullopt;
  if (!trim(s.substr(start)).empty())
    parts.push_back(trim(s.substr(start)));
  return parts;
}

bool isIdentifier(std::string_view s) {
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  return !s.empty() && !std::isdigit(static_cast<unsigned char>(s.front())) &&
         std::all_of(s.begin(), s.end(), word);
}

/// A type's alias annotation: `(a)` aliases, `(a!)` also writes.
struct Alias {
  bool aliases = false;
  bool writes = false;
};

/// "Tensor(a!)?" -> type "Tensor?", aliases and writes; "Tensor(a)" ->
/// "Tensor", aliases.
std::string stripAlias(std::string_view type, Alias &alias) {
  size_t open = type.find('(');
  if (open == std::string_view::npos)
    return std::string(type);
  size_t close = type.find(')', open);
  alias.aliases = true;
  alias.writes = type.substr(open, close - open).find('!') != std::string_view::npos;
  return std::string(type.substr(0, open)) + std::string(type.substr(close + 1));
}

} // namespace

const ArgDef *OpSchema::arg(std::string_view n) const {
  for (const ArgDef &a : args)
    if (a.name == n)
      return &a;
  return nullptr;
}

Expected<OpSchema> parseOpSchema(std::string_view name, std::string_view schema) {
  auto bad = [&](const std::string &why) -> Error {
    return makeError() << "schema of " << name << ": " << why << ": " << schema;
  };
  schema = trim(schema);
  size_t arrow = schema.rfind("->");
  if (schema.empty() || schema.front() != '(' || arrow == std::string_view::npos)
    return bad("expected '(ARGS) -> RETURNS'");
  std::string_view head = trim(schema.substr(0, arrow));
  if (head.back() != ')')
    return bad("expected ')' before '->'");
  OpSchema s;
  s.name = std::string(name);
  s.schema = std::string(schema);
  std::optional<std::vector<std::string_view>> argParts =
      splitTopLevel(head.substr(1, head.size() - 2));
  if (!argParts)
    return bad("unbalanced brackets in the arguments");
  bool keywordOnly = false;
  for (std::string_view part : *argParts) {
    if (part == "*") {
      keywordOnly = true;
      continue;
    }
    ArgDef a;
    a.keywordOnly = keywordOnly;
    size_t eq = part.find('=');
    if (eq != std::string_view::npos) {
      a.defaultValue = std::string(trim(part.substr(eq + 1)));
      part = trim(part.substr(0, eq));
    }
    size_t space = part.rfind(' ');
    if (space == std::string_view::npos)
      return bad("argument '" + std::string(part) + "' has no type");
    a.name = std::string(part.substr(space + 1));
    if (!isIdentifier(a.name))
      return bad("bad argument name '" + a.name + "'");
    Alias alias;
    a.type = stripAlias(trim(part.substr(0, space)), alias);
    a.mutated = alias.writes;
    s.args.push_back(std::move(a));
  }
  std::string_view ret = trim(schema.substr(arrow + 2));
  if (ret.size() >= 2 && ret.front() == '(' && ret.back() == ')')
    ret = ret.substr(1, ret.size() - 2);
  std::optional<std::vector<std::string_view>> retParts = splitTopLevel(ret);
  if (!retParts)
    return bad("unbalanced brackets in the returns");
  for (std::string_view r : *retParts) {
    Alias alias;
    std::string type = stripAlias(r, alias);
    s.returnsView |= alias.aliases && !alias.writes;
    // Named returns ("Tensor values") keep only the type.
    s.returns.push_back(type.substr(0, type.find(' ')));
  }
  return s;
}

namespace {
struct Schemas {
  std::vector<OpSchema> byName;
  /// The derived variants' schemas, sorted by name; ids from kNumOps on.
  std::vector<OpSchema> variantsByName;
  std::vector<OpVariant> variants;
  std::vector<OpDef> variantDefs;
  std::vector<const OpSchema *> byId;
};

Schemas buildSchemas() {
  Schemas out;
  for (size_t i = 0; i < kNumOps; ++i) {
    const OpDef &row = opdefs::kTable[i];
    Expected<OpSchema> s = parseOpSchema(row.name, row.schema);
    // OpDefs.def is compiled in; a unit test parses every entry, so a bad
    // one never ships.
    assert(s && "bad schema in OpDefs.def");
    if (!s)
      continue;
    s->id = static_cast<OpId>(i);
    s->core = row.core;
    s->summary = std::string(row.summary);
    out.byName.push_back(s.take());
  }
  std::sort(out.byName.begin(), out.byName.end(),
            [](const OpSchema &a, const OpSchema &b) { return a.name < b.name; });
  detail::DerivedVariants derived = detail::deriveVariants(out.byName);
  out.variantsByName = std::move(derived.schemas);
  out.variants = std::move(derived.variants);
  out.byId.resize(kNumOps + out.variants.size());
  for (const OpSchema &s : out.byName)
    out.byId[static_cast<size_t>(s.id)] = &s;
  for (const OpSchema &s : out.variantsByName) {
    out.byId[static_cast<size_t>(s.id)] = &s;
    const OpVariant &v = out.variants[static_cast<size_t>(s.id) - kNumOps];
    out.variantDefs.push_back(
        {s.name, false, opDef(v.functional).traits, s.summary, s.schema});
  }
  return out;
}

const Schemas &schemas() {
  static const Schemas all = buildSchemas();
  return all;
}

/// The rows plugins registered, ids from kNumOps + the variants' count on.
/// A fixed table, so that readers by id need no lock: a row, once
/// published through `count`, never moves.
struct PluginRows {
  static constexpr size_t kMax = 4096;
  struct Row {
    OpSchema schema;
    OpDef def;
  };
  std::mutex mutex; // writers, and readers by name
  std::array<std::unique_ptr<Row>, kMax> rows;
  std::atomic<size_t> count{0};
};

PluginRows &pluginRows() {
  static PluginRows *rows = new PluginRows; // rows live as long as the process
  return *rows;
}

size_t firstPluginId() { return kNumOps + schemas().variants.size(); }

const PluginRows::Row *pluginRow(OpId op) {
  size_t i = static_cast<size_t>(op);
  size_t first = firstPluginId();
  PluginRows &p = pluginRows();
  return i >= first && i - first < p.count.load(std::memory_order_acquire)
             ? p.rows[i - first].get()
             : nullptr;
}

const OpSchema *findPluginSchema(std::string_view name) {
  PluginRows &p = pluginRows();
  std::lock_guard lock(p.mutex);
  for (size_t i = 0; i < p.count.load(std::memory_order_relaxed); ++i)
    if (p.rows[i]->schema.name == name)
      return &p.rows[i]->schema;
  return nullptr;
}

const OpSchema *findIn(std::span<const OpSchema> sorted, std::string_view name) {
  auto it = std::lower_bound(sorted.begin(), sorted.end(), name,
                             [](const OpSchema &s, std::string_view n) { return s.name < n; });
  return it != sorted.end() && it->name == name ? &*it : nullptr;
}
} // namespace

std::span<const OpSchema> allOpSchemas() { return schemas().byName; }

const OpSchema &opSchema(OpId op) {
  if (const PluginRows::Row *row = pluginRow(op))
    return row->schema;
  return *schemas().byId.at(static_cast<size_t>(op));
}

const OpDef &derivedOpDef(OpId op) {
  if (const PluginRows::Row *row = pluginRow(op))
    return row->def;
  return schemas().variantDefs.at(static_cast<size_t>(op) - kNumOps);
}

const OpVariant *findVariant(OpId op) {
  size_t i = static_cast<size_t>(op);
  const std::vector<OpVariant> &variants = schemas().variants;
  return i < kNumOps || i - kNumOps >= variants.size() ? nullptr : &variants[i - kNumOps];
}

bool isPluginOp(OpId op) { return pluginRow(op) != nullptr; }

bool isTorchOpName(std::string_view name) {
  for (std::string_view torch : {"aten.", "prims.", "_operator."})
    if (name.starts_with(torch))
      return true;
  return false;
}

std::string unknownOpMessage(std::string_view name) {
  std::string message = "'" + std::string(name) + "' is not an op gc knows";
  if (isTorchOpName(name))
    return message + " (docs/ops.md lists those it does)";
  return message + "; if a plugin defines it, " + kPluginHint;
}

Expected<OpId> registerPluginOp(std::string_view name, std::string_view schema,
                                std::string_view summary) {
  Expected<OpSchema> parsed = parseOpSchema(name, schema);
  if (!parsed)
    return parsed.error();
  if (findIn(schemas().byName, name) || findIn(schemas().variantsByName, name))
    return makeError() << "op " << name << " is one gc defines itself; a plugin cannot redefine it";
  if (const OpSchema *seen = findPluginSchema(name)) {
    if (seen->schema != parsed->schema)
      return makeError() << "op " << name << " is registered with schema " << seen->schema
                         << " and again with " << parsed->schema;
    return seen->id;
  }
  PluginRows &p = pluginRows();
  std::lock_guard lock(p.mutex);
  size_t n = p.count.load(std::memory_order_relaxed);
  if (n == PluginRows::kMax)
    return makeError() << "more than " << PluginRows::kMax << " plugin ops";
  auto row = std::make_unique<PluginRows::Row>();
  row->schema = parsed.take();
  row->schema.id = static_cast<OpId>(firstPluginId() + n);
  row->schema.core = true;
  row->schema.summary = std::string(summary);
  row->def = {row->schema.name, true, kNoTraits, row->schema.summary, row->schema.schema};
  OpId id = row->schema.id;
  p.rows[n] = std::move(row);
  p.count.store(n + 1, std::memory_order_release);
  return id;
}

std::span<const OpVariant> opVariants() { return schemas().variants; }

const OpSchema *findOpSchema(std::string_view name) {
  if (const OpSchema *row = findIn(schemas().byName, name))
    return row;
  if (const OpSchema *variant = findIn(schemas().variantsByName, name))
    return variant;
  return findPluginSchema(name);
}

std::optional<OpId> lookupOp(std::string_view name) {
  const OpSchema *s = findOpSchema(name);
  return s ? std::optional(s->id) : std::nullopt;
}

bool isCoreOp(OpId op) { return opDef(op).core; }

bool returnsView(OpId op) { return opSchema(op).returnsView; }

bool OpSchema::computesSizes() const {
  return !returns.empty() && std::all_of(returns.begin(), returns.end(), [](const std::string &r) {
           return r == "SymInt" || r == "SymBool" || r == "SymFloat";
         });
}

bool computesSizes(OpId op) { return opSchema(op).computesSizes(); }

bool OpSchema::callsGraphs() const {
  return std::any_of(args.begin(), args.end(), [](const ArgDef &a) { return a.type == "Graph"; });
}

bool callsGraphs(OpId op) { return opSchema(op).callsGraphs(); }

std::ostream &operator<<(std::ostream &os, OpId op) { return os << opName(op); }

} // namespace gc
