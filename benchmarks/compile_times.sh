#!/usr/bin/env bash
# Compile-time budget of the examples (issue 7): measures, on this machine,
#   1. a clean `cargo build --release --examples` (every dependency included),
#   1b. a clean build of the library alone, all features (no dev-dependencies),
#   2. the examples again after `cargo clean -p` of our own crates only (dependencies built),
#   3. the incremental rebuild after changing one layer size in an example,
# and writes the numbers to benchmarks/results/compile_times.md.
#
# Usage, from the repository root:  benchmarks/compile_times.sh
#   CARGO_TARGET_DIR   build directory (default /tmp/autograd-compile-times, wiped at the start,
#                      so the measurement never disturbs ./target)
#   EXAMPLE, CONST     the example file and the `const NAME: usize = N;` to edit. By default the
#                      first file under examples/ holding a `const HIDDEN...: usize` (the digits
#                      example's hidden width), else the first `const ...: usize = N;` there. The edit sets N to
#                      N + 1, rebuilds, then restores the file.
# The edited file is restored on exit, even on failure.
set -euo pipefail

cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/tmp/autograd-compile-times}"
out=benchmarks/results/compile_times.md
mkdir -p benchmarks/results

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
build() { cargo build --release --examples --quiet; }

# 1. Clean build, dependencies included.
rm -rf "$CARGO_TARGET_DIR"
cargo fetch --quiet
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
t0=$(now); cargo build --release --examples --quiet --timings 2>/dev/null; t1=$(now)
clean_all=$(secs "$t0" "$t1")
# The slowest compilation units of the clean build, from cargo's timing report.
slowest=$(python3 - "$CARGO_TARGET_DIR/cargo-timings/cargo-timing.html" <<'PY' 2>/dev/null || echo "(python3 unavailable: see the cargo-timings report)"
import json, sys
s = open(sys.argv[1], encoding="utf-8").read()
a = s.index("const UNIT_DATA = ") + len("const UNIT_DATA = ")
units = json.loads(s[a : s.index("];", a) + 1])
for u in sorted(units, key=lambda u: -u["duration"])[:10]:
    target = u["target"].strip() or "lib"
    print(f"| {u['name']} {u['version']} | {target} | {u['duration']:.1f} |")
PY
)
cp "$CARGO_TARGET_DIR/cargo-timings/cargo-timing.html" /tmp/compile-times-clean-timing.html 2>/dev/null || true

# 1b. The library alone with every feature (what a user's own examples pay: no dev-dependencies),
# in a second target directory so it shares nothing with the build above.
rm -rf "$CARGO_TARGET_DIR-lib"
t0=$(now); CARGO_TARGET_DIR="$CARGO_TARGET_DIR-lib" cargo build --release --quiet -p autograd-core --all-features; t1=$(now)
clean_lib=$(secs "$t0" "$t1")
rm -rf "$CARGO_TARGET_DIR-lib"

# 2. Our crates only.
cargo clean --release --quiet -p autograd-core -p autograd-macros -p autograd-workspace
t0=$(now); build; t1=$(now)
clean_ours=$(secs "$t0" "$t1")

# 3. Incremental rebuild after a layer-size edit.
example="${EXAMPLE:-}"
const="${CONST:-}"
if [[ -z "$example" ]]; then
  example=$(grep -rlE '^\s*(pub )?const HIDDEN[A-Z0-9_]*: usize = [0-9]+;' examples --include='*.rs' 2>/dev/null | sort | head -n1 || true)
  if [[ -z "$example" ]]; then
    example=$(grep -rlE '^\s*(pub )?const [A-Z0-9_]+: usize = [0-9]+;' examples --include='*.rs' 2>/dev/null | sort | head -n1 || true)
  fi
fi
edit_note=""
incremental="n/a"
if [[ -n "$example" ]]; then
  if [[ -z "$const" ]]; then
    const=$(grep -oE '^\s*(pub )?const HIDDEN[A-Z0-9_]*: usize' "$example" | head -n1 | sed -E 's/.*const ([A-Z0-9_]+).*/\1/' || true)
    [[ -n "$const" ]] || const=$(grep -oE '^\s*(pub )?const [A-Z0-9_]+: usize = [0-9]+;' "$example" | head -n1 | sed -E 's/.*const ([A-Z0-9_]+).*/\1/')
  fi
  old=$(grep -oE "const $const: usize = [0-9]+;" "$example" | head -n1 | grep -oE '[0-9]+;' | tr -d ';')
  new=$((old + 1))
  backup=$(mktemp)
  cp "$example" "$backup"
  trap 'cp "$backup" "$example"; rm -f "$backup"' EXIT
  sed -i -E "s/const $const: usize = $old;/const $const: usize = $new;/" "$example"
  t0=$(now); build; t1=$(now)
  incremental=$(secs "$t0" "$t1")
  edit_note="\`$example\`: \`const $const: usize = $old;\` -> \`$new\`"
  cp "$backup" "$example"
  build # leave the target directory matching the sources
else
  # No example has a layer-size constant yet: edit a value in the first example instead, which
  # still recompiles that example (but adds no new monomorphization).
  example=$(ls examples/*.rs | head -n1)
  backup=$(mktemp)
  cp "$example" "$backup"
  trap 'cp "$backup" "$example"; rm -f "$backup"' EXIT
  echo "// compile-time probe" >> "$example"
  sed -i -E '0,/[0-9]+\.0/s//&1/' "$example"
  t0=$(now); build; t1=$(now)
  incremental=$(secs "$t0" "$t1")
  edit_note="no example has a layer-size \`const\` yet, so a literal in \`$example\` was edited instead (recompiles that example, adds no new shape)"
  cp "$backup" "$example"
fi
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

examples=$(ls examples/*.rs | wc -l)
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')
{
  echo "# Compile times"
  echo
  echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC') on $cpu, $(nproc) logical CPUs, $(uname -sr), $(rustc -V), commit \`$(git rev-parse --short HEAD)\`, $examples example(s)."
  echo "**The machine is shared with other builds** (load average before: $load_before, after: $load_after): these are single measurements, and on a loaded machine a clean build can take several times as long."
  echo "Command: \`benchmarks/compile_times.sh\` (target directory \`$CARGO_TARGET_DIR\`, \`cargo build --release --examples\`)."
  echo
  echo "| build | seconds | target |"
  echo "|---|---:|---:|"
  echo "| clean, all dependencies included | $clean_all | 60 |"
  echo "| clean, library alone with all features (\`-p autograd-core --all-features\`, no dev-dependencies) | $clean_lib | |"
  echo "| clean, our crates only (dependencies already built) | $clean_ours | |"
  echo "| incremental, after changing one layer size | $incremental | 5 |"
  echo
  echo "Incremental edit: $edit_note."
  echo
  echo "\`cargo build --examples\` also builds the dev-dependencies (examples may use them), so the clean"
  echo "build includes criterion, proptest, trybuild and allocation-counter. Slowest units of the clean"
  echo "build (seconds of wall time each, 2 jobs in parallel; report: \`cargo build --release --examples --timings\`):"
  echo
  echo "| crate | target | seconds |"
  echo "|---|---|---:|"
  echo "$slowest"
} > "$out"
cat "$out"
