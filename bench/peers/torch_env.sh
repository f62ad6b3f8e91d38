# Sourced by the PyTorch peer scripts: checks that python3 has torch and numpy and that Debian's
# OpenBLAS is there (Debian's torch may resolve libblas.so.3 to the 7-10x slower reference BLAS;
# the peers preload $openblas), and picks OpenBLAS's core type and ATen's CPU capability from the
# CPU flags (on this VM OpenBLAS's own detection falls back to generic kernels, and Debian's ATen
# stays on AVX2). Expects $py; sets $openblas, OPENBLAS_CORETYPE and ATEN_CPU_CAPABILITY.
openblas=/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3
[ -f "$openblas" ] || { echo "OpenBLAS not found at $openblas (apt-get install libopenblas0-pthread)" >&2; exit 2; }
"$py" -c 'import torch, numpy' 2>/dev/null || { echo "$py lacks torch or numpy (python3-torch, python3-numpy)" >&2; exit 2; }
if [ -z "${OPENBLAS_CORETYPE:-}" ]; then
  if grep -qw avx512f /proc/cpuinfo; then OPENBLAS_CORETYPE=SkylakeX
  elif grep -qw avx2 /proc/cpuinfo; then OPENBLAS_CORETYPE=Haswell
  fi
fi
if [ -z "${ATEN_CPU_CAPABILITY:-}" ] && grep -qw avx512f /proc/cpuinfo && grep -qw avx512bw /proc/cpuinfo \
   && grep -qw avx512vl /proc/cpuinfo && grep -qw avx512dq /proc/cpuinfo; then
  ATEN_CPU_CAPABILITY=avx512
fi
