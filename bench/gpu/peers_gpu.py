#!/usr/bin/env python3
"""peers_gpu.py: JAX, PyTorch and a copy baseline on an NVIDIA GPU, for the GPU benchmark
(bench/gpu/README.md).

    peers_gpu.py [--peer jax,torch,copy] [--programs prod,dot,...] [--n "2^20 2^22"] [--reps 10]

The programs (prod, logsumexp, dot, bce, map_heavy) are bench/cpu/peers.py's
functions, imported from it, so the math is the same as on the CPU; their
inputs are the same formulas of the index i, computed on the GPU. For every
program and size it times the gradient with respect to every parameter, the
median of REPS calls after a warm-up call (which compiles):
  jax    jax.jit(jax.grad(f, argnums=(0, ...))), float64 (jax_enable_x64),
         each call waited for with jax.block_until_ready;
  torch  forward + backward, float64, CUDA: torch.autograd.grad(f(*xs), xs)
         on leaf tensors that require grad, each call followed by
         torch.cuda.synchronize();
  copy   y.copy_(x) of n float64 into a preallocated y (16 n bytes moved),
         timed with CUDA events: the device's bandwidth baseline.
Times are wall-clock milliseconds of a synchronised call (jax, torch) or the
device time between two CUDA events (copy). Each peer runs in its own
process (this script runs itself once per peer), so that each has the GPU's
memory to itself (JAX reserves most of it when it starts).

It prints JSON lines on stdout, which una_gpu_bench merges into its table:
  {"peer": P, "version": V, "device": D}                          first, per peer
  {"peer": P, "program": NAME, "n": N, "ms": MS, "gabs": S}       S = sum |gradient|
  {"peer": "copy", "program": "copy", "n": N, "ms": MS, "gbps": G}  G = 16 N / MS / 1e6
  {"peer": P, "program": NAME, "n": N, "error": MSG}              failed, or did not fit
  {"peer": P, "skip": MSG}                 P cannot be imported or sees no GPU
The exit status is 0 unless the command line is wrong.
"""
import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in bench/cpu
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cpu"))
import peers as cpu_peers  # noqa: E402  (bench/cpu/peers.py: the functions)

PROGRAMS = ["prod", "logsumexp", "dot", "bce", "map_heavy"]
PEERS = ["jax", "torch", "copy"]
DEFAULT_N = "2^20 2^22 2^24 2^26 2^28"


def emit(obj):
    print(json.dumps(obj), flush=True)


def device_inputs(name, u, v):
    """bench/cpu/peers.py's inputs(name, n), from u(i) and v(i) already on the device."""
    if name == "prod":
        return [1.0 + (u - 0.5) * 1e-6]
    if name == "dot":
        return [u, v]
    if name == "logsumexp":
        return [10.0 * u]
    if name == "bce":
        return [8.0 * u - 4.0, v]
    if name == "map_heavy":
        return [4.0 * u - 2.0]
    raise ValueError(name)


def median_ms(call, reps):
    """Median wall-clock ms of reps calls (each must return when its work is done),
    after a warm-up call; and the last call's result."""
    out = call()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        out = call()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), out


def is_oom(e):
    s = f"{type(e).__name__}: {e}"
    return "OutOfMemoryError" in s or "RESOURCE_EXHAUSTED" in s or "out of memory" in s.lower()


def run_sizes(peer, programs, sizes, measure, cleanup):
    """measure(name, n) -> dict of the row's fields, for every program and size;
    an error is reported and the next size tried, except that after an
    out-of-memory error the larger sizes of that program are skipped."""
    for name in programs:
        too_big = None
        for n in sizes:
            row = {"peer": peer, "program": name, "n": n}
            if too_big is not None and n >= too_big:
                emit({**row, "error": f"skipped: out of device memory at n = {too_big}"})
                continue
            try:
                emit({**row, **measure(name, n)})
            except Exception as e:  # report it and go on with the next one
                if is_oom(e):
                    too_big = n
                    emit({**row, "error": f"out of device memory: {type(e).__name__}: {e}"[:300]})
                else:
                    emit({**row, "error": f"{type(e).__name__}: {e}"[:300]})
            cleanup()


def run_jax(programs, sizes, reps, allow_cpu):
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    try:
        dev = jax.devices("gpu")[0]
    except RuntimeError as e:
        if not allow_cpu:
            emit({"peer": "jax", "skip": f"no GPU: jax {jax.__version__} sees none ({str(e)[:200]})"})
            return
        dev = jax.devices("cpu")[0]
    emit({"peer": "jax", "version": jax.__version__, "device": str(dev)})
    fns = cpu_peers.jax_functions()

    def base(n):
        i = jnp.arange(n, dtype=jnp.int64)
        u = ((i * 7919) % 10007).astype(jnp.float64) / 10007.0
        v = ((i * 104729 + 12345) % 10009).astype(jnp.float64) / 10009.0
        return u, v

    base_jit = jax.jit(base, static_argnums=0)

    def measure(name, n):
        with jax.default_device(dev):
            u, v = base_jit(n)
            args = device_inputs(name, u, v)
            del u, v
            g = jax.jit(jax.grad(fns[name], argnums=tuple(range(len(args)))))
            ms, out = median_ms(lambda: jax.block_until_ready(g(*args)), reps)
            gabs = float(sum(jnp.sum(jnp.abs(c)) for c in out))
        return {"ms": ms, "gabs": gabs}

    def cleanup():
        gc.collect()
        jax.clear_caches()

    run_sizes("jax", programs, sizes, measure, cleanup)


def torch_device(torch, peer, allow_cpu):
    """The CUDA device, or None after printing a skip line (the CPU with allow_cpu)."""
    if torch.cuda.is_available():
        return torch.device("cuda")
    if allow_cpu:
        return torch.device("cpu")
    emit({"peer": peer, "skip": f"no GPU: torch {torch.__version__} (CUDA {torch.version.cuda}) "
                               "sees none (torch.cuda.is_available() is false)"})
    return None


def torch_sync(torch, dev):
    if dev.type == "cuda":
        torch.cuda.synchronize()


def torch_base(torch, n, dev):
    i = torch.arange(n, dtype=torch.int64, device=dev)
    u = ((i * 7919) % 10007).to(torch.float64) / 10007.0
    v = ((i * 104729 + 12345) % 10009).to(torch.float64) / 10009.0
    return u, v


def torch_header(torch, peer, dev):
    name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu"
    emit({"peer": peer, "version": torch.__version__, "device": name})


def torch_cleanup(torch, dev):
    gc.collect()
    if dev.type == "cuda":
        torch.cuda.empty_cache()


def run_torch(programs, sizes, reps, allow_cpu):
    import torch
    dev = torch_device(torch, "torch", allow_cpu)
    if dev is None:
        return
    torch_header(torch, "torch", dev)
    fns = cpu_peers.torch_functions()

    def measure(name, n):
        u, v = torch_base(torch, n, dev)
        args = [a.detach().requires_grad_(True) for a in device_inputs(name, u, v)]
        del u, v
        f = fns[name]

        def call():
            out = torch.autograd.grad(f(*args), args)
            torch_sync(torch, dev)
            return out

        ms, out = median_ms(call, reps)
        gabs = float(sum(torch.sum(torch.abs(c)).item() for c in out))
        return {"ms": ms, "gabs": gabs}

    run_sizes("torch", programs, sizes, measure, lambda: torch_cleanup(torch, dev))


def run_copy(sizes, reps, allow_cpu):
    import torch
    dev = torch_device(torch, "copy", allow_cpu)
    if dev is None:
        return
    torch_header(torch, "copy", dev)

    def measure(name, n):
        x, _ = torch_base(torch, n, dev)
        y = torch.empty_like(x)
        if dev.type == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

            def once():
                start.record()
                y.copy_(x)
                end.record()
                end.synchronize()
                return start.elapsed_time(end)
        else:
            def once():
                t0 = time.perf_counter()
                y.copy_(x)
                return (time.perf_counter() - t0) * 1e3
        once()  # warm-up
        ms = statistics.median(once() for _ in range(reps))
        if not torch.equal(x, y):
            raise RuntimeError("the copy differs from its source")
        return {"ms": ms, "gbps": 16 * n / ms / 1e6}

    run_sizes("copy", ["copy"], sizes, measure, lambda: torch_cleanup(torch, dev))


def run_one(peer, programs, sizes, reps, allow_cpu):
    try:
        if peer == "jax":
            run_jax(programs, sizes, reps, allow_cpu)
        elif peer == "torch":
            run_torch(programs, sizes, reps, allow_cpu)
        else:
            run_copy(sizes, reps, allow_cpu)
    except ImportError as e:
        emit({"peer": peer, "skip": f"cannot import it: {e}"})


def parse_sizes(text):
    sizes = []
    for w in text.replace(",", " ").split():
        if "^" in w:
            b, e = w.split("^", 1)
            sizes.append(int(b) ** int(e))
        else:
            sizes.append(int(float(w)))
    return sizes


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--peer", default="jax,torch,copy", help="peers to run (default jax,torch,copy)")
    ap.add_argument("--programs", default="all", help=f"programs (default all: {', '.join(PROGRAMS)})")
    ap.add_argument("--n", default=DEFAULT_N, help=f'sizes, e.g. "2^20 2^22" or "1e6" (default "{DEFAULT_N}")')
    ap.add_argument("--reps", type=int, default=10, help="timed calls per measurement (median; default 10)")
    ap.add_argument("--allow-cpu", action="store_true",
                    help="without a GPU, run on the CPU instead of skipping (to test this script)")
    a = ap.parse_args()
    peers = []
    for w in a.peer.replace(",", " ").split():
        if w not in PEERS:
            sys.exit(f"peers_gpu.py: unknown peer '{w}' (known: {', '.join(PEERS)})")
        peers.append(w)
    programs = []
    for w in a.programs.replace(",", " ").split():
        if w == "all":
            programs += PROGRAMS
        elif w in PROGRAMS:
            programs.append(w)
        else:
            sys.exit(f"peers_gpu.py: unknown program '{w}' (known: {', '.join(PROGRAMS)})")
    try:
        sizes = parse_sizes(a.n)
    except ValueError:
        sys.exit(f"peers_gpu.py: bad --n '{a.n}' (sizes such as 1048576, 1e6 or 2^20)")
    if a.reps < 1:
        sys.exit("peers_gpu.py: --reps must be at least 1")

    if len(peers) == 1:
        run_one(peers[0], programs, sizes, a.reps, a.allow_cpu)
        return
    # One process per peer: each gets the GPU's memory to itself.
    for p in peers:
        cmd = [sys.executable, os.path.abspath(__file__), "--peer", p, "--programs", ",".join(programs),
               "--n", " ".join(map(str, sizes)), "--reps", str(a.reps)] + (["--allow-cpu"] if a.allow_cpu else [])
        sys.stdout.flush()
        rc = subprocess.call(cmd)
        if rc != 0:
            emit({"peer": p, "error": f"its process stopped early (status {rc}); its missing rows show as -"})


if __name__ == "__main__":
    main()
