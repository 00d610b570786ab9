#!/bin/sh
# embed.sh NAME FILE: prints a C file defining `const char NAME[]` holding
# FILE's text, so that the prelude is part of the binary.
set -eu
name=$1
file=$2
printf '/* Generated from %s by scripts/embed.sh; do not edit. */\n' "$file"
printf 'const char %s[] =\n' "$name"
sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/  "/' -e 's/$/\\n"/' "$file"
printf '  ;\n'
