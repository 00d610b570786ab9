#!/bin/sh
# coverage.sh BUILD DIR...: the line coverage of each source folder DIR
# (its .c files, sub-folders included) from the gcov counters of the
# coverage build BUILD (make fuzz-coverage), and of them all together.
# A file the run never reached counts with all its lines unexecuted.
set -eu
build=$1
shift
total_run=0
total_all=0
for dir in "$@"; do
  run=0
  all=0
  for src in $(find "$dir" -name '*.c' | sort); do
    obj=$build/$(dirname "$src")
    [ -f "$build/${src%.c}.gcno" ] || continue
    # gcov -n: no .gcov files; the summary of the source itself only
    line=$(cd "$obj" && gcov -n "$(basename "$src")" -o . 2>/dev/null |
           awk -v f="$src" '/^File /{ok = index($0, f) > 0} ok && /^Lines executed/{print; exit}')
    case "$line" in
      *"of "*)
        pct=${line#*:}; pct=${pct%%%*}
        n=${line##*of }
        ;;
      *)  # not run at all: count its lines from the notes file
        pct=0
        n=$(cd "$obj" && gcov -n "$(basename "$src")" -o . 2>/dev/null | awk '/^Lines executed/{print $NF; exit}')
        n=${n:-0}
        ;;
    esac
    run=$(awk -v r="$run" -v p="$pct" -v n="$n" 'BEGIN{printf "%.0f", r + p * n / 100}')
    all=$((all + n))
  done
  total_run=$((total_run + run))
  total_all=$((total_all + all))
  awk -v d="$dir" -v r="$run" -v a="$all" 'BEGIN{printf "%-10s %6d of %6d lines  %5.1f%%\n", d, r, a, a ? 100 * r / a : 0}'
done
awk -v r="$total_run" -v a="$total_all" 'BEGIN{printf "%-10s %6d of %6d lines  %5.1f%%\n", "all", r, a, a ? 100 * r / a : 0}'
