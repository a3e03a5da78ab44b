#!/usr/bin/env bash
# Compile-time budget (issues 7 and 16): measures, on this machine,
#   1. clean `cargo build --release -p autograd-core` (the library, default features: what a
#      user's crate pays),
#   2. clean `cargo build --release --examples` (dev-dependencies included), with the slowest units,
#   3. clean `cargo test --workspace --no-run` (every test binary, debug profile),
#   4. the examples again after `cargo clean -p` of our own crates only (dependencies built),
#   5. the incremental rebuild after changing one layer size in an example,
#   6. the rebuild of `05-digits` after editing one line inside a `#[differentiable]` function
#      (the digits model's forward), RUNS times, with `--release` and with `--profile fast-rebuild`
#      (the root Cargo.toml's release profile with incremental compilation),
# and writes the numbers to benchmarks/results/compile_times.md. Each clean build has a target
# directory of its own, wiped first.
#
# Usage, from the repository root:  benchmarks/compile_times.sh
#   CARGO_TARGET_DIR   base of the build directories (default /tmp/autograd-compile-times; the
#                      clean builds use it and `-lib`, `-tests` beside it), so ./target is untouched
#   RUNS               samples of each rebuild in 6 (default 3): min, median, max are reported
#   EXAMPLE, CONST     the example file and the `const NAME: usize = N;` to edit in 5. By default
#                      the digits examples' `examples/digits/trainer.rs` and its first
#                      `const HIDDEN...: usize` (the hidden width). The edit sets N to N + 1,
#                      rebuilds, then restores it.
# Edited files are restored on exit, even on failure.
set -euo pipefail

cd "$(dirname "$0")/.."
base="${CARGO_TARGET_DIR:-/tmp/autograd-compile-times}"
export CARGO_TARGET_DIR="$base"
runs="${RUNS:-3}"
out=benchmarks/results/compile_times.md
mkdir -p benchmarks/results

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
loads=()
# Times the command in its own fresh target directory $1; prints the seconds.
clean_build() {
  local dir=$1
  shift
  rm -rf "$dir"
  local t0 t1
  t0=$(now)
  CARGO_TARGET_DIR="$dir" "$@" >/dev/null 2>&1
  t1=$(now)
  secs "$t0" "$t1"
}
# min / median / max of the arguments.
spread() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { printf "%s / %s / %s", v[1], v[int((NR + 1) / 2)], v[NR] }'; }

cargo fetch --quiet
backups=()
restore() { local i; for ((i = 0; i < ${#backups[@]}; i += 2)); do cp "${backups[i + 1]}" "${backups[i]}"; rm -f "${backups[i + 1]}"; done; }
trap restore EXIT
backup() { local b; b=$(mktemp); cp "$1" "$b"; backups+=("$1" "$b"); }

# 1-3. Clean builds.
# (Each `loads` entry is taken here: `clean_build` and `rebuilds` run in subshells.)
loads+=("library $(load)")
clean_lib=$(clean_build "$base-lib" cargo build --release -p autograd-core)
rm -rf "$base-lib"
loads+=("tests $(load)")
clean_tests=$(clean_build "$base-tests" cargo test --workspace --no-run)
rm -rf "$base-tests"
loads+=("examples $(load)")
clean_all=$(clean_build "$base" cargo build --release --examples --timings)
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
build() { cargo build --release --examples --quiet; }

# 4. Our crates only.
cargo clean --release --quiet -p autograd-core -p autograd-macros -p autograd-workspace
t0=$(now); build; t1=$(now)
clean_ours=$(secs "$t0" "$t1")

# 5. Incremental rebuild after a layer-size edit.
example="${EXAMPLE:-}"
const="${CONST:-}"
if [[ -z "$example" ]]; then
  example=examples/digits/trainer.rs
fi
if [[ -z "$const" ]]; then
  const=$(grep -oE '^\s*(pub )?const HIDDEN[A-Z0-9_]*: usize' "$example" | head -n1 | sed -E 's/.*const ([A-Z0-9_]+).*/\1/')
fi
old=$(grep -oE "const $const: usize = [0-9]+;" "$example" | head -n1 | grep -oE '[0-9]+;' | tr -d ';')
new=$((old + 1))
backup "$example"
sed -i -E "s/const $const: usize = $old;/const $const: usize = $new;/" "$example"
t0=$(now); build; t1=$(now)
incremental=$(secs "$t0" "$t1")
edit_note="\`$example\`: \`const $const: usize = $old;\` -> \`$new\`"
restore
backups=()

# 6. Rebuild of one example after editing one line of a `#[differentiable]` function: the digits
# model's forward gains a second (value-preserving) `relu()`, then loses it again, and so on; each
# edit is one sample.
diff_file=examples/digits/trainer.rs
diff_old='self.fc2.forward(&self.fc1.forward(x).relu())'
diff_new='self.fc2.forward(&self.fc1.forward(x).relu().relu())'
grep -qF "$diff_old" "$diff_file" || { echo "$diff_file: the line to edit ($diff_old) is gone; update this script" >&2; exit 1; }
backup "$diff_file"
edited=$(mktemp)
content=$(<"$diff_file")
printf '%s\n' "${content/"$diff_old"/"$diff_new"}" >"$edited"
rebuilds() {
  local times=() i t0 t1
  cargo build "$@" --example 05-digits --quiet
  for ((i = 1; i <= runs; i++)); do
    if ((i % 2)); then cp "$edited" "$diff_file"; else cp "${backups[1]}" "$diff_file"; fi
    t0=$(now); cargo build "$@" --example 05-digits --quiet; t1=$(now)
    times+=("$(secs "$t0" "$t1")")
  done
  cp "${backups[1]}" "$diff_file"
  cargo build "$@" --example 05-digits --quiet # leave the target directory matching the sources
  spread "${times[@]}"
}
loads+=("rebuilds --release $(load)")
rebuild_release=$(rebuilds --release)
loads+=("rebuilds fast-rebuild $(load)")
if grep -q '^\[profile.fast-rebuild\]' Cargo.toml; then
  rebuild_fast=$(rebuilds --profile fast-rebuild)
else
  rebuild_fast="n/a (no such profile in Cargo.toml)"
fi
rm -f "$edited"
restore
backups=()
loads+=("end $(load)")

examples=$(ls examples/*.rs | wc -l)
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')
{
  echo "# Compile times"
  echo
  echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC') on $cpu, $(nproc) logical CPUs, $(uname -sr), $(rustc -V), commit \`$(git rev-parse --short HEAD)\`, $examples example(s)."
  echo "**The machine is shared with other builds** (load averages at the start of each measurement, 1, 5 and 15 minutes: $(IFS=';'; echo "${loads[*]}" | sed 's/;/; /g')): on a loaded machine a clean build can take several times as long."
  echo "Command: \`benchmarks/compile_times.sh\` (target directories \`$base\`, \`-lib\`, \`-tests\`; cargo's default 2 jobs)."
  echo
  echo "| build | seconds | target |"
  echo "|---|---:|---:|"
  echo "| clean library, default features (\`cargo build --release -p autograd-core\`; what a user's crate pays) | $clean_lib | |"
  echo "| clean examples, every dependency (\`cargo build --release --examples\`) | $clean_all | 60 |"
  echo "| clean tests (\`cargo test --workspace --no-run\`) | $clean_tests | |"
  echo "| examples, our crates only (dependencies already built) | $clean_ours | |"
  echo "| examples, incremental, after changing one layer size | $incremental | 5 |"
  echo "| \`05-digits\` after editing one line of a \`#[differentiable]\` function, \`--release\` (min / median / max of $runs) | $rebuild_release | 10 |"
  echo "| the same, \`--profile fast-rebuild\` (release + incremental) | $rebuild_fast | 10 |"
  echo
  echo "Layer-size edit: $edit_note. Differentiable edit: \`$diff_file\`, \`Mlp::logits\`:"
  echo "\`$diff_old\` <-> \`$diff_new\`, one sample per edit."
  echo
  echo "\`cargo build --examples\` also builds the dev-dependencies (examples may use them). Slowest units"
  echo "of the clean examples build (seconds of wall time each, 2 jobs in parallel; report:"
  echo "\`cargo build --release --examples --timings\`):"
  echo
  echo "| crate | target | seconds |"
  echo "|---|---|---:|"
  echo "$slowest"
} > "$out"
cat "$out"
