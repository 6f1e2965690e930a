"""The design findings carry the code they leave as it is: XPU811's CUDA branch of a dispatch without an XPU branch,
XPU810's CUDA backend. JSON gives it as `scope` (line, column, end_line, end_column), SARIF as the result's
`relatedLocations`; a run served from the results cache gives the same; other findings have none."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import check, eq, main, run, write  # noqa: E402

SRC = """import torch


def sync(device):
    torch.cuda.synchronize()
    if device.type == "cuda":
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
    elif device.type == "npu":
        torch.npu.synchronize()


class Accelerator:
    pass


class CUDAAccelerator(Accelerator):
    def count(self):
        return torch.cuda.device_count()
"""


def by_code(findings):
    return {f["code"]: f for f in findings}


def test_json_gives_the_branch_and_the_backend(d):
    write("a.py", SRC)
    r = run("check", "--no-cache", "--format", "json", "a.py")
    eq(r.code, 1, r)
    got = r.json()
    eq(sorted(f["code"] for f in got), ["XPU202", "XPU810", "XPU811"], got)
    f = by_code(got)
    # the finding sits at the test; its scope runs from the test to the end of the branch's body
    eq((f["XPU811"]["line"], f["XPU811"]["column"], f["XPU811"]["end_column"]), (6, 8, 29))
    eq(f["XPU811"]["scope"], {"line": 6, "column": 8, "end_line": 8, "end_column": 33})
    check("torch.xpu.synchronize" in f["XPU811"]["message"], "names the XPU call", f["XPU811"]["message"])
    # the backend: the finding at its name, the scope the whole class
    eq(f["XPU810"]["line"], 17)
    eq(f["XPU810"]["scope"], {"line": 17, "column": 1, "end_line": 19, "end_column": 41})
    check("scope" not in f["XPU202"], "an ordinary finding has no scope", f["XPU202"])


def test_sarif_gives_it_as_a_related_location(d):
    write("a.py", SRC)
    r = run("check", "--no-cache", "--format", "sarif", "a.py")
    results = {x["ruleId"]: x for x in r.json()["runs"][0]["results"]}
    rel = results["XPU811"]["relatedLocations"]
    eq(len(rel), 1, rel)
    eq(rel[0]["physicalLocation"]["region"], {"startLine": 6, "startColumn": 8, "endLine": 8, "endColumn": 33})
    eq(rel[0]["physicalLocation"]["artifactLocation"]["uri"],
       results["XPU811"]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])
    check("relatedLocations" not in results["XPU202"], "an ordinary finding has none", results["XPU202"])


def test_the_cache_keeps_the_scope(d):
    write("a.py", SRC)
    first = run("check", "--format", "json", "--cache-dir", "cache", "a.py")
    again = run("check", "--format", "json", "--cache-dir", "cache", "a.py")
    eq(json.loads(again.out), json.loads(first.out))
    check(any("scope" in f for f in again.json()), "served from the cache with its scope", again.out)


if __name__ == "__main__":
    main(globals())
