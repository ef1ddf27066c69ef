//===- OpVariants.cpp - In-place and out= variants, derived ---------------===//
#include "gc/IR/OpVariants.h"

#include <algorithm>
#include <cassert>

namespace gc {

namespace {

// Lengths from sizeof, not strlen: clang's constant evaluator runs out of
// steps measuring 3,000 literals one character at a time.
constexpr AtenOverload kOverloads[] = {
#define GC_ATEN_OVERLOAD(NAME, SCHEMA)                                                             \
  {std::string_view(NAME, sizeof(NAME) - 1), std::string_view(SCHEMA, sizeof(SCHEMA) - 1)},
#include "gc/IR/AtenOverloads.inc"
#undef GC_ATEN_OVERLOAD
};

/// A type as both spellings compare: `SymInt` is `int` here, and a list's
/// fixed length (`int[2]`) is dropped.
std::string normalType(std::string_view type) {
  std::string out;
  for (size_t i = 0; i < type.size(); ++i) {
    if (type.substr(i, 6) == "SymInt") {
      out += "int";
      i += 5;
    } else if (type[i] == '[') {
      out += '[';
      while (i + 1 < type.size() && type[i + 1] != ']')
        ++i;
    } else {
      out += type[i];
    }
  }
  return out;
}

bool sameTypes(std::span<const ArgDef> a, std::span<const ArgDef> b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (normalType(a[i].type) != normalType(b[i].type))
      return false;
  return true;
}

bool sameNames(std::span<const ArgDef> a, std::span<const ArgDef> b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const ArgDef &x, const ArgDef &y) { return x.name == y.name; });
}

/// A row that writes none of its arguments and returns `n` new tensors (no
/// views, no lists): a functional op. native_batch_norm writes its running
/// statistics in training although torch's schema does not mark them, so
/// it is none.
bool isFunctional(const OpSchema &row, size_t n) {
  return row.id != ops::aten_native_batch_norm_default && !row.returnsView &&
         row.returns.size() == n &&
         std::all_of(row.returns.begin(), row.returns.end(),
                     [](const std::string &r) { return r == "Tensor"; }) &&
         std::none_of(row.args.begin(), row.args.end(), [](const ArgDef &a) { return a.mutated; });
}

class Deriver {
public:
  explicit Deriver(std::span<const OpSchema> rows) : rows_(rows) {}

  /// The row and written arguments `s` is a variant of, if it is one.
  std::optional<std::pair<const OpSchema *, OpVariant>> derive(const OpSchema &s) const {
    if (find(s.name))
      return std::nullopt;
    if (!s.args.empty() && s.args[0].mutated && s.args[0].name == "self")
      return inPlace(s);
    return out(s);
  }

private:
  const OpSchema *find(std::string_view name) const {
    auto it = std::lower_bound(rows_.begin(), rows_.end(), name,
                               [](const OpSchema &s, std::string_view n) { return s.name < n; });
    return it != rows_.end() && it->name == name ? &*it : nullptr;
  }

  std::optional<std::pair<const OpSchema *, OpVariant>> inPlace(const OpSchema &s) const {
    size_t dot = s.name.rfind('.');
    std::string_view base = std::string_view(s.name).substr(0, dot);
    if (base.size() < 2 || base.back() != '_' || base.ends_with("__"))
      return std::nullopt;
    const OpSchema *row =
        find(std::string(base.substr(0, base.size() - 1)) + s.name.substr(dot));
    bool othersRead = std::none_of(s.args.begin() + 1, s.args.end(),
                                   [](const ArgDef &a) { return a.mutated; });
    if (!row || !othersRead || s.returns.size() != 1 || !isFunctional(*row, 1) ||
        !sameTypes(s.args, row->args))
      return std::nullopt;
    return std::pair(row, OpVariant{OpId{}, row->id, VariantKind::InPlace, {"self"}});
  }

  std::optional<std::pair<const OpSchema *, OpVariant>> out(const OpSchema &s) const {
    size_t read = 0;
    while (read < s.args.size() && !s.args[read].mutated)
      ++read;
    std::span<const ArgDef> inputs(s.args.data(), read);
    std::span<const ArgDef> outs(s.args.data() + read, s.args.size() - read);
    bool outsLast = !outs.empty() && std::all_of(outs.begin(), outs.end(), [](const ArgDef &a) {
      return a.mutated && a.keywordOnly && a.type == "Tensor";
    });
    if (!outsLast || s.returns.size() != outs.size())
      return std::nullopt;
    // Rows of the same operator (the name before the overload) taking the
    // same arguments; several: the one with the same names too.
    std::string prefix = s.name.substr(0, s.name.rfind('.') + 1);
    auto first = std::lower_bound(rows_.begin(), rows_.end(), prefix,
                                  [](const OpSchema &r, const std::string &p) { return r.name < p; });
    const OpSchema *match = nullptr;
    int matches = 0;
    for (auto it = first; it != rows_.end() && it->name.starts_with(prefix); ++it) {
      if (!isFunctional(*it, outs.size()) || !sameTypes(inputs, it->args))
        continue;
      if (sameNames(inputs, it->args)) {
        match = &*it;
        matches = 1;
        break;
      }
      match = &*it;
      ++matches;
    }
    if (matches != 1)
      return std::nullopt;
    OpVariant v{OpId{}, match->id, VariantKind::Out, {}};
    for (const ArgDef &o : outs)
      v.written.push_back(o.name);
    return std::pair(match, std::move(v));
  }

  std::span<const OpSchema> rows_;
};

} // namespace

std::span<const AtenOverload> atenOverloads() { return kOverloads; }

std::string_view atenVersion() { return GC_ATEN_VERSION; }

std::vector<NamedArg> functionalArgs(const OpVariant &v, const std::vector<NamedArg> &args) {
  const OpSchema &functional = opSchema(v.functional);
  const OpSchema &variant = opSchema(v.id);
  std::vector<NamedArg> out;
  for (const NamedArg &a : args) {
    if (std::find(v.written.begin(), v.written.end(), a.name) != v.written.end() &&
        v.kind == VariantKind::Out)
      continue;
    NamedArg renamed = a;
    if (!functional.arg(a.name)) {
      // The same position in both schemas (the outs come last).
      for (size_t i = 0; i < variant.args.size() && i < functional.args.size(); ++i)
        if (variant.args[i].name == a.name)
          renamed.name = functional.args[i].name;
    }
    out.push_back(std::move(renamed));
  }
  return out;
}

std::string writeBackMismatch(const OpVariant &v, size_t i, const std::string &written,
                              const std::string &result) {
  return "'" + v.written.at(i) + "' is " + written + ", but " + opString(v.functional) +
         " gives " + result +
         (v.kind == VariantKind::Out ? " (gc does not resize out= tensors)"
                                     : " (an in-place op keeps its tensor's sizes)");
}

namespace detail {

DerivedVariants deriveVariants(std::span<const OpSchema> rows) {
  Deriver deriver(rows);
  DerivedVariants out;
  for (const AtenOverload &o : kOverloads) {
    Expected<OpSchema> s = parseOpSchema(o.name, o.schema);
    // AtenOverloads.inc is generated from torch's own schemas; a unit test
    // checks that each parses.
    if (!s)
      continue;
    auto derived = deriver.derive(*s);
    if (!derived)
      continue;
    auto &[row, variant] = *derived;
    OpId id = static_cast<OpId>(kNumOps + out.variants.size());
    s->id = id;
    s->summary = std::string(variant.kind == VariantKind::InPlace ? "in place: " : "out=: ") +
                 row->summary;
    variant.id = id;
    out.schemas.push_back(s.take());
    out.variants.push_back(std::move(variant));
  }
  return out;
}

} // namespace detail

} // namespace gc
