// The radial estimator (gauss only, cone_mc.hpp): kLanes sequences advance together, one per SIMD
// lane, each keeping per head the running sum's axis component a and the squared norm R2 of the
// rest; chi-square draws by Marsaglia-Tsang.
#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "theory/cone_mc_simulator.hpp"

namespace p0sim::theory::mc_detail {
namespace {

// One head of kLanes sequences over nt steps (lane l of step s at s * kLanes + l): the running
// sum's axis component a += m + sigma z1; the squared norm of the rest R2 <- (sqrt(R2) + sigma g)^2
// + c, c = sigma^2 chi-square(k-2); then ns += a^2 + R2 and ax += a (for the first head, First:
// ns = a^2 + R2 and ax = a). a, r2: the state, in and out.
// (Written out for AVX-512: GCC keeps std::sqrt scalar, as it may set errno.)
template <bool First>
void radial_head(double* __restrict a, double* __restrict r2, const float* __restrict z1, const float* __restrict g,
                 const double* __restrict c, double* __restrict ns, double* __restrict ax, int nt, double m,
                 double sigma) {
#if defined(__AVX512F__)
  constexpr int kVecs = kLanes / 8;
  const __m512d vm = _mm512_set1_pd(m), vs = _mm512_set1_pd(sigma);
  __m512d A[kVecs], R[kVecs];
  for (int v = 0; v < kVecs; ++v) {
    A[v] = _mm512_loadu_pd(a + 8 * v);
    R[v] = _mm512_loadu_pd(r2 + 8 * v);
  }
  for (int s = 0; s < nt; ++s, z1 += kLanes, g += kLanes, c += kLanes, ns += kLanes, ax += kLanes) {
    for (int v = 0; v < kVecs; ++v) {
      const __m512d zv = _mm512_cvtps_pd(_mm256_loadu_ps(z1 + 8 * v)), gv = _mm512_cvtps_pd(_mm256_loadu_ps(g + 8 * v));
      A[v] = _mm512_add_pd(A[v], _mm512_fmadd_pd(vs, zv, vm));
      const __m512d t = _mm512_fmadd_pd(vs, gv, _mm512_sqrt_pd(R[v]));
      R[v] = _mm512_fmadd_pd(t, t, _mm512_loadu_pd(c + 8 * v));
      const __m512d q = _mm512_fmadd_pd(A[v], A[v], R[v]);
      if constexpr (First) {
        _mm512_storeu_pd(ns + 8 * v, q);
        _mm512_storeu_pd(ax + 8 * v, A[v]);
      } else {
        _mm512_storeu_pd(ns + 8 * v, _mm512_add_pd(_mm512_loadu_pd(ns + 8 * v), q));
        _mm512_storeu_pd(ax + 8 * v, _mm512_add_pd(_mm512_loadu_pd(ax + 8 * v), A[v]));
      }
    }
  }
  for (int v = 0; v < kVecs; ++v) {
    _mm512_storeu_pd(a + 8 * v, A[v]);
    _mm512_storeu_pd(r2 + 8 * v, R[v]);
  }
#else
  for (int s = 0; s < nt; ++s, z1 += kLanes, g += kLanes, c += kLanes, ns += kLanes, ax += kLanes) {
    for (int l = 0; l < kLanes; ++l) {
      a[l] += m + sigma * static_cast<double>(z1[l]);
      const double t = std::sqrt(r2[l]) + sigma * static_cast<double>(g[l]);
      r2[l] = t * t + c[l];
      ns[l] = (First ? 0.0 : ns[l]) + (a[l] * a[l] + r2[l]);
      ax[l] = (First ? 0.0 : ax[l]) + a[l];
    }
  }
#endif
}

// Marsaglia-Tsang on nb candidates (x normal, u uniform; nb a multiple of 8): v^3 of the accepted
// ones, in order, to chi (room for nb); returns their number. See Simulator::chi2_fill for the
// test; q = c^2/12 is the factor of the second squeeze.
int marsaglia_tsang(const float* xs, const float* us, int nb, double c, double d, double q, double* chi) {
  auto exact = [&](double x, double u, double v3) {
    return v3 > 0.0 && std::log(u) < 0.5 * x * x + d * (1.0 - v3 + std::log(v3));
  };
  int k = 0;
#if defined(__AVX512F__)
  const __m512d one = _mm512_set1_pd(1.0), zero = _mm512_setzero_pd(), vc = _mm512_set1_pd(c);
  const __m512d mt = _mm512_set1_pd(0.0331), vq = _mm512_set1_pd(q);
  for (int i = 0; i < nb; i += 8) {
    const __m512d x = _mm512_cvtps_pd(_mm256_loadu_ps(xs + i)), u = _mm512_cvtps_pd(_mm256_loadu_ps(us + i));
    const __m512d v = _mm512_fmadd_pd(vc, x, one), v3 = _mm512_mul_pd(_mm512_mul_pd(v, v), v);
    const __m512d x2 = _mm512_mul_pd(x, x), x4 = _mm512_mul_pd(x2, x2);
    const __mmask8 positive = _mm512_cmp_pd_mask(v, zero, _CMP_GT_OQ);
    const __mmask8 squeeze1 = _mm512_cmp_pd_mask(u, _mm512_fnmadd_pd(mt, x4, one), _CMP_LT_OQ);
    const __mmask8 squeeze2 = _mm512_cmp_pd_mask(_mm512_mul_pd(_mm512_sub_pd(one, u), _mm512_min_pd(one, v)),
                                                 _mm512_mul_pd(vq, x4), _CMP_GT_OQ);
    __mmask8 ok = positive & (squeeze1 | squeeze2);
    if (const unsigned rest = positive & ~ok & 0xffu) {  // rare: decide by the logarithms
      alignas(64) double v3s[8];
      _mm512_store_pd(v3s, v3);
      for (int j = 0; j < 8; ++j)
        if (((rest >> j) & 1u) && exact(xs[i + j], us[i + j], v3s[j])) ok = static_cast<__mmask8>(ok | (1u << j));
    }
    _mm512_storeu_pd(chi + k, _mm512_maskz_compress_pd(ok, v3));
    k += __builtin_popcount(ok);
  }
#else
  for (int i = 0; i < nb; ++i) {
    const double x = xs[i], u = us[i], v = 1.0 + c * x, v3 = v * v * v, x4 = x * x * x * x;
    const bool ok = v > 0.0 && (u < 1.0 - 0.0331 * x4 || (1.0 - u) * std::min(1.0, v) > q * x4 || exact(x, u, v3));
    chi[k] = v3;
    k += ok ? 1 : 0;
  }
#endif
  return k;
}

// Over nt steps of kLanes sequences (index s * kLanes + l): n2 = ns / den2[s] (||o_t||^2, the
// same division as the full-vector path), and mx[l] = max(mx[l], n2) over the steps from s0 on.
void radial_n2(const double* __restrict ns, const double* __restrict den2, int nt, int s0, double* __restrict n2,
               double* __restrict mx) {
#if defined(__AVX512F__)
  // Written out: GCC vectorises the plain loops across steps with transposes, and calls std::max.
  constexpr int kVecs = kLanes / 8;
  __m512d M[kVecs];
  for (int v = 0; v < kVecs; ++v) M[v] = _mm512_loadu_pd(mx + 8 * v);
  for (int s = 0; s < nt; ++s) {
    const __m512d den = _mm512_set1_pd(den2[s]);
    for (int v = 0; v < kVecs; ++v) {
      const __m512d q = _mm512_div_pd(_mm512_loadu_pd(ns + s * kLanes + 8 * v), den);
      _mm512_storeu_pd(n2 + s * kLanes + 8 * v, q);
      if (s >= s0) M[v] = _mm512_max_pd(M[v], q);  // no NaN here: the same as std::max
    }
  }
  for (int v = 0; v < kVecs; ++v) _mm512_storeu_pd(mx + 8 * v, M[v]);
#else
  for (int s = 0; s < nt; ++s) {
    for (int l = 0; l < kLanes; ++l) {
      const double q = ns[s * kLanes + l] / den2[s];
      n2[s * kLanes + l] = q;
      if (s >= s0 && mx[l] < q) mx[l] = q;
    }
  }
#endif
}

}  // namespace

void Simulator::chi2_fill(RadialLane& lane, Workspace<float>& w, double* out, int n, int stride) const {
  // n draws of sigma^2 chi-square(chi_df_) from the lane's streams to out[0], out[stride], ...:
  // 0 (df 0), z^2 (df 1), else 2 Gamma(df/2) by Marsaglia-Tsang: candidate d v^3, v = 1 + c x with
  // x normal, u uniform, accepted iff v > 0 and ln u < x^2/2 + d (1 - v^3 + ln v^3) =: R. Squeezes
  // decide most candidates without a logarithm: Marsaglia-Tsang's u < 1 - 0.0331 x^4, and a tighter
  // one for large shapes: with e = c x, R = d g(e), g(e) = 3 ln(1+e) - 3e + 3e^2/2 - e^3 (as
  // 9 d c^2 = 1), g'(e) = -3 e^3/(1+e), so g(e) >= -3 e^4 / (4 min(1, v)) and R >= -(c^2/12) x^4 /
  // min(1, v); as ln u <= u - 1, u < 1 - (c^2/12) x^4 / min(1, v) implies acceptance. Candidates
  // are i.i.d., so the accepted ones in stream order are i.i.d. Gamma; those a batch makes beyond
  // the need wait in lane.chi for the next call.
  const double s2 = p_.sigma * p_.sigma;
  if (chi_df_ == 0) {
    for (int i = 0; i < n; ++i) out[static_cast<std::ptrdiff_t>(i) * stride] = 0.0;
    return;
  }
  if (chi_df_ == 1) {
    float* z = w.tmp.data();
    lane.normal.fill(z, n);
    for (int i = 0; i < n; ++i) {
      const double x = z[i];
      out[static_cast<std::ptrdiff_t>(i) * stride] = s2 * (x * x);
    }
    return;
  }
  const double d = mt_d_, c = mt_c_, scale = 2.0 * mt_d_ * s2;
  const double q = c * c / 12.0 * (1.0 + 1e-12);  // the squeeze's x^4 factor, rounded to the safe side
  for (int got = 0; got < n;) {
    if (lane.chi_at == lane.chi_end) {
      // A batch a little larger than what is still needed (acceptance > 95% for shape >= 1).
      const int need = n - got, nb = std::min(kNormalsPerCall, (need + need / 16 + 9) / 8 * 8);
      lane.normal.fill(w.tmp.data(), nb);
      lane.uniform.fill(w.tmp_u.data(), nb);
      const int k = marsaglia_tsang(w.tmp.data(), w.tmp_u.data(), nb, c, d, q, lane.chi);
      lane.chi_at = 0;
      lane.chi_end = k;
      continue;
    }
    const int take = std::min(lane.chi_end - lane.chi_at, n - got);
    for (int j = 0; j < take; ++j)
      out[static_cast<std::ptrdiff_t>(got + j) * stride] = scale * lane.chi[lane.chi_at + j];
    lane.chi_at += take;
    got += take;
  }
}

void Simulator::radial_group(std::int64_t first, int nl, Workspace<float>& w) const {
  const int H = p_.heads, T = p_.T;
  const double m = p_.m, sigma = p_.sigma;
  for (int l = 0; l < nl; ++l) {
    RadialLane& lane = w.lanes[static_cast<std::size_t>(l)];
    const auto index = static_cast<std::uint64_t>(first + l);
    lane.normal = NormalStream(seed_ + kRadialNormalTag, index);
    lane.uniform = UniformStream(seed_ + kRadialUniformTag, index);
    lane.chi_at = lane.chi_end = 0;
  }
  if (p_.mask == AttnMask::bidirectional) {
    // Every position sees the total over all T vectors: per head a = T m + sigma sqrt(T) z and
    // R2 = T sigma^2 chi-square(k-1), drawn directly.
    const double dT = static_cast<double>(T), sqrt_T = std::sqrt(dT);
    for (int l = 0; l < nl; ++l) {
      RadialLane& lane = w.lanes[static_cast<std::size_t>(l)];
      chi2_fill(lane, w, w.tmp_c.data(), H, 1);
      lane.normal.fill(w.tmp.data(), H);
      double ns = 0.0, ax = 0.0;
      for (int h = 0; h < H; ++h) {
        const double a = dT * m + sigma * sqrt_T * static_cast<double>(w.tmp[h]);
        ns += a * a + dT * w.tmp_c[h];
        ax += a;
      }
      const double n2 = ns / den2_[0];  // den2 is T^2 everywhere
      for (Eigen::Index i = 0; i < P_; ++i) {
        w.out_ns[i * kLanes + l] = ns;
        w.out_ax[i * kLanes + l] = ax;
        w.out_n2[i * kLanes + l] = n2;
      }
      w.n0sq[static_cast<std::size_t>(l)] = n2;
      w.largest[static_cast<std::size_t>(l)] = T == 1;
    }
    return;
  }
  // Causal: the chain, CT steps at a time. Lanes >= nl (a partial last group) run on zeros.
  const int CT = radial_steps_;
  const Eigen::Index G = kLanes;
  w.ra.setZero();
  w.rr2.setZero();
  if (nl < kLanes) {
    w.rz.setZero();
    w.rc.setZero();
  }
  std::array<double, kLanes> mx;
  mx.fill(-std::numeric_limits<double>::infinity());
  for (int t0 = 0; t0 < T; t0 += CT) {
    const int nt = std::min(CT, T - t0), nv = nt * H;
    for (int l = 0; l < nl; ++l) {
      RadialLane& lane = w.lanes[static_cast<std::size_t>(l)];
      lane.normal.fill(w.tmp.data(), 2 * nv);  // z1 of (head, step) h * nt + s, then g
      for (int j = 0; j < 2 * nv; ++j) w.rz[j * G + l] = w.tmp[j];
      chi2_fill(lane, w, w.rc.data() + l, nv, kLanes);
    }
    for (int h = 0; h < H; ++h)
      (h == 0 ? radial_head<true> : radial_head<false>)(w.ra.data() + h * G, w.rr2.data() + h * G,
                                                        w.rz.data() + h * nt * G, w.rz.data() + (nv + h * nt) * G,
                                                        w.rc.data() + h * nt * G, w.rns.data(), w.rax.data(), nt, m,
                                                        sigma);
    // ||o_0||^2 itself is not a competitor of position 0.
    radial_n2(w.rns.data(), den2_.data() + t0, nt, t0 == 0 ? 1 : 0, w.rn2.data(), mx.data());
    if (t0 == 0)
      for (int l = 0; l < kLanes; ++l) w.n0sq[static_cast<std::size_t>(l)] = w.rn2[l];
    for (int s = 0; s < nt; ++s) {
      const int slot = slot_[static_cast<std::size_t>(t0 + s)];
      if (slot < 0) continue;
      w.out_ns.segment(slot * G, G) = w.rns.segment(s * G, G);
      w.out_ax.segment(slot * G, G) = w.rax.segment(s * G, G);
      w.out_n2.segment(slot * G, G) = w.rn2.segment(s * G, G);
    }
  }
  for (int l = 0; l < kLanes; ++l)  // T == 1: -inf < ||o_0||^2
    w.largest[static_cast<std::size_t>(l)] = mx[static_cast<std::size_t>(l)] < w.n0sq[static_cast<std::size_t>(l)];
}

}  // namespace p0sim::theory::mc_detail
