#pragma once
// A number in a JSON result: the value, or null where it is undefined (NaN or infinite), the JSON
// twin of csv_number (common/format.hpp).
#include <cmath>
#include <nlohmann/json.hpp>

namespace p0sim {

inline nlohmann::json json_number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

}  // namespace p0sim
