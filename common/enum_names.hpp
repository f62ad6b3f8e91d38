#pragma once
// One name table per enum, declared next to the enum (in its namespace, found by argument-dependent
// lookup) and used for parsing, printing, help texts and results, so an enum's names are written
// once:
//
//   enum class Mask { causal, bidirectional, prefix_bidirectional, count };
//   constexpr std::array<std::string_view, 3> enum_names_of(Mask) { return {"causal", "bidirectional", ...}; }
//
// `count` is the enum's last enumerator; the table is checked against it at compile time, so an
// enumerator added without its name does not build.
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace p0sim {

template <typename E>
concept NamedEnum = std::is_enum_v<E> && requires {
  enum_names_of(E{});
};

template <NamedEnum E>
inline constexpr auto kEnumNames = enum_names_of(E{});

template <NamedEnum E>
constexpr const auto& enum_table() {
  static_assert(kEnumNames<E>.size() == static_cast<std::size_t>(E::count),
                "an enumerator has no name in its enum_names_of table");
  return kEnumNames<E>;
}

// Every value of E in declaration order.
template <NamedEnum E>
constexpr std::array<E, static_cast<std::size_t>(E::count)> enum_values() {
  std::array<E, static_cast<std::size_t>(E::count)> out{};
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<E>(i);
  return out;
}

template <NamedEnum E>
std::string enum_name(E e) {
  const auto i = static_cast<std::size_t>(e);
  return i < enum_table<E>().size() ? std::string(enum_table<E>()[i]) : std::string("?");
}

template <NamedEnum E>
std::optional<E> parse_enum(std::string_view name) {
  for (std::size_t i = 0; i < enum_table<E>().size(); ++i)
    if (enum_table<E>()[i] == name) return static_cast<E>(i);
  return std::nullopt;
}

template <NamedEnum E>
std::vector<std::string> enum_names() {
  return {enum_table<E>().begin(), enum_table<E>().end()};
}

// "a, b, c": what an error message says is accepted.
template <NamedEnum E>
std::string enum_names_text() {
  std::string out;
  for (std::string_view n : enum_table<E>()) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

}  // namespace p0sim
