#!/usr/bin/env bash
# Compile time of a `#[differentiable]` function against its number of bindings (issue 16):
# writes, for each N, a crate whose function has N `let` bindings (a chain of matmul, tanh,
# products and sums on small tensors, like an unrolled recurrent network), once with the attribute
# and once without, and times `cargo build --release` of each (dependencies built beforehand, so
# only the function's crate is timed). Then checks that debug builds of the longest functions
# compile (rustc's own stack is the limit there).
#
# Usage, from the repository root:  benchmarks/macro_scaling.sh
#   SIZES          release sizes (default "100 300 1000 3000")
#   DEBUG_SIZES    sizes built in debug, with debug information (default "5000")
#   WORK           scratch directory (default /tmp/autograd-macro-scaling; the crates and their
#                  target directory, wiped at the start)
# Writes benchmarks/results/macro_scaling.md.
set -euo pipefail

cd "$(dirname "$0")/.."
repo=$(pwd)
sizes="${SIZES:-100 300 1000 3000}"
debug_sizes="${DEBUG_SIZES:-5000}"
work="${WORK:-/tmp/autograd-macro-scaling}"
out=benchmarks/results/macro_scaling.md
rm -rf "$work"
mkdir -p "$work" benchmarks/results
export CARGO_TARGET_DIR="$work/target"
# Debug information on (the default dev profile's), whatever the caller's environment says.
unset CARGO_PROFILE_DEV_DEBUG

# gen DIR N macro|plain: a crate with the N-binding function.
gen() {
  local dir=$1 n=$2 mode=$3 i p q
  mkdir -p "$dir/src"
  cat > "$dir/Cargo.toml" <<TOML
[package]
name = "scaling-$mode-$n"
version = "0.0.0"
edition = "2021"
publish = false
[dependencies]
autograd-core = { path = "$repo/autograd-core" }
[workspace]
TOML
  {
    echo "use autograd_core::prelude::*;"
    [[ $mode == macro ]] && echo "#[autograd_core::differentiable]"
    echo "pub fn f(x: &Tensor![f32; 4, 8], w: &Tensor![f32; 8, 8]) -> f32 {"
    echo "    let h0 = x.matmul(w);"
    echo "    let h1 = h0.tanh();"
    for ((i = 2; i < n; i++)); do
      p=$((i - 1)); q=$((i - 2))
      case $((i % 4)) in
        0) echo "    let h$i = h$p.matmul(w);" ;;
        1) echo "    let h$i = h$p.tanh();" ;;
        2) echo "    let h$i = &h$p * &h$q;" ;;
        3) echo "    let h$i = &h$p + x;" ;;
      esac
    done
    echo "    h$((n - 1)).sum().item()"
    echo "}"
  } > "$dir/src/lib.rs"
}

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# Dependencies first, in both profiles, through a one-binding crate.
gen "$work/warm" 2 macro
(cd "$work/warm" && cargo build --release --quiet && cargo build --quiet)

rows=""
for n in $sizes; do
  line="| $n"
  for mode in plain macro; do
    gen "$work/$mode-$n" "$n" "$mode"
    t0=$(now)
    (cd "$work/$mode-$n" && cargo build --release --quiet)
    t1=$(now)
    line="$line | $(secs "$t0" "$t1")"
  done
  ratio=$(echo "$line" | awk -F'|' '{ printf "%.1fx", $4 / $3 }')
  rows="$rows$line | $ratio |"$'\n'
  echo "release $n: $line"
done

debug_rows=""
for n in $debug_sizes; do
  line="| $n"
  for mode in plain macro; do
    gen "$work/debug-$mode-$n" "$n" "$mode"
    t0=$(now)
    if (cd "$work/debug-$mode-$n" && cargo build --quiet >"$work/debug-$mode-$n.log" 2>&1); then
      t1=$(now)
      line="$line | builds ($(secs "$t0" "$t1") s)"
    elif grep -q "overflowed its stack" "$work/debug-$mode-$n.log"; then
      line="$line | rustc overflows its stack"
    else
      line="$line | fails (see $work/debug-$mode-$n.log)"
    fi
  done
  debug_rows="$debug_rows$line |"$'\n'
  echo "debug $n: $line"
done

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')
{
  echo "# Compile time against the number of bindings"
  echo
  echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC') on $cpu, $(nproc) logical CPUs, $(rustc --version),"
  echo "commit \`$(git rev-parse --short HEAD)\`, load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
  echo "Command: \`benchmarks/macro_scaling.sh\`. Each build is one measurement of a crate holding one"
  echo "function of N \`let\` bindings (matmul, tanh, products and sums of \`(4, 8)\` tensors), with and"
  echo "without \`#[differentiable]\`, dependencies built beforehand."
  echo
  echo "| bindings | release build, plain function (s) | release build, \`#[differentiable]\` (s) | ratio |"
  echo "|---:|---:|---:|---:|"
  printf '%s' "$rows"
  echo
  echo "Debug builds (the default dev profile, with debug information):"
  echo
  echo "| bindings | plain function | \`#[differentiable]\` |"
  echo "|---:|---|---|"
  printf '%s' "$debug_rows"
} > "$out"
echo "wrote $out"
