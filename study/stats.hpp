#pragma once
// The statistics of experiments: Student-t intervals of a mean and Welch's t-test.
#include <limits>
#include <vector>

namespace p0sim::study {

// The values a metric can take; an interval of its mean is cut to them (a fraction's interval
// never reaches below 0 or above 1, whatever the Student-t half-width).
struct Range {
  double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
};

// Mean and two-sided `level` Student-t interval of the mean, truncated to `range`.
struct Interval {
  long n = 0;
  double mean = 0.0, lo = 0.0, hi = 0.0;  // NaN bounds when n < 2
};
Interval mean_interval(const std::vector<double>& x, double level, Range range = {});

// Welch's unequal-variance t-test, two-sided. With both sample variances zero the statistic is
// undefined: p = 1 when the means are equal, else 0 (the samples are separated without overlap),
// and `degenerate` is set.
struct WelchResult {
  double t = 0.0, dof = 0.0, p_value = 1.0;
  bool degenerate = false;
};
WelchResult welch_t_test(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace p0sim::study
