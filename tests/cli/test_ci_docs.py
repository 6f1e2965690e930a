"""The pipelines docs/ci.md shows are real: the example files are in the document verbatim, parse as YAML, and
their xpuify steps run as written (matrix values substituted) on a test repository with the expected results."""
import glob
import json
import os
import re
import subprocess
import sys

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import ROOT, XPUIFY, check, eq, main, read, run, write  # noqa: E402

CUDA = "import torch\nx = y.cuda()\ntorch.cuda.synchronize()\n"
ENV = dict(os.environ, PATH=os.path.dirname(XPUIFY) + os.pathsep + os.environ.get("PATH", ""), GIT_AUTHOR_NAME="t",
           GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t", NO_COLOR="1")


def sh(script, env=None):
    p = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=dict(ENV, **(env or {})), timeout=300)
    return p.returncode, p.stdout, p.stderr


def example(name):
    text = read(os.path.join(ROOT, "examples", "ci", name))
    check(text in read(os.path.join(ROOT, "docs", "ci.md")), f"docs/ci.md shows examples/ci/{name} verbatim")
    return yaml.safe_load(text)


def test_github_actions_matrix_workflow(d):
    wf = example("github-actions.yml")
    shards = wf["jobs"]["check"]["strategy"]["matrix"]["shard"]
    eq(shards, [1, 2, 3, 4])
    step = next(s for s in wf["jobs"]["check"]["steps"] if s.get("name", "").startswith("xpuify check"))
    merge = next(s for s in wf["jobs"]["upload"]["steps"] if s.get("name", "").startswith("xpuify merge-sarif"))
    upload = wf["jobs"]["upload"]["steps"][-1]
    eq(upload["uses"].split("@")[0], "github/codeql-action/upload-sarif")
    # a repository with accepted findings (the baseline) and new ones
    subprocess.run(["git", "init", "-q", "."], check=True)
    for i in range(24):
        write(f"pkg/m{i:02}.py", CUDA)
    eq(run("check", "--write-baseline", ".xpuify-baseline.json", ".").code, 0)
    for i in range(24, 30):
        write(f"pkg/m{i:02}.py", CUDA)
    codes = []
    for k in shards:
        code, out, err = sh(step["run"].replace("${{ matrix.shard }}", str(k)))
        codes.append(code)
        check(code in (0, 1), "shard ran", err)
        check(all(line.startswith("::warning file=pkg/m2") for line in out.splitlines()), "annotations for new files", out)
    check(1 in codes, "the new findings fail their shards")
    code, out, err = sh(merge["run"])
    eq(code, 0, err)
    merged = json.loads(read(upload["with"]["sarif_file"]))
    paths = sorted({r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in merged["runs"][0]["results"]})
    eq(paths, [f"pkg/m{i:02}.py" for i in range(24, 30)])
    eq(len(merged["runs"][0]["results"]), 12)
    eq(len(glob.glob("xpuify-*.sarif")), 4)


def test_gitlab_pipeline(d):
    ci = example("gitlab-ci.yml")
    job = ci["xpuify"]
    eq(job["artifacts"]["reports"], {"codequality": "gl-code-quality.json", "junit": "xpuify-junit.xml"})
    # origin with main; a merge-request branch that adds one finding to an old file and a new file
    subprocess.run(["git", "init", "-q", "-b", "main", "origin"], check=True, env=ENV)
    write("origin/a.py", CUDA)
    sh("cd origin && git add . && git commit -qm base")
    sh("git clone -q --depth 1 file://$PWD/origin work")
    os.chdir("work")
    write("a.py", CUDA + "z.cuda()\n")
    write("b.py", "import torch\ntorch.cuda.synchronize()\n")
    sh("git add . && git commit -qm change")
    env = {"CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main"}
    results = [sh(line, env) for line in job["script"]]
    eq(results[0][0], 0, results[0])
    code, out, err = results[1]
    eq(code, 1, err)
    # z.cuda(): an unknown receiver, fixed safely (the file imports only torch; the project has no other .cuda())
    eq(out.splitlines()[:2], ["1  XPU101  [*] cuda-method-call", "1  XPU202  [*] cuda-stream-event"])
    cq = json.loads(read("gl-code-quality.json"))
    eq(sorted((x["location"]["path"], x["location"]["lines"]["begin"]) for x in cq), [("a.py", 4), ("b.py", 2)])
    check(re.search(r'<testsuites name="xpuify" tests="2" failures="2"', read("xpuify-junit.xml")), "junit")


if __name__ == "__main__":
    main(globals())
