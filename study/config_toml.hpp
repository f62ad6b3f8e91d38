#pragma once
// Config files (TOML, read by toml++) as key = value entries with their lines, in file order, so
// the callers can apply them to the run-option table or to a subcommand's options and name the
// file, line and key in any error. A value keeps the text it was written with ("3e-3" stays
// "3e-3"), so a resolved config reads back as written.
#include <filesystem>
#include <string>
#include <vector>

namespace p0sim::study {

struct TomlEntry {
  std::string key;
  std::string text;                // a string's value, else the literal as written; arrays: items joined by ','
  std::vector<std::string> items;  // an array's items (empty for a scalar)
  bool is_array = false;
  int line = 0;
  std::string at;     // "FILE:LINE", for error messages
  std::string where;  // "FILE:LINE: key 'KEY'"
};

struct TomlSection {
  std::string name;  // dotted: "variants.main"
  int line = 0;
  std::vector<TomlEntry> entries;
};

struct TomlDocument {
  std::string path;
  std::vector<TomlEntry> root;        // keys before any [section]
  std::vector<TomlSection> sections;  // in file order
};

// Reads `path`; a missing or unreadable file or malformed TOML is a UsageError naming `option`,
// the file and the line. Values must be strings, numbers, booleans or arrays of those; nested
// tables are listed as sections (only one level of [a.b] nesting below the root is accepted).
TomlDocument read_toml(const std::filesystem::path& path, const std::string& option);
// The same from text; `name` stands for the file in messages.
TomlDocument parse_toml(const std::string& text, const std::string& name, const std::string& option);

}  // namespace p0sim::study
