#!/bin/sh
# Prints the path of a Python 3 interpreter that can import matplotlib, for the scripts
# that draw figures (experiments/*/plot.py, experiments/gateway/run.py; `make reproduce*`).
# The order: $PYTHON when set (an error if it lacks matplotlib: it was chosen on purpose),
# else `python3` on PATH, else Debian's /usr/bin/python3 (python3-matplotlib, installed by
# `make deps`). Exits 1 with a message naming the package when none can import it.
set -eu
has_mpl() { "$1" -c "import matplotlib" >/dev/null 2>&1; }
if [ -n "${PYTHON:-}" ]; then
  if has_mpl "$PYTHON"; then echo "$PYTHON"; exit 0; fi
  echo "find_python.sh: PYTHON=$PYTHON cannot import matplotlib (Debian: python3-matplotlib," \
       "installed by 'make deps'; or unset PYTHON)" >&2
  exit 1
fi
for p in python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null 2>&1 && has_mpl "$p"; then command -v "$p"; exit 0; fi
done
echo "find_python.sh: no python3 that can import matplotlib (tried python3 on PATH and" \
     "/usr/bin/python3); install Debian's python3-matplotlib ('make deps') or set PYTHON" >&2
exit 1
