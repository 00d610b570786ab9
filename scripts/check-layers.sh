#!/bin/sh
# check-layers.sh [ROOT | --self-test]: fails when an #include "..." in the compiler's
# sources (ROOT, default the current directory) crosses the folder arrows
# of DESIGN.md's layout (ir <- unf <- reverse; optimizer and backend see
# only the IR; only the driver sees everything):
#
#   frontend/ir/     the IR (terms, types, primitives, printers): only itself
#   frontend/*.[ch]  the stages (lexer, parser, checker, inliner): the IR and
#                    each other, never the driver (frontend/repl/)
#   unf/             the IR (and the frontend stages)
#   reverse/         unf/, the IR, the frontend stages
#   forward/         reverse/ (its table of partial derivatives), the IR, the
#                    frontend stages
#   derive/          the derivative operators: reverse/, forward/, unf/, the
#                    IR, the frontend stages
#   optimizer/       the IR, less the exceptions below
#   backend/         (backend/cuda/ too) the IR
#   frontend/repl/   the driver: everything (frontend/gradbench/ too: the
#                    GradBench tool is a driver of sessions)
#
# A folder may always include its own files (backend/ and backend/cuda/
# count as one folder). Each exception is one include of one file, listed
# in EXCEPTIONS with its reason; an exception no longer used is an error
# too, so that the list stays true. --self-test runs the script on a copy
# of the tree with forbidden includes added and fails unless it names each
# of them. `make check` runs both.
set -eu

if [ "${1:-}" = --self-test ]; then
  me=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
  cd "$(dirname "$me")/.."
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  cp -R frontend unf forward reverse derive optimizer backend "$tmp"/
  echo '#include "../reverse/jt.h"' >>"$tmp/unf/ctx.c"
  echo '#include "../check.h"' >>"$tmp/frontend/ir/term.h"
  echo '#include "repl/session.h"' >>"$tmp/frontend/inline.c"
  echo '#  include "../../optimizer/opt.h" /* spaced */' >>"$tmp/backend/cuda/plan.c"
  echo '#include "../frontend/./repl/../check.h"' >>"$tmp/optimizer/dce.c"
  sed -e '/backend\/scalar\.h/d' "$tmp/optimizer/algebra.c" >"$tmp/a.c" && mv "$tmp/a.c" "$tmp/optimizer/algebra.c"
  if out=$(sh "$me" "$tmp" 2>&1); then
    echo "check-layers --self-test: a tree with forbidden includes passed" >&2
    exit 1
  fi
  for want in 'unf/ctx.c includes reverse/jt.h' 'frontend/ir/term.h includes frontend/check.h' \
      'frontend/inline.c includes frontend/repl/session.h' 'backend/cuda/plan.c includes optimizer/opt.h' \
      'optimizer/dce.c includes frontend/check.h' "exception 'optimizer/algebra.c -> backend/scalar.h' is not used"; do
    if ! printf '%s\n' "$out" | grep -qF "$want"; then
      printf 'check-layers --self-test: no complaint "%s" in:\n%s\n' "$want" "$out" >&2
      exit 1
    fi
  done
  if [ "$(printf '%s\n' "$out" | wc -l)" -ne 6 ]; then
    printf 'check-layers --self-test: other complaints than the 6 expected:\n%s\n' "$out" >&2
    exit 1
  fi
  echo "check-layers --self-test: forbidden includes are caught"
  exit 0
fi

root=${1:-.}
cd "$root"

# FILE -> HEADER, with the reason (a comment) on the line above.
EXCEPTIONS='
# constant folding computes with the evaluator'"'"'s own scalar functions, so
# that a folded constant is bit-identical to the value the program computes
optimizer/algebra.c -> backend/scalar.h
# figure 11'"'"'s cost vector is the one the evaluator'"'"'s meter counts (CpuCost);
# the optimizer compares costs of gradients and their programs in it
optimizer/cost.h -> backend/cost_meter.h
# small functions are inlined before optimizing (a decision by size that is
# the optimizer'"'"'s), with the frontend'"'"'s one inliner
optimizer/program.c -> frontend/inline.h
'

# The folder a source file belongs to, for the rules.
layer_of() {
  case $1 in
    frontend/ir/*) echo ir ;;
    frontend/repl/*) echo driver ;;
    frontend/gradbench/*) echo driver ;;
    frontend/*/*) echo unknown ;;
    frontend/*) echo stage ;;
    unf/*) echo unf ;;
    reverse/*) echo reverse ;;
    forward/*) echo forward ;;
    derive/*) echo derive ;;
    optimizer/*) echo optimizer ;;
    backend/*) echo backend ;;
    *) echo outside ;;
  esac
}

# The folder of a layer, for messages.
folder_of() {
  case $1 in
    ir) echo frontend/ir/ ;;
    driver) echo frontend/repl/ ;;
    stage) echo "frontend/ (a stage)" ;;
    *) echo "$1/" ;;
  esac
}

# Whether layer $1 may include a file of layer $2.
allowed() {
  [ "$1" = "$2" ] && return 0
  case $1:$2 in
    driver:*) return 0 ;;
    stage:ir) return 0 ;;
    unf:ir | unf:stage) return 0 ;;
    reverse:unf | reverse:ir | reverse:stage) return 0 ;;
    forward:reverse | forward:ir | forward:stage) return 0 ;;
    derive:forward | derive:reverse | derive:unf | derive:ir | derive:stage) return 0 ;;
    optimizer:ir) return 0 ;;
    backend:ir) return 0 ;;
  esac
  return 1
}

# "a/b/../c/./d.h" -> "a/c/d.h"
normalize() {
  printf '%s\n' "$1" | sed -e 's|/\./|/|g' -e 's|^\./||' \
    -e ':again' -e 's|[^/][^/]*/\.\./||' -e 't again'
}

status=0
used=''
files=$(find frontend unf forward reverse derive optimizer backend -type f \( -name '*.c' -o -name '*.h' -o -name '*.def' \) | sort)
for f in $files; do
  from=$(layer_of "$f")
  if [ "$from" = unknown ]; then
    echo "check-layers: $f: a folder of frontend/ that the layering does not know (add it to scripts/check-layers.sh)" >&2
    status=1
    continue
  fi
  dir=$(dirname "$f")
  incs=$(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
  for inc in $incs; do
    target=$(normalize "$dir/$inc")
    to=$(layer_of "$target")
    allowed "$from" "$to" && continue
    if printf '%s\n' "$EXCEPTIONS" | grep -qxF "$f -> $target"; then
      used="$used
$f -> $target"
      continue
    fi
    echo "check-layers: $f includes $target: $(folder_of "$from") may not include $(folder_of "$to") (DESIGN.md's layout; scripts/check-layers.sh)" >&2
    status=1
  done
done

# Every exception must still be needed.
printf '%s\n' "$EXCEPTIONS" | grep -v '^#' | grep -e ' -> ' | while read -r line; do
  if ! printf '%s\n' "$used" | grep -qxF "$line"; then
    echo "check-layers: the exception '$line' is not used any more: remove it from scripts/check-layers.sh" >&2
    exit 1
  fi
done || status=1

if [ "$status" -eq 0 ]; then
  echo "check-layers: the includes follow the layers ($(printf '%s\n' "$used" | grep -c ' -> ') listed exceptions)"
fi
exit "$status"
