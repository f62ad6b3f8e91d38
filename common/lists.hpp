#pragma once
// Parameter lists on the command line: "a,b,c" or a geometric range "lo:hi:xk"
// (lo, lo*k, lo*k^2, ... while <= hi). Errors name the option.
#include <string>
#include <vector>

namespace p0sim {

std::vector<long> parse_int_list(const std::string& option, const std::string& text, long min_value, long max_value);
std::vector<double> parse_double_list(const std::string& option, const std::string& text);

}  // namespace p0sim
