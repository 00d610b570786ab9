#!/bin/sh
# run.sh: the runner of `make bench` (bench/cpu/README.md). The Makefile
# builds $B/bench/una_bench first, then runs this script, which
#   1. makes sure the peers can run: creates the virtual environment
#      bench/.venv and installs jax[cpu] and torch into it when they are
#      missing (saying so), or skips a peer that cannot be installed;
#   2. runs bench/cpu/peers.py once per peer (JSON lines into
#      $B/bench/cpu/peers.jsonl);
#   3. runs una_bench (Una and C, each measurement in its own process), which
#      merges the peers' lines and prints the table ($B/bench/cpu/table.md);
#      C is c_grads.c twice: gcc -O3 -march=native -fopenmp on all cores
#      (the table's C) and gcc -O2 single-threaded (the earlier baseline);
#      then the array programs' table (c_arrays.c: the matrix products
#      against OpenBLAS, a gather, RK4, a while loop), and the table of
#      their gradients (c_arrays.c: scalar losses of matvec, the gather and
#      RK4, and an MLP, against hand-written C gradients);
#   4. after a full run (no subset asked for), writes bench/cpu/RESULTS.md
#      with the date and the machine.
# Environment:
#   BENCH_N="100000 1000000"     sizes (default 100000 1000000 10000000)
#   BENCH_PROGRAMS=prod,dot      programs (default all; names in README.md)
#   BENCH_PEERS="jax torch"      peers to run; "none" for Una and C only
#   BENCH_REPS=5                 timed runs per measurement (median)
#   BENCH_SAVE=1 / 0             write RESULTS.md even after a subset / never
#   BENCH_PEER_TIMEOUT=1800      seconds allowed to each peer's process
#   BENCH_TIMEOUT=600            seconds allowed to one Una or C measurement
#   BENCH_VENV=bench/.venv       the virtual environment of the peers
# The exit status is una_bench's: 1 when Una's gradient differs from C's by
# more than 1e-9 or a Una or C measurement failed.
set -u
cd "$(dirname "$0")/../.." || exit 2

B=${B:-build}
BIN=$B/bench/una_bench
N=${BENCH_N:-"100000 1000000 10000000"}
PROGRAMS=${BENCH_PROGRAMS:-all}
PEERS=${BENCH_PEERS:-"jax torch"}
REPS=${BENCH_REPS:-5}
VENV=${BENCH_VENV:-bench/.venv}
PY=$VENV/bin/python
OUT=$B/bench/cpu
PEERS_FILE=$OUT/peers.jsonl
TABLE=$OUT/table.md

say() { echo "bench: $*" >&2; }

if [ ! -x "$BIN" ]; then
  say "$BIN is missing: run make B=$B bench"
  exit 2
fi
mkdir -p "$OUT"
: > "$PEERS_FILE"

# Other work on the machine skews every time here, PyTorch's most (its
# OpenMP threads wait for each other). The CPU time that other processes
# used during the run is measured (all CPU time in /proc/stat less this
# script's children's) and recorded in RESULTS.md; a warning is printed
# when it is more than 5% of the machine.
cpu_busy() { awk '/^cpu / {printf "%.2f\n", ($2 + $3 + $4 + $7 + $8 + $9) / '"$(getconf CLK_TCK 2>/dev/null || echo 100)"'}' /proc/stat 2>/dev/null; }
busy_start=$(cpu_busy)
wall_start=$(date +%s)

# A peer that cannot run gets a line saying why; una_bench prints it.
skip() { # peer reason
  say "skipping $1: $2"
  printf '{"peer": "%s", "skip": "%s"}\n' "$1" "$2" >> "$PEERS_FILE"
}

venv_ok=unknown
ensure_venv() {
  if [ "$venv_ok" = unknown ]; then
    venv_ok=no
    if [ -x "$PY" ]; then
      venv_ok=yes
    elif command -v python3 > /dev/null 2>&1; then
      say "creating the virtual environment $VENV for JAX and PyTorch (once)"
      python3 -m venv "$VENV" && venv_ok=yes
    fi
  fi
  [ "$venv_ok" = yes ]
}

install_peer() { # peer
  case $1 in
  jax)
    say "installing jax[cpu] into $VENV (once; about 150 MB)"
    "$PY" -m pip install --quiet "jax[cpu]"
    ;;
  torch)
    say "installing torch into $VENV from https://download.pytorch.org/whl/cpu (once; the CPU build)"
    if ! "$PY" -m pip install --quiet --retries 1 --timeout 30 torch \
        --index-url https://download.pytorch.org/whl/cpu; then
      say "the CPU wheel index cannot be used: installing torch from the default index instead" \
          "(the CUDA-enabled build, several GB, which computes on the CPU here)"
      "$PY" -m pip install --quiet torch
    fi
    ;;
  esac
}

for peer in $PEERS; do
  case $peer in
  none) continue ;;
  jax | torch) ;;
  *)
    say "unknown peer '$peer' (jax, torch or none)"
    exit 2
    ;;
  esac
  if ! ensure_venv; then
    skip "$peer" "no Python virtual environment (python3 -m venv $VENV failed or python3 is missing)"
    continue
  fi
  if ! "$PY" -c "import $peer" > /dev/null 2>&1; then
    install_peer "$peer"
    if ! "$PY" -c "import $peer" > /dev/null 2>&1; then
      skip "$peer" "pip could not install it into $VENV (see above)"
      continue
    fi
  fi
  say "running $peer (bench/cpu/peers.py)"
  timeout "${BENCH_PEER_TIMEOUT:-1800}" "$PY" bench/cpu/peers.py --peer "$peer" \
    --programs "$PROGRAMS" --n "$N" --reps "$REPS" >> "$PEERS_FILE"
  rc=$?
  [ $rc -eq 0 ] || say "$peer stopped early (status $rc); its missing rows show as -"
done

say "running Una and C ($BIN)"
"$BIN" --programs "$PROGRAMS" --n "$N" --reps "$REPS" --peers "$PEERS_FILE" \
  --timeout "${BENCH_TIMEOUT:-600}" > "$TABLE"
status=$?
cat "$TABLE"

others=unknown
if [ -n "$busy_start" ]; then
  busy_end=$(cpu_busy)
  wall=$(($(date +%s) - wall_start))
  times > "$OUT/times.txt" # in this shell: the second line is its children's user and system time
  mine=$(tail -n 1 "$OUT/times.txt" | awk '{n = 0; for (i = 1; i <= 2; i++) {split($i, a, "m"); n += a[1] * 60 + a[2]} print n}')
  others=$(awk -v b0="$busy_start" -v b1="$busy_end" -v m="$mine" -v w="$wall" -v c="$(nproc)" \
    'BEGIN {o = b1 - b0 - m; if (o < 0) o = 0; p = (w > 0) ? 100 * o / (w * c) : 0; printf "%.0f s of %d s x %d vCPUs (%.0f%%)", o, w, c, p}')
  if awk -v b0="$busy_start" -v b1="$busy_end" -v m="$mine" -v w="$wall" -v c="$(nproc)" \
      'BEGIN {exit !(w > 0 && (b1 - b0 - m) > 0.05 * w * c)}'; then
    say "warning: other processes used the CPU during the run ($others): timings are skewed"
  fi
fi

full=no
[ -z "${BENCH_N:-}${BENCH_PROGRAMS:-}${BENCH_PEERS:-}${BENCH_REPS:-}" ] && full=yes
save=${BENCH_SAVE:-$full}
[ "$save" = yes ] && save=1
if [ "$save" = 1 ] && [ -s "$TABLE" ]; then
  model=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n 1)
  mem=$(free -g 2>/dev/null | awk '/^Mem:/ {print $2}')
  commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
  if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
    commit="$commit (with uncommitted changes)"
  fi
  {
    echo "# CPU benchmark: latest results"
    echo
    echo "Written by \`make bench\` (bench/cpu/run.sh) after a full run; see README.md for what"
    echo "is measured and how."
    echo
    echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "- Machine: $(nproc) vCPUs, ${model:-unknown CPU}, ${mem:-?} GiB memory ($(uname -sr))"
    echo "- Una: commit $commit, built with $(${CC:-cc} --version 2>/dev/null | head -n 1)"
    echo "- CPU time used by other processes during the run: $others"
    echo "- Exit status of una_bench: $status"
    echo
    cat "$TABLE"
  } > bench/cpu/RESULTS.md
  say "wrote bench/cpu/RESULTS.md"
fi
exit $status
