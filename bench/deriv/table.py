#!/usr/bin/env python3
"""table.py: the markdown table of the derivative benchmark from the JSON
lines of deriv_bench (Una) and peers_deriv.py (JAX, PyTorch), all measured
in one run (bench/deriv/run.sh).

    table.py LINES.jsonl...
"""
import json
import sys

TOOLS = ["una", "jax", "torch"]


def main():
    ms, sums, versions, errors = {}, {}, {}, {}
    for path in sys.argv[1:]:
        for line in open(path):
            line = line.strip()
            if not line.startswith("{"):
                continue
            o = json.loads(line)
            if "version" in o:
                versions[o["tool"]] = o["version"]
            if "program" not in o:
                continue
            key = (o["tool"], o["program"], o["op"])
            if "error" in o:
                errors[key] = o["error"]
            else:
                ms[key], sums[key] = o["ms"], o["sum"]
    rows = []
    for (tool, prog, op) in ms:
        if tool == "una" and (prog, op) not in rows:
            rows.append((prog, op))
    print("| program | op | Una ms | JAX ms | PyTorch ms | Una / JAX | Una / PyTorch | Una: op / primal | JAX: op / primal | results agree |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for prog, op in rows:
        cells = []
        for t in TOOLS:
            k = (t, prog, op)
            cells.append("%.3g" % ms[k] if k in ms else ("error" if k in errors else "-"))

        def ratio(a, b):
            return "%.2f" % (ms[a] / ms[b]) if a in ms and b in ms and ms[b] > 0 else "-"
        base = "grad" if op in ("hvp", "value_and_grad") else "primal"
        agree = []
        u = sums.get(("una", prog, op))
        for t in ("jax", "torch"):
            s = sums.get((t, prog, op))
            if u is not None and s is not None:
                agree.append("yes" if abs(u - s) <= 1e-8 * max(1.0, abs(u), abs(s)) else "NO (%.10g vs %.10g)" % (u, s))
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            prog, op, cells[0], cells[1], cells[2],
            ratio(("una", prog, op), ("jax", prog, op)), ratio(("una", prog, op), ("torch", prog, op)),
            "-" if op == "primal" else "%s (%s)" % (ratio(("una", prog, op), ("una", prog, base)), base),
            "-" if op == "primal" else ratio(("jax", prog, op), ("jax", prog, base)),
            ", ".join(agree) or "-"))
    print()
    print("Versions: " + ", ".join("%s %s" % (t, versions[t]) for t in TOOLS if t in versions) + ".")


if __name__ == "__main__":
    main()
