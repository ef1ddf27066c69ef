//===- OpId.h - Typed op ids, generated from OpDefs.def ---------*- C++ -*-===//
//
// Each row of OpDefs.def becomes an `OpId` with a named constant
// (`ops::aten_add_Tensor`) and an entry of a constexpr table, so that code
// names ops through the compiler, which rejects a misspelled one, instead of
// through strings, which nothing checks.
//
//===----------------------------------------------------------------------===//
#ifndef GC_IR_OPID_H
#define GC_IR_OPID_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

namespace gc {

enum class OpId : uint16_t {
#define GC_OP(ID, NAME, SET, TRAITS, SUMMARY, SCHEMA) ID,
#include "gc/IR/OpDefs.def"
#undef GC_OP
};

/// The ops as constants: `ops::aten_add_Tensor`.
namespace ops {
using enum OpId;
} // namespace ops

/// What an op's row declares beyond its schema, as bits.
enum OpTraits : uint8_t {
  kNoTraits = 0,
  /// Draws random numbers: never folded, merged or recomputed.
  kRandom = 1 << 0,
  /// Cheap enough that the partitioner recomputes it in the backward graph
  /// rather than save its result: one read of each input element per output
  /// element (pointwise ops, views, copies, fills, concatenation), as
  /// Inductor's min-cut partitioner judges.
  kRecomputable = 1 << 1,
};

/// One row of OpDefs.def.
struct OpDef {
  std::string_view name; ///< "aten.add.Tensor"
  bool core;             ///< in the core op set
  uint8_t traits;        ///< OpTraits
  std::string_view summary;
  std::string_view schema;
};

namespace opdefs {
// The words OpDefs.def's SET and TRAITS columns use.
inline constexpr bool CORE = true;
inline constexpr bool ATEN = false;
inline constexpr uint8_t NONE = kNoTraits;
inline constexpr uint8_t RANDOM = kRandom;
inline constexpr uint8_t RECOMPUTABLE = kRecomputable;

inline constexpr OpDef kTable[] = {
#define GC_OP(ID, NAME, SET, TRAITS, SUMMARY, SCHEMA) {NAME, SET, TRAITS, SUMMARY, SCHEMA},
#include "gc/IR/OpDefs.def"
#undef GC_OP
};

/// True if `id` is `name` with each '.' written '_'.
constexpr bool spells(std::string_view id, std::string_view name) {
  if (id.size() != name.size())
    return false;
  for (size_t i = 0; i < id.size(); ++i)
    if (id[i] != (name[i] == '.' ? '_' : name[i]))
      return false;
  return true;
}

#define GC_OP(ID, NAME, SET, TRAITS, SUMMARY, SCHEMA)                                         \
  static_assert(spells(#ID, NAME), "OpDefs.def: " #ID " does not spell " NAME);
#include "gc/IR/OpDefs.def"
#undef GC_OP
} // namespace opdefs

/// The number of rows of OpDefs.def. Ids from kNumOps on name the in-place
/// and out= variants gc derives from those rows (OpVariants.h); they have no
/// named constant.
inline constexpr size_t kNumOps = std::size(opdefs::kTable);

/// The row of a derived variant (`op` >= kNumOps), made from its schema.
const OpDef &derivedOpDef(OpId op);

constexpr const OpDef &opDef(OpId op) {
  return static_cast<size_t>(op) < kNumOps ? opdefs::kTable[static_cast<size_t>(op)]
                                           : derivedOpDef(op);
}
constexpr std::string_view opName(OpId op) { return opDef(op).name; }
constexpr bool hasTraits(OpId op, uint8_t traits) {
  return (opDef(op).traits & traits) == traits;
}

/// True if `op` is one of `ops`.
constexpr bool isOneOf(OpId op, std::initializer_list<OpId> ops) {
  for (OpId o : ops)
    if (o == op)
      return true;
  return false;
}

/// The op named `name` ("aten.add.Tensor"), or nullopt if OpDefs.def does
/// not define it and it is no variant derived from a row.
std::optional<OpId> lookupOp(std::string_view name);

/// The op's name as a string, for messages built by concatenation.
inline std::string opString(OpId op) { return std::string(opName(op)); }

/// Writes the op's name.
std::ostream &operator<<(std::ostream &os, OpId op);

} // namespace gc

#endif // GC_IR_OPID_H
