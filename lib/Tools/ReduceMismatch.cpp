//===- ReduceMismatch.cpp - gc-reduce's --expect-mismatch -----------------===//
#include "gc/Tools/ReduceMismatch.h"

#include "gc/Support/DType.h"
#include "gc/Tensor/Compare.h"
#include "gc/Tools/ModelRunner.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace gc {

namespace {

/// splitmix64: a small generator whose numbers are the same everywhere.
struct SplitMix {
  uint64_t state = 0x9e3779b97f4a7c15ull;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
};

double maxAbs(const Tensor &t) {
  double m = 0;
  if (isFloatingPoint(t.dtype()))
    for (double v : t.toDoubles())
      if (std::isfinite(v))
        m = std::max(m, std::fabs(v));
  return m;
}

} // namespace

std::vector<Tensor> deterministicInputs(const Graph &g) {
  std::vector<Tensor> inputs;
  SplitMix gen;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    if (g.inputSpecs()[i].kind != InputKind::UserInput || !g.inputs()[i]->type().isTensor())
      continue;
    const TensorType &t = g.inputs()[i]->type().tensor;
    Shape sizes;
    for (const SymExpr *e : t.sizes)
      sizes.push_back(e->isConst() ? e->constant() : 4);
    Tensor x = Tensor::zeros(t.dtype, sizes);
    for (int64_t k = 0; k < x.numel(); ++k) {
      if (t.dtype == DType::Bool)
        x.storeInt(k, gen.next() & 1);
      else if (isFloatingPoint(t.dtype))
        x.storeDouble(k, gen.unit() * 4 - 2);
      else
        x.storeInt(k, static_cast<int64_t>(gen.next() % 4));
    }
    inputs.push_back(std::move(x));
  }
  return inputs;
}

Expected<Verdict> MismatchOracle::judge(const std::string &path, const Module &m) {
  Expected<CommandResult> r = command_.run(path);
  if (!r)
    return r.error();
  std::string stage = "'" + command_.display()[0] + "'";
  if (r->timedOut || r->signal || r->exitCode != 0)
    return Verdict{false, stage + " " + r->describe()};
  std::vector<Tensor> inputs = deterministicInputs(*m.graphs()[0]);
  Expected<std::unique_ptr<ModelRunner>> reference = makeModelRunner(m, "", {});
  if (!reference)
    return Verdict{false, "the reference interpreter cannot run the input: " +
                              reference.error().message()};
  Expected<RunResult> want = (*reference)->run(inputs);
  if (!want)
    return Verdict{false, "the reference interpreter fails: " + want.error().message()};
  Expected<std::unique_ptr<ModelRunner>> compiled = openModelRunner(command_.output(), "", {});
  if (!compiled)
    return Verdict{false, stage + "'s result cannot run: " + compiled.error().message()};
  Expected<RunResult> got = (*compiled)->run(inputs);
  if (!got)
    return Verdict{false, stage + "'s result fails: " + got.error().message()};
  if (got->outputs.size() != want->outputs.size())
    return Verdict{true, "the number of outputs differs"};
  for (size_t i = 0; i < want->outputs.size(); ++i) {
    const Tensor &e = want->outputs[i];
    double atol = atol_ * std::max(1.0, maxAbs(e));
    Comparison c = compareTensors(got->outputs[i], e, rtol_, atol);
    if (!c.pass)
      return Verdict{true, comparisonLine(c, "output " + std::to_string(i))};
  }
  return Verdict{false, stage + "'s result matches the reference interpreter on every output"};
}

std::string MismatchOracle::litLines() const {
  std::ostringstream s;
  // The stage command is one word of the RUN line: double-quoted around
  // its own single quotes.
  std::string stage;
  for (char c : shellQuote(command_.display())) {
    if (c == '"' || c == '\\' || c == '$' || c == '`')
      stage += '\\';
    stage += c;
  }
  s << "// RUN: gc-reduce %s --check --expect-mismatch --run \"" << stage << "\" --rtol " << rtol_
    << " --atol " << atol_ << "\n";
  return s.str();
}

} // namespace gc
