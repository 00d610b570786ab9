#!/bin/sh
# compare.sh: Una's times before and after a change, measured in one run
# on one machine. Runs two una_bench binaries (built from two commits)
# alternately, ROUNDS times each, over the same programs and sizes, and
# prints the median of each one's Una primal and gradient times with their
# ratio, beside the C baselines of the second binary (the table's C, and
# the earlier gcc -O2 single-threaded C when it has that column).
#
#   sh bench/cpu/compare.sh OLD_BIN NEW_BIN [ROUNDS]
#
# BENCH_N, BENCH_PROGRAMS and BENCH_REPS select as for run.sh. An old
# binary's table has no C -O2 column of its own; its C is read only for the
# check that both binaries ran every row.
set -u
OLD=${1:?usage: compare.sh OLD_BIN NEW_BIN [ROUNDS]}
NEW=${2:?usage: compare.sh OLD_BIN NEW_BIN [ROUNDS]}
ROUNDS=${3:-3}
N=${BENCH_N:-"100000 1000000 10000000"}
PROGRAMS=${BENCH_PROGRAMS:-all}
REPS=${BENCH_REPS:-5}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# the main table's rows: "program n primal grad c c_o2" (c_o2 "-" when absent)
rows() { # table
  awk -F'|' '
    /^\| program / { for (i = 2; i < NF; i++) { gsub(/^ +| +$/, "", $i); col[$i] = i } next }
    /^\|---/ { next }
    /^\| [a-z_0-9]+ \| 10\^/ && ("Una primal ms" in col) {
      p = $2; n = $3; gsub(/ /, "", p); gsub(/ /, "", n)
      c2 = ("C -O2 1T ms" in col) ? $(col["C -O2 1T ms"]) : "-"
      printf "%s %s %s %s %s %s\n", p, n, $(col["Una primal ms"]), $(col["Una grad ms"]), $(col["C grad ms"]), c2
    }
    /^Checks and details/ { exit }' "$1" | awk '{ for (i = 1; i <= NF; i++) gsub(/ /, "", $i); print }'
}

r=1
while [ "$r" -le "$ROUNDS" ]; do
  for which in old new; do
    bin=$OLD
    [ "$which" = new ] && bin=$NEW
    "$bin" --programs "$PROGRAMS" --n "$N" --reps "$REPS" > "$TMP/$which.$r.md" 2> /dev/null
    rows "$TMP/$which.$r.md" > "$TMP/$which.$r.rows"
  done
  r=$((r + 1))
done

cat "$TMP"/old.*.rows | sed 's/^/old /' > "$TMP/all"
cat "$TMP"/new.*.rows | sed 's/^/new /' >> "$TMP/all"

echo "Una before ($OLD) and after ($NEW): medians of $ROUNDS alternating runs of each, ms."
echo
echo "| program | n | primal before | primal after | grad before | grad after | grad after/before | C grad | C -O2 1T | after/C | after/C -O2 1T |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
awk '
  function median(s,   a, k, t, i, j) {
    k = split(s, a, " ")
    for (i = 2; i <= k; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
  }
  {
    key = $2 " " $3
    if (!(key in seen)) { seen[key] = 1; order[++nk] = key }
    pr[$1, key] = pr[$1, key] " " $4; gr[$1, key] = gr[$1, key] " " $5
    if ($1 == "new") { c[key] = c[key] " " $6; if ($7 != "-") c2[key] = c2[key] " " $7 }
  }
  END {
    for (i = 1; i <= nk; i++) {
      key = order[i]; split(key, kk, " ")
      pb = median(pr["old", key]); pa = median(pr["new", key])
      gb = median(gr["old", key]); ga = median(gr["new", key])
      cc = median(c[key]); cc2 = (key in c2) ? median(c2[key]) : 0
      ratio = (gb > 0) ? ga / gb : 0; rc = (cc > 0) ? ga / cc : 0
      s2 = (cc2 > 0) ? sprintf("%.3g", cc2) : "-"; r2 = (cc2 > 0) ? sprintf("%.2f", ga / cc2) : "-"
      printf "| %s | %s | %.3g | %.3g | %.3g | %.3g | %.2f | %.3g | %s | %.2f | %s |\n", kk[1], kk[2], pb, pa, gb, ga,
             ratio, cc, s2, rc, r2
    }
  }' "$TMP/all"
