//===- ArgReader.cpp - Reading an op call's arguments by name -------------===//
#include "gc/IR/ArgReader.h"

namespace gc {

const NamedArg *ArgReader::find(std::string_view name) const {
  for (const NamedArg &a : args_)
    if (a.name == name)
      return &a;
  return nullptr;
}

const NamedArg &ArgReader::get(std::string_view name) const {
  const NamedArg *a = find(name);
  if (!a)
    throw ArgumentError("missing argument '" + std::string(name) + "'");
  return *a;
}

void ArgReader::fail(std::string_view name, const std::string &what) const {
  throw ArgumentError("argument '" + std::string(name) + "' " + what);
}

bool ArgReader::has(std::string_view name) const {
  const NamedArg *a = find(name);
  return a && a->value.kind != ArgKind::None;
}

int64_t ArgReader::symIntValue(const Value *v, std::string_view name) const {
  fail(name, "uses the symbolic int %" + v->name() + ", whose value is not known here");
}

std::vector<int64_t> ArgReader::ints(std::string_view name) const {
  const Arg &a = get(name).value;
  switch (a.kind) {
  case ArgKind::Int:
  case ArgKind::Ints:
  case ArgKind::Bool:
  case ArgKind::Bools:
    return a.ints;
  case ArgKind::SymInt:
  case ArgKind::SymInts: {
    std::vector<int64_t> out;
    for (size_t i = 0; i < a.values.size(); ++i)
      out.push_back(a.values[i] ? symIntValue(a.values[i], name) : a.ints[i]);
    return out;
  }
  default:
    fail(name, "is not an integer list");
  }
}

int64_t ArgReader::integer(std::string_view name) const {
  std::vector<int64_t> v = ints(name);
  if (v.size() != 1)
    fail(name, "is not a single integer");
  return v[0];
}

int64_t ArgReader::integer(std::string_view name, int64_t dflt) const {
  return has(name) ? integer(name) : dflt;
}

double ArgReader::real(std::string_view name) const {
  const Arg &a = get(name).value;
  if (a.kind == ArgKind::Float)
    return a.floats[0];
  return static_cast<double>(integer(name));
}

double ArgReader::real(std::string_view name, double dflt) const {
  return has(name) ? real(name) : dflt;
}

bool ArgReader::boolean(std::string_view name, bool dflt) const {
  if (!has(name))
    return dflt;
  const Arg &a = get(name).value;
  if (a.kind != ArgKind::Bool)
    fail(name, "is not a boolean");
  return a.ints[0] != 0;
}

std::string ArgReader::string(std::string_view name, const std::string &dflt) const {
  if (!has(name))
    return dflt;
  const Arg &a = get(name).value;
  if (a.kind != ArgKind::String)
    fail(name, "is not a string");
  return a.strings[0];
}

std::optional<DType> ArgReader::dtype(std::string_view name) const {
  if (!has(name))
    return std::nullopt;
  const Arg &a = get(name).value;
  if (a.kind != ArgKind::ScalarType)
    fail(name, "is not a dtype");
  return static_cast<DType>(a.ints[0]);
}

} // namespace gc
