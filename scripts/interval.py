"""The percentile bootstrap of a mean, as the verdict computes it (study/stats.hpp): 10000
resamples, two-sided 95%, linear interpolation between order statistics. The bounds are means of
observed values, so they stay inside the values' range. A fixed-seed stream: the same values give
the same interval (not the same bits as the C++ verdict, whose stream is mt19937_64)."""
import itertools
import math
import random

RESAMPLES = 10000


def percentile(ordered, p):
    """The p-quantile of sorted values, interpolated linearly between order statistics."""
    h = p * (len(ordered) - 1)
    i = int(math.floor(h))
    return ordered[-1] if i + 1 >= len(ordered) else ordered[i] + (h - i) * (ordered[i + 1] - ordered[i])


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
    return mean, percentile(means, (1 - level) / 2), percentile(means, (1 + level) / 2)


def bootstrap_difference(a, b, level=0.95):
    """(mean(a) - mean(b), lo, hi): the percentile bootstrap of a difference in means, each sample
    resampled on its own (fixed-seed stream, as bootstrap); NaN bounds unless each has two values."""
    if not a or not b:
        return float("nan"), float("nan"), float("nan")
    if len(a) < 2 or len(b) < 2:
        return sum(a) / len(a) - sum(b) / len(b), float("nan"), float("nan")
    rng = random.Random(20261203)
    diffs = sorted(sum(rng.choice(a) for _ in a) / len(a) - sum(rng.choice(b) for _ in b) / len(b)
                   for _ in range(RESAMPLES))
    return sum(a) / len(a) - sum(b) / len(b), percentile(diffs, (1 - level) / 2), percentile(diffs, (1 + level) / 2)


def cell(values, digits=2):
    """'mean [lo, hi]' (the mean alone for one value)."""
    m, lo, hi = bootstrap(values)
    if not math.isfinite(lo):
        return f"{m:.{digits}f}"
    return f"{m:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"


def cohens_d(a, b):
    """(mean(a) - mean(b)) / pooled standard deviation; NaN when it is undefined."""
    na, nb = len(a), len(b)
    if na < 2 or nb < 2:
        return float("nan")
    ma, mb = sum(a) / na, sum(b) / nb
    va = sum((x - ma) ** 2 for x in a) / (na - 1)
    vb = sum((x - mb) ** 2 for x in b) / (nb - 1)
    pooled = math.sqrt(((na - 1) * va + (nb - 1) * vb) / (na + nb - 2))
    return (ma - mb) / pooled if pooled > 0 else float("nan")


def student_t_p(t, df):
    """Two-sided p of Student's t with an integer number of degrees of freedom, in closed form
    (Abramowitz and Stegun 26.7.3-4: a finite series in theta = atan(|t| / sqrt(df)))."""
    if df < 1:
        return float("nan")
    if math.isinf(t):
        return 0.0
    theta = math.atan(abs(t) / math.sqrt(df))
    c2, s = math.cos(theta) ** 2, math.sin(theta)
    if df % 2:  # odd: (2/pi) (theta + sin cos (1 + 2/3 cos^2 + 2*4/(3*5) cos^4 + ...))
        term, series = 1.0, 1.0 if df > 1 else 0.0
        for k in range(1, (df - 1) // 2):
            term *= c2 * (2 * k) / (2 * k + 1)
            series += term
        inside = 2 / math.pi * (theta + s * math.cos(theta) * series)
    else:  # even: sin (1 + 1/2 cos^2 + 1*3/(2*4) cos^4 + ...)
        term = series = 1.0
        for k in range(1, df // 2):
            term *= c2 * (2 * k - 1) / (2 * k)
            series += term
        inside = s * series
    return min(1.0, max(0.0, 1.0 - inside))


def one_sample_test(values, null=0.0):
    """(d, p) for values against a null mean: the effect size (mean - null) / standard deviation and
    the two-sided one-sample t-test's p (n - 1 degrees of freedom). For per-seed changes, where each
    seed is its own baseline, so no relabelling test applies; NaN below two values. Values that do
    not vary have no d (NaN) and p = 0 (p = 1 when they sit at the null)."""
    n = len(values)
    if n < 2:
        return float("nan"), float("nan")
    mean = sum(values) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in values) / (n - 1))
    if sd == 0:
        return float("nan"), 1.0 if mean == null else 0.0
    return (mean - null) / sd, student_t_p((mean - null) / (sd / math.sqrt(n)), n - 1)


def permutation_p(a, b, exact_limit=200000):
    """Two-sided permutation test of a difference in means: the share of relabellings of the pooled
    values whose |difference| reaches the observed one. Exact (every split) when there are at most
    exact_limit of them (5 against 5: 252 splits, smallest p 2/252), else that many fixed-seed draws."""
    pooled, na = list(a) + list(b), len(a)
    n = len(pooled)
    if na == 0 or na == n:
        return float("nan")
    total = sum(pooled)
    observed = abs(sum(a) / na - sum(b) / (n - na))
    tolerance = 1e-12 * max(1.0, abs(observed))

    def extreme(sum_a):
        return abs(sum_a / na - (total - sum_a) / (n - na)) >= observed - tolerance

    if math.comb(n, na) <= exact_limit:
        hits = count = 0
        for idx in itertools.combinations(range(n), na):
            count += 1
            hits += extreme(sum(pooled[i] for i in idx))
        return hits / count
    rng = random.Random(20261203)
    hits = sum(extreme(sum(rng.sample(pooled, na))) for _ in range(exact_limit))
    return (hits + 1) / (exact_limit + 1)


def clopper_pearson(k, n, level=0.95):
    """Exact binomial interval (lo, hi) for k successes in n trials, by bisection on the binomial
    distribution's tails; (0, hi) at k = 0 and (lo, 1) at k = n, as the verdict reports them. For the
    seed counts of a study (n up to a few hundred; math.comb's terms overflow a float past ~1000)."""
    if n <= 0:
        return float("nan"), float("nan")
    alpha = 1 - level

    def tail_at_least(p):  # P(X >= k)
        return sum(math.comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(k, n + 1))

    def tail_at_most(p):  # P(X <= k)
        return sum(math.comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(0, k + 1))

    def solve(f, target, increasing):
        lo, hi = 0.0, 1.0
        for _ in range(100):
            mid = (lo + hi) / 2
            if (f(mid) < target) == increasing:
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2

    lower = 0.0 if k == 0 else solve(tail_at_least, alpha / 2, True)
    upper = 1.0 if k == n else solve(tail_at_most, alpha / 2, False)
    return lower, upper


def finite_or_null(x):
    """x with every NaN replaced by None, so a results file's JSON is standard (null for an interval
    or test that is undefined, e.g. at one seed)."""
    if isinstance(x, float) and x != x:
        return None
    if isinstance(x, dict):
        return {k: finite_or_null(v) for k, v in x.items()}
    if isinstance(x, list):
        return [finite_or_null(v) for v in x]
    return x
