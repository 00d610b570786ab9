"""run.py: runs GradBench's evals against Una and its peers on this machine
and writes bench/gradbench/RESULTS.md (see the README's `make gradbench`).

    run.py GRADBENCH_DIR [EVAL...]

Each eval runs once per tool through relay.py (GradBench's own eval
program and validator, the tool's own program): Una (`una --gradbench`),
GradBench's hand-differentiated C++ `manual` tool, and its JAX and PyTorch
tools where it has them for the eval. Every tool is pinned to CPU 0 (one
thread, as GradBench runs tools by default; Una with UNA_THREADS=1). The
sizes are bounded so that all evals fit in about 30 minutes on 2 cores
(SIZES below); GRADBENCH_FULL=1 runs each eval's default sizes instead.
Environment: UNA (the binary), UNA_MODULES (its modules' folder),
GRADBENCH_TOOLS (e.g. "una manual"), GRADBENCH_MIN_SECONDS (0.5),
GRADBENCH_TIMEOUT (seconds per eval and tool, 600), GRADBENCH_JSON (a file
for every timing of every evaluation, as JSON).
"""

import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from relay import relay  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

EVALS = ["hello", "lse", "llsq", "det", "gmm", "ode", "lstm", "kmeans",
         "saddle", "particle", "ba", "ht"]

# The bounded sizes: each eval's own command-line options.
SIZES = {
    "hello": "",
    "lse": "-n 10000 160000",
    "llsq": "-n 1024 8196 -m 128",
    "det": "-l 5 7 9",
    "gmm": "-d 2 10 64 -k 5 25 -n 1000",
    "ode": "-n 1000 10000 -s 1 10",
    "lstm": "-l 2 4 -c 1024",
    "kmeans": "-k 10 100 -n 1000 10000 -d 8",
    "saddle": "",
    "particle": "",
    "ba": "--min 1 --max 2",
    "ht": "--min 1 --max 3 --model small",
}


def tool_commands(gb_dir):
    py = sys.executable
    una = os.environ.get("UNA", os.path.join(ROOT, "bin/una"))
    modules = os.environ.get("UNA_MODULES", HERE)
    pin = "taskset -c 0 " if os.system("command -v taskset >/dev/null") == 0 else ""

    def has(tool, ev):
        if tool == "manual":
            return ev in open(os.path.join(gb_dir, "tools/manual/evals.txt")).read().split()
        return os.path.exists(os.path.join(gb_dir, f"python/gradbench/gradbench/tools/{tool}/{ev}.py"))

    return {
        "una": (lambda ev: True,
                f"env UNA_THREADS=1 {pin}{una} --gradbench={modules}"),
        "manual": (lambda ev: has("manual", ev),
                   f"{pin}{py} python/gradbench/gradbench/cpp.py manual"),
        # GradBench's JAX tool, each timed call waiting for its result
        # (jax_synced.py): JAX dispatches asynchronously
        "jax": (lambda ev: has("jax", ev),
                f"{pin}{py} {HERE}/jax_synced.py python/gradbench/gradbench/tools/jax/run.py"),
        "pytorch": (lambda ev: has("pytorch", ev),
                    f"env OMP_NUM_THREADS=1 {pin}{py} python/gradbench/gradbench/tools/pytorch/run.py"),
    }


def median_ms(e):
    ts = e.get("evaluate_ns") or []
    return statistics.median(ts) / 1e6 if ts else None


def fmt_ms(ms):
    if ms is None:
        return "-"
    return f"{ms:.3g}" if ms < 100 else f"{ms:.0f}"


def verdict(e):
    if e is None:
        return None
    if not e.get("success"):
        return "failed"
    return "valid" if e.get("valid") else "INVALID"


def write_results(results, tools, args, elapsed):
    path = os.path.join(HERE, "RESULTS.md")
    peers = [t for t in tools if t != "una"]
    out = []
    out.append("# Una on GradBench\n")
    out.append(f"Run on {time.strftime('%Y-%m-%d', time.gmtime())} (UTC) with `make gradbench` "
               f"({elapsed / 60:.1f} minutes), every tool pinned to one CPU. Times are the median "
               "of each evaluation's \"evaluate\" timings in milliseconds (the tool's own "
               "measurement of the call, without JSON conversion); a ratio is Una's time over the "
               "peer's (below 1: Una is faster). Valid: GradBench's validator accepted Una's output.\n")
    out.append(f"Sizes (each eval's options): {args}\n")
    out.append("Where Una is slower and why: GAPS.md (the causes found while writing the modules, "
               "with small programs that show them).\n")
    valid_evals = 0
    rows = []
    for ev, per_tool in results.items():
        una = per_tool.get("una")
        ok = una and una["defined"] and una["evaluations"] and all(
            verdict(e) == "valid" for e in una["evaluations"])
        valid_evals += bool(ok)
        ref = una if una and una["evaluations"] else next(
            (r for r in per_tool.values() if r["evaluations"]), None)
        if ref is None:
            err = (una or {}).get("error") or "no evaluations"
            rows.append(f"| {ev} | - | - | not run: {str(err).splitlines()[0][:80]} |" + " |" * (2 * len(peers)))
            continue
        for i, e in enumerate(ref["evaluations"]):
            cells = [ev, e["function"], e["description"] or "-"]
            ue = una["evaluations"][i] if una and i < len(una["evaluations"]) else None
            ums = median_ms(ue) if ue and ue.get("success") else None
            cells.append(f"{fmt_ms(ums)} ({verdict(ue) or 'not run'})")
            for p in peers:
                pr = per_tool.get(p)
                pe = pr["evaluations"][i] if pr and i < len(pr["evaluations"]) else None
                pms = median_ms(pe) if pe and pe.get("success") else None
                cells.append(fmt_ms(pms) if pe else "")
                cells.append(f"{ums / pms:.2f}" if ums and pms else "")
            rows.append("| " + " | ".join(cells) + " |")
    out.append(f"Valid evals: {valid_evals} of {len(results)}.\n")
    head = ["eval", "function", "input", "una ms (validity)"]
    for p in peers:
        head += [f"{p} ms", f"una/{p}"]
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "---|" * len(head))
    out.extend(rows)
    out.append("")
    out.append("Errors:\n")
    for ev, per_tool in results.items():
        for t, r in per_tool.items():
            if r.get("error"):
                out.append(f"- {ev}, {t}: {str(r['error']).splitlines()[0][:300]}")
            for e in r["evaluations"]:
                if verdict(e) != "valid" and e.get("error"):
                    msg = " ".join(str(e["error"]).split())[:300]
                    out.append(f"- {ev}, {t}, {e['function']} {e['description']}: {msg}")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
    raw = os.environ.get("GRADBENCH_JSON")
    if raw:
        with open(raw, "w") as f:
            json.dump(results, f, indent=1)
    print(f"run.py: wrote {path}")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    gb_dir = os.path.abspath(sys.argv[1])
    evals = sys.argv[2:] or EVALS
    full = os.environ.get("GRADBENCH_FULL") == "1"
    min_seconds = os.environ.get("GRADBENCH_MIN_SECONDS", "0.5")
    timeout = float(os.environ.get("GRADBENCH_TIMEOUT", "600"))
    commands = tool_commands(gb_dir)
    wanted = os.environ.get("GRADBENCH_TOOLS", "una manual jax pytorch").split()
    tools = [t for t in commands if t in wanted]
    results = {}
    args_used = []
    start = time.time()
    for ev in evals:
        args = ("" if full else SIZES[ev])
        if ev != "hello":
            args += f" --min-runs 1 --min-seconds {min_seconds}"
        args_used.append(f"{ev} `{args.strip()}`")
        results[ev] = {}
        for t in tools:
            applies, cmd = commands[t]
            if not applies(ev):
                continue
            t0 = time.time()
            try:
                r = relay(gb_dir, ev, args, cmd, timeout=timeout)
            except Exception as exc:  # a tool or eval that crashed
                r = {"eval": ev, "defined": False, "error": repr(exc), "evaluations": []}
            results[ev][t] = r
            n_ok = sum(verdict(e) == "valid" for e in r["evaluations"])
            print(f"run.py: {ev} {t}: {n_ok}/{len(r['evaluations'])} valid "
                  f"in {time.time() - t0:.0f} s{'; ' + str(r['error']).splitlines()[0][:120] if r['error'] else ''}",
                  flush=True)
    write_results(results, tools, "; ".join(args_used), time.time() - start)


if __name__ == "__main__":
    main()
