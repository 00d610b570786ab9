"""record.py: records one small GradBench session of an eval for `make
check` (tests/frontend/gradbench/data/): the eval's messages as it sends
them to Una (EVAL.in: start, define and evaluate, one JSON a line), and for
each evaluate the output GradBench's validator expects (EVAL.expect: {"id",
"output"} a line), taken from the eval's own `expect` (which runs
GradBench's hand-written `manual` tool where the eval has one; build it
first: make -C GRADBENCH_DIR/tools/manual bin/EVAL).

    record.py GRADBENCH_DIR EVAL 'EVAL ARGS' OUTDIR UNA_BINARY
"""

import importlib
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from relay import relay  # noqa: E402


def hello_expect(function, input):
    return {"success": True, "output": input * input if function == "square" else 2 * input}


def main():
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    gb_dir, eval_name, eval_args, out_dir, una = sys.argv[1:]
    gb_dir, out_dir = os.path.abspath(gb_dir), os.path.abspath(out_dir)
    with tempfile.NamedTemporaryFile(suffix=".jsonl") as log:
        summary = relay(gb_dir, eval_name, eval_args, f"{una} --gradbench", log.name)
        lines = [json.loads(l) for l in open(log.name)]
    bad = [e for e in summary["evaluations"] if not e.get("valid")]
    if summary["error"] or bad:
        sys.exit(f"record.py: {eval_name}: the session is not valid: {summary['error'] or bad}")
    messages = [l["message"] for l in lines if "message" in l]
    messages = [m for m in messages if m["kind"] in ("start", "define", "evaluate")]
    os.chdir(gb_dir)
    sys.path.insert(0, os.path.join(gb_dir, "python/gradbench"))
    if eval_name == "hello":
        expect = hello_expect
    else:
        expect = importlib.import_module(f"gradbench.evals.{eval_name}.run").expect
    with open(os.path.join(out_dir, f"{eval_name}.in"), "w") as f_in, open(
        os.path.join(out_dir, f"{eval_name}.expect"), "w"
    ) as f_ex:
        for m in messages:
            f_in.write(json.dumps(m, separators=(",", ":")) + "\n")
            if m["kind"] == "evaluate":
                want = expect(m["function"], m["input"])
                if not want["success"]:
                    sys.exit(f"record.py: the golden implementation failed: {want}")
                f_ex.write(json.dumps({"id": m["id"], "output": want["output"]},
                                      separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
