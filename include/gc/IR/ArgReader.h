//===- ArgReader.h - Reading an op call's arguments by name -----*- C++ -*-===//
//
// Kernels, shape functions and rewrites all read a call's arguments by their
// schema names. ArgReader holds what they share: presence, numbers, lists,
// strings and dtypes, with one error wording. Each user adds its own view of
// tensor arguments (tensors, types, or values of a new graph).
//
// Failures throw ArgumentError; every caller runs readers inside a boundary
// (the interpreter, inferResultTypes, rewriteGraph) that turns it into an
// Error naming the node.
//
//===----------------------------------------------------------------------===//
#ifndef GC_IR_ARGREADER_H
#define GC_IR_ARGREADER_H

#include "gc/IR/Module.h"

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace gc {

struct ArgumentError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class ArgReader {
public:
  explicit ArgReader(const std::vector<NamedArg> &args) : args_(args) {}
  virtual ~ArgReader() = default;

  /// The argument, or null when the call does not give it.
  const NamedArg *find(std::string_view name) const;
  /// True if the argument is given and is not None.
  bool has(std::string_view name) const;

  /// int, int[], SymInt, SymInt[] and bool arguments as integers.
  std::vector<int64_t> ints(std::string_view name) const;
  int64_t integer(std::string_view name) const;
  int64_t integer(std::string_view name, int64_t dflt) const;
  /// A float or integer argument as a double.
  double real(std::string_view name) const;
  double real(std::string_view name, double dflt) const;
  bool boolean(std::string_view name, bool dflt) const;
  std::string string(std::string_view name, const std::string &dflt) const;
  std::optional<DType> dtype(std::string_view name) const;

protected:
  /// The argument; throws when the call does not give it.
  const NamedArg &get(std::string_view name) const;
  [[noreturn]] void fail(std::string_view name, const std::string &what) const;
  /// The value of a symbolic int argument entry. Readers that know the
  /// values of symbols (the interpreter) override this; others refuse.
  virtual int64_t symIntValue(const Value *v, std::string_view name) const;

private:
  const std::vector<NamedArg> &args_;
};

} // namespace gc

#endif // GC_IR_ARGREADER_H
