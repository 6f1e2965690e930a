#!/usr/bin/env python3
"""uses_left.py: every `torch.cuda.` use (and `.cuda(` call) that plain `xpuify fix` leaves in a corpus, one TSV row
each, with what `check` reports on its line in the fixed copy -- the data behind the "What the uses left are" tally
of docs/real-projects.md (tools/real_projects.py counts them; this lists them).

Columns: project, path, line, kind (torch.cuda. | .cuda(), class (design | write | fix-safe | fix-unsafe |
guidance | silent), codes on the line (CODE:safe/unsafe/none, comma-separated), source line, the first message on the line.

Usage: tools/uses_left.py CORPUS [--xpuify build/xpuify] [--only a,b] [--out FILE]"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import real_projects as rp  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus")
    ap.add_argument("--xpuify", default="build/xpuify")
    ap.add_argument("--only", default="")
    ap.add_argument("--out", default="-")
    a = ap.parse_args()
    xpuify = os.path.abspath(a.xpuify)
    only = set(filter(None, a.only.split(",")))
    out = sys.stdout if a.out == "-" else open(a.out, "w")
    work = tempfile.mkdtemp(prefix="xpuify-left-")
    try:
        for name in sorted(os.listdir(a.corpus)):
            src = os.path.join(a.corpus, name)
            if not os.path.isdir(src) or (only and name not in only):
                continue
            fixed = os.path.join(work, name)
            shutil.copytree(src, fixed, symlinks=True)
            subprocess.run([xpuify, "fix", "-q", "--no-cache", "."], cwd=fixed, capture_output=True)
            findings = rp.check_findings(xpuify, fixed)
            scopes, on_line, msgs = rp.scopes_of(findings), {}, {}
            for f in findings:
                rel = os.path.normpath(f["path"])
                if f.get("code") in ("XPU810", "XPU811", "XPU812") and f.get("scope"):
                    continue
                app = (f.get("fix") or {}).get("applicability", "none")
                on_line.setdefault((rel, f["line"]), []).append(f"{f['code']}:{app}")
                msgs.setdefault((rel, f["line"]), f["message"].replace("\t", " ").replace("\n", " "))
            for rel in rp.py_files(fixed):
                if os.path.basename(rel) == "xpuify_device.py":
                    continue
                key = os.path.normpath(rel)
                text = rp.read(os.path.join(fixed, rel))
                calls, mods = rp.use_positions(text)
                writes = set(rp.write_positions(text))
                lines = text.splitlines()
                spans = scopes.get(key, [])
                for kind, uses in ((".cuda(", calls), ("torch.cuda.", mods)):
                    for u in uses:
                        codes = on_line.get((key, u[0]), [])
                        if any(s <= u < e for s, e in spans):
                            cls = "design"
                        elif kind == "torch.cuda." and u in writes:
                            cls = "write"
                        elif any(c.endswith(":safe") for c in codes):
                            cls = "fix-safe"
                        elif any(c.endswith(":unsafe") for c in codes):
                            cls = "fix-unsafe"
                        elif codes:
                            cls = "guidance"
                        else:
                            cls = "silent"
                        src_line = lines[u[0] - 1].strip() if u[0] <= len(lines) else ""
                        out.write("\t".join([name, rel, str(u[0]), kind, cls, ",".join(sorted(set(codes))),
                                             src_line[:160],
                                             msgs.get((key, u[0]), "")]) + "\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
