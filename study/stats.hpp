#pragma once
// The statistics of experiments: bootstrap percentile intervals of a mean (which never leave the
// values' range), Clopper-Pearson intervals of a count, effect sizes and Welch's t-test.
#include <limits>
#include <vector>

namespace p0sim::study {

// A mean and its two-sided interval.
struct Interval {
  long n = 0;
  double mean = 0.0, lo = 0.0, hi = 0.0;  // NaN bounds when n < 2
};

// Welch's unequal-variance t-test, two-sided. With both sample variances zero the statistic is
// undefined: p = 1 when the means are equal, else 0 (the samples are separated without overlap),
// and `degenerate` is set.
struct WelchResult {
  double t = 0.0, dof = 0.0, p_value = 1.0;
  bool degenerate = false;
};
WelchResult welch_t_test(const std::vector<double>& a, const std::vector<double>& b);

// Percentile bootstrap of the mean: `resamples` resamples of x with replacement, the two-sided
// `level` interval between their (1-level)/2 and (1+level)/2 quantiles (linear interpolation
// between order statistics). Each bound is a mean of observed values, so the interval stays inside
// any range the values lie in. The resampling stream is a fixed-seed mt19937_64 (its output is
// specified by the C++ standard), so the same x gives the same bits everywhere. NaN bounds when
// n < 2.
constexpr int kBootstrapResamples = 10000;
Interval bootstrap_mean_interval(const std::vector<double>& x, double level, int resamples = kBootstrapResamples);

// The difference of means a - b with its percentile-bootstrap interval (a and b resampled
// independently, same stream rules as above). NaN bounds unless both have n >= 2.
Interval bootstrap_difference_interval(const std::vector<double>& a, const std::vector<double>& b, double level,
                                       int resamples = kBootstrapResamples);

// Cohen's d: (mean a - mean b) / pooled standard deviation (n-1 weighting). +-infinity when the
// pooled deviation is 0 and the means differ, 0 when they are equal; NaN unless n_a + n_b >= 3.
double cohens_d(const std::vector<double>& a, const std::vector<double>& b);

// Clopper-Pearson ("exact") two-sided `level` interval of a binomial proportion: k successes in n
// trials (boost::math::binomial_distribution's find_lower/upper_bound_on_p). Bounds 0 at k = 0 and
// 1 at k = n; NaN for n = 0.
struct Proportion {
  long k = 0, n = 0;
  double p = 0.0, lo = 0.0, hi = 0.0;
};
Proportion clopper_pearson(long k, long n, double level);

}  // namespace p0sim::study
