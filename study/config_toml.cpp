#include "study/config_toml.hpp"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>

// toml++ 3.3 (Debian 12) enters its key parser from a table header without checking the first
// character ("[=a]", "[[[1]]]", "[&"), which its key parser states as a precondition: an assert
// abort where asserts are on, and __builtin_assume (undefined behaviour) in clang builds with
// NDEBUG (marzer/tomlplusplus#294, fixed upstream by #301). With the precondition not assumed,
// the key parser's own check reports a parse error ("expected bare key starting character"),
// as in the g++ release build, so every build reads a malformed header the same way.
#include <toml++/impl/preprocessor.h>
#undef TOML_ASSERT_ASSUME
#define TOML_ASSERT_ASSUME(expr) static_assert(true)
#include <toml++/toml.h>

#include "common/errors.hpp"

namespace p0sim::study {

namespace {

// The text of a value exactly as written in the file (for numbers and booleans), from its source
// region; toml++ keeps positions as 1-based line and column.
std::string written(const std::vector<std::string>& lines, const toml::source_region& r) {
  const auto line = static_cast<std::size_t>(r.begin.line);
  if (line == 0 || line > lines.size() || r.end.line != r.begin.line) return {};
  const std::string& text = lines[line - 1];
  const auto b = static_cast<std::size_t>(r.begin.column - 1), e = static_cast<std::size_t>(r.end.column - 1);
  return b < e && e <= text.size() ? text.substr(b, e - b) : std::string();
}

std::string scalar_text(const toml::node& n, const std::vector<std::string>& lines, const std::string& where,
                        const std::string& option) {
  if (const auto* s = n.as_string()) return s->get();
  if (n.is_integer() || n.is_floating_point() || n.is_boolean()) {
    std::string t = written(lines, n.source());
    if (!t.empty()) return t;
    // A value spread over lines: print it as toml++ reads it.
    std::ostringstream o;
    n.visit([&](const auto& v) {
      if constexpr (toml::is_value<decltype(v)>) o << v;
    });
    return o.str();
  }
  throw UsageError(option, where + ": expected a string, number, true/false or an array of those");
}

TomlEntry entry(const std::string& key, const toml::node& n, const std::vector<std::string>& lines,
                const std::string& name, const std::string& option) {
  TomlEntry e;
  e.key = key;
  e.line = static_cast<int>(n.source().begin.line);
  e.at = name + ":" + std::to_string(e.line);
  e.where = e.at + ": key '" + key + "'";
  if (const auto* a = n.as_array()) {
    e.is_array = true;
    for (const toml::node& item : *a) {
      e.items.push_back(scalar_text(item, lines, e.where, option));
      e.text += (e.text.empty() ? "" : ",") + e.items.back();
    }
    return e;
  }
  e.text = scalar_text(n, lines, e.where, option);
  return e;
}

template <typename T>
void sort_by_line(std::vector<T>& v) {
  std::stable_sort(v.begin(), v.end(), [](const T& a, const T& b) { return a.line < b.line; });
}

// TOML integers are signed 64-bit, but a seed is any unsigned 64-bit number, and resolved configs
// write derived seeds bare (seed = 10811506038414795807). A bare integer value too large for
// int64 is therefore read as the string of its digits; the option's own check then decides.
std::string quote_wide_integers(std::vector<std::string>& lines) {
  static const std::regex wide(R"(^(\s*[A-Za-z0-9_-]+\s*=\s*)([0-9]{19,})(\s*(#.*)?)$)");
  std::string out;
  for (std::string& line : lines) {
    std::smatch m;
    if (std::regex_match(line, m, wide) && (m[2].length() > 19 || m[2].str() > "9223372036854775807"))
      line = m[1].str() + "\"" + m[2].str() + "\"" + m[3].str();
    out += line + "\n";
  }
  return out;
}

// Debian's toml++ 3.3 reaches an unreachable branch (undefined behaviour, found by fuzzing) on some
// non-ASCII characters where a key may stand. No p0sim key or value needs them, so a non-ASCII
// byte before a line's comment is refused here, before toml++ sees the text.
void refuse_non_ascii(const std::vector<std::string>& lines, const std::string& name, const std::string& option) {
  for (std::size_t i = 0; i < lines.size(); ++i) {
    char quote = 0;
    for (unsigned char c : lines[i]) {
      if (quote == 0 && c == '#') break;
      if (c == '"' || c == '\'')
        quote = quote == 0 ? static_cast<char>(c) : (quote == static_cast<char>(c) ? 0 : quote);
      if (c >= 0x80)
        throw UsageError(option, name + ":" + std::to_string(i + 1) +
                                     ": a non-ASCII character outside a comment (keys and values are ASCII)");
    }
  }
}

}  // namespace

TomlDocument parse_toml(const std::string& raw, const std::string& name, const std::string& option) {
  std::vector<std::string> lines;
  {
    std::istringstream in(raw);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
  }
  refuse_non_ascii(lines, name, option);
  const std::string text = quote_wide_integers(lines);
  toml::table table;
  try {
    table = toml::parse(text, name);
  } catch (const toml::parse_error& e) {
    throw UsageError(option, name + ":" + std::to_string(e.source().begin.line) + ": " + std::string(e.description()));
  }
  TomlDocument doc;
  doc.path = name;
  for (const auto& [k, v] : table) {
    const std::string key(k.str());
    if (const auto* t = v.as_table()) {
      auto add_section = [&](const std::string& section, const toml::table& body) {
        TomlSection s;
        s.name = section;
        s.line = static_cast<int>(body.source().begin.line);
        for (const auto& [k2, v2] : body) {
          if (v2.is_table())
            throw UsageError(option, name + ":" + std::to_string(v2.source().begin.line) + ": section '[" + section +
                                         "." + std::string(k2.str()) + "]' is nested too deeply");
          s.entries.push_back(entry(std::string(k2.str()), v2, lines, name, option));
        }
        sort_by_line(s.entries);
        doc.sections.push_back(std::move(s));
      };
      // [a.b] sections appear as table a holding table b; [a] alone holds scalars.
      bool has_scalars = false;
      for (const auto& [k2, v2] : *t)
        if (!v2.is_table()) has_scalars = true;
      if (has_scalars || t->empty()) add_section(key, *t);
      for (const auto& [k2, v2] : *t)
        if (const auto* t2 = v2.as_table()) {
          TomlSection s;
          add_section(key + "." + std::string(k2.str()), *t2);
        }
      continue;
    }
    if (v.is_array_of_tables())
      throw UsageError(option, name + ":" + std::to_string(v.source().begin.line) + ": arrays of tables ([[" + key +
                                   "]]) are not accepted");
    doc.root.push_back(entry(key, v, lines, name, option));
  }
  sort_by_line(doc.root);
  sort_by_line(doc.sections);
  return doc;
}

TomlDocument read_toml(const std::filesystem::path& path, const std::string& option) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(option, "cannot read '" + path.string() + "'");
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) throw UsageError(option, "cannot read '" + path.string() + "'");
  return parse_toml(text, path.string(), option);
}

}  // namespace p0sim::study
