//===- DocMain.cpp - The gc-doc driver ------------------------------------===//
//
// docs/ops.md is generated from OpDefs.def and the registries of each
// concern, so that it cannot drift from the code: test/docs/ops-md.test
// compares it with this tool's output.
//
//===----------------------------------------------------------------------===//
#include "gc/Tools/DocMain.h"

#include "gc/Autodiff/Derivatives.h"
#include "gc/IR/OpSchema.h"
#include "gc/IR/OpVariants.h"
#include "gc/Interp/Kernel.h"
#include "gc/Lower/Lowering.h"
#include "gc/Ops/Decompositions.h"
#include "gc/Ops/ShapeInference.h"
#include "gc/Pass/Pass.h"
#include "gc/Support/FileSystem.h"
#include "gc/Tools/ToolSupport.h"
#include "gc/Driver/Pipeline.h"

#include <set>
#include <sstream>

namespace gc {

namespace {

constexpr const char *kCommand = "gc-doc -o docs/ops.md";

/// What one concern registers, as one column of the coverage table.
struct Concern {
  const char *column;
  std::set<OpId> ops;
  /// Whether core ops need an entry too (decompositions are for the rest).
  bool forCore = true;
  /// Whether aten ops need an entry too (derivatives are for core ops).
  bool forAten = true;

  bool covers(const OpSchema &op) const { return ops.count(op.id) > 0; }
  /// Whether ops that compute sizes need an entry (no gradient flows
  /// through an integer size).
  bool forSizes = true;

  bool applies(const OpSchema &op) const {
    if (op.computesSizes() && !forSizes)
      return false;
    return op.core ? forCore : forAten;
  }
};

std::vector<Concern> concerns() {
  auto set = [](std::vector<OpId> ops) { return std::set<OpId>(ops.begin(), ops.end()); };
  return {{"shape function", set(shapeFunctions().ops())},
          {"reference kernel", set(referenceKernels().ops())},
          {"decomposition", set(decompositions().ops()), /*forCore=*/false},
          {"derivative", set(derivatives().ops()), /*forCore=*/true, /*forAten=*/false,
           /*forSizes=*/false},
          {"lowering", set(loweredOps()), /*forCore=*/true, /*forAten=*/false}};
}

/// A table cell: '|' would end the cell.
std::string cell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|')
      out += '\\';
    out += c;
  }
  return out;
}

void writeSummary(std::ostream &os, std::span<const OpSchema> ops,
                  const std::vector<Concern> &cs) {
  size_t core = 0;
  for (const OpSchema &op : ops)
    core += op.core;
  os << ops.size() << " ops: " << core << " core, " << ops.size() - core << " aten.\n\n";
  os << "| concern | ops covered |\n|---|---|\n";
  for (const Concern &c : cs) {
    size_t applicable = 0, covered = 0;
    for (const OpSchema &op : ops) {
      if (!c.applies(op))
        continue;
      ++applicable;
      covered += c.covers(op);
    }
    os << "| " << c.column << " | " << covered << " of " << applicable
       << (!c.forCore ? " aten ops" : !c.forAten ? " core ops" : "") << " |\n";
  }
  os << "\n";
}

void writeAdding(std::ostream &os) {
  os << "## Adding an op\n\n"
        "Every op is one row of `include/gc/IR/OpDefs.def`; code names it by its id "
        "(`ops::aten_add_Tensor`), so a misspelled op does not compile, and each concern "
        "registers against that id. Graph files and the text form spell ops by name; an op "
        "with no row is refused where it is read. A floating unary op is one `GC_UNARY_OP` "
        "row, which gives it its schema, shape function, reference kernel, lowering and "
        "derivative; the arithmetic it applies is one row of `include/gc/IR/ScalarOps.def`: "
        "its double-precision definition, which both interpreters use, and how the CPU code "
        "generator computes it (a function of `lib/Codegen/MathLibrary.c`, the C library, or "
        "the emitter). `aten.asinh.default` was added that way: its two rows and "
        "`gc_asinhf`/`gc_asinh`. An op that runs as one call into a library is one "
        "`GC_EXTERN_OP` row: its columns give the plan's call, the post-ops the call may "
        "apply, the roofline's count of its work and which calls a CPU compile keeps whole, "
        "and every concern reads them (`include/gc/IR/ExternOps.h`); the call itself is "
        "the runtime's.\n\n";
}

void writeCoreSet(std::ostream &os, std::span<const OpSchema> ops) {
  os << "## The core op set\n\n"
        "gc-opt lowers every graph to these ops (module level `core`); later stages "
        "consume only them.\n\n";
  for (const OpSchema &op : ops)
    if (op.core)
      os << "- `" << op.name << "`: " << op.summary << "\n";
  os << "\n";
}

void writeDerivatives(std::ostream &os, std::span<const OpSchema> ops) {
  os << "## Derivatives\n\n"
        "`gc-opt --joint` differentiates core graphs with these rules: g is the gradient of "
        "the result y, x the input `self`. \"none\" marks ops through which no gradient "
        "flows.\n\n";
  for (const OpSchema &op : ops) {
    if (!op.core)
      continue;
    const DerivativeEntry *d = derivatives().find(op.id);
    os << "- `" << op.name << "`: " << (d ? d->formula : "**no rule yet**") << "\n";
  }
  os << "\n";
}

void writeCoverage(std::ostream &os, std::span<const OpSchema> ops,
                   const std::vector<Concern> &cs) {
  os << "## Ops and their coverage\n\n"
        "Core ops need no decomposition (`-`); every other op must decompose into core "
        "ops for gc-opt to accept it. Derivatives are for core ops only.\n\n";
  os << "| op | set | summary | schema |";
  for (const Concern &c : cs)
    os << " " << c.column << " |";
  os << "\n|---|---|---|---|";
  for (size_t i = 0; i < cs.size(); ++i)
    os << "---|";
  os << "\n";
  for (const OpSchema &op : ops) {
    os << "| `" << op.name << "` | " << (op.core ? "core" : "aten") << " | " << cell(op.summary)
       << " | `" << cell(op.schema) << "` |";
    for (const Concern &c : cs)
      os << " " << (!c.applies(op) ? "-" : c.covers(op) ? "yes" : "**no**") << " |";
    os << "\n";
  }
  os << "\n";
}

/// Whether gc-opt and gc-lower take `op`: a core op with a lowering, an
/// aten op with a decomposition, a variant whose functional op is one.
bool compiles(OpId op, const std::set<OpId> &decomposed, const std::set<OpId> &lowered) {
  if (const OpVariant *v = findVariant(op))
    op = v->functional;
  return isCoreOp(op) ? lowered.count(op) > 0 : decomposed.count(op) > 0;
}

void writeAtenSet(std::ostream &os, std::span<const OpSchema> ops, const std::vector<Concern> &cs) {
  auto registered = [&](std::string_view column) -> const std::set<OpId> & {
    return std::find_if(cs.begin(), cs.end(), [&](const Concern &c) { return c.column == column; })
        ->ops;
  };
  const std::set<OpId> &decomposed = registered("decomposition"), &lowered = registered("lowering");
  std::span<const AtenOverload> all = atenOverloads();
  size_t rows = 0, variants = 0, compiled = 0;
  std::vector<std::string_view> missing;
  for (const AtenOverload &o : all) {
    std::optional<OpId> op = lookupOp(o.name);
    rows += op && !findVariant(*op);
    variants += op && findVariant(*op);
    if (op && compiles(*op, decomposed, lowered))
      ++compiled;
    else
      missing.push_back(o.name);
  }
  size_t inPlace = std::count_if(opVariants().begin(), opVariants().end(),
                                 [](const OpVariant &v) { return v.kind == VariantKind::InPlace; });
  os << "## torch's ATen operator set\n\n"
     << "include/gc/IR/AtenOverloads.inc lists every overload of torch " << atenVersion()
     << "'s ATen operator set with its schema (generated by utils/gen-aten-overloads.py). "
        "An overload is a row of OpDefs.def, or an in-place or out= variant of a row that "
        "gc derives from the two schemas (include/gc/IR/OpVariants.h: the functional op "
        "plus a write-back into the written arguments), or unknown to gc. It compiles when "
        "gc-opt and gc-lower take it: a core op with a lowering, an aten op with a "
        "decomposition, a variant whose functional op does.\n\n"
     << "| overloads of torch " << atenVersion() << " | rows of OpDefs.def | derived variants "
     << "(in place, out=) | unknown | compiled |\n|---|---|---|---|---|\n"
     << "| " << all.size() << " | " << rows << " | " << variants << " (" << inPlace << ", "
     << variants - inPlace << ") | " << all.size() - rows - variants << " | " << compiled
     << " |\n\n"
     << ops.size() - rows << " rows of OpDefs.def are not overloads of torch " << atenVersion()
     << "'s ATen set (gc's own ops, prims, Python operators, older names).\n\n"
     << "### Derived variants\n\n| variant | functional op | compiles |\n|---|---|---|\n";
  for (const OpVariant &v : opVariants())
    os << "| `" << opName(v.id) << "` | `" << opName(v.functional) << "` | "
       << (compiles(v.id, decomposed, lowered) ? "yes" : "**no**") << " |\n";
  os << "\n### Overloads gc does not compile\n\n";
  for (size_t i = 0; i < missing.size(); ++i)
    os << "`" << missing[i] << "`" << (i + 1 < missing.size() ? ", " : "\n\n");
}

/// The op suite's results are test results, not registry contents: the
/// tests named here check exactly these shares, so a change in either
/// shows up as a failing test.
void writeOpSuite(std::ostream &os) {
  os << "## The op conformance suite\n\n"
     << "225 samples of 122 ops, made from PyTorch's OpInfo samples (test/Opsuite/Inputs; "
        "zero-size, scalar and non-contiguous cases included), each run against PyTorch's "
        "outputs at every stage:\n\n"
     << "| stage | samples that pass | test |\n|---|---|---|\n"
     << "| imported graph, reference interpreter | 225 of 225 | test/Opsuite/interp.test |\n"
     << "| core graph (gc-opt), reference interpreter | 225 of 225 | test/Opsuite/core.test |\n"
     << "| kernel plan (gc-lower, gc-codegen), runtime | 225 of 225 | "
        "test/Opsuite/compiled-0.test, compiled-1.test |\n\n";
}

} // namespace

std::string renderOpsDoc(std::string_view opSuiteSection) {
  std::span<const OpSchema> ops = allOpSchemas();
  std::vector<Concern> cs = concerns();
  std::ostringstream os;
  os << "_Generated by `" << kCommand << "` from include/gc/IR/OpDefs.def and the registries "
     << "of each concern; do not edit by hand._\n\n";
  os << "# Ops\n\n";
  writeSummary(os, ops, cs);
  writeAdding(os);
  writeCoreSet(os, ops);
  writeDerivatives(os, ops);
  writeCoverage(os, ops, cs);
  writeAtenSet(os, ops, cs);
  writeOpSuite(os);
  os << opSuiteSection;
  std::string text = os.str();
  text.pop_back(); // one newline at the end, not a blank line
  return text;
}

std::string renderPassesDoc() {
  std::string out = "_Generated by `gc-doc --passes-md -o docs/passes.md` from the phase table "
                    "(lib/Driver/Pipeline.cpp) and the pass registry; do not edit by hand._\n\n"
                    "# Pipeline\n\n"
                    "`gc-compile` runs these phases in order (the training ones with `--train`); "
                    "each tool runs one of them alone.\n\n"
                    "| phase | tool | makes | what it does |\n|---|---|---|---|\n";
  for (const PhaseInfo &p : phaseInfos())
    out += "| " + std::string(p.name) + (p.training ? " (training)" : "") + " | `" +
           std::string(p.tool) + "` | " +
           (p.level ? "level " + std::string(levelName(*p.level)) : std::string("package")) +
           " | " + std::string(p.description) + " |\n";
  out += "\n# Passes\n\n"
         "`gc-opt --passes=a,b,c` runs these by name (`--passes=` runs none; "
         "`assign-target` comes first when a target flag is given); "
         "`--print-after=NAME`, `--time-passes`, `--stats` and `--list-passes` work "
         "with any of them.\n\n"
         "| pass | what it does |\n|---|---|\n";
  for (const PassInfo &p : registeredPasses())
    if (!p.testOnly)
      out += "| `" + std::string(p.name) + "` | " + std::string(p.summary) + " |\n";
  const WeightsMode embed = WeightsMode::Embed;
  out += "\n## Default pipelines\n\n"
         "Each runs after `assign-target` (below), which records the target.\n\n"
         "- `gc-opt`: `" + corePassList({.keepWholeCalls = true}, embed) + "`\n"
         "- `gc-opt --freeze`: `" + corePassList({.freeze = true, .keepWholeCalls = true}, embed) +
         "`\n"
         "- `gc-opt --freeze --weights=external`: `" +
         corePassList({.freeze = true, .keepWholeCalls = true}, WeightsMode::External) + "`\n"
         "- `gc-opt --joint`: `" + corePassList({}, embed) + "`, then the joint graph\n";
  out += "\n## The target\n\n"
         "What a module is compiled for is chosen once, in the opt phase: `gc-opt` (or "
         "`gc-compile`) `--device cpu|cuda`, `--target` (CPU levels), `--gpu-arch`, "
         "`--weights=embed|external`, `--precision=exact|bf16` and "
         "`--conv-algorithm=auto|direct`. Its first pass, `assign-target`, records them on the "
         "module (a `target {...}` record in the text form, the `target` table of graph.fbs); "
         "a flag left out takes its default, and the device defaults to cuda when the model "
         "was exported on a GPU. Every later phase reads the record: `decompose-keep-whole` keeps "
         "whole the calls the recorded device runs whole, `fuse-int8` makes int8 oneDNN calls only "
         "for the CPU, `conv-as-product` runs only for CUDA, "
         "`lower-precision` gives float32 products and convolutions bfloat16 operands (and "
         "a bfloat16 result, widened back to float32) only for `--precision=bf16`, leaving "
         "depthwise convolutions float32 on the CPU, "
         "`gc-lower --layout=auto` is channels-last but for a GPU training module or a GPU graph "
         "that permutes its activations to [N, H, W, C] itself (gc/IR/LayoutMode.h), the "
         "scheduler and the "
         "kernel emitter build for the recorded device, levels and architectures, and "
         "`gc-package` holds the weights as recorded and lets float32 convolutions take "
         "oneDNN's Winograd algorithm (docs/backend.md, \"Winograd convolutions\") unless "
         "`--conv-algorithm=direct`. `gc-lower` and `gc-codegen` take "
         "`--device`, `--target`, `--gpu-arch`, `--precision` and `--conv-algorithm`, and `gc-package` takes "
         "`--weights`, only "
         "to check them: a value that contradicts the module is an error that names gc-opt. "
         "A module without a record (a hand-written text, or a graph file older than format "
         "1.6) is read with the defaults (cuda when a graph input lives on a GPU) until a "
         "phase is given target flags, which then record them.\n";
  return out;
}

int docMain(int argc, char **argv) {
  const std::string tool = "gc-doc";
  CLI::App app("Print docs/ops.md (every op gc defines, and what each concern (shape "
               "functions, reference kernels, decompositions) registers for it) or docs/passes.md");
  std::string output = "-";
  std::string opSuiteResults;
  bool passes = false;
  app.add_option("-o", output, "Output file ('-' for stdout)")->default_val("-");
  app.add_flag("--passes-md", passes, "Print docs/passes.md instead");
  addRenamedFlag(app, "--passes", "--passes-md");
  app.add_option("--opsuite-results", opSuiteResults,
                 "Append the op suite's results from this JSON file (utils/check-opsuite.py "
                 "--json) to docs/ops.md");
  int exitCode = 0;
  if (!parseCommandLine(app, argc, argv, exitCode))
    return exitCode;
  registerAllPasses();
  std::string section;
  if (!opSuiteResults.empty()) {
    Expected<std::shared_ptr<MappedFile>> file = MappedFile::open(opSuiteResults);
    if (!file)
      return reportError(tool, file.error());
    Expected<std::string> text = renderOpSuiteResults((*file)->text(), opSuiteResults);
    if (!text)
      return reportError(tool, text.error());
    section = std::move(*text);
  }
  if (Error e = writeFileAtomic(output, passes ? renderPassesDoc() : renderOpsDoc(section)))
    return reportError(tool, e);
  return 0;
}

} // namespace gc
