#!/usr/bin/env python3
"""verification_table.py: the markdown table of a tools/verify_gpu.sh run (OUTDIR/env.txt and the
`xpuify verify --format json` reports OUTDIR/<fixture>-<target>.json), as docs/verification.md records it.
Usage: tools/verification_table.py OUTDIR"""
import glob
import json
import os
import sys


def fmt(x):
    if x is None:
        return "-"
    if x == 0:
        return "0"
    return "%.2g" % x


def cell(r):
    if r is None:
        return "-"
    s = r["verdict"]
    if r["verdict"] in ("fails", "FAILS") and r["status"] != "exit 0":
        s += " (%s)" % r["status"]
    if r.get("compared_with") and r["verdict"] in ("match", "DIFFERS"):
        s += ", max abs %s" % fmt(r.get("max_abs"))
    return s


def main(out):
    env = open(os.path.join(out, "env.txt")).read().strip() if os.path.exists(os.path.join(out, "env.txt")) else ""
    print("```\n" + env + "\n```\n")
    print("| fixture | target | fixed | CUDA: original | CUDA: patched vs original | CPU (CUDA hidden): original | "
          "CPU: patched vs CPU reference | exit |")
    print("|---|---|---|---|---|---|---|---|")
    notes = []
    order = {"compat": 0, "accelerator": 1}
    paths = sorted(glob.glob(os.path.join(out, "*.json")),
                   key=lambda p: (os.path.basename(p).rsplit("-", 1)[0], order.get(p.rsplit("-", 1)[1][:-5], 9)))
    for p in paths:
        name, target = os.path.basename(p)[:-5].rsplit("-", 1)
        rc_path = p[:-5] + ".rc"
        rc = open(rc_path).read().strip() if os.path.exists(rc_path) else "?"
        try:
            rep = json.load(open(p))
        except (OSError, ValueError) as e:
            print(f"| {name} | {target} | - | no report ({e}) | | | | {rc} |")
            continue
        runs = {(r["tier"], r["variant"]): r for r in rep["runs"]}
        print("| %s | %s | %d | %s | %s | %s | %s | %s |" % (
            name, target, rep["fix"]["fixed"], cell(runs.get(("cuda", "original"))),
            cell(runs.get(("cuda", "patched"))), cell(runs.get(("cpu", "original"))),
            cell(runs.get(("cpu", "patched"))), rc))
        for r in rep["runs"]:
            if r["variant"] == "patched" and r["verdict"] not in ("match", "runs"):
                why = r.get("difference") or (r.get("stderr_tail") or "").strip().splitlines()[-1:] or ["?"]
                if isinstance(why, list):
                    why = why[0]
                notes.append(f"- {name} ({target}), patched on {r['tier']}: {r['status']}: `{why}`")
    if notes:
        print("\nFailures:\n")
        print("\n".join(notes))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
