# Shell helpers over tests/golden/ (sourced by record.sh).
# golden_args NAME: the p0sim arguments of golden run NAME (commands.txt), {golden} filled in.
golden_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
golden_args() {
  sed -n "s|^$1: ||p" "$golden_dir/commands.txt" | sed "s|{golden}|$golden_dir|g"
}
# golden_arithmetic: the lines of `p0sim --version` (stdin) that name the engine's arithmetic: the
# compiler, the arithmetic flags and Eigen with its SIMD sets. The bits are promised for a build
# whose lines equal arithmetic.txt.
golden_arithmetic() {
  grep -E '^(compiler|arithmetic|eigen): '
}
# golden_files NAME OUT: "produced golden-name" pairs of run NAME written to OUT, one per line:
# every file the test compares byte for byte (train.csv and summary.json hold wall-clock fields
# and are compared by the test alone).
golden_files() {
  case "$1" in
    train)
      echo "$2/trace.csv train.trace.csv"
      echo "$2/heads.csv train.heads.csv"
      for f in "$2"/weights/*.npy; do echo "$f train.weights.$(basename "$f")"; done ;;
    experiment)
      echo "$2/results.csv experiment.results.csv"
      echo "$2/verdict.json experiment.verdict.json"
      echo "$2/ablations.csv experiment.ablations.csv"
      echo "$2/experiment.toml experiment.resolved.toml"
      for f in trace.csv heads.csv config.toml; do echo "$2/runs/main/seed-0/$f experiment.main-seed-0.$f"; done ;;
    sweep_train)
      echo "$2/results.csv sweep_train.results.csv"
      echo "$2/sweep.toml sweep_train.sweep.toml" ;;
    sweep_theory)
      echo "$2/results.csv sweep_theory.results.csv" ;;
  esac
}
