"""The percentile bootstrap of a mean, as the verdict computes it (study/stats.hpp): 10000
resamples, two-sided 95%, linear interpolation between order statistics. The bounds are means of
observed values, so they stay inside the values' range. A fixed-seed stream: the same values give
the same interval (not the same bits as the C++ verdict, whose stream is mt19937_64)."""
import math
import random

RESAMPLES = 10000


def bootstrap(values, level=0.95):
    """(mean, lo, hi); NaN bounds for fewer than two values."""
    n = len(values)
    if n == 0:
        return float("nan"), float("nan"), float("nan")
    mean = sum(values) / n
    if n < 2:
        return mean, float("nan"), float("nan")
    rng = random.Random(20261203)
    means = sorted(sum(rng.choice(values) for _ in range(n)) / n for _ in range(RESAMPLES))

    def quantile(p):
        h = p * (len(means) - 1)
        i = int(math.floor(h))
        return means[-1] if i + 1 >= len(means) else means[i] + (h - i) * (means[i + 1] - means[i])

    return mean, quantile((1 - level) / 2), quantile((1 + level) / 2)


def cell(values, digits=2):
    """'mean [lo, hi]' (the mean alone for one value)."""
    m, lo, hi = bootstrap(values)
    if not math.isfinite(lo):
        return f"{m:.{digits}f}"
    return f"{m:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"
