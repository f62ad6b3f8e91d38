#include "common/lists.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "common/errors.hpp"

namespace p0sim {
namespace {

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : text) {
    if (c == sep) {
      parts.push_back(cur);
      cur.clear();
    } else if (c != ' ') {
      cur.push_back(c);
    }
  }
  parts.push_back(cur);
  return parts;
}

double to_double(const std::string& option, const std::string& token) {
  if (token.empty()) throw UsageError(option, "empty value in list (accepted: a,b,c or lo:hi:xk)");
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(token.c_str(), &end);
  if (end != token.c_str() + token.size() || errno == ERANGE || !std::isfinite(v))
    throw UsageError(option, "'" + token + "' is not a finite number (accepted: a,b,c or lo:hi:xk)");
  return v;
}

std::vector<double> expand(const std::string& option, const std::string& text) {
  if (text.find(':') != std::string::npos) {
    auto parts = split(text, ':');
    if (parts.size() != 3 || parts[2].empty() || parts[2][0] != 'x')
      throw UsageError(option, "range '" + text + "' must be lo:hi:xk, e.g. 4:1024:x2");
    double lo = to_double(option, parts[0]);
    double hi = to_double(option, parts[1]);
    double k = to_double(option, parts[2].substr(1));
    if (!(lo > 0) || !(hi >= lo) || !(k > 1))
      throw UsageError(option, "range '" + text + "' needs 0 < lo <= hi and factor k > 1");
    std::vector<double> out;
    // Multiply from lo with a relative slack so 4:1024:x2 includes 1024 despite rounding.
    for (double v = lo; v <= hi * (1 + 1e-12); v *= k) out.push_back(v);
    return out;
  }
  std::vector<double> out;
  for (const auto& token : split(text, ',')) out.push_back(to_double(option, token));
  return out;
}

}  // namespace

std::vector<long> parse_int_list(const std::string& option, const std::string& text, long min_value, long max_value) {
  std::vector<long> out;
  for (double v : expand(option, text)) {
    double r = std::round(v);
    if (std::fabs(r - v) > 1e-9 * std::max(1.0, std::fabs(v)))
      throw UsageError(option, "'" + text + "' must contain whole numbers");
    if (r < static_cast<double>(min_value) || r > static_cast<double>(max_value))
      throw UsageError(option, "value " + std::to_string(static_cast<long long>(r)) + " out of range (accepted: " +
                                   std::to_string(min_value) + " to " + std::to_string(max_value) + ")");
    out.push_back(static_cast<long>(r));
  }
  return out;
}

std::vector<double> parse_double_list(const std::string& option, const std::string& text) {
  return expand(option, text);
}

}  // namespace p0sim
