#!/usr/bin/env bash
# Writes the search configs ("where the P0 sink emerges"): each is a `p0sim experiment`
# config in search mode (main = control = ""), one variant per grid cell, named after its
# overrides; `p0sim plot` draws a heatmap per metric over the two first varying keys.
# Regenerate with: bash configs/search/make_configs.sh   (the shipped .toml files are its output)
set -euo pipefail
cd "$(dirname "$0")"

base() {  # common training base: C=64, H=4, T=32, V=64 as in the issue's pre-study
  cat <<'TOML'
vocab = 64
d-model = 64
heads = 4
layers = 2
seq-len = 32
batch = 32
task = "firstrecall"
filler = "uniform"
triggers = 4
trigger-prob = 0.1
lr = 3e-3
warmup = 100
weight-decay = 0.1
clip = 1.0
seed = 1
mask = "causal"
pos = "none"
bos = false
probe-every = 100
probe-batch = 64
log-every = 500
TOML
}

task_overrides() {  # name -> the task's own keys
  case "$1" in
    firstrecall) echo 'task = "firstrecall"' ;;
    frmarkov) printf 'task = "firstrecall"\nfiller = "markov"\n' ;;  # firstrecall mixed with markov prediction
    lookup) echo 'task = "lookup"' ;;
    backcopy) echo 'task = "backcopy"' ;;
    markov) echo 'task = "markov"' ;;
    backcopyindep) echo 'task = "backcopy-indep"' ;;  # triggers inserted independently of the token
    frlookup) echo 'task = "firstrecall-lookup"' ;;     # firstrecall and lookup in one sequence
  esac
}

task_cell() {  # task, weight decay, layers [, learning rate] -> one variant named after them
  printf '\n[variants.%s%s_wd%s_L%s]\n' "$1" "${4:+_lr$4}" "${2/./p}" "$3"
  task_overrides "$1"
  echo "weight-decay = $2"
  echo "layers = $3"
  if [ -n "${4:-}" ]; then echo "lr = $4"; fi
}

# Stage A: task x weight decay x depth at C=64, T=32, 1000 steps (L = 3 dropped for compute: see README).
{
  echo "# Search stage A: task x weight decay x layers {2,4}; C=64, H=4, T=32, B=32, 1000 steps."
  echo "# p0sim experiment --config configs/search/stage_a_tasks.toml --seeds 3 --threads 2 --out DIR"
  base
  echo "steps = 1000"
  printf '\n[experiment]\nmain = ""\ncontrol = ""\n'
  for task in firstrecall frmarkov lookup backcopy markov; do
    for wd in 0 0.1 0.5; do
      for layers in 2 4; do
        task_cell "$task" "$wd" "$layers"
      done
    done
  done
} > stage_a_tasks.toml

# Stage B: width x length on firstrecall (uniform filler: identification is learnt within a few
# hundred steps at C=64, T=32), wd 0.1, L = 2; the batch keeps B*T = 1024 tokens per step.
{
  echo "# Search stage B: d_model x seq_len; firstrecall, wd 0.1, L=2,"
  echo "# B*T = 1024 tokens per step, 1000 steps."
  echo "# p0sim experiment --config configs/search/stage_b_width_length.toml --seeds 3 --threads 2 --out DIR"
  base
  echo "steps = 1000"
  printf '\n[experiment]\nmain = ""\ncontrol = ""\n'
  for C in 32 64 128; do
    for T in 32 64 128; do
      printf '\n[variants.C%s_T%s]\n' "$C" "$T"
      echo "d-model = $C"
      echo "seq-len = $T"
      echo "batch = $((1024 / T))"
    done
  done
} > stage_b_width_length.toml

# Stage C: long training on the cell where stage A came closest: firstrecall, L = 4, where the
# last block's position-0 state already points in one fixed direction (p0_cos ~ 1) at a norm
# ratio ~ 0.9: does longer training with strong decay (Gu et al.'s 0.5) raise the norm?
{
  echo "# Search stage C: 6000 steps, cosine schedule; firstrecall, C=64, T=32, L=4, wd 0.5."
  echo "# p0sim experiment --config configs/search/stage_c_long.toml --seeds 3 --threads 2 --out DIR"
  base
  echo "steps = 6000"
  echo 'schedule = "cosine"'
  printf '\n[experiment]\nmain = ""\ncontrol = ""\n'
  for wd in 0.5; do
    printf '\n[variants.firstrecall_wd%s_L4]\n' "${wd/./p}"
    echo "weight-decay = $wd"
    echo "layers = 4"
  done
} > stage_c_long.toml
# Stage D: the depth the first stages skipped (L = 3) for every task, and the two tasks they
# lacked (backcopy with independent triggers, the firstrecall+lookup mixture) at every depth.
{
  echo "# Search stage D: task x weight decay x layers; L=3 for every task, L {2,3,4} for"
  echo "# backcopy-indep and firstrecall-lookup; C=64, H=4, T=32, B=32, 1000 steps."
  echo "# p0sim experiment --config configs/search/stage_d_depth_tasks.toml --seeds 3 --threads 2 --out DIR"
  base
  echo "steps = 1000"
  printf '\n[experiment]\nmain = ""\ncontrol = ""\n'
  for task in firstrecall frmarkov lookup backcopy markov backcopyindep frlookup; do
    for wd in 0 0.1 0.5; do
      for layers in 2 3 4; do
        case "$task" in backcopyindep | frlookup) ;; *) [ "$layers" = 3 ] || continue ;; esac
        task_cell "$task" "$wd" "$layers"
      done
    done
  done
} > stage_d_depth_tasks.toml

# Stage E: learning rate x task at L = 3, wd 0.5, 2000 steps (the first stages used 3e-3 only).
{
  echo "# Search stage E: learning rate x task; C=64, T=32, L=3, wd 0.5, 2000 steps."
  echo "# p0sim experiment --config configs/search/stage_e_learning_rate.toml --seeds 3 --threads 2 --out DIR"
  base
  echo "steps = 2000"
  printf '\n[experiment]\nmain = ""\ncontrol = ""\n'
  for task in firstrecall backcopyindep frlookup; do
    for lr in 1e-3 3e-3 1e-2; do
      printf '\n[variants.%s_lr%s]\n' "$task" "$lr"
      task_overrides "$task"
      echo "lr = $lr"
      echo "weight-decay = 0.5"
      echo "layers = 3"
    done
  done
} > stage_e_learning_rate.toml

# Stage F: the longest context (T = 256) at every width, B*T = 1024 tokens per step, L = 2.
{
  echo "# Search stage F: d_model x task at T=256 (B=4), wd 0.1, L=2, 1000 steps."
  echo "# p0sim experiment --config configs/search/stage_f_length256.toml --seeds 3 --threads 2 --out DIR"
  base | sed '/^seq-len =/d; /^batch =/d'
  echo "steps = 1000"
  echo "seq-len = 256"
  echo "batch = 4"
  printf '\n[experiment]\nmain = ""\ncontrol = ""\n'
  for task in firstrecall frlookup; do
    for C in 32 64 128; do
      printf '\n[variants.%s_C%s]\n' "$task" "$C"
      task_overrides "$task"
      echo "d-model = $C"
    done
  done
} > stage_f_length256.toml

# Stage G: the longest runs (20000 steps, cosine) with strong decay on the cells that came closest:
# backcopy-indep at lr 1e-3 (stage E: position 0 at norm ratio 2.4 after blocks 0-1, but in no fixed
# direction) at L = 3 and at the pre-study's L = 4, and firstrecall-lookup (sinks on a low-norm P0).
{
  echo "# Search stage G: 20000 steps, cosine, wd 0.5, C=64, T=32; backcopy-indep at lr 1e-3, L=3"
  echo "# and L=4; firstrecall-lookup at lr 3e-3, L=3."
  echo "# p0sim experiment --config configs/search/stage_g_20000_steps.toml --seeds 3 --threads 2 --out DIR"
  base | sed '/^probe-every =/d; /^log-every =/d'
  echo "steps = 20000"
  echo 'schedule = "cosine"'
  echo "probe-every = 500"
  echo "log-every = 2000"
  printf '\n[experiment]\nmain = ""\ncontrol = ""\n'
  task_cell backcopyindep 0.5 3 1e-3
  task_cell backcopyindep 0.5 4 1e-3
  task_cell frlookup 0.5 3
} > stage_g_20000_steps.toml
# Stage H: the long contexts that stages B and F could not learn in 1000 steps (T = 128, 256), for
# 5000 steps with a cosine schedule, B*T = 1024 tokens per step, C = 64, L = 2.
{
  echo "# Search stage H: task x T in {128, 256} (B*T = 1024), C=64, L=2, wd 0.1, 5000 steps, cosine."
  echo "# p0sim experiment --config configs/search/stage_h_long_context.toml --seeds 3 --threads 2 --out DIR"
  base | sed '/^seq-len =/d; /^batch =/d; /^probe-every =/d'
  echo "steps = 5000"
  echo 'schedule = "cosine"'
  echo "probe-every = 250"
  printf '\n[experiment]\nmain = ""\ncontrol = ""\n'
  for task in firstrecall frlookup; do
    for T in 128 256; do
      printf '\n[variants.%s_T%s]\n' "$task" "$T"
      task_overrides "$task"
      echo "seq-len = $T"
      echo "batch = $((1024 / T))"
    done
  done
} > stage_h_long_context.toml
# The controls on the one kind of cell where a sink emerged in most seeds (stage D:
# firstrecall-lookup, L = 2, wd 0.1, 3/3 seeds): the same config without the causal asymmetry
# (prefix-bidirectional), with a BOS token, with RoPE or absolute positions, with sigmoid
# attention; ablations of every layer-0 head and MLP at the end of each run.
{
  echo "# Controls for the firstrecall-lookup sink: C=64, H=4, T=32, B=32, L=2, wd 0.1, 1000 steps."
  echo "# p0sim experiment --config configs/search/frlookup_sink_controls.toml --seeds 3 --threads 2 --out DIR"
  base | sed '/^task =/d; /^weight-decay =/d'
  echo "steps = 1000"
  task_overrides frlookup
  echo "weight-decay = 0.1"
  echo "ablate = true"
  printf '\n[experiment]\nmain = "main"\ncontrol = "prefix-bidirectional"\n'
  printf '\n[variants.main]\n'
  printf '\n[variants.prefix-bidirectional]\nmask = "prefix-bidirectional"\n'
  printf '\n[variants.bos]\nbos = true\n'
  printf '\n[variants.rope]\npos = "rope"\n'
  printf '\n[variants.absolute]\npos = "absolute"\n'
  printf '\n[variants.sigmoid]\nattn = "sigmoid"\n'
} > frlookup_sink_controls.toml
echo "wrote $(ls *.toml | tr '\n' ' ')"
