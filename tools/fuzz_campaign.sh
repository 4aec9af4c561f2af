#!/bin/bash
# Runs libFuzzer targets of a fuzz build for a given number of executions each, on the
# corpora in fuzz/corpus/, and prints one line per target: executions, seconds, executions
# per second and the outcome (the issue of the runtime's security asks 10 million each).
#
#   tools/fuzz_campaign.sh BUILD_DIR [RUNS] [TARGET...]
#
# BUILD_DIR is a build of this tree with clang and -DUKAI_FUZZ=ON (docs/runtime.md,
# "Fuzzing"); RUNS defaults to 10000000; TARGETs are names as in ukai_fuzz_NAME (default:
# every ukai_fuzz_* in BUILD_DIR/fuzz). Each target starts from CORPUS_DIR/STEM (STEM = NAME
# without its "_fuzz"; CORPUS_DIR default fuzz/corpus/found, in the tree, so that what a run
# found is kept and can be committed; libFuzzer adds there the inputs that reach new code)
# and the seeds in fuzz/corpus/STEM when that exists (read only: curated, and replayed by
# the unit tests, which do not read fuzz/corpus/found), at nice 19, JOBS (default 2) at a
# time. LOG_DIR (default /tmp/ukai-fuzz) keeps each run's log NAME.log and any crashing
# input (NAME-crash-*, NAME-timeout-*, NAME-oom-*). To shrink a found corpus before a commit:
# `ukai_fuzz_NAME -merge=1 NEW_DIR fuzz/corpus/found/STEM`, then replace it by NEW_DIR.
# TIMEOUT (default 600) is libFuzzer's -timeout, seconds of wall time for one input: at nice
# 19 a fuzzer may wait that long for a core while other work runs (a 30 s bound fired on
# inputs that take milliseconds while `make test` ran); a hang still stops the run.
# To stop early, send SIGINT to the fuzzers (`pkill -INT -f ukai_fuzz_`): each prints how
# many executions it made, and its line says "interrupted". A later run continues from the
# corpus it left.
# A log with a sanitizer report (ASan, or UBSan built to go on after one) is FAILED too.
# Exit status 1 when a target crashed, timed out, reported or stopped early; 2 on bad
# arguments.
set -u
if [ $# -lt 1 ] || [ ! -d "$1/fuzz" ]; then
  echo "usage: $0 BUILD_DIR [RUNS] [TARGET...]  (BUILD_DIR/fuzz holds the ukai_fuzz_* binaries)" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
shift
runs=10000000
if [ $# -gt 0 ]; then
  case "$1" in
    *[!0-9]*) ;;
    ?*) runs=$1; shift ;;
  esac
fi
root=$(cd "$(dirname "$0")/.." && pwd)
logs=${LOG_DIR:-/tmp/ukai-fuzz}
jobs=${JOBS:-2}
timeout=${TIMEOUT:-600}
corpus=${CORPUS_DIR:-$root/fuzz/corpus/found}
mkdir -p "$logs" "$corpus" || exit 2

if [ $# -eq 0 ]; then
  set -- $(cd "$build/fuzz" && ls ukai_fuzz_* 2>/dev/null | sed 's/^ukai_fuzz_//')
fi
for name in "$@"; do
  if [ ! -x "$build/fuzz/ukai_fuzz_$name" ]; then
    echo "$0: no fuzz target $build/fuzz/ukai_fuzz_$name" >&2
    exit 2
  fi
done

# One target: its log gets the whole libFuzzer output.
run_one() {
  name=$1
  seeds="$root/fuzz/corpus/${name%_fuzz}"
  found="$corpus/${name%_fuzz}"
  mkdir -p "$found"
  [ -d "$seeds" ] || seeds=""
  nice -n 19 "$build/fuzz/ukai_fuzz_$name" -runs="$runs" -max_len=8192 -timeout="$timeout" \
    -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$logs/$name-" "$found" \
    ${seeds:+"$seeds"} >"$logs/$name.log" 2>&1
  echo "$?" >"$logs/$name.rc"
}

for name in "$@"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
  run_one "$name" &
done
wait

status=0
printf '%-28s %12s %9s %10s  %s\n' target executions seconds exec/s outcome
for name in "$@"; do
  log="$logs/$name.log"
  rc=$(cat "$logs/$name.rc" 2>/dev/null || echo '?')
  done_line=$(grep -E '^Done [0-9]+ runs in [0-9]+ second' "$log" | tail -n 1)
  execs=$(grep -E '^stat::number_of_executed_units:' "$log" | tail -n 1 | awk '{print $2}')
  secs=$(echo "$done_line" | awk '{print $5}')
  rate=$(grep -E '^stat::average_exec_per_sec:' "$log" | tail -n 1 | awk '{print $2}')
  if grep -qE '(runtime error:|ERROR: [A-Za-z]+Sanitizer)' "$log"; then
    outcome="FAILED: a sanitizer report (see $log)"
    status=1
  elif [ "$rc" = 0 ] && [ -n "$done_line" ] && [ "${execs:-0}" -ge "$runs" ]; then
    outcome="ok"
  elif grep -q 'libFuzzer: run interrupted' "$log"; then
    outcome="interrupted (SIGINT): no crash in the executions counted"
    status=1
  else
    outcome="FAILED (exit $rc; see $log)"
    status=1
  fi
  printf '%-28s %12s %9s %10s  %s\n' "$name" "${execs:-?}" "${secs:-?}" "${rate:-?}" "$outcome"
done
exit $status
