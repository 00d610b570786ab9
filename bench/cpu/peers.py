#!/usr/bin/env python3
"""peers.py: JAX and PyTorch times for the CPU benchmark suite (bench/cpu/README.md).

    peers.py --peer jax|torch [--programs prod,dot,...] [--n "100000 1000000"] [--reps 5]

For every program and size it builds the same inputs as c_grads.c (formulas
of the index i), then times the gradient with respect to every parameter,
median of REPS calls after one warm-up call (the array programs of
c_arrays.c, at their one size each, are timed as they are, no gradient:
JAX jit, PyTorch under torch.no_grad(); their gradient programs, scalar
losses of them and an MLP, get the gradient with respect to the arguments
of GRAD_ARRAY_PROGRAMS):
  jax    jax.jit(jax.grad(f, argnums=(0, 1, ...))), float64, result
         waited for with jax.block_until_ready;
  torch  forward + backward, float64: torch.autograd.grad(f(*xs), xs) with
         leaf tensors that require grad; torch.set_num_threads left as it is.
It prints JSON lines on stdout, which una_bench merges into its table:
  {"peer": P, "version": V, "threads": T}                 first
  {"peer": P, "program": NAME, "n": N, "ms": MS, "gabs": S}  S = sum |gradient|
  {"peer": P, "program": NAME, "n": N, "error": MSG}      when it failed
  {"peer": P, "skip": MSG}                                 when P cannot be imported
"""
import argparse
import gc
import json
import statistics
import sys
import time

import numpy as np

PROGRAMS = ["prod", "dot", "logsumexp", "softmax_xent", "bce", "linreg", "horner",
            "map_heavy", "lets16"]
# The array programs (c_arrays.c) and the size that names each one's line.
ARRAY_PROGRAMS = {"matvec": 2000, "matmul": 1000, "gather": 10**7, "rk4": 10**5, "while": 10**7}
# The gradient programs (c_arrays.c): the size that names each one's line,
# and the arguments that the gradient is taken with respect to.
GRAD_ARRAY_PROGRAMS = {"matvec_grad": (2000, (0, 1)), "gather_grad": (10**7, (0,)),
                       "rk4_grad": (10**5, (0,)), "mlp_grad": (256, (0, 1, 2, 3))}
MLP_B, MLP_IN, MLP_HID, MLP_OUT = 256, 784, 128, 10


def emit(obj):
    print(json.dumps(obj), flush=True)


def base(n):
    """u(i), v(i) of c_grads.c, bit for bit."""
    i = np.arange(n, dtype=np.int64)
    u = ((i * 7919) % 10007) / 10007.0
    v = ((i * 104729 + 12345) % 10009) / 10009.0
    return u, v


def inputs(name, n):
    """The arguments of program name at size n (floats for R, arrays for [R])."""
    u, v = base(n)
    if name == "prod":
        return [1.0 + (u - 0.5) * 1e-6]
    if name == "dot":
        return [u, v]
    if name == "logsumexp":
        return [10.0 * u]
    if name == "softmax_xent":
        return [4.0 * u - 2.0, v / np.cumsum(v)[-1]]  # cumsum: C's sequential sum
    if name == "bce":
        return [8.0 * u - 4.0, v]
    if name == "linreg":
        x = 4.0 * u - 2.0
        return [0.7, -0.3, x, 0.5 * x + (v - 0.5)]
    if name == "horner":
        return [0.99, u - 0.5]
    if name == "map_heavy":
        return [4.0 * u - 2.0]
    if name == "lets16":
        return [0.5 + 0.5 * u, 0.5 + 0.5 * v]
    raise ValueError(name)


def mix(k):
    """splitmix64's output function, as c_arrays.c (uint64 arithmetic wraps)."""
    z = k.astype(np.uint64) + np.uint64(0x9e3779b97f4a7c15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xbf58476d1ce4e5b9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94d049bb133111eb)
    return z ^ (z >> np.uint64(31))


def array_inputs(name):
    """The arguments of the array program name, as c_arrays.c builds them
    (the gather's indices as integers, as these libraries index)."""
    n = ARRAY_PROGRAMS[name]
    if name == "matvec":
        u, _ = base(n * n)
        _, v = base(n)
        return [(u - 0.5).reshape(n, n), v]
    if name == "matmul":
        u, v = base(n * n)
        return [(u - 0.5).reshape(n, n), (v - 0.5).reshape(n, n)]
    if name == "gather":
        u, _ = base(10**6)
        with np.errstate(over="ignore"):
            idx = (mix(np.arange(n, dtype=np.uint64)) % np.uint64(10**6)).astype(np.int64)
        return [u, idx]
    if name == "rk4":
        u, _ = base(n)
        return [0.1 + 0.8 * u, 0.01]
    if name == "while":
        return [0.5, float(n)]
    raise ValueError(name)


def grad_array_inputs(name):
    """The arguments of the gradient program name, as c_arrays.c builds them."""
    if name in ("matvec_grad", "gather_grad", "rk4_grad"):
        return array_inputs(name[:-len("_grad")])
    if name == "mlp_grad":
        def u(n, off=0):
            return base(n + off)[0][off:]
        def v(n, off=0):
            return base(n + off)[1][off:]
        return [(0.1 * (u(MLP_HID * MLP_IN) - 0.5)).reshape(MLP_HID, MLP_IN),
                0.1 * (v(MLP_HID) - 0.5),
                (0.5 * (u(MLP_OUT * MLP_HID, 1) - 0.5)).reshape(MLP_OUT, MLP_HID),
                0.1 * (v(MLP_OUT, 1) - 0.5),
                v(MLP_B * MLP_IN).reshape(MLP_B, MLP_IN)]
    raise ValueError(name)


def lets16_body(a, b):
    """Example 1.1 scaled up: 16 lets, as in c_grads.c."""
    w_prev = a * b               # w1
    w = w_prev * a               # w2
    for _ in range(3, 17):       # w3 .. w16
        w_prev, w = w, (w * a + w_prev * b) * 0.5
    return w


def jax_functions():
    import jax
    import jax.numpy as jnp
    from jax.scipy.special import logsumexp

    def horner(x, cs):
        acc, _ = jax.lax.scan(lambda acc, c: (acc * x + c, None), jnp.zeros((), cs.dtype), cs)
        return acc

    def heavy(a):
        t = 1 + a * a
        return jnp.sum(jnp.exp(jnp.sin(a)) * jnp.log(t) + jnp.tanh(a) * jnp.power(t, 0.75))

    def bce(w, y):
        s = jax.nn.sigmoid(w)
        return -jnp.sum(y * jnp.log(s) + (1 - y) * jnp.log(1 - s))

    return {
        "prod": lambda a: jnp.prod(a),
        "dot": lambda a, b: jnp.dot(a, b),
        "logsumexp": lambda a: logsumexp(a),
        "softmax_xent": lambda z, y: logsumexp(z) - jnp.dot(y, z),
        "bce": bce,
        "linreg": lambda w, b, x, y: jnp.sum((w * x + b - y) ** 2) / x.shape[0],
        "horner": horner,
        "map_heavy": heavy,
        "lets16": lambda x1, x2: jnp.sum(lets16_body(x1, x2)),
    }


def torch_functions():
    import torch

    def horner(x, cs):
        # foldl as a Python loop would build 10^7 autograd nodes; the
        # vectorised closed form sum_i cs_i x^(n-1-i) is what a PyTorch user writes.
        n = cs.shape[0]
        k = torch.arange(n - 1, -1, -1, dtype=cs.dtype)
        return torch.sum(cs * x ** k)

    def heavy(a):
        t = 1 + a * a
        return torch.sum(torch.exp(torch.sin(a)) * torch.log(t) + torch.tanh(a) * torch.pow(t, 0.75))

    def bce(w, y):
        s = torch.sigmoid(w)
        return -torch.sum(y * torch.log(s) + (1 - y) * torch.log(1 - s))

    return {
        "prod": lambda a: torch.prod(a),
        "dot": lambda a, b: torch.dot(a, b),
        "logsumexp": lambda a: torch.logsumexp(a, 0),
        "softmax_xent": lambda z, y: torch.logsumexp(z, 0) - torch.dot(y, z),
        "bce": bce,
        "linreg": lambda w, b, x, y: torch.sum((w * x + b - y) ** 2) / x.shape[0],
        "horner": horner,
        "map_heavy": heavy,
        "lets16": lambda x1, x2: torch.sum(lets16_body(x1, x2)),
    }


def rk4_step(y, h):
    """One RK4 step of y' = y (1 - y), as c_arrays.c."""
    def rhs(v):
        return v * (1 - v)
    k1 = rhs(y)
    k2 = rhs(y + 0.5 * h * k1)
    k3 = rhs(y + 0.5 * h * k2)
    k4 = rhs(y + h * k3)
    return y + h / 6 * ((k1 + 2 * k2 + 2 * k3) + k4)


def jax_array_functions():
    import jax
    import jax.numpy as jnp

    def rk4(y0, h):
        return jax.lax.fori_loop(0, 100, lambda i, y: rk4_step(y, h), y0)

    def while_(x0, n):
        def body(c):
            x, k = c
            return (0.9 * x + 0.1 / (1 + x * x), k + 1)
        return jax.lax.while_loop(lambda c: c[1] < n, body, (x0, jnp.zeros((), x0.dtype)))[0]

    return {
        "matvec": lambda m, x: jnp.dot(m, x),
        "matmul": lambda a, b: jnp.matmul(a, b),
        "gather": lambda a, idx: a[idx],
        "rk4": rk4,
        "while": while_,
    }


def jax_grad_array_functions():
    """The losses of the gradient programs (c_arrays.c), for jax.grad."""
    import jax
    import jax.numpy as jnp

    def rk4(y0, h):
        return jnp.sum(jax.lax.fori_loop(0, 100, lambda i, y: rk4_step(y, h), y0))

    def mlp(w1, b1, w2, b2, x):
        return jnp.sum((jnp.tanh(x @ w1.T + b1) @ w2.T + b2) ** 2)

    return {
        "matvec_grad": lambda m, x: jnp.sum(jnp.dot(m, x) ** 2),
        "gather_grad": lambda a, idx: jnp.sum(a[idx] * a[idx]),
        "rk4_grad": rk4,
        "mlp_grad": mlp,
    }


def torch_grad_array_functions():
    """The losses of the gradient programs, for torch.autograd.grad."""
    import torch

    def rk4(y0, h):
        y = y0
        for _ in range(100):
            y = rk4_step(y, h)
        return torch.sum(y)

    def mlp(w1, b1, w2, b2, x):
        return torch.sum((torch.tanh(x @ w1.T + b1) @ w2.T + b2) ** 2)

    return {
        "matvec_grad": lambda m, x: torch.sum(torch.mv(m, x) ** 2),
        "gather_grad": lambda a, idx: torch.sum(a[idx] * a[idx]),
        "rk4_grad": rk4,
        "mlp_grad": mlp,
    }


def torch_array_functions():
    import torch

    def rk4(y0, h):
        y = y0
        for _ in range(100):
            y = rk4_step(y, h)
        return y

    return {
        "matvec": lambda m, x: torch.mv(m, x),
        "matmul": lambda a, b: torch.mm(a, b),
        "gather": lambda a, idx: a[idx],
        "rk4": rk4,
        # a Python loop of 10^7 iterations over scalar tensors is not how
        # one would write it in PyTorch, which has no compiled scalar loop
        "while": None,
    }


QUICK_MS, QUICK_REPS = 20.0, 50  # as una_bench.c: quick array programs get more runs


def timed(call, reps, quick=False):
    """Median ms of reps calls after a warm-up call, and the last result
    (QUICK_REPS calls when quick and the warm-up took less than QUICK_MS)."""
    t0 = time.perf_counter()
    out = call()
    if quick and (time.perf_counter() - t0) * 1e3 < QUICK_MS:
        reps = QUICK_REPS
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        out = call()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), out


def run_jax(programs, array_programs, sizes, reps, grad_programs=()):
    import jax
    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_platforms", "cpu")
    import jax.numpy as jnp
    fns = jax_functions()
    emit({"peer": "jax", "version": jax.__version__, "devices": str(jax.devices())})
    for name in programs:
        f = fns[name]
        for n in sizes:
            try:
                args = [jnp.asarray(a, dtype=jnp.float64) for a in inputs(name, n)]
                g = jax.jit(jax.grad(f, argnums=tuple(range(len(args)))))
                ms, out = timed(lambda: jax.block_until_ready(g(*args)), reps)
                gabs = float(sum(np.sum(np.abs(np.asarray(c))) for c in out))
                emit({"peer": "jax", "program": name, "n": n, "ms": ms, "gabs": gabs})
                del args, g, out
            except Exception as e:  # report and go on with the next one
                emit({"peer": "jax", "program": name, "n": n, "error": f"{type(e).__name__}: {e}"[:300]})
            gc.collect()
            jax.clear_caches()
    afns = jax_array_functions()
    for name in array_programs:
        n = ARRAY_PROGRAMS[name]
        try:
            args = [jnp.asarray(a) if isinstance(a, np.ndarray) else jnp.asarray(a, dtype=jnp.float64)
                    for a in array_inputs(name)]
            g = jax.jit(afns[name])
            jax.block_until_ready(g(*args))  # compiles
            ms, out = timed(lambda: jax.block_until_ready(g(*args)), reps, quick=True)
            emit({"peer": "jax", "program": name, "n": n, "ms": ms, "gabs": float(np.sum(np.abs(np.asarray(out))))})
            del args, g, out
        except Exception as e:
            emit({"peer": "jax", "program": name, "n": n, "error": f"{type(e).__name__}: {e}"[:300]})
        gc.collect()
        jax.clear_caches()
    gfns = jax_grad_array_functions()
    for name in grad_programs:
        n, wrt = GRAD_ARRAY_PROGRAMS[name]
        try:
            args = [jnp.asarray(a) if isinstance(a, np.ndarray) else jnp.asarray(a, dtype=jnp.float64)
                    for a in grad_array_inputs(name)]
            g = jax.jit(jax.grad(gfns[name], argnums=wrt))
            jax.block_until_ready(g(*args))  # compiles
            ms, out = timed(lambda: jax.block_until_ready(g(*args)), reps, quick=True)
            gabs = float(sum(np.sum(np.abs(np.asarray(c))) for c in out))
            emit({"peer": "jax", "program": name, "n": n, "ms": ms, "gabs": gabs})
            del args, g, out
        except Exception as e:
            emit({"peer": "jax", "program": name, "n": n, "error": f"{type(e).__name__}: {e}"[:300]})
        gc.collect()
        jax.clear_caches()


def run_torch(programs, array_programs, sizes, reps, grad_programs=()):
    import torch
    fns = torch_functions()
    emit({"peer": "torch", "version": torch.__version__, "threads": torch.get_num_threads()})
    for name in programs:
        f = fns[name]
        for n in sizes:
            try:
                args = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in inputs(name, n)]
                ms, out = timed(lambda: torch.autograd.grad(f(*args), args), reps)
                gabs = float(sum(torch.sum(torch.abs(c)).item() for c in out))
                emit({"peer": "torch", "program": name, "n": n, "ms": ms, "gabs": gabs})
                del args, out
            except Exception as e:
                emit({"peer": "torch", "program": name, "n": n, "error": f"{type(e).__name__}: {e}"[:300]})
            gc.collect()
    afns = torch_array_functions()
    for name in array_programs:
        n = ARRAY_PROGRAMS[name]
        if afns[name] is None:
            emit({"peer": "torch", "program": name, "n": n,
                  "error": "not run: PyTorch has no compiled scalar loop (a Python loop is not PyTorch)"})
            continue
        try:
            args = [torch.from_numpy(a) if isinstance(a, np.ndarray) else a for a in array_inputs(name)]
            with torch.no_grad():
                ms, out = timed(lambda: afns[name](*args), reps, quick=True)
            emit({"peer": "torch", "program": name, "n": n, "ms": ms, "gabs": float(torch.sum(torch.abs(out)).item())})
            del args, out
        except Exception as e:
            emit({"peer": "torch", "program": name, "n": n, "error": f"{type(e).__name__}: {e}"[:300]})
        gc.collect()
    gfns = torch_grad_array_functions()
    for name in grad_programs:
        n, wrt = GRAD_ARRAY_PROGRAMS[name]
        try:
            args = [torch.from_numpy(a) if isinstance(a, np.ndarray) else a for a in grad_array_inputs(name)]
            for k in wrt:  # leaves that require grad: the arguments differentiated
                args[k] = args[k].clone().requires_grad_(True)
            leaves = [args[k] for k in wrt]
            ms, out = timed(lambda: torch.autograd.grad(gfns[name](*args), leaves), reps, quick=True)
            gabs = float(sum(torch.sum(torch.abs(c)).item() for c in out))
            emit({"peer": "torch", "program": name, "n": n, "ms": ms, "gabs": gabs})
            del args, leaves, out
        except Exception as e:
            emit({"peer": "torch", "program": name, "n": n, "error": f"{type(e).__name__}: {e}"[:300]})
        gc.collect()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--peer", required=True, choices=["jax", "torch"])
    ap.add_argument("--programs", default="all")
    ap.add_argument("--n", default="100000 1000000 10000000")
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    words = a.programs.replace(",", " ").split()
    programs, array_programs, grad_programs = [], [], []
    for w in words:
        if w == "all":
            programs += PROGRAMS
            array_programs += list(ARRAY_PROGRAMS)
            grad_programs += list(GRAD_ARRAY_PROGRAMS)
        elif w in PROGRAMS:
            programs.append(w)
        elif w in ARRAY_PROGRAMS:
            array_programs.append(w)
        elif w in GRAD_ARRAY_PROGRAMS:
            grad_programs.append(w)
        else:
            known = PROGRAMS + list(ARRAY_PROGRAMS) + list(GRAD_ARRAY_PROGRAMS)
            sys.exit(f"peers.py: unknown program '{w}' (known: {', '.join(known)})")
    sizes = [int(float(w)) for w in a.n.replace(",", " ").split()]
    try:
        run = run_jax if a.peer == "jax" else run_torch
        run(programs, array_programs, sizes, a.reps, grad_programs)
    except ImportError as e:
        emit({"peer": a.peer, "skip": f"cannot import it: {e}"})


if __name__ == "__main__":
    main()
