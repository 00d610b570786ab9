#!/bin/sh
# run.sh: the runner of `make bench-deriv` (bench/deriv/README.md): Una's
# derivative operators (deriv_bench), then JAX's and PyTorch's
# (peers_deriv.py, from bench/.venv when it has them), the table of all
# three (table.py) into $B/bench/deriv/table.md, and with BENCH_SAVE=1 into
# bench/deriv/RESULTS.md with the date and the machine.
#   BENCH_REPS=11      timed calls per measurement (median)
#   BENCH_PEERS="jax torch"  peers to run; "none" for Una only
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${B:-build}
REPS=${BENCH_REPS:-11}
PEERS=${BENCH_PEERS:-"jax torch"}
VENV=${BENCH_VENV:-bench/.venv}
PY=$VENV/bin/python
OUT=$B/bench/deriv
mkdir -p "$OUT"
"$B/bench/deriv_bench" "$REPS" > "$OUT/una.jsonl" || { echo "bench-deriv: deriv_bench failed" >&2; exit 1; }
: > "$OUT/peers.jsonl"
for peer in $PEERS; do
  [ "$peer" = none ] && continue
  if [ -x "$PY" ]; then
    "$PY" bench/deriv/peers_deriv.py --peer "$peer" --reps "$REPS" >> "$OUT/peers.jsonl" ||
      echo "bench-deriv: $peer failed" >&2
  else
    echo "bench-deriv: no $PY (make bench creates it): $peer skipped" >&2
  fi
done
PYT=python3
[ -x "$PY" ] && PYT=$PY
"$PYT" bench/deriv/table.py "$OUT/una.jsonl" "$OUT/peers.jsonl" > "$OUT/table.md"
cat "$OUT/table.md"
if [ "${BENCH_SAVE:-0}" = 1 ]; then
  {
    echo "# Derivative operators: results"
    echo
    echo "Measured $(date -u +%Y-%m-%d) on $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //') ($(nproc) cores), all tools in one run (\`make bench-deriv\`, BENCH_REPS=$REPS); milliseconds, median of the calls after warm-up."
    echo
    cat "$OUT/table.md"
  } > bench/deriv/RESULTS.md
fi
