#pragma once
// Numbers in result files round-trip doubles exactly (17 significant digits); floats keep 9.
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

}  // namespace p0sim
