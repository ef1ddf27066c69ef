//===- ModelLoweringTest.cpp - Lowering the corpus models -----------------===//
//
// Each corpus model is imported, brought to the core op set by gc-opt's
// pipeline, lowered and run by the loop interpreter; its outputs (and the
// buffers it mutates, as PyTorch left them after one call) must match
// PyTorch's within 1e-4.
//
//===----------------------------------------------------------------------===//
#include "LowerTestUtil.h"

#include "gc/IR/Verifier.h"
#include "gc/Import/Importer.h"
#include "gc/Interp/Interpreter.h"
#include "gc/Tensor/Npy.h"
#include "gc/Interp/LoopInterpreter.h"
#include "gc/Lower/Lowering.h"
#include "gc/Pass/Pass.h"
#include "gc/Driver/Pipeline.h"

#include <filesystem>
#include <sstream>

namespace gc {
namespace {

std::string inputsDir(const std::string &model) {
  return std::string(GC_MODEL_INPUTS) + "/" + model;
}

std::unique_ptr<Module> coreModule(const std::string &model) {
  Expected<std::shared_ptr<MappedFile>> file = MappedFile::open(inputsDir(model) + "/model.pt2");
  EXPECT_TRUE(static_cast<bool>(file)) << (file ? "" : file.error().message());
  if (!file)
    return nullptr;
  Expected<ImportResult> imported = importArchive(*file, ImportOptions{});
  EXPECT_TRUE(static_cast<bool>(imported)) << (imported ? "" : imported.error().message());
  if (!imported)
    return nullptr;
  std::unique_ptr<Module> m = std::move(imported->module);
  registerAllPasses();
  Expected<std::vector<std::unique_ptr<Pass>>> passes = phasePasses(Phase::Opt, {});
  EXPECT_TRUE(static_cast<bool>(passes));
  std::ostringstream log;
  PassManager pm(PassManagerOptions{}, log);
  for (auto &p : *passes)
    pm.add(std::move(p));
  Error e = pm.run(*m);
  EXPECT_FALSE(e) << e.message();
  return e ? nullptr : std::move(m);
}

Tensor npy(const std::string &path) {
  Expected<Tensor> t = readNpy(path);
  EXPECT_TRUE(static_cast<bool>(t)) << path << ": " << (t ? "" : t.error().message());
  return t ? *t : Tensor();
}

class ModelLowering : public ::testing::TestWithParam<std::string> {};

TEST_P(ModelLowering, MatchesPyTorch) {
  const std::string model = GetParam();
  std::unique_ptr<Module> m = coreModule(model);
  ASSERT_TRUE(m);
  Expected<std::map<std::string, Tensor>> weights = loadWeights(*m);
  ASSERT_TRUE(static_cast<bool>(weights)) << weights.error().message();
  Expected<LowerReport> report = lowerModule(*m, LowerOptions{});
  ASSERT_TRUE(static_cast<bool>(report)) << report.error().message();
  ASSERT_EQ(m->level(), Level::Loops);
  Error invalid = verifyModule(*m);
  EXPECT_FALSE(invalid) << invalid.message();
  ASSERT_TRUE(m->graphs().empty());
  ASSERT_EQ(m->loopGraphs().size(), 1u);
  const LoopGraph &g = *m->loopGraphs()[0];

  std::vector<std::string> sets{""};
  if (std::filesystem::exists(inputsDir(model) + "/in0.set1.npy"))
    sets = {"", ".set1", ".set2"};
  for (const std::string &set : sets) {
    std::vector<Tensor> inputs;
    size_t userInputs = 0;
    for (const InputSpec &s : g.inputSpecs)
      userInputs += s.kind == InputKind::UserInput;
    for (size_t i = 0; i < userInputs; ++i)
      inputs.push_back(npy(inputsDir(model) + "/in" + std::to_string(i) + set + ".npy"));
    Expected<std::vector<Tensor>> outs = runLoopGraph(*m, g, inputs, *weights);
    ASSERT_TRUE(static_cast<bool>(outs)) << outs.error().message();
    std::vector<Tensor> got, want;
    size_t user = 0;
    for (size_t i = 0; i < g.outputSpecs.size(); ++i) {
      const OutputSpec &spec = g.outputSpecs[i];
      std::string path;
      if (spec.kind == OutputKind::UserOutput)
        path = inputsDir(model) + "/out" + std::to_string(user++) + set + ".npy";
      else if (spec.kind == OutputKind::BufferMutation)
        path = inputsDir("core_aten/" + model) + "/buffer_after1." + spec.target + ".npy";
      if (path.empty() || !std::filesystem::exists(path))
        continue;
      got.push_back((*outs)[i]);
      want.push_back(npy(path));
    }
    EXPECT_GT(got.size(), 0u);
    test::expectClose(got, want, 1e-4, model + set);
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, ModelLowering,
                         ::testing::Values("mlp", "mlp_dynamic", "convnet", "convnet_train",
                                           "sdpa_attention", "transformer_encoder", "tinylm",
                                           "gpt2_tiny", "mobilenet_v3_small"));

} // namespace
} // namespace gc
