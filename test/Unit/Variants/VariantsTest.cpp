//===- VariantsTest.cpp - Every derived variant against its functional op -===//
//
// A generated test of the in-place and out= variants gc derives
// (gc/IR/OpVariants.h). The samples are the op suite's (test/Opsuite/
// Generated: PyTorch's OpInfo samples, one exported program each). For each
// sample, and each variant of each functional op it calls, the call is
// replaced by the variant:
//   in place   %c = aten.clone.default(self); %r = aten.X_.ovl(%c, ...)
//   out=       %o = aten.zeros.default(<result's sizes and dtype>);
//              %r = aten.X.out(..., out=%o)
// and the program must give what the original gives, run by the aten-level
// reference interpreter (which runs the variant by its rule) and, after
// gc-opt's pipeline (which functionalizes it), at the core level. A sample
// whose result dtype or sizes differ from the written tensor's (add_ of an
// int self and a float other) is not a sample for that variant; a sample
// the original program cannot run at a level is not one at that level.
//
// The counts of variants exercised are printed and checked against a floor,
// so that losing coverage fails as a wrong result does.
//
//===----------------------------------------------------------------------===//
#include "gc/Driver/Pipeline.h"
#include "gc/IR/OpVariants.h"
#include "gc/Import/Importer.h"
#include "gc/Interp/Interpreter.h"
#include "gc/Pass/Pass.h"
#include "gc/Tensor/Compare.h"
#include "gc/Tensor/Npy.h"
#include "gc/Tensor/Weights.h"
#include "gc/Ops/GraphBuilder.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <sstream>

namespace gc {
namespace {

namespace fs = std::filesystem;

std::unique_ptr<Module> import(const fs::path &dir) {
  Expected<std::shared_ptr<MappedFile>> file = MappedFile::open((dir / "model.pt2").string());
  if (!file)
    return nullptr;
  Expected<ImportResult> imported = importArchive(*file, ImportOptions{});
  return imported ? std::move(imported->module) : nullptr;
}

/// gc-opt's pipeline; false if it fails.
bool optimize(Module &m) {
  Expected<std::vector<std::unique_ptr<Pass>>> passes = phasePasses(Phase::Opt, {});
  if (!passes)
    return false;
  std::ostringstream log;
  PassManager pm(PassManagerOptions{}, log);
  for (auto &p : *passes)
    pm.add(std::move(p));
  return !pm.run(m);
}

/// The outputs of the module's graph on the sample's inputs, or an error.
Expected<std::vector<Tensor>> run(const Module &m, const std::vector<Tensor> &inputs) {
  Expected<std::map<std::string, Tensor>> weights = loadWeights(m);
  if (!weights)
    return weights.error();
  Expected<RunResult> r = runGraph(m, *m.graphs().at(0), inputs, *weights);
  if (!r)
    return r.error();
  return std::move(r->outputs);
}

/// True if `got` matches `want` within the default tolerances; a failure
/// of the test otherwise.
bool expectMatch(const std::vector<Tensor> &got, const std::vector<Tensor> &want,
                 const std::string &what) {
  EXPECT_EQ(got.size(), want.size()) << what;
  if (got.size() != want.size())
    return false;
  bool all = true;
  for (size_t i = 0; i < got.size(); ++i) {
    Tolerance tol = toleranceFor(want[i].dtype());
    Comparison c = compareTensors(got[i], want[i], tol.rtol, tol.atol);
    EXPECT_TRUE(c.pass) << comparisonLine(c, what + ", output " + std::to_string(i));
    all &= c.pass;
  }
  return all;
}

/// Replaces the node of `m`'s graph at `index` by variant `v` of its op;
/// false when this call is no sample for it.
bool useVariant(Module &m, size_t index, const OpVariant &v) {
  Graph &g = *m.graphs().at(0);
  const Node *target = g.nodes().at(index).get();
  const OpSchema &functional = opSchema(v.functional);
  const OpSchema &variant = opSchema(v.id);
  if (target->results().size() != v.written.size())
    return false;
  for (const Value *r : target->results()) {
    if (!r->type().isTensor())
      return false;
    for (const SymExpr *s : r->type().tensor.sizes)
      if (!s->isConst())
        return false;
  }
  if (v.kind == VariantKind::InPlace) {
    const NamedArg *self = target->arg(functional.args.at(0).name);
    if (!self || self->value.kind != ArgKind::Tensor)
      return false;
    const TensorType &written = self->value.values[0]->type().tensor;
    const TensorType &result = target->results()[0]->type().tensor;
    if (written.dtype != result.dtype || written.sizes != result.sizes)
      return false;
  }
  Error e = rewriteGraph(m, g, [&](RewriteContext &ctx) -> std::optional<std::vector<Value *>> {
    if (&ctx.node() != target)
      return std::nullopt;
    GraphBuilder &b = ctx.builder();
    std::vector<NamedArg> args = ctx.mappedArgs();
    // The variant's schema names the functional's arguments position by
    // position (dropout's `input` is dropout_'s `self`).
    for (NamedArg &a : args)
      for (size_t i = 0; i < functional.args.size(); ++i)
        if (functional.args[i].name == a.name && i < variant.args.size()) {
          a.name = variant.args[i].name;
          break;
        }
    std::vector<std::pair<std::string, Type>> results;
    for (size_t i = 0; i < v.written.size(); ++i) {
      const Value *old = ctx.node().results()[i];
      Value *written;
      if (v.kind == VariantKind::InPlace) {
        NamedArg &self = args.at(0);
        written = b.create1(ops::aten_clone_default, {{"self", self.value.values[0]}});
        self.value.values[0] = written;
      } else {
        std::vector<int64_t> sizes;
        for (const SymExpr *s : old->type().tensor.sizes)
          sizes.push_back(s->constant());
        written = b.create1(ops::aten_zeros_default,
                            {{"size", sizes}, {"dtype", old->type().tensor.dtype}});
        args.push_back(NamedArg{v.written[i], true, Arg::tensor(written)});
      }
      results.emplace_back(b.uniqueName(old->name()), written->type());
    }
    return b.createWithTypes(v.id, std::move(args), std::move(results),
                             ctx.node().resultForm())
        ->results();
  });
  return !e;
}

TEST(Variants, EachGivesItsFunctionalOpsResult) {
  registerAllPasses();
  std::map<OpId, std::vector<const OpVariant *>> byFunctional;
  for (const OpVariant &v : opVariants())
    byFunctional[v.functional].push_back(&v);

  // Variants that passed on some sample, at each level; samples tried per
  // variant (a few are enough, and keep the test quick).
  std::set<OpId> atAten, atCore;
  constexpr int kSamplesPerVariant = 3;
  std::map<OpId, int> samplesOf;
  std::vector<fs::path> samples;
  for (const auto &entry : fs::directory_iterator(GC_OPSUITE))
    if (fs::exists(entry.path() / "model.pt2"))
      samples.push_back(entry.path());
  std::sort(samples.begin(), samples.end());
  for (const fs::path &dir : samples) {
    std::unique_ptr<Module> original = import(dir);
    if (!original || original->graphs().size() != 1)
      continue;
    const auto &nodes = original->graphs()[0]->nodes();
    bool wanted = false;
    for (const auto &n : nodes)
      if (auto it = byFunctional.find(n->op()); it != byFunctional.end())
        for (const OpVariant *v : it->second)
          wanted |= samplesOf[v->id] < kSamplesPerVariant;
    if (!wanted)
      continue;
    std::vector<Tensor> inputs;
    for (int i = 0; fs::exists(dir / ("in" + std::to_string(i) + ".npy")); ++i) {
      Expected<Tensor> t = readNpy((dir / ("in" + std::to_string(i) + ".npy")).string());
      ASSERT_TRUE(static_cast<bool>(t)) << dir;
      inputs.push_back(*t);
    }
    Expected<std::vector<Tensor>> atenWant = run(*original, inputs);
    std::unique_ptr<Module> core = import(dir);
    std::optional<std::vector<Tensor>> coreWant;
    if (optimize(*core))
      if (Expected<std::vector<Tensor>> r = run(*core, inputs))
        coreWant = std::move(*r);
    for (size_t index = 0; index < nodes.size(); ++index) {
      auto it = byFunctional.find(nodes[index]->op());
      if (it == byFunctional.end())
        continue;
      for (const OpVariant *v : it->second) {
        if (samplesOf[v->id] == kSamplesPerVariant)
          continue;
        std::string what = dir.filename().string() + ", " + std::string(opName(v->id));
        std::unique_ptr<Module> m = import(dir);
        if (!useVariant(*m, index, *v))
          continue;
        ++samplesOf[v->id];
        if (atenWant) {
          Expected<std::vector<Tensor>> got = run(*m, inputs);
          EXPECT_TRUE(static_cast<bool>(got)) << what << ": " << (got ? "" : got.error().message());
          if (got && expectMatch(*got, *atenWant, what + " at the aten level"))
            atAten.insert(v->id);
        }
        if (coreWant) {
          bool optimized = optimize(*m);
          EXPECT_TRUE(optimized) << what << ": gc-opt fails";
          if (!optimized)
            continue;
          Expected<std::vector<Tensor>> got = run(*m, inputs);
          EXPECT_TRUE(static_cast<bool>(got)) << what << ": " << (got ? "" : got.error().message());
          if (got && expectMatch(*got, *coreWant, what + " at the core level"))
            atCore.insert(v->id);
        }
      }
    }
  }
  auto count = [](const std::set<OpId> &ids, VariantKind k) {
    return std::count_if(ids.begin(), ids.end(),
                         [&](OpId id) { return findVariant(id)->kind == k; });
  };
  size_t inPlace = std::count_if(opVariants().begin(), opVariants().end(),
                                 [](const OpVariant &v) { return v.kind == VariantKind::InPlace; });
  std::cout << "variants exercised at the aten level: " << atAten.size() << " of "
            << opVariants().size() << " (in place " << count(atAten, VariantKind::InPlace)
            << " of " << inPlace << ", out= " << count(atAten, VariantKind::Out) << " of "
            << opVariants().size() - inPlace << "); at the core level: " << atCore.size()
            << " (in place " << count(atCore, VariantKind::InPlace) << ", out= "
            << count(atCore, VariantKind::Out) << ")\n";
  EXPECT_GE(atAten.size(), GC_VARIANTS_AT_ATEN);
  EXPECT_GE(atCore.size(), GC_VARIANTS_AT_CORE);
}

} // namespace
} // namespace gc
