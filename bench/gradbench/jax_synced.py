"""jax_synced.py: GradBench's JAX tool, each timed call waiting for its
result.

    jax_synced.py GRADBENCH_RUN_PY [ARGS...]

GradBench's JAX tool times a jit-compiled call as it returns, and on the
CPU a call returns once its computation is dispatched, not done (JAX's
asynchronous dispatch); its timings can then be those of dispatching
only. This runs the same tool (GRADBENCH_RUN_PY, its tools/jax/run.py)
with GradBench's timing wrappers (gradbench.wrap.function and
multiple_runs) given a function that calls jax.block_until_ready on the
tool's result, inside the timed region: the timings are then those of the
computation, as JAX's documentation asks benchmarks to measure.
"""

import os
import runpy
import sys

import jax
from gradbench import wrap


def _synced(f):
    def call(*args, **kwargs):
        return jax.block_until_ready(f(*args, **kwargs))

    return call


def _sync_decorator(make):
    def patched(*args, **kwargs):
        decorate = make(*args, **kwargs)
        return lambda f: decorate(_synced(f))

    return patched


wrap.function = _sync_decorator(wrap.function)
wrap.multiple_runs = _sync_decorator(wrap.multiple_runs)

if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    path = sys.argv[1]
    sys.argv = [path] + sys.argv[2:]
    sys.path[0] = os.path.dirname(os.path.abspath(path))  # as when run as a script: its modules import
    runpy.run_path(path, run_name="__main__")
