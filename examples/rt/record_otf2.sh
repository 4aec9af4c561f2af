#!/bin/sh
# Records the SPMD ring example (examples/rt/spmd_ring.cc) over shm into one OTF2 archive with
# `ukai launch --otf2`, reads it back with otf2-print and checks its message counts: one
# MPI_SEND and one MPI_IRECV per hop (docs/otf2-recording.md).
#
#   examples/rt/record_otf2.sh UKAI RING [PROCESSES] [LAPS] [DIR]
#
# UKAI: the ukai command (build/src/cli/ukai); RING: build/examples/rt/rt_example_spmd_ring.
# DIR: where the archive goes (DIR/traces.otf2; it must not hold one yet); default: a new
# temporary directory, removed at the end. Exit status 0 when the counts are right.
set -eu
ukai=$1
ring=$2
n=${3:-4}
laps=${4:-100}
dir=${5:-}
keep=1
if [ -z "$dir" ]; then
  dir=$(mktemp -d "${TMPDIR:-/tmp}/ukai_record_otf2.XXXXXX")
  keep=0
fi
"$ukai" launch -n "$n" --modules shm --otf2 "$dir" --timeout 120 "$ring" "$laps"
otf2-print "$dir/traces.otf2" > "$dir/otf2-print.txt"
sends=$(grep -c '^MPI_SEND ' "$dir/otf2-print.txt" || true)
recvs=$(grep -c '^MPI_IRECV ' "$dir/otf2-print.txt" || true)
want=$((n * laps))
echo "otf2-print $dir/traces.otf2: $sends MPI_SEND, $recvs MPI_IRECV (expected $want each:" \
  "$n ranks x $laps laps)"
[ "$keep" -eq 1 ] || rm -rf "$dir"
[ "$sends" -eq "$want" ] && [ "$recvs" -eq "$want" ]
