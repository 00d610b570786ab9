#!/bin/sh
# run.sh: the runner of the GPU benchmark (bench/gpu/README.md), for the
# machine with the GPU:
#   1. runs bench/gpu/peers_gpu.py (JAX, PyTorch and the copy baseline, each
#      in its own process; JSON lines into $B/bench/gpu/peers.jsonl);
#   2. runs $B/bench/una_gpu_bench with those lines, which times Una, prints
#      the table and writes bench/gpu/RESULTS.md.
# Environment:
#   B=build/gpu                  where the binaries are (make gpu-bundle)
#   BENCH_N="2^20 2^24"          sizes (default 2^20 2^22 2^24 2^26 2^28)
#   BENCH_PROGRAMS=prod,dot      programs (default all: prod logsumexp dot bce map_heavy)
#   BENCH_PEERS="jax torch copy" peers to run (the default); "none" for Una only
#   BENCH_REPS=10                timed runs per measurement (median; default 10)
#   BENCH_PYTHON=python3         the Python that has JAX and PyTorch (default python3)
#   BENCH_PEER_TIMEOUT=3600      seconds allowed to the peers in all
# The exit status is una_gpu_bench's; 2 when it is missing.
set -u
cd "$(dirname "$0")/../.." || exit 2

B=${B:-build/gpu}
BIN=$B/bench/una_gpu_bench
N=${BENCH_N:-"2^20 2^22 2^24 2^26 2^28"}
PROGRAMS=${BENCH_PROGRAMS:-all}
PEERS=${BENCH_PEERS:-"jax torch copy"}
REPS=${BENCH_REPS:-10}
PY=${BENCH_PYTHON:-python3}
OUT=$B/bench/gpu
PEERS_FILE=$OUT/peers.jsonl

say() { echo "bench: $*" >&2; }

# The sizes as plain integers (2^20 -> 1048576, 1e6 -> 1000000), for both programs.
SIZES=$(echo "$N" | tr ',' ' ' | awk '{
  for (k = 1; k <= NF; k++) {
    w = $k
    if (w ~ /^[0-9]+\^[0-9]+$/) { split(w, p, "^"); v = p[1] ^ p[2] }
    else if (w ~ /^[0-9]+(\.[0-9]*)?([eE][0-9]+)?$/) v = w + 0
    else v = 0
    if (v < 1) { print "bench: bad size in BENCH_N: " w > "/dev/stderr"; exit 1 }
    printf "%s%.0f", (k > 1 ? " " : ""), v
  }
}') || exit 2

mkdir -p "$OUT"
: > "$PEERS_FILE"
peers=$(echo "$PEERS" | tr ',' ' ' | tr -s ' ')
if [ "$peers" != none ]; then
  if ! command -v "$PY" > /dev/null 2>&1; then
    say "$PY not found: no peers (set BENCH_PYTHON)"
    for p in $peers; do printf '{"peer": "%s", "skip": "%s not found"}\n' "$p" "$PY" >> "$PEERS_FILE"; done
  else
    say "running the peers ($peers) with $PY bench/gpu/peers_gpu.py"
    to=""
    command -v timeout > /dev/null 2>&1 && to="timeout ${BENCH_PEER_TIMEOUT:-3600}"
    $to "$PY" bench/gpu/peers_gpu.py --peer "$peers" \
      --programs "$PROGRAMS" --n "$SIZES" --reps "$REPS" >> "$PEERS_FILE"
    rc=$?
    [ $rc -eq 0 ] || say "the peers stopped early (status $rc); their missing rows show as -"
  fi
fi

if [ ! -x "$BIN" ]; then
  say "$BIN is missing (Una's GPU driver; built by make gpu-bundle once bench/gpu/una_gpu_bench.c exists)"
  say "the peers' lines are in $PEERS_FILE:"
  cat "$PEERS_FILE"
  exit 2
fi
say "running Una ($BIN)"
"$BIN" --programs "$PROGRAMS" --n "$SIZES" --reps "$REPS" --peers "$PEERS_FILE"
