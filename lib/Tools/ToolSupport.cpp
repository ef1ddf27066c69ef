//===- ToolSupport.cpp - What every gc tool shares ------------------------===//
#include "gc/Tools/ToolSupport.h"

#include "gc/Support/FileSystem.h"

#include <iostream>
#include <map>
#include <set>

namespace gc {

void OutputOptions::addTo(CLI::App &app, bool offerLLVM) {
  app.add_option("-o", path, "Output file ('-' for stdout)")->default_val("-");
  app.add_option("--depfile", depfile,
                 "(also -MF FILE, as compilers spell it) Write a Makefile-syntax depfile of the "
                 "files the output was made from");
  std::vector<std::string> forms = {"binary", "text"};
  if (offerLLVM)
    forms.push_back("llvm");
  app.add_option_function<std::string>(
         "--emit",
         [this](const std::string &form) {
           format = form == "text" ? FileFormat::Text : FileFormat::Binary;
           llvm = form == "llvm";
         },
         offerLLVM ? "Output form: binary (FlatBuffers graph file), text, or llvm (the kernels' "
                     "optimized LLVM IR)"
                   : "Output form: binary (FlatBuffers graph file) or text")
      ->check(CLI::IsMember(forms, CLI::ignore_case));
}

namespace {
/// Make's escaping for a path in a rule.
std::string escapeForMake(const std::string &path) {
  std::string out;
  for (char c : path) {
    if (c == '$')
      out += '$';
    else if (c == ' ' || c == '#')
      out += '\\';
    out += c;
  }
  return out;
}
} // namespace

Error OutputOptions::writeDepfile(const std::vector<std::string> &inputs) const {
  if (depfile.empty())
    return Error::success();
  if (path == "-")
    return makeError() << "-MF needs an output file (-o)";
  std::string rule = escapeForMake(path) + ":";
  std::set<std::string> seen;
  for (const std::string &in : inputs)
    if (in != "-" && seen.insert(in).second)
      rule += " \\\n  " + escapeForMake(in);
  return writeFileAtomic(depfile, rule + "\n");
}

void PassManagerFlags::addTo(CLI::App &app, const std::string &listHelp) {
  app.add_option("--print-after", printAfter, "Print the module after this pass ('all' for every)")
      ->delimiter(',');
  app.add_flag("--time-passes", options.timePasses, "Print the time each pass took to stderr");
  app.add_flag("--stats", options.statistics, "Print pass statistics to stderr");
  app.add_flag("!--no-verify-each", options.verifyEach,
               "Do not verify the module after each pass");
  app.add_flag("--list-passes", listPasses, listHelp);
}

Error PassManagerFlags::resolvePrintAfter(
    const std::function<bool(std::string_view)> &isKnown) {
  for (const std::string &name : printAfter)
    if (name != "all" && !isKnown(name))
      return makeError() << "--print-after names unknown pass '" << name
                         << "' (see --list-passes)";
  options.printAfter.insert(printAfter.begin(), printAfter.end());
  return Error::success();
}

void addCorePipelineFlags(CLI::App &app, CorePipelineOptions &core, const std::string &helpPrefix) {
  app.add_flag("--freeze", core.freeze,
               helpPrefix + "inference; make parameters constants and fold them");
  app.add_flag("--retarget-cpu", core.retargetCPU,
               helpPrefix + "compile a model exported on another device (cuda) for the CPU");
}

std::vector<std::string> moduleDependencies(const std::string &file, const Module &m) {
  std::vector<std::string> deps = {file};
  for (const WeightSource &src : m.weightSources())
    if (!src.path.empty())
      deps.push_back(resolvePath(src.path, m.sourceBaseDir()));
  return deps;
}

int reportError(const std::string &tool, const Error &e) {
  std::cerr << tool << ": error: " << e.message() << "\n";
  return 1;
}

bool parseCommandLine(CLI::App &app, int argc, char **argv, int &exitCode) {
  // CLI11 has no single-dash long options; compilers' -MF is spelled
  // --depfile inside.
  std::vector<std::string> args;
  for (int i = argc - 1; i > 0; --i)
    args.push_back(std::string(argv[i]) == "-MF" ? "--depfile" : argv[i]);
  try {
    app.parse(args);
  } catch (const CLI::ParseError &e) {
    exitCode = app.exit(e);
    return false;
  }
  return true;
}

} // namespace gc
