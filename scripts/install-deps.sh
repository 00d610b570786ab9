#!/bin/sh
# install-deps.sh: makes sure the build's libraries are present: Boehm GC,
# GNU readline, OpenBLAS, Check, SLEEF, Jansson and pkg-config, and a C++ compiler, from
# Debian's packages. Does nothing when they are already installed.
set -eu
missing=""
have_pc() { command -v pkg-config >/dev/null 2>&1 && pkg-config --exists "$1"; }
command -v pkg-config >/dev/null 2>&1 || missing="$missing pkg-config"
have_pc bdw-gc   || missing="$missing libgc-dev"
have_pc readline || missing="$missing libreadline-dev"
# OpenBLAS (cblas.h and the library, found by the Makefile through its
# pkg-config file): the matrix products (backend/blas.c)
have_pc openblas || missing="$missing libopenblas-dev"
have_pc check    || missing="$missing check"
# Jansson, the JSON of the GradBench protocol (una --gradbench)
have_pc jansson  || missing="$missing libjansson-dev"
# SLEEF, the vector math of the CPU kernels: by its header (a pkg-config
# file is not promised)
have_header() { printf '#include <%s>\n' "$1" | "${CC:-cc}" -E -x c - >/dev/null 2>&1; }
have_header sleef.h || missing="$missing libsleef-dev"
# a C++ compiler: make check runs the GPU kernels on the host (check-gpu-host)
command -v "${UNA_HOST_CXX:-c++}" >/dev/null 2>&1 || missing="$missing g++"
# Optional: Graphviz's dot, with which make check also checks that
# `:show STAGE f --dot` is a graph it reads (without it, that part is
# skipped); tried when root, never a failure.
if ! command -v dot >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq graphviz; } >/dev/null 2>&1 ||
    echo "install-deps: graphviz not installed (optional: make check skips running dot)" >&2
fi
[ -z "$missing" ] && exit 0
echo "install-deps: missing:$missing"
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO=sudo
  else
    echo "install-deps: not root; install them with:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y$missing" >&2
    exit 1
  fi
else
  SUDO=""
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-deps: no apt-get here; install these with your package manager:$missing" >&2
  exit 1
fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing
