"""relay.py: connects one GradBench eval to one tool, as GradBench's own
`gradbench run` intermediary does (CONTRIBUTING.md, "Protocol"), without
Docker: the eval's messages go line by line to the tool, the tool's answers
back to the eval; every line is logged with its elapsed time, and the
evaluations are summarised (validity from the eval's analysis messages,
timings from the tool's answers).

    relay.py GRADBENCH_DIR EVAL 'EVAL ARGS' 'TOOL COMMAND' [LOG.jsonl]

prints the summary as JSON on stdout. The eval runs as
GRADBENCH_DIR/python/gradbench/gradbench/evals/EVAL/run.py with this
Python, in GRADBENCH_DIR (its validators run GradBench's `manual` tool from
there); the tool command runs through the shell, in GRADBENCH_DIR too.
"""

import json
import os
import shlex
import subprocess
import sys
import time


def relay(gb_dir, eval_name, eval_args, tool_cmd, log_path=None, timeout=None):
    script = os.path.join(gb_dir, "python/gradbench/gradbench/evals", eval_name, "run.py")
    ev = subprocess.Popen(
        [sys.executable, script, *shlex.split(eval_args)],
        cwd=gb_dir, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    tool = subprocess.Popen(
        tool_cmd, shell=True, cwd=gb_dir,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    log = open(log_path, "w") if log_path else None
    start = time.perf_counter_ns()
    evals = {}   # id -> summary of an evaluate message
    order = []
    defined = None
    error = None

    def record(kind, obj):
        if log:
            elapsed = {"nanoseconds": time.perf_counter_ns() - start}
            log.write(json.dumps({"elapsed": elapsed, kind: obj}) + "\n")

    deadline = None if timeout is None else time.time() + timeout
    while True:
        line = ev.stdout.readline()
        if not line:
            break
        msg = json.loads(line)
        record("message", msg)
        tool.stdin.write(line if line.endswith("\n") else line + "\n")
        tool.stdin.flush()
        if msg.get("kind") == "end":
            break
        if msg.get("kind") == "evaluate":
            evals[msg["id"]] = {
                "function": msg["function"],
                "description": msg.get("description", ""),
            }
            order.append(msg["id"])
        elif msg.get("kind") == "analysis" and msg.get("of") in evals:
            evals[msg["of"]]["valid"] = msg["valid"]
            if not msg["valid"]:
                evals[msg["of"]]["error"] = msg.get("error", "")
        answer = tool.stdout.readline()
        if not answer:
            error = "the tool ended without answering message %s" % msg.get("id")
            break
        resp = json.loads(answer)
        record("response", resp)
        if msg.get("kind") == "define":
            defined = resp.get("success", False)
            if not defined:
                error = resp.get("error", "define failed")
        if msg.get("kind") == "evaluate":
            e = evals[msg["id"]]
            e["success"] = resp.get("success", False)
            if not e["success"]:
                e["error"] = resp.get("error", "")
            ts = resp.get("timings") or []
            e["evaluate_ns"] = [t["nanoseconds"] for t in ts if t["name"] == "evaluate"]
            e["other_ns"] = {t["name"]: t["nanoseconds"] for t in ts if t["name"] != "evaluate"}
        ev.stdin.write(answer)
        ev.stdin.flush()
        if deadline and time.time() > deadline:
            error = "timed out after %d s" % timeout
            break
    for p in (ev, tool):
        try:
            p.stdin.close()
        except BrokenPipeError:
            pass
    for p in (ev, tool):
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
    if log:
        log.close()
    return {
        "eval": eval_name,
        "defined": defined,
        "error": error,
        "evaluations": [evals[i] for i in order],
    }


if __name__ == "__main__":
    if len(sys.argv) not in (5, 6):
        sys.exit(__doc__)
    out = relay(*sys.argv[1:5], sys.argv[5] if len(sys.argv) == 6 else None)
    json.dump(out, sys.stdout, indent=1)
    print()
