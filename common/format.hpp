#pragma once
// Numbers in result files round-trip doubles exactly (17 significant digits); floats keep 9.
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>

namespace p0sim {

inline std::string fmt17(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

inline std::string fmt9(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
  return buf;
}

// A number in a results CSV: 17 significant digits, and an empty cell where it is undefined
// (NaN or infinite). Every results file writes undefined values this one way.
inline std::string csv_number(double v) { return std::isfinite(v) ? fmt17(v) : std::string(); }

// Shortest text that reads back as the same double; whole numbers below 1e15 print as integers,
// so "1e-3" and "0.001" (and "16" and "16.0") print alike.
inline std::string fmt_shortest(double v) {
  if (v == 0.0) return "0";  // also -0
  if (std::fabs(v) < 1e15 && std::nearbyint(v) == v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

}  // namespace p0sim
