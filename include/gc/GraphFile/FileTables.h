//===- FileTables.h - The graph file's own records --------------*- C++ -*-===//
//
// The tables of formats/graph.fbs whose IR counterparts are classes rather
// than plain structs (expressions, graph values, nodes, outputs, graphs, the
// module) get a mirror struct here, declared field by field as
// include/gc/IR/Fields.h declares the IR's own; FlatBufferIO.cpp converts
// between them and the IR. Symbols' record, which the text form writes
// too, is the IR's (gc/IR/SymbolRecord.h).
//
//===----------------------------------------------------------------------===//
#ifndef GC_GRAPHFILE_FILETABLES_H
#define GC_GRAPHFILE_FILETABLES_H

#include "gc/IR/Fields.h"
#include "gc/IR/SymbolRecord.h"

namespace gc {

/// Mirrors of the file's tables for IR records that are classes, not
/// aggregates; they exist only on the way in and out.
struct FileExpr {
  SymExpr::Kind kind = SymExpr::Kind::Const;
  int64_t constant = 0;
  std::string symbol;
  std::vector<uint32_t> operands;
};
struct FileValue {
  std::string name;
  Type::Kind kind = Type::Kind::Tensor;
  TensorType tensor; ///< left out for a scalar
};
struct FileNode {
  OpId op{};
  ResultForm form = ResultForm::Single;
  std::vector<NamedArg> args;
  std::vector<uint32_t> results; ///< indices of FileGraph::values
  const SourceLoc *loc = nullptr; ///< (1.7) an index of Module.locations in the file
};
struct FileOutput {
  int32_t value = 0;
  OutputKind kind = OutputKind::UserOutput;
  std::string target, aliasOf, path;
};
struct FileGraph {
  std::string name;
  std::vector<FileValue> values;
  std::vector<InputSpec> inputs;
  std::vector<FileNode> nodes;
  std::vector<FileOutput> outputs;
};

template <> inline constexpr auto kFields<FileExpr> = std::tuple(
    field("kind", &FileExpr::kind), field("constant", &FileExpr::constant),
    field("symbol", &FileExpr::symbol), field("operands", &FileExpr::operands));
template <> inline constexpr auto kFields<FileValue> = std::tuple(
    field("name", &FileValue::name), field("kind", &FileValue::kind),
    field("tensor", &FileValue::tensor));
template <> inline constexpr auto kFields<FileNode> = std::tuple(
    field("op", &FileNode::op), field("form", &FileNode::form), field("args", &FileNode::args),
    field("results", &FileNode::results), field("loc", &FileNode::loc));
template <> inline constexpr auto kFields<FileOutput> = std::tuple(
    field("value", &FileOutput::value), field("kind", &FileOutput::kind),
    field("target", &FileOutput::target), field("alias_of", &FileOutput::aliasOf),
    field("path", &FileOutput::path));
template <> inline constexpr auto kFields<FileGraph> = std::tuple(
    field("name", &FileGraph::name), field("values", &FileGraph::values),
    field("inputs", &FileGraph::inputs), field("nodes", &FileGraph::nodes),
    field("outputs", &FileGraph::outputs));

/// The root table's fields, which FlatBufferIO.cpp reads one by one: a
/// graph's nodes need the values defined before them.
enum ModuleField : size_t {
  kVersion, kLevel, kProducer, kSymbols, kExpressions, kGraphs, kSources, kWeights, kLoopGraphs,
  kTarget, kLocations
};
inline constexpr std::array<std::string_view, kLocations + 1> kModuleFields = {
    "version", "level", "producer", "symbols", "expressions", "graphs", "weight_sources",
    "weights", "loop_graphs", "target", "locations"};

} // namespace gc

#endif // GC_GRAPHFILE_FILETABLES_H
