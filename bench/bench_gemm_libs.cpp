// The real limit of one core for p0sim's matrix products: the core's peak FP32 FMA rate, and the
// SGEMM rate of Eigen (through p0sim's own sim/gemm.hpp), OpenBLAS, BLIS and libxsmm at every shape
// a training step multiplies. Tells how far the engine's GEMMs are from the machine, and which
// library would be worth its reproducibility cost (see below). One thread throughout.
//   BM_fma_peak_<bits>/chains:N  N independent accumulator chains of vfmadd (256-bit, and 512-bit
//                                where the CPU has AVX-512, in any build) held in registers; counter GFLOP/s
//                                (2 flops per lane per FMA). N must cover FMA latency x FMA pipes.
//   sgemm/<config>/<op>/<case>/m:/n:/k:/<lib>
//                                C (m,n) = [C +] op(A) op(B), column-major, with the leading
//                                dimensions and accumulate flag the model uses. <case> is TN, NT
//                                or NN (T: that operand is stored transposed). Counters: GFLOP/s,
//                                calls_per_step (how often a training step makes this product, for
//                                weighting), max_rel_err (against a double-precision reference,
//                                checked before timing: a wrong product is an error, not a time),
//                                same_bits_2calls (two calls give the same bits). Label: the code
//                                path the library chose at run time and a hash of the result bits,
//                                so runs with a pinned path can be compared bit for bit.
// Shapes (sim/model.cpp, sim/layers/linear.hpp; F = 4C): every linear layer (qkv C->3C, proj C->C,
// fc1 C->F, fc2 F->C, logits C->V) in its three products on one chunk of N = rows*T columns, rows
// as ParallelStep splits the batch (chunk_count):
//   fwd  TN  y (O,N) [+]= W (O,I) x x (I,N)          m=O n=N k=I  (proj, fc2: residual, accumulate)
//   dW   NT  dW^T (I,O) += x (I,N) x dy^T (N,O)      m=I n=O k=N
//   dx   NN  dx (I,N) += W^T (I,O) x dy (O,N)        m=I n=N k=O
// and the per-(sequence, head) attention products, which p0sim computes with its fused kernels
// (sim/layers/attention.hpp), not sim/gemm.hpp: here as GEMMs at the same strides, D = C/H, P = T:
//   att.qk  TN  scores (P,P) = q^T (P,D) x k (D,P)   (forward scores, backward dA = dy^T v)
//   att.av  NN  out (D,P) = v (D,P) x A^T (P,P)      (forward A.v, backward dq = dS k)
//   att.avT NT  dv (D,P) = dy (D,P) x A (P,P)        (backward dk and dv)
// Libraries (each compiled in only when CMake finds it): OpenBLAS cblas_sgemm, BLIS bli_sgemm (the
// typed API: Debian's OpenBLAS and BLIS both export cblas_sgemm), libxsmm JIT kernels from
// libxsmm_smmdispatch (libxsmm 1.17 JITs NN and NT only: for TN, A is transposed by libxsmm_otrans
// first, inside the timed call). All are set to one thread.
// Code paths: OpenBLAS (DYNAMIC_ARCH) picks its kernels by CPUID at load, pinned by OPENBLAS_CORETYPE;
// BLIS (the x86_64 family build) at init, pinned by BLIS_ARCH_TYPE=<arch_t id> (0 skx, 3 haswell,
// 6 zen3, 25 generic in BLIS 0.9); libxsmm JITs for the CPUID target, pinned by LIBXSMM_TARGET
// (hsw, skx, cpx, ...). Eigen's path is fixed when p0sim is compiled (-march=native). Run the binary
// once per setting; the labels show the path each run used and the bits it produced.
#include <benchmark/benchmark.h>
#include <immintrin.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "common/rng.hpp"
#include "sim/gemm.hpp"
#include "sim/model.hpp"
#include "sim/parallel_step.hpp"

#ifdef P0SIM_HAVE_OPENBLAS
#include <cblas.h>
#include <dlfcn.h>
#endif
#ifdef P0SIM_HAVE_BLIS
#include <blis.h>
#endif
#ifdef P0SIM_HAVE_LIBXSMM
#include <libxsmm.h>
#endif

using Eigen::Index;

namespace {

// ---- peak FMA rate ------------------------------------------------------------------------------
constexpr int kFmaInner = 1024;  // FMAs per chain per benchmark iteration

// Keeps a vector in a register and opaque to the compiler, without a memory round trip.
template <typename V>
void opaque(V& v) {
  asm volatile("" : "+v"(v));
}

#ifdef __FMA__
template <int Chains>
void BM_fma_peak_256(benchmark::State& state) {
  __m256 acc[Chains];
  for (int i = 0; i < Chains; ++i) acc[i] = _mm256_set1_ps(0.001f * static_cast<float>(i));
  __m256 a = _mm256_set1_ps(0.999f), b = _mm256_set1_ps(0.001f);  // acc -> 1: no overflow, no denormals
  opaque(a);
  opaque(b);
  for (auto _ : state) {
    for (int r = 0; r < kFmaInner; ++r)
#pragma GCC unroll 32  // every chain its own register, not a stack slot
      for (int i = 0; i < Chains; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
    for (int i = 0; i < Chains; ++i) opaque(acc[i]);
  }
  __m256 sum = acc[0];
  for (int i = 1; i < Chains; ++i) sum = _mm256_add_ps(sum, acc[i]);
  float out[8];
  _mm256_storeu_ps(out, sum);
  benchmark::DoNotOptimize(out);
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * 8 * Chains * kFmaInner * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK_TEMPLATE(BM_fma_peak_256, 4)->Name("BM_fma_peak_256/chains:4");
BENCHMARK_TEMPLATE(BM_fma_peak_256, 8)->Name("BM_fma_peak_256/chains:8");
BENCHMARK_TEMPLATE(BM_fma_peak_256, 12)->Name("BM_fma_peak_256/chains:12");
BENCHMARK_TEMPLATE(BM_fma_peak_256, 16)->Name("BM_fma_peak_256/chains:16");
#endif

// The machine's limit, whatever the engine's -march: compiled for AVX-512 in any build, run where the
// CPU has it (the engine's promise keeps it on 256-bit packets, so this is the ceiling it gives up).
template <int Chains>
__attribute__((target("avx512f"))) void BM_fma_peak_512(benchmark::State& state) {
  if (!__builtin_cpu_supports("avx512f")) {
    state.SkipWithError("this CPU has no AVX-512");
    return;
  }
  __m512 acc[Chains];
  for (int i = 0; i < Chains; ++i) acc[i] = _mm512_set1_ps(0.001f * static_cast<float>(i));
  __m512 a = _mm512_set1_ps(0.999f), b = _mm512_set1_ps(0.001f);
  opaque(a);
  opaque(b);
  for (auto _ : state) {
    for (int r = 0; r < kFmaInner; ++r)
#pragma GCC unroll 32  // every chain its own register, not a stack slot
      for (int i = 0; i < Chains; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
    for (int i = 0; i < Chains; ++i) opaque(acc[i]);
  }
  benchmark::DoNotOptimize(_mm512_reduce_add_ps(acc[Chains - 1]) + _mm512_reduce_add_ps(acc[0]));
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * 16 * Chains * kFmaInner * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK_TEMPLATE(BM_fma_peak_512, 4)->Name("BM_fma_peak_512/chains:4");
BENCHMARK_TEMPLATE(BM_fma_peak_512, 8)->Name("BM_fma_peak_512/chains:8");
BENCHMARK_TEMPLATE(BM_fma_peak_512, 12)->Name("BM_fma_peak_512/chains:12");
BENCHMARK_TEMPLATE(BM_fma_peak_512, 16)->Name("BM_fma_peak_512/chains:16");
BENCHMARK_TEMPLATE(BM_fma_peak_512, 24)->Name("BM_fma_peak_512/chains:24");

// ---- the model's shapes -------------------------------------------------------------------------
struct Config {
  const char* name;
  int C, H, T, B, V, L;
};
// The three firstrecall configs of bench/README.md (L=2) and the natural-text one.
constexpr Config kConfigs[] = {{"C32T16B16", 32, 4, 16, 16, 64, 2},
                               {"C64T32B32", 64, 4, 32, 32, 64, 2},
                               {"C128T64B32", 128, 4, 64, 32, 64, 2},
                               {"text_C256T256B16", 256, 8, 256, 16, 257, 4}};

struct Shape {
  std::string config, op;
  bool ta, tb;
  Index m, n, k, lda, ldb, ldc;
  bool accumulate;
  double calls_per_step;
  std::uint64_t seed;
  const char* trans_case() const { return ta ? "TN" : (tb ? "NT" : "NN"); }
  Index a_size() const { return lda * (ta ? m : k); }
  Index b_size() const { return ldb * (tb ? k : n); }
  Index c_size() const { return ldc * n; }
  double flop() const { return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k); }
};

std::vector<Shape> model_shapes() {
  std::vector<Shape> out;
  std::uint64_t seed = 1;
  for (const Config& c : kConfigs) {
    p0sim::sim::ModelConfig mc;
    mc.vocab = c.V;
    mc.d_model = c.C;
    mc.heads = c.H;
    mc.layers = c.L;
    mc.d_ff = 4 * c.C;
    mc.seq_len = c.T;
    const int chunks = p0sim::sim::chunk_count(mc, c.B);
    const int rows = c.B / chunks + (c.B % chunks ? 1 : 0);  // the first (largest) chunk
    const Index C = c.C, F = 4 * c.C, N = Index(rows) * c.T, P = c.T, D = c.C / c.H;
    struct Linear {
      const char* name;
      Index in, out;
      bool residual;
      double per_step;
    };
    const Linear linears[] = {{"qkv", C, 3 * C, false, double(chunks) * c.L},
                              {"proj", C, C, true, double(chunks) * c.L},
                              {"fc1", C, F, false, double(chunks) * c.L},
                              {"fc2", F, C, true, double(chunks) * c.L},
                              {"logits", C, c.V, false, double(chunks)}};
    for (const Linear& f : linears) {
      const Index I = f.in, O = f.out;
      out.push_back(
          {c.name, std::string(f.name) + ".fwd", true, false, O, N, I, I, I, O, f.residual, f.per_step, seed++});
      out.push_back({c.name, std::string(f.name) + ".dW", false, true, I, O, N, I, O, I, true, f.per_step, seed++});
      out.push_back({c.name, std::string(f.name) + ".dx", false, false, I, N, O, I, O, I, true, f.per_step, seed++});
    }
    // per (sequence, head, layer): forward and backward each make two of every kind
    const double att = 2.0 * c.B * c.H * c.L;
    out.push_back({c.name, "att.qk", true, false, P, P, D, 3 * C, 3 * C, P, false, att, seed++});
    out.push_back({c.name, "att.av", false, false, D, P, P, 3 * C, P, C, false, att, seed++});
    out.push_back({c.name, "att.avT", false, true, D, P, P, 3 * C, P, 3 * C, false, att, seed++});
  }
  // a large square product: each library's best case, far from the model's shapes
  out.push_back({"square", "1024", false, false, 1024, 1024, 1024, 1024, 1024, 1024, false, 0.0, seed++});
  return out;
}

// ---- inputs, reference, checks --------------------------------------------------------------------
std::vector<float> normal_buffer(Index n, std::uint64_t seed) {
  p0sim::PhiloxStream rng(seed, 0);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = static_cast<float>(rng.normal());
  return v;
}

struct Operands {
  std::vector<float> a, b;
  explicit Operands(const Shape& s)
      : a(normal_buffer(s.a_size(), 2 * s.seed)), b(normal_buffer(s.b_size(), 2 * s.seed + 1)) {}
};

// op(A) op(B) in double, straight from the definition; cached per shape (every library and every
// repetition checks against the same one).
const std::vector<double>& reference(const Shape& s, const Operands& x) {
  static std::map<std::uint64_t, std::vector<double>> cache;
  auto it = cache.find(s.seed);
  if (it != cache.end()) return it->second;
  std::vector<double> c(static_cast<std::size_t>(s.m * s.n), 0.0);
  for (Index j = 0; j < s.n; ++j)
    for (Index p = 0; p < s.k; ++p) {
      const double bpj = s.tb ? x.b[j + p * s.ldb] : x.b[p + j * s.ldb];
      for (Index i = 0; i < s.m; ++i) c[i + j * s.m] += (s.ta ? x.a[p + i * s.lda] : x.a[i + p * s.lda]) * bpj;
    }
  return cache.emplace(s.seed, std::move(c)).first->second;
}

double max_rel_error(const Shape& s, const std::vector<float>& got, const std::vector<double>& want) {
  double err = 0, scale = 0;
  for (Index j = 0; j < s.n; ++j)
    for (Index i = 0; i < s.m; ++i) {
      const double w = want[i + j * s.m];
      err = std::max(err, std::abs(double(got[i + j * s.ldc]) - w));
      scale = std::max(scale, std::abs(w));
    }
  return err / scale;
}

std::uint64_t bits_hash(const Shape& s, const std::vector<float>& c) {  // FNV-1a over C's m x n values
  std::uint64_t h = 1469598103934665603ull;
  for (Index j = 0; j < s.n; ++j)
    for (Index i = 0; i < s.m; ++i) {
      std::uint32_t u;
      std::memcpy(&u, &c[i + j * s.ldc], 4);
      for (int b = 0; b < 4; ++b) h = (h ^ ((u >> (8 * b)) & 0xffu)) * 1099511628211ull;
    }
  return h;
}

// ---- the libraries: each a callable C = [C +] op(A) op(B) for one shape ----------------------------
struct EigenGemm {
  static std::string path() {  // fixed at compile time: the float packet's width
    return "eigen:" + std::to_string(32 * Eigen::internal::packet_traits<float>::size) + "bit";
  }
  const Shape& s;
  const Operands& x;
  p0sim::sim::GemmSpace<float> ws;
  EigenGemm(const Shape& sh, const Operands& ops) : s(sh), x(ops) { ws.reserve(s.m, s.n, s.k); }
  bool ok() const { return true; }
  void operator()(float* c) {
    auto f = s.ta ? &p0sim::sim::gemm<float, true, false>
                  : (s.tb ? &p0sim::sim::gemm<float, false, true> : &p0sim::sim::gemm<float, false, false>);
    f(s.m, s.n, s.k, 1.0f, x.a.data(), s.lda, x.b.data(), s.ldb, s.accumulate, c, s.ldc, ws);
  }
};

#ifdef P0SIM_HAVE_OPENBLAS
struct OpenBlasGemm {
  static std::string path() { return std::string("openblas:") + openblas_get_corename(); }
  const Shape& s;
  const Operands& x;
  OpenBlasGemm(const Shape& sh, const Operands& ops) : s(sh), x(ops) {}
  bool ok() const { return true; }
  void operator()(float* c) const {
    cblas_sgemm(CblasColMajor, s.ta ? CblasTrans : CblasNoTrans, s.tb ? CblasTrans : CblasNoTrans, int(s.m), int(s.n),
                int(s.k), 1.0f, x.a.data(), int(s.lda), x.b.data(), int(s.ldb), s.accumulate ? 1.0f : 0.0f, c,
                int(s.ldc));
  }
};
#endif

#ifdef P0SIM_HAVE_BLIS
struct BlisGemm {
  static std::string path() { return std::string("blis:") + bli_arch_string(bli_arch_query_id()); }
  const Shape& s;
  const Operands& x;
  BlisGemm(const Shape& sh, const Operands& ops) : s(sh), x(ops) {}
  bool ok() const { return true; }
  void operator()(float* c) const {
    float alpha = 1.0f, beta = s.accumulate ? 1.0f : 0.0f;
    bli_sgemm(s.ta ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE, s.tb ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE, s.m, s.n, s.k,
              &alpha, const_cast<float*>(x.a.data()), 1, s.lda, const_cast<float*>(x.b.data()), 1, s.ldb, &beta, c, 1,
              s.ldc);
  }
};
#endif

#ifdef P0SIM_HAVE_LIBXSMM
struct XsmmGemm {
  static std::string path() { return std::string("libxsmm:") + libxsmm_get_target_arch(); }
  const Shape& s;
  const Operands& x;
  std::vector<float> at;  // TN: A^T (m,k), written by libxsmm_otrans in every call
  libxsmm_smmfunction kernel = nullptr;
  XsmmGemm(const Shape& sh, const Operands& ops) : s(sh), x(ops) {
    const float alpha = 1.0f, beta = s.accumulate ? 1.0f : 0.0f;
    const int flags = s.tb ? LIBXSMM_GEMM_FLAG_TRANS_B : LIBXSMM_GEMM_FLAG_NONE;
    const libxsmm_blasint lda = s.ta ? s.m : s.lda, ldb = s.ldb, ldc = s.ldc;
    if (s.ta) at.resize(static_cast<std::size_t>(s.m * s.k));
    kernel = libxsmm_smmdispatch(s.m, s.n, s.k, &lda, &ldb, &ldc, &alpha, &beta, &flags, nullptr);
  }
  bool ok() const { return kernel != nullptr; }
  void operator()(float* c) {
    const float* a = x.a.data();
    if (s.ta) {  // A stored (k,m) at lda -> (m,k) tight
      libxsmm_otrans(at.data(), a, sizeof(float), s.k, s.m, s.lda, s.m);
      a = at.data();
    }
    kernel(a, x.b.data(), c);
  }
};
#endif

// One-time library setup: one thread everywhere, and a check that the symbols are the library's own.
bool init_libraries() {
#ifdef P0SIM_HAVE_OPENBLAS
  openblas_set_num_threads(1);
  Dl_info info{};  // Debian's BLIS exports cblas_sgemm too: make sure the link order gave OpenBLAS's
  if (!dladdr(reinterpret_cast<void*>(&cblas_sgemm), &info) || !info.dli_fname ||
      !std::strstr(info.dli_fname, "openblas"))
    std::fprintf(stderr, "bench_gemm_libs: cblas_sgemm resolves to %s, not OpenBLAS\n",
                 info.dli_fname ? info.dli_fname : "?");
#endif
#ifdef P0SIM_HAVE_BLIS
  bli_init();  // before any query: BLIS 0.9 aborts on BLIS_ARCH_TYPE when queried uninitialised
  bli_thread_set_num_threads(1);
#endif
#ifdef P0SIM_HAVE_LIBXSMM
  libxsmm_init();
#endif
  return true;
}

template <typename Lib>
void BM_sgemm(benchmark::State& state, const Shape& s) {
  const Operands x(s);
  Lib lib(s, x);
  if (!lib.ok()) {
    state.SkipWithError("no kernel for this shape");
    return;
  }
  // check before timing: one call from C = 0 against the reference, and a second call's bits
  std::vector<float> c(static_cast<std::size_t>(s.c_size()), 0.0f), c2 = c;
  lib(c.data());
  lib(c2.data());
  const double err = max_rel_error(s, c, reference(s, x));
  const bool same = std::memcmp(c.data(), c2.data(), c.size() * sizeof(float)) == 0;
  if (!(err <= 1e-4)) {
    state.SkipWithError(("max relative error " + std::to_string(err)).c_str());
    return;
  }
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(bits_hash(s, c)));
  const std::string label = Lib::path() + " bits:" + hash;
  for (auto _ : state) {
    lib(c.data());
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  state.SetLabel(label);
  using benchmark::Counter;
  state.counters["GFLOP/s"] = Counter(s.flop() * 1e-9, Counter::kIsIterationInvariantRate);
  state.counters["calls_per_step"] = s.calls_per_step;
  state.counters["max_rel_err"] = err;
  state.counters["same_bits_2calls"] = same ? 1 : 0;
}

template <typename Lib>
void add(const Shape& s, const char* lib) {
  const std::string id = "sgemm/" + s.config + "/" + s.op + "/" + s.trans_case() + "/m:" + std::to_string(s.m) +
                         "/n:" + std::to_string(s.n) + "/k:" + std::to_string(s.k) + "/" + lib;
  benchmark::RegisterBenchmark(id.c_str(), [&s](benchmark::State& st) { BM_sgemm<Lib>(st, s); });
}

// Shape by shape, the libraries side by side (adjacent in time, so a drifting machine shifts them alike).
[[maybe_unused]] const bool registered = [] {
  init_libraries();
  static const std::vector<Shape> shapes = model_shapes();
  for (const Shape& s : shapes) {
    add<EigenGemm>(s, "eigen");
#ifdef P0SIM_HAVE_OPENBLAS
    add<OpenBlasGemm>(s, "openblas");
#endif
#ifdef P0SIM_HAVE_BLIS
    add<BlisGemm>(s, "blis");
#endif
#ifdef P0SIM_HAVE_LIBXSMM
    add<XsmmGemm>(s, "libxsmm");
#endif
  }
  return true;
}();

}  // namespace
