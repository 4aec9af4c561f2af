#!/usr/bin/env bash
# What authenticated connections cost (docs/performance.md, "Authenticated connections"):
# the same benchmark (bench/rt/connect/connect_bench.cc: connection set-up, then 8-byte
# latency and message rate) built against this tree's library and against a baseline
# library without authentication, run alternately in this one script, and the ratios
# this/baseline of the medians over the rounds.
#
#   bench/rt/auth_cost.sh BUILD [BASE_COMMIT] [ROUNDS] [-- connect_bench options]
#
# BUILD: this tree's build directory (with ukai_rt_connect_bench built). BASE_COMMIT: a
# commit without authentication, checked out into a temporary git worktree whose library is
# built (Release) with this tree's connect_bench.cc (default $UKAI_AUTH_BASE, else 3bcccda:
# main right before issue 25's branch was merged; any later commit of main has
# authentication). ROUNDS: alternate runs of each (default 3).
# Noisy on a loaded machine: compare ratios of one run of this script, not across runs.
set -euo pipefail

build=${1:?usage: auth_cost.sh BUILD [BASE_COMMIT] [ROUNDS] [-- bench options]}
shift
base_commit=${UKAI_AUTH_BASE:-3bcccda}
rounds=3
if [[ $# -gt 0 && $1 != -- ]]; then base_commit=$1; shift; fi
if [[ $# -gt 0 && $1 != -- ]]; then rounds=$1; shift; fi
[[ $# -gt 0 && $1 == -- ]] && shift
bench_args=("$@")

src=$(cd "$(dirname "$0")/../.." && pwd)
new_bin=$(cd "$build" && pwd)/bench/ukai_rt_connect_bench
[[ -x $new_bin ]] || { echo "auth_cost.sh: $new_bin not built (ninja ukai_rt_connect_bench)" >&2; exit 2; }
if git -C "$src" cat-file -e "$base_commit:src/rt/core/job_secret.h" 2>/dev/null; then
  echo "auth_cost.sh: $base_commit has authentication already; give an older BASE_COMMIT" >&2
  exit 2
fi

# $UKAI_AUTH_WORK: a directory to keep the baseline's worktree and build in (reused by
# the next run); else a temporary one, removed at the end.
if [[ -n ${UKAI_AUTH_WORK:-} ]]; then
  work=$UKAI_AUTH_WORK
  mkdir -p "$work"
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/ukai_auth_base.XXXXXX")
  cleanup() {
    git -C "$src" worktree remove --force "$work/src" >/dev/null 2>&1 || true
    rm -rf "$work"
  }
  trap cleanup EXIT
fi
if [[ ! -d $work/src ]]; then
  git -C "$src" worktree add --detach "$work/src" "$base_commit" >/dev/null 2>&1
fi
# The baseline gets this tree's benchmark source (public API only).
mkdir -p "$work/src/bench/rt/connect"
cp "$src/bench/rt/connect/connect_bench.cc" "$src/bench/rt/connect/CMakeLists.txt" \
  "$work/src/bench/rt/connect/"
grep -q 'add_subdirectory(connect)' "$work/src/bench/rt/CMakeLists.txt" ||
  echo 'add_subdirectory(connect)' >>"$work/src/bench/rt/CMakeLists.txt"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
echo "auth_cost.sh: building the baseline library at $(git -C "$src" rev-parse --short "$base_commit") ..." >&2
cmake -S "$work/src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" >/dev/null
cmake --build "$work/build" --target ukai_rt_connect_bench -j "${UKAI_BUILD_JOBS:-$(nproc)}" >/dev/null
base_bin=$work/build/bench/ukai_rt_connect_bench

# RESULT lines: "RESULT module connect_us first_rsr_us latency_us rate_msgs".
results=$work/results.txt
: >"$results"
for ((r = 1; r <= rounds; r++)); do
  for which in base new; do
    bin=$base_bin
    [[ $which == new ]] && bin=$new_bin
    echo "== round $r/$rounds: $which" >&2
    "$bin" "${bench_args[@]}" | tee /dev/stderr | awk -v w="$which" '$1 == "RESULT" { print w, $0 }' >>"$results"
  done
done

echo
echo "authentication cost: ukai_rt_connect_bench ${bench_args[*]}, $rounds alternate rounds;"
echo "baseline $(git -C "$src" rev-parse --short "$base_commit") (no authentication) vs this build;"
echo "medians over the rounds; ratio = this / baseline (latency, set-up: lower is better; rate: higher)"
awk '
  { key = $1 " " $3; n[key]++; for (i = 4; i <= 7; i++) v[key, i, n[key]] = $i; mods[$3] = 1 }
  function med(key, i,   a, k, m, t, j) {
    m = n[key]
    for (k = 1; k <= m; k++) a[k] = v[key, i, k]
    for (k = 1; k <= m; k++) for (j = k + 1; j <= m; j++) if (a[j] < a[k]) { t = a[k]; a[k] = a[j]; a[j] = t }
    return (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
  }
  END {
    split("connect_us first_rsr_us latency_us rate_msgs", names, " ")
    printf "%-6s %-14s %12s %12s %7s\n", "module", "figure", "baseline", "this", "ratio"
    for (m in mods) for (i = 4; i <= 7; i++) {
      b = med("base " m, i); t = med("new " m, i)
      printf "%-6s %-14s %12.2f %12.2f %6.2fx\n", m, names[i - 3], b, t, (b > 0 ? t / b : 0)
    }
  }' "$results"
