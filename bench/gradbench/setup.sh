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
