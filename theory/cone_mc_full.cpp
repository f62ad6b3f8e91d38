// The full-vector estimator: samples all T*d coordinates of the value vectors of one trial (any
// value model), forms the prefix sums of the attention outputs and their norms. The independent
// check of the closed forms.
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstring>

#include "theory/cone_math.hpp"
#include "theory/cone_mc_simulator.hpp"

namespace p0sim::theory::mc_detail {

template <typename Mat>
void Simulator::transform(Mat& vs, PhiloxStream& uni) const {
  // vs: (d, nv) standard normals in, value vectors out.
  using Scalar = typename Mat::Scalar;
  const Eigen::Index nv = vs.cols();
  const Scalar sigma = static_cast<Scalar>(p_.sigma);
  switch (p_.model) {
    case ValueModel::gauss: {
      // v = m u + sigma z per head.
      vs *= sigma;
      const Scalar m = static_cast<Scalar>(p_.m);
      for (int h = 0; h < p_.heads; ++h) vs.row(h * k_).array() += m;
      break;
    }
    case ValueModel::axis: {
      // v = mu u + sigma s, s = normalised Gaussian in the (k-1)-dim complement of u. For k = 2
      // that sphere is {-1, +1}: take the sign exactly, so vectors with equal signs are equal
      // floats and the ties that the closed form counts (probability 2^-t) stay ties.
      for (Eigen::Index j = 0; j < nv; ++j) {
        for (int h = 0; h < p_.heads; ++h) {
          auto rest = vs.col(j).segment(h * k_ + 1, k_ - 1);
          if (k_ == 2)
            rest[0] = std::copysign(sigma, rest[0]);
          else
            rest *= sigma / std::sqrt(rest.squaredNorm());
          vs(h * k_, j) = static_cast<Scalar>(p_.mu);
        }
      }
      break;
    }
    case ValueModel::cap: {
      // x = <v,u> by the exact inverse CDF; the rest uniform in the complement with norm sqrt(1-x^2).
      for (Eigen::Index j = 0; j < nv; ++j) {
        for (int h = 0; h < p_.heads; ++h) {
          // The same draw as cap_cos_quantile, with 1 - x^2 computed directly (tiny theta).
          const detail::CapDraw draw = detail::cap_quantile_draw(k_, p_.theta, uni.uniform());
          auto rest = vs.col(j).segment(h * k_ + 1, k_ - 1);
          rest *= static_cast<Scalar>(std::sqrt(draw.r2 / static_cast<double>(rest.squaredNorm())));
          vs(h * k_, j) = static_cast<Scalar>(draw.x);
        }
      }
      break;
    }
    case ValueModel::count:
      break;
  }
}

void Simulator::prefix_gauss(Workspace<float>& w, int nv, int t0) const {
  // One pass per vector: v = sigma z + m u, running sum S += v written over z, ||S||^2 and the
  // axis projection. 16 independent partial sums so the compiler vectorises the squared norm
  // without reassociating (no -ffast-math); they are added in a fixed order.
  const int d = p_.d;
  const float sigma = static_cast<float>(p_.sigma);
  const float* off = offset_.data();  // (d) m at each head's axis coordinate, 0 elsewhere
  const float* prev = w.sum.data();   // (d) sum up to the previous vector
  float* z = w.normals.data();        // (nv,d) normals in, prefix sums out
  for (int j = 0; j < nv; ++j, prev = z, z += d) {
    alignas(64) float acc[16] = {};
    int i = 0;
    for (; i + 16 <= d; i += 16) {
      for (int l = 0; l < 16; ++l) {
        const float s = prev[i + l] + (sigma * z[i + l] + off[i + l]);
        z[i + l] = s;
        acc[l] += s * s;
      }
    }
    float total = 0.0f;
    for (; i < d; ++i) {
      const float s = prev[i] + (sigma * z[i] + off[i]);
      z[i] = s;
      total += s * s;
    }
    for (int width = 8; width >= 1; width /= 2)  // pairwise, so no 16-long chain of dependent adds
      for (int l = 0; l < width; ++l) acc[l] += acc[l + width];
    total += acc[0];
    float a = 0.0f;
    for (int h = 0; h < p_.heads; ++h) a += z[h * k_];
    w.ns[t0 + j] = static_cast<double>(total);
    w.ax[t0 + j] = static_cast<double>(a);
  }
  std::memcpy(w.sum.data(), prev, sizeof(float) * static_cast<std::size_t>(d));
}

template <typename Scalar>
bool Simulator::trial(std::int64_t index, Workspace<Scalar>& w) const {
  const int T = p_.T, d = p_.d;
  NormalStream gen(seed_, static_cast<std::uint64_t>(index));
  PhiloxStream uni(seed_ + kCapStreamTag, static_cast<std::uint64_t>(index));
  w.sum.setZero();
  const bool causal = p_.mask == AttnMask::causal;
  for (int t0 = 0; t0 < T; t0 += static_cast<int>(chunk_vectors_)) {
    const int nv = static_cast<int>(std::min<std::int64_t>(chunk_vectors_, T - t0));
    gen.fill(w.normals.data(), static_cast<std::int64_t>(nv) * d);
    if constexpr (std::is_same_v<Scalar, float>) {
      if (causal) {  // the fast path: gauss, float32
        prefix_gauss(w, nv, t0);
        continue;
      }
    }
    if constexpr (!std::is_same_v<Scalar, float>)
      w.chunk.head(static_cast<Eigen::Index>(nv) * d) =
          w.normals.head(static_cast<Eigen::Index>(nv) * d).template cast<Scalar>();
    Eigen::Map<Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>> vs(w.values(), d,
                                                                         nv);  // (d, nv) vectors t0 .. t0+nv-1
    transform(vs, uni);
    if (causal) {  // prefix sums in place: column j becomes sum_{i <= t0+j} v_i
      vs.col(0) += w.sum;
      for (int j = 1; j < nv; ++j) vs.col(j) += vs.col(j - 1);
      w.sum = vs.col(nv - 1);
      w.ns.segment(t0, nv) = vs.colwise().squaredNorm().transpose().template cast<double>().array();
      w.ax.segment(t0, nv) = vs.row(0).transpose().template cast<double>().array();
      for (int h = 1; h < p_.heads; ++h)
        w.ax.segment(t0, nv) += vs.row(h * k_).transpose().template cast<double>().array();
    } else {
      w.sum += vs.rowwise().sum();
    }
  }
  if (!causal) {  // every position sees the same average over all T vectors
    double a = 0.0;
    for (int h = 0; h < p_.heads; ++h) a += static_cast<double>(w.sum[h * k_]);
    w.ns.setConstant(static_cast<double>(w.sum.squaredNorm()));
    w.ax.setConstant(a);
  }
  w.n2 = w.ns / den2_;  // (T) ||o_t||^2
  for (Eigen::Index i = 0; i < P_; ++i) {
    const int t = pos_[static_cast<std::size_t>(i)];
    w.x(i, kNormSq) = w.n2[t];
    w.g_ns[i] = w.ns[t];
    w.g_ax[i] = w.ax[t];
  }
  const double n0sq = w.n2[0];
  quantities(w, n0sq);
  return T == 1 || (w.n2.tail(T - 1) < n0sq).all();
}

template bool Simulator::trial<float>(std::int64_t, Workspace<float>&) const;
template bool Simulator::trial<double>(std::int64_t, Workspace<double>&) const;

}  // namespace p0sim::theory::mc_detail
