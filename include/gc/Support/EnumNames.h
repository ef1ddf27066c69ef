//===- EnumNames.h - Enums named by a table of strings ----------*- C++ -*-===//
#ifndef GC_SUPPORT_ENUMNAMES_H
#define GC_SUPPORT_ENUMNAMES_H

#include <array>
#include <optional>
#include <string_view>

namespace gc {

/// The enumerator whose name is `name`, where `names[i]` names the
/// enumerator of value i; nullopt if none does.
template <typename E, size_t N>
std::optional<E> findName(const std::array<std::string_view, N> &names, std::string_view name) {
  for (size_t i = 0; i < N; ++i)
    if (names[i] == name)
      return static_cast<E>(i);
  return std::nullopt;
}

} // namespace gc

#endif // GC_SUPPORT_ENUMNAMES_H
