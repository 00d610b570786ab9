#!/usr/bin/env python3
"""peers_deriv.py: JAX and PyTorch times for the derivative benchmark
(bench/deriv/README.md), the same programs, inputs and operators as
deriv_bench.c:

    peers_deriv.py --peer jax|torch [--reps 11]

  jax    jax.jit of f, jax.grad(f), jax.jvp(f, ...), jax.vjp(f, x)[1](c),
         jax.value_and_grad(f) and jax.jvp(jax.grad(f), ...) (the
         Hessian-vector product), float64,
         results waited for with jax.block_until_ready;
  torch  torch.func.grad, jvp, vjp, grad_and_value and jvp(grad(f))
         (float64, eager).
Median of REPS calls after two warm-up calls. JSON lines on stdout:
  {"tool": P, "program": NAME, "op": OP, "ms": MS, "sum": S}   S = the sum of the result's reals
  {"tool": P, "version": V}                                     first
  {"tool": P, "skip": MSG}                                      when P cannot be imported
"""
import argparse
import gc
import json
import statistics
import time

import numpy as np

N, M = 10**6, 1000


def u(i):
    return ((i * 7919) % 10007) / 10007.0


def v(i):
    return ((i * 104729 + 12345) % 10009) / 10009.0


def inputs():
    i = np.arange(N, dtype=np.int64)
    x, t = u(i) - 0.5, v(i) - 0.5
    k = np.arange(M * M, dtype=np.int64)
    w = ((u(k) - 0.5) * 0.1).reshape(M, M)
    dw = (v(k) - 0.5).reshape(M, M)
    xs = v(np.arange(M, dtype=np.int64))
    return x, t, w, dw, xs


def emit(obj):
    print(json.dumps(obj), flush=True)


def timed(fn, sync, reps):
    r = None
    for _ in range(2):
        r = sync(fn())
    times = []
    for _ in range(reps):
        r = None
        gc.collect()
        t0 = time.perf_counter()
        r = sync(fn())
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), r


def total(r):
    if isinstance(r, (tuple, list)):
        return float(sum(total(a) for a in r))
    return float(np.sum(np.asarray(r)))


def ops_jax(x, t, w, dw, xs):
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
    emit({"tool": "jax", "version": jax.__version__})
    X, T, W, DW, XS = (jnp.asarray(a) for a in (x, t, w, dw, xs))
    lse = jax.scipy.special.logsumexp

    def rosen(a):
        p, q = a[:-1], a[1:]
        return jnp.sum(100 * (q - p * p) ** 2 + (1 - p) ** 2)

    def mlp(w_):
        z = jnp.tanh(w_ @ XS)
        return jnp.sum(z * z)

    sm = jax.nn.softmax
    jit = jax.jit
    rows = []
    for name, f, a, da in (("logsumexp", lse, X, T), ("rosenbrock", rosen, X, T), ("mlp", mlp, W, DW)):
        rows += [(name, "primal", jit(f), (a,)),
                 (name, "grad", jit(jax.grad(f)), (a,)),
                 (name, "jvp", jit(lambda p, d, f=f: jax.jvp(f, (p,), (d,))), (a, da)),
                 (name, "hvp", jit(lambda p, d, f=f: jax.jvp(jax.grad(f), (p,), (d,))), (a, da))]
        if name != "rosenbrock":
            rows += [(name, "value_and_grad", jit(jax.value_and_grad(f)), (a,))]
    rows += [("softmax", "primal", jit(sm), (X,)),
             ("softmax", "jvp", jit(lambda p, d: jax.jvp(sm, (p,), (d,))), (X, T)),
             ("softmax", "vjp", jit(lambda p, c: jax.vjp(sm, p)[1](c)[0]), (X, T))]
    return rows, jax.block_until_ready


def ops_torch(x, t, w, dw, xs):
    import torch
    from torch.func import grad, grad_and_value, jvp, vjp
    emit({"tool": "torch", "version": torch.__version__})
    X, T, W, DW, XS = (torch.tensor(a, dtype=torch.float64) for a in (x, t, w, dw, xs))

    def lse(a):
        return torch.logsumexp(a, 0)

    def rosen(a):
        p, q = a[:-1], a[1:]
        return torch.sum(100 * (q - p * p) ** 2 + (1 - p) ** 2)

    def mlp(w_):
        z = torch.tanh(w_ @ XS)
        return torch.sum(z * z)

    def sm(a):
        return torch.softmax(a, 0)

    rows = []
    for name, f, a, da in (("logsumexp", lse, X, T), ("rosenbrock", rosen, X, T), ("mlp", mlp, W, DW)):
        rows += [(name, "primal", f, (a,)),
                 (name, "grad", grad(f), (a,)),
                 (name, "jvp", lambda p, d, f=f: jvp(f, (p,), (d,)), (a, da)),
                 (name, "hvp", lambda p, d, f=f: jvp(grad(f), (p,), (d,)), (a, da))]
        if name != "rosenbrock":
            rows += [(name, "value_and_grad", lambda p, f=f: grad_and_value(f)(p)[::-1], (a,))]
    rows += [("softmax", "primal", sm, (X,)),
             ("softmax", "jvp", lambda p, d: jvp(sm, (p,), (d,)), (X, T)),
             ("softmax", "vjp", lambda p, c: vjp(sm, p)[1](c)[0], (X, T))]

    def sync(r):
        return r
    torch.set_grad_enabled(False)
    return rows, sync


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--peer", required=True, choices=["jax", "torch"])
    ap.add_argument("--reps", type=int, default=11)
    a = ap.parse_args()
    data = inputs()
    try:
        rows, sync = (ops_jax if a.peer == "jax" else ops_torch)(*data)
    except ImportError as e:
        emit({"tool": a.peer, "skip": str(e)})
        return
    for name, op, fn, args in rows:
        try:
            ms, r = timed(lambda: fn(*args), sync, a.reps)
            emit({"tool": a.peer, "program": name, "op": op, "ms": ms, "sum": total(r)})
        except Exception as e:  # noqa: BLE001 (a peer's failure is a table entry)
            emit({"tool": a.peer, "program": name, "op": op, "error": str(e)[:200]})


if __name__ == "__main__":
    main()
