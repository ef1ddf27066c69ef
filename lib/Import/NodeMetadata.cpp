//===- NodeMetadata.cpp - A node's source location in an archive ----------===//
#include "NodeMetadata.h"

#include <string_view>

namespace gc {

namespace {

/// The file, line and function of the innermost frame outside torch.
void readStack(std::string_view trace, SourceLoc &loc) {
  constexpr std::string_view kFile = "File \"";
  for (size_t at = trace.rfind(kFile); at != std::string_view::npos;
       at = at ? trace.rfind(kFile, at - 1) : std::string_view::npos) {
    std::string_view frame = trace.substr(at + kFile.size());
    size_t quote = frame.find('"');
    if (quote == std::string_view::npos)
      continue;
    std::string_view file = frame.substr(0, quote), rest = frame.substr(quote + 1);
    constexpr std::string_view kLine = ", line ", kIn = ", in ";
    if (file.find("-packages/torch/") != std::string_view::npos || rest.rfind(kLine, 0) != 0)
      continue;
    loc.file = file;
    rest.remove_prefix(kLine.size());
    size_t digits = 0;
    while (digits < rest.size() && digits < 12 && rest[digits] >= '0' && rest[digits] <= '9')
      loc.line = loc.line * 10 + (rest[digits++] - '0');
    rest.remove_prefix(digits);
    if (rest.rfind(kIn, 0) == 0) {
      rest.remove_prefix(kIn.size());
      loc.function = rest.substr(0, rest.find('\n'));
    }
    return;
  }
}

/// The path and class name of the innermost module.
void readModules(std::string_view stack, SourceLoc &loc) {
  size_t semicolon = stack.rfind(';');
  std::string_view entry = semicolon == std::string_view::npos ? stack : stack.substr(semicolon + 1);
  size_t first = entry.find(','), last = entry.rfind(',');
  if (first == std::string_view::npos || last == first)
    return;
  loc.modulePath = entry.substr(first + 1, last - first - 1);
  std::string_view cls = entry.substr(last + 1);
  size_t dot = cls.rfind('.');
  loc.moduleClass = dot == std::string_view::npos ? cls : cls.substr(dot + 1);
}

} // namespace

std::optional<SourceLoc> sourceLocOf(const nlohmann::json &node) {
  auto meta = node.find("metadata");
  if (meta == node.end() || !meta->is_object())
    return std::nullopt;
  auto text = [&](const char *key) -> std::string_view {
    auto it = meta->find(key);
    return it != meta->end() && it->is_string() ? std::string_view(it->get_ref<const std::string &>())
                                                : std::string_view();
  };
  SourceLoc loc;
  readStack(text("stack_trace"), loc);
  readModules(text("nn_module_stack"), loc);
  if (loc.file.empty() && loc.modulePath.empty())
    return std::nullopt;
  return loc;
}

} // namespace gc
