#!/bin/sh
# setup.sh GRADBENCH_DIR VENV: prepares a copy of GradBench's source
# (github.com/gradbench/gradbench) and the Python environment VENV for
# run.py: GradBench's Python package (its evals and validators) with what it
# imports, JAX and PyTorch for their tools, and GradBench's C++ `manual`
# tool built in GRADBENCH_DIR/tools/manual. Does what is missing only.
set -eu
gb=${1:?usage: setup.sh GRADBENCH_DIR VENV}
venv=${2:?usage: setup.sh GRADBENCH_DIR VENV}
if [ ! -d "$gb/python/gradbench/gradbench/evals" ]; then
  echo "setup.sh: $gb is not a copy of GradBench's source; get one with" >&2
  echo "  git clone https://github.com/gradbench/gradbench $gb" >&2
  exit 1
fi
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
py="$venv/bin/python"
"$py" -c "import gradbench.eval, pydantic, dataclasses_json, scipy" 2>/dev/null ||
  "$venv/bin/pip" install -q pydantic numpy scipy dataclasses-json -e "$gb/python/gradbench"
"$py" -c "import jax" 2>/dev/null || "$venv/bin/pip" install -q "jax[cpu]"
"$py" -c "import torch" 2>/dev/null ||
  "$venv/bin/pip" install -q torch --index-url https://download.pytorch.org/whl/cpu
# GradBench's C++ tools include cpp/json.hpp (nlohmann/json), which its
# cpp/Makefile downloads; Debian's nlohmann-json3-dev has the same header.
if [ ! -f "$gb/cpp/json.hpp" ]; then
  if [ -f /usr/include/nlohmann/json.hpp ]; then
    cp /usr/include/nlohmann/json.hpp "$gb/cpp/json.hpp"
  else
    make -C "$gb/cpp" json.hpp
  fi
fi
make -s -C "$gb/tools/manual" -j2 all
# The lstm eval draws its inputs from a text, evals/lstm/data/lstm_full.txt,
# which some copies of GradBench lack (a large file kept outside git's
# objects). A stand-in made of GradBench's own ASCII documentation serves
# (only the characters' codes matter; bench/gradbench/README.md).
txt="$gb/evals/lstm/data/lstm_full.txt"
if [ ! -s "$txt" ]; then
  echo "setup.sh: $txt is missing; writing a stand-in from GradBench's documentation" >&2
  mkdir -p "$(dirname "$txt")"
  (cd "$gb" && cat CONTRIBUTING.md evals/ba/README.md evals/det/README.md evals/gmm/README.md \
      evals/hello/README.md evals/ht/README.md evals/llsq/README.md evals/lse/README.md \
      evals/lstm/README.md evals/ode/README.md) > "$txt"
fi
