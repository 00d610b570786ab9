#!/bin/sh
# session.sh: the GPU checks of a session lent a GPU, in one command, for
# the device machine (DEVELOPERS.md, "Commands on the GPU machine"). Run
# from the checkout's root, with the bundle (make gpu-bundle) carried:
#   OUT=dir sh bench/gpu/session.sh [probe] [check] [bench]
# Each step writes its log to $OUT (default /tmp/una-gpu) as it goes, and
# runs under its own time limit, so that a step that hangs leaves the
# others' results:
#   probe   the card, the driver, NVRTC and one small program on the GPU
#   check   build/gpu/check_gpu (CHECK_S seconds, default 240)
#   bench   bench/gpu/run.sh (BENCH_S seconds, default 240; BENCH_N etc.
#           as in bench/gpu/README.md), RESULTS.md copied to $OUT
set -u
cd "$(dirname "$0")/../.." || exit 2
OUT=${OUT:-/tmp/una-gpu}
B=${B:-build/gpu}
mkdir -p "$OUT"
steps=${*:-probe check bench}
export UNA_ROOT="$PWD"
# NVRTC: the toolkit's, or the Python wheel's, where the loader finds neither.
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib \
         $(ls -d /opt/torch/.venv/lib/python3*/site-packages/nvidia/cu*/lib 2>/dev/null); do
  [ -d "$d" ] && LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d"
done
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}"

for s in $steps; do
  case $s in
  probe)
    {
      date -u; nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv 2>&1
      echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
      ls /usr/local/cuda/lib64/libnvrtc* 2>&1 | head -5
      printf 'def f (a: [R]) = sum (map (x. x * x) a)\n:device gpu\n:device\nf (iota 1000000)\ngrad f (iota 5)\n' |
        UNA_CACHE_DIR="$OUT/cache-probe" timeout 60 "$B/una" 2>&1
      echo "probe rc=$?"
      rm -rf "$OUT/cache-probe"
    } > "$OUT/probe.log" 2>&1
    ;;
  check)
    timeout "${CHECK_S:-240}" "$B/check_gpu" > "$OUT/check_gpu.log" 2>&1
    echo "check_gpu rc=$?" >> "$OUT/check_gpu.log"
    ;;
  bench)
    B=$B timeout "${BENCH_S:-240}" sh bench/gpu/run.sh > "$OUT/bench.log" 2>&1
    echo "bench rc=$?" >> "$OUT/bench.log"
    cp bench/gpu/RESULTS.md "$OUT/RESULTS.md" 2>/dev/null
    cp "$B/bench/gpu/peers.jsonl" "$OUT/peers.jsonl" 2>/dev/null
    ;;
  *) echo "session.sh: unknown step $s" >&2; exit 2 ;;
  esac
  tail -5 "$OUT/$( [ $s = check ] && echo check_gpu || echo $s).log"
done
