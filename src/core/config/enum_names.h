// Tables that name the values of an enum in a config schema ("wormhole", "vct", ...), and
// the three look-ups a schema needs: every name (KeySpec::Allowed), name -> value (the
// schema check has already admitted only listed names) and value -> name.
// Header-only; stateless; thread safe.
#ifndef UKAI_CORE_CONFIG_ENUM_NAMES_H_
#define UKAI_CORE_CONFIG_ENUM_NAMES_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/config/schema.h"

namespace ukai::config {

template <typename E>
struct EnumName {
  E value;
  std::string_view name;
};

// Every name of `table`, in table order.
template <typename E, size_t N>
std::vector<std::string> Names(const EnumName<E> (&table)[N]) {
  std::vector<std::string> out;
  for (const auto& e : table) out.emplace_back(e.name);
  return out;
}

// The value named by the string scalar `s`; the first value when `s` names none (a schema
// whose KeySpec::Allowed lists the names never lets that happen).
template <typename E, size_t N>
E FromName(const EnumName<E> (&table)[N], const Scalar& s) {
  for (const auto& e : table) {
    if (e.name == std::get<std::string>(s)) return e.value;
  }
  return table[0].value;
}

// The name of `v`, or "?" when the table lacks it.
template <typename E, size_t N>
std::string_view ToName(const EnumName<E> (&table)[N], E v) {
  for (const auto& e : table) {
    if (e.value == v) return e.name;
  }
  return "?";
}

}  // namespace ukai::config

#endif  // UKAI_CORE_CONFIG_ENUM_NAMES_H_
