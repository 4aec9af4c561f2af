#!/bin/sh
# Compares the results of two ways of running `ukai sim run` on the reference configs:
# every JSON field of every point, except wall_seconds, must be identical.
#
#   tools/sim_identity.sh "OLD_CMD" "NEW_CMD"
#
# Each CMD is the command up to the config file, e.g.
#   tools/sim_identity.sh "/tmp/base/ukai sim run" "build/src/cli/ukai sim run"
#   tools/sim_identity.sh "build/src/cli/ukai sim run" "build/src/cli/ukai sim run --threads 2"
#   tools/sim_identity.sh "build/src/cli/ukai sim run" \
#     "mpirun -n 2 --oversubscribe build/src/cli/ukai sim run"
# (the single-thread speed work keeps the first form at zero differences; the parallel
# engine the other two). CONFIGS overrides the list (paths relative to the repository).
# Exit status 0 when every config gives identical results.
set -eu
old="$1"
new="$2"
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: "${CONFIGS:=experiments/quickstart.toml
experiments/detour-ud/fig09_uniform_bandwidth_f2.toml
experiments/detour-ud/fig11_transpose_recovery_f4_t64.toml
experiments/detour-ud/fig12_uniform_recovery_f4_t64.toml
experiments/gateway/mesh4.toml
experiments/gateway/mesh8.toml
experiments/reconfig/ud_load.toml}"
status=0
for cfg in $CONFIGS; do
  (cd "$root" && $old "$cfg" --format json > "$tmp/old.json")
  (cd "$root" && $new "$cfg" --format json > "$tmp/new.json")
  if python3 - "$tmp/old.json" "$tmp/new.json" <<'PY'
import json, sys
def load(p):
    rows = [json.loads(l) for l in open(p) if l.strip()]
    for r in rows:
        r.pop("wall_seconds", None)
    return rows
a, b = load(sys.argv[1]), load(sys.argv[2])
if a == b and a:
    print(f"identical: {len(a)} points")
    sys.exit(0)
print(f"DIFFERENT: {len(a)} vs {len(b)} points")
for i, (x, y) in enumerate(zip(a, b)):
    for k in sorted(set(x) | set(y)):
        if x.get(k) != y.get(k):
            print(f"  point {i} {k}: {x.get(k)!r} != {y.get(k)!r}")
sys.exit(1)
PY
  then echo "  $cfg"; else echo "  ^ $cfg"; status=1; fi
done
exit $status
