//===- OpSuiteReport.cpp - docs/ops.md's section on the op suite's results -===//
//
// utils/check-opsuite.py --json writes, for every sample, the stage where it
// stopped (none when it passed), the kind of failure and the reason. This
// turns that file into markdown: the share that gets through each stage,
// the failures by kind, the share per op family, and the ops that fail with
// their reasons, so the coverage table and the test results sit side by side.
//
//===----------------------------------------------------------------------===//
#include "gc/Tools/DocMain.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

namespace gc {

namespace {

using Json = nlohmann::json;

struct Sample {
  std::string name, op, family, stage, kind, reason;
};

std::string share(size_t part, size_t whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", whole ? 100.0 * double(part) / double(whole) : 0.0);
  return buf;
}

/// A reason in a table cell: one line, no '|', and the tool's prefix
/// ("gc-opt: error: 'a.gcm': ") dropped, as it only says which stage.
std::string reasonCell(std::string_view reason) {
  size_t at = reason.find(": error: ");
  if (at != std::string_view::npos) {
    reason.remove_prefix(at + 9);
    if (!reason.empty() && reason.front() == '\'') {
      size_t close = reason.find("': ");
      if (close != std::string_view::npos)
        reason.remove_prefix(close + 3);
    }
  }
  std::string out;
  for (char c : reason)
    out += c == '|' ? '/' : c == '\n' ? ' ' : c;
  return out;
}

Expected<std::string> field(const Json &j, const char *key, const std::string &where) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null())
    return std::string();
  if (!it->is_string())
    return makeError() << where << ": '" << key << "' is not a string";
  return it->get<std::string>();
}

} // namespace

Expected<std::string> renderOpSuiteResults(std::string_view jsonText, const std::string &path) {
  Json j = Json::parse(jsonText, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    return makeError() << path << ": not a JSON object (utils/check-opsuite.py --json writes it)";
  if (!j.contains("stages") || !j["stages"].is_array() || !j.contains("samples") ||
      !j["samples"].is_object())
    return makeError() << path << ": needs 'stages' (a list) and 'samples' (an object)";
  std::vector<std::string> stages;
  for (const Json &s : j["stages"]) {
    if (!s.is_string())
      return makeError() << path << ": 'stages' holds a non-string";
    stages.push_back(s.get<std::string>());
  }
  std::vector<Sample> samples;
  for (const auto &[name, s] : j["samples"].items()) {
    std::string where = path + ": sample '" + name + "'";
    if (!s.is_object())
      return makeError() << where << ": not an object";
    Sample out{name, "", "", "", "", ""};
    for (auto [key, dst] : {std::pair{"op", &out.op}, {"family", &out.family},
                            {"failed_stage", &out.stage}, {"kind", &out.kind},
                            {"reason", &out.reason}}) {
      Expected<std::string> v = field(s, key, where);
      if (!v)
        return v.error();
      *dst = std::move(*v);
    }
    if (!out.stage.empty() && std::find(stages.begin(), stages.end(), out.stage) == stages.end())
      return makeError() << where << ": stage '" << out.stage << "' is not one of 'stages'";
    samples.push_back(std::move(out));
  }
  if (samples.empty())
    return makeError() << path << ": no samples";

  auto stageIndex = [&](const std::string &s) {
    return s.empty() ? stages.size()
                     : size_t(std::find(stages.begin(), stages.end(), s) - stages.begin());
  };
  size_t total = samples.size(), passed = 0;
  std::map<std::string, size_t> kinds;
  std::map<std::string, std::pair<size_t, size_t>> families; // passed, total
  // op -> (samples, failing samples, reason -> count)
  struct OpFailures {
    size_t samples = 0, failed = 0;
    std::map<std::string, size_t> reasons;
  };
  std::map<std::string, OpFailures> ops;
  for (const Sample &s : samples) {
    bool ok = s.stage.empty();
    passed += ok;
    auto &f = families[s.family.empty() ? "other" : s.family];
    f.first += ok;
    ++f.second;
    OpFailures &o = ops[s.op];
    ++o.samples;
    if (!ok) {
      ++kinds[s.kind.empty() ? "other" : s.kind];
      ++o.failed;
      ++o.reasons[s.stage + " (" + (s.kind.empty() ? "other" : s.kind) + "): " +
                  reasonCell(s.reason)];
    }
  }

  std::ostringstream os;
  std::string suite = j.value("suite", std::string("the op suite"));
  os << "## The generated op suite\n\n"
     << total << " samples of " << ops.size() << " OpInfo entries (test/Opsuite/" << suite;
  if (j.contains("torch") && j["torch"].is_string())
    os << ", made with torch " << j["torch"].get<std::string>();
  os << "), each run through gc's stages on the CPU. Regenerate the results with "
        "`utils/check-opsuite.py test/Opsuite/" << suite << " --compiled --bin build/bin "
        "--json docs/opsuite-results.json`, then `gc-doc --opsuite-results "
        "docs/opsuite-results.json -o docs/ops.md`; the lit tests test/Opsuite/generated-*.test "
        "check the same counts.\n\n";
  os << "| stage | samples that get through it | share |\n|---|---|---|\n";
  for (size_t i = 0; i < stages.size(); ++i) {
    size_t through = 0;
    for (const Sample &s : samples)
      through += stageIndex(s.stage) > i;
    os << "| " << stages[i] << " | " << through << " of " << total << " | "
       << share(through, total) << " |\n";
  }
  os << "\n" << passed << " of " << total << " samples pass (" << share(passed, total) << ")";
  if (!kinds.empty()) {
    os << "; failures:";
    const char *sep = " ";
    for (const auto &[kind, n] : kinds) {
      os << sep << n << " " << kind;
      sep = ", ";
    }
  }
  os << ".\n\n### Per op family\n\n| family | samples | pass | share |\n|---|---|---|---|\n";
  for (const auto &[fam, pt] : families)
    os << "| " << fam << " | " << pt.second << " | " << pt.first << " | "
       << share(pt.first, pt.second) << " |\n";
  os << "\n### Ops with failures\n\n"
        "Each failing sample's stage, kind and reason (with how many samples give it).\n\n"
        "| op | failing samples | reasons |\n|---|---|---|\n";
  for (const auto &[op, o] : ops) {
    if (!o.failed)
      continue;
    os << "| `" << op << "` | " << o.failed << " of " << o.samples << " | ";
    const char *sep = "";
    for (const auto &[reason, n] : o.reasons) {
      os << sep << reason << (n > 1 ? " (" + std::to_string(n) + ")" : "");
      sep = "; ";
    }
    os << " |\n";
  }
  os << "\n";
  return os.str();
}

} // namespace gc
