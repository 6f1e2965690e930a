"""End-to-end tests of the CI gate: baselines, --diff-base (also in shallow clones), several outputs in one run,
GitLab and JUnit reports, SARIF fingerprints and fixes, --statistics, --shard with merge-sarif, the progress line."""
import json
import os
import pty
import select
import subprocess
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import XPUIFY, check, eq, main, read, run, write  # noqa: E402

CUDA = "import torch, mylib\nx = y.cuda()\ntorch.cuda.synchronize()\n"


def git(*args, cwd=None):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env=dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
                            GIT_COMMITTER_EMAIL="t@t"))


def found(*args):
    r = run("check", "--format", "json", *args)
    check(r.code in (0, 1), "check ran", r)
    return [(f["path"], f["line"], f["code"]) for f in r.json()]


def test_baseline_survives_shifts_and_reports_new_and_stale(d):
    write("a.py", CUDA)
    write("b.py", "import torch\ntorch.cuda.synchronize()\n")
    r = run("check", "--write-baseline", "base.json", ".")
    eq(r.code, 0, r)
    check("wrote 3 findings" in r.err, "summary", r)
    base = json.loads(read("base.json"))
    eq([(f["path"], f["line"], f["code"], f["source"]) for f in base["findings"]],
       [("a.py", 2, "XPU101", "x = y.cuda()"), ("a.py", 3, "XPU202", "torch.cuda.synchronize()"),
        ("b.py", 2, "XPU202", "torch.cuda.synchronize()")])
    eq(run("check", "--baseline", "base.json", ".").code, 0)
    # unrelated edits, shifted and re-indented lines: still the same findings
    write("a.py", "# a new header comment\nimport torch\n\n\nx  =  y.cuda()\ntorch.cuda.synchronize()\n")
    r = run("check", "--baseline", "base.json", ".")
    eq((r.code, r.out.strip()), (0, "All checks passed (2 files checked)."))
    # a new finding, a second copy of an old line, and a fixed one
    write("a.py", "import torch\nx = y.cuda()\ntorch.cuda.synchronize()\ntorch.cuda.synchronize()\nz.cuda()\n")
    write("b.py", "import torch\n")
    r = run("check", "--format", "json", "--baseline", "base.json", ".")
    eq(r.code, 1)
    eq([(f["line"], f["code"]) for f in r.json()], [(4, "XPU202"), (5, "XPU101")])
    check("1 baseline entry no longer matches a finding" in r.err and "b.py:2: XPU202 `torch.cuda.synchronize()`"
          in r.err, "stale entry named", r)
    # --quiet drops the notes; a missing or malformed baseline is an error
    eq(run("check", "-q", "--baseline", "base.json", ".").err, "")
    eq(run("check", "--baseline", "nope.json", ".").code, 2)
    write("bad.json", "[1, 2]")
    r = run("check", "--baseline", "bad.json", ".")
    check(r.code == 2 and "bad.json: not an xpuify baseline" in r.err, "malformed", r)


def test_sarif_fingerprint_is_the_baseline_one_and_carries_fixes(d):
    write("a.py", "import torch\ntorch.cuda.synchronize()\n")
    run("check", "--write-baseline", "base.json", "a.py")
    fp = json.loads(read("base.json"))["findings"][0]["fingerprint"]
    s = run("check", "--format", "sarif", "--target", "accelerator", "a.py").json()
    res = s["runs"][0]["results"][0]
    eq(res["partialFingerprints"], {"xpuify/v1": fp})
    change = res["fixes"][0]["artifactChanges"][0]
    eq(change["artifactLocation"]["uri"], "a.py")
    rep = [x for x in change["replacements"] if "torch.accelerator.synchronize()" in x["insertedContent"]["text"]]
    eq(rep[0]["insertedContent"]["text"], 'if DEVICE_TYPE != "cpu": torch.accelerator.synchronize()')
    eq(rep[0]["deletedRegion"], {"startLine": 2, "startColumn": 1, "endLine": 2, "endColumn": 25})
    g = json.loads(run("check", "--format", "gitlab", "a.py").out)
    eq(g[0]["fingerprint"], fp)


def test_diff_base(d):
    git("init", "-q", ".")
    write("a.py", CUDA)
    write("old.py", CUDA)
    git("add", ".")
    git("commit", "-qm", "base")
    write("a.py", "# comment\n" + CUDA + "z.cuda()\n")
    write("new.py", "import torch\ntorch.cuda.synchronize()\n")  # untracked: every line is new
    git("mv", "old.py", "moved.py")                                # renamed: nothing new in it
    eq(found("--diff-base", "HEAD", "."), [("a.py", 5, "XPU101"), ("new.py", 2, "XPU202")])
    git("add", ".")
    git("commit", "-qm", "change")
    eq(found("--diff-base", "HEAD~1", "."), [("a.py", 5, "XPU101"), ("new.py", 2, "XPU202")])
    eq(found("--diff-base", "HEAD", "."), [])
    r = run("check", "--diff-base", "no-such-rev", ".")
    check(r.code == 2 and "revision `no-such-rev` is not in this repository" in r.err, "missing rev", r)


def test_baseline_and_diff_base_together(d):
    git("init", "-q", ".")
    write("a.py", CUDA)
    git("add", ".")
    git("commit", "-qm", "base")
    eq(run("check", "--write-baseline", "base.json", ".").code, 0)
    write("a.py", CUDA + "z.cuda()\ntorch.cuda.synchronize()\n")
    r = run("check", "--format", "json", "--baseline", "base.json", "--diff-base", "HEAD", ".")
    eq([(f["line"], f["code"]) for f in r.json()], [(4, "XPU101"), (5, "XPU202")])
    check("no longer match" not in r.err, "unchanged lines are not stale baseline entries", r)


def test_diff_base_in_a_shallow_clone(d):
    os.mkdir("origin")
    git("init", "-q", "origin")
    write("origin/a.py", CUDA)
    git("add", ".", cwd="origin")
    git("commit", "-qm", "one", cwd="origin")
    write("origin/a.py", CUDA + "z.cuda()\n")
    git("commit", "-qam", "two", cwd="origin")
    git("clone", "-q", "--depth", "1", "file://" + os.path.abspath("origin"), "shallow")
    os.chdir("shallow")
    check(os.path.exists(".git/shallow"), "really shallow")
    r = run("check", "--diff-base", "HEAD~1", ".")
    eq(r.code, 2, r)
    check("revision `HEAD~1` is not in this repository; this is a shallow clone" in r.err and "fetch-depth" in r.err,
          "names the shallow clone and the remedy", r)
    git("fetch", "-q", "--depth", "2", "origin")
    eq(found("--diff-base", "HEAD~1", "."), [("a.py", 4, "XPU101")])


def test_several_outputs_in_one_run(d):
    write("src/a.py", CUDA)
    r = run("check", "--output", "sarif=out.sarif", "--output", "github", "--output", "junit=out.xml",
            "--output", "gitlab=cq.json", "--output", "json=out.json", "src")
    eq(r.code, 1, r)
    eq(len(r.out.strip().splitlines()), 2)
    check(r.out.startswith("::warning file=src/a.py,line=2"), "github on stdout", r)
    eq(len(json.loads(read("out.sarif"))["runs"][0]["results"]), 2)
    eq(len(json.loads(read("out.json"))), 2)
    cq = json.loads(read("cq.json"))
    eq([(x["check_name"], x["location"]["path"], x["location"]["lines"]["begin"], x["severity"]) for x in cq],
       [("XPU101", "src/a.py", 2, "major"), ("XPU202", "src/a.py", 3, "major")])
    eq(len({x["fingerprint"] for x in cq}), 2)
    root = ET.parse("out.xml").getroot()
    eq((root.tag, root.get("tests"), root.get("failures")), ("testsuites", "2", "2"))
    cases = root.findall("./testsuite/testcase")
    eq([c.find("failure").get("type") for c in cases], ["XPU101", "XPU202"])
    eq(cases[0].get("file"), "src/a.py")
    # the text report stays on stdout when the extra outputs go to files
    r = run("check", "--output", "sarif=out2.sarif", "src")
    check(r.out.startswith("src/a.py:2:"), "text on stdout", r)
    # two reports cannot share stdout; unknown formats are refused
    eq(run("check", "--output", "github", "--output", "json", "src").code, 2)
    eq(run("check", "--format", "json", "--output", "github", "src").code, 2)
    eq(run("check", "--output", "xml=x", "src").code, 2)
    # a clean run: junit has one passing case, gitlab an empty list
    write("clean/c.py", "x = 1\n")
    eq(run("check", "--output", "junit=c.xml", "--output", "gitlab=c.json", "clean").code, 0)
    eq(ET.parse("c.xml").getroot().get("failures"), "0")
    eq(json.loads(read("c.json")), [])


def test_statistics(d):
    write("a.py", CUDA + "w.cuda()\n")
    r = run("check", "--statistics", "--target", "accelerator", "a.py")
    eq(r.code, 1)
    eq(r.out.splitlines(), ["2  XPU101  [ ] cuda-method-call", "1  XPU202  [*] cuda-stream-event",
                            "3 findings in total; [*] 1 fixable with `xpuify fix`."])
    j = json.loads(run("check", "--statistics", "--format", "json", "a.py").out)
    eq([(x["code"], x["count"]) for x in j], [("XPU101", 2), ("XPU202", 1)])


def test_statistics_per_directory_and_the_tests_recipe(d):
    """--statistics counts per directory (two levels below the shared one); the docs/ci.md recipe for tests demotes
    their findings to info so that the gate fails on product code only."""
    write("proj/src/pkg/a.py", CUDA + CUDA)
    write("proj/tests/test_a.py", CUDA)
    write("proj/tests/unit/test_b.py", CUDA + CUDA + CUDA)
    r = run("check", "--statistics", "proj")
    eq(r.code, 1)
    lines = r.out.splitlines()
    i = lines.index("By directory (under proj/):")
    eq(lines[i + 1:], ["6  tests/unit/", "4  src/pkg/", "2  tests/"])
    # one directory: no per-directory section
    check("By directory" not in run("check", "--statistics", "proj/src").out, "single directory")
    write("proj/.xpuify.yml", "fail-on: warning\n")
    write("proj/tests/.xpuify.yml", "extend: ../.xpuify.yml\nrule-options:\n  XPU: {severity: info}\n")
    eq(run("check", "proj/tests").code, 0)
    found_ = json.loads(run("check", "--format", "json", "proj").out)
    eq(sorted({(x["path"].split("/")[1], x["severity"]) for x in found_}), [("src", "warning"), ("tests", "info")])
    eq(run("check", "proj").code, 1)


def test_shards_cover_everything_once_and_stay_put(d):
    for i in range(40):
        write(f"pkg/m{i:02}.py", CUDA)
    full = found(".")
    eq(len(full), 80)
    shards = [found("--shard", f"{k}/4", ".") for k in range(1, 5)]
    eq(sorted(x for s in shards for x in s), sorted(full))
    check(all(s for s in shards), "every shard has work")
    # adding files moves no existing file to another shard
    for i in range(40, 60):
        write(f"pkg/m{i:02}.py", CUDA)
    after = [found("--shard", f"{k}/4", ".") for k in range(1, 5)]
    for before, now in zip(shards, after):
        check(set(before) <= set(now), "existing files keep their shard")
    # merge-sarif joins the shards' SARIF into the unsharded result
    for k in range(1, 5):
        eq(run("check", "--shard", f"{k}/4", "--output", f"sarif=s{k}.sarif", "--format", "concise", ".").code, 1)
    r = run("merge-sarif", "-o", "all.sarif", *[f"s{k}.sarif" for k in range(1, 5)])
    eq(r.code, 0, r)
    merged = json.loads(read("all.sarif"))
    whole = run("check", "--format", "sarif", ".").json()
    key = lambda x: (x["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], x["ruleId"],
                     x["partialFingerprints"]["xpuify/v1"])
    eq(sorted(map(key, merged["runs"][0]["results"])), sorted(map(key, whole["runs"][0]["results"])))
    rules = merged["runs"][0]["tool"]["driver"]["rules"]
    for res in merged["runs"][0]["results"]:
        eq(rules[res["ruleIndex"]]["id"], res["ruleId"])
    eq(run("check", "--shard", "5/4", ".").code, 2)
    eq(run("check", "--shard", "x", ".").code, 2)
    write("broken.sarif", "{")
    r = run("merge-sarif", "s1.sarif", "broken.sarif")
    check(r.code == 2 and "broken.sarif: not valid JSON" in r.err, "bad input named", r)


def test_merge_sarif_remaps_rule_indexes(d):
    def log(rules, results):
        return {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "xpuify", "version": "0.1.0",
                                                                  "rules": [{"id": i} for i in rules]}},
                                              "results": [{"ruleId": r, "ruleIndex": rules.index(r)} for r in results]}]}
    write("a.sarif", json.dumps(log(["A", "B"], ["B"])))
    write("b.sarif", json.dumps(log(["C", "B"], ["C", "B"])))
    r = run("merge-sarif", "a.sarif", "b.sarif")
    eq(r.code, 0, r)
    m = r.json()["runs"][0]
    eq([x["id"] for x in m["tool"]["driver"]["rules"]], ["A", "B", "C"])
    eq([(x["ruleId"], x["ruleIndex"]) for x in m["results"]], [("B", 1), ("C", 2), ("B", 1)])
    other = log(["A"], ["A"])
    other["runs"][0]["tool"]["driver"]["name"] = "other"
    write("c.sarif", json.dumps(other))
    eq(run("merge-sarif", "a.sarif", "c.sarif").code, 2)


def run_on_tty(args, env):
    """Runs xpuify with stderr on a pseudo-terminal; returns what the terminal showed."""
    master, slave = pty.openpty()
    p = subprocess.Popen([XPUIFY, *args], stdout=subprocess.DEVNULL, stderr=slave, env=env)
    os.close(slave)
    out = b""
    while True:
        r, _, _ = select.select([master], [], [], 30)
        if not r:
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    p.wait(timeout=60)
    os.close(master)
    return out.decode("utf-8", "replace")


def test_progress_only_on_a_terminal(d):
    for i in range(300):
        write(f"m{i:03}.py", CUDA)
    env = dict(os.environ, XPUIFY_PROGRESS_DELAY_MS="0")
    shown = run_on_tty(["check", "-j", "1", "."], env)
    check("xpuify: checked 300/300 files (100%)" in shown, "progress shown on a terminal", shown[-500:])
    check(shown.endswith("\r\x1b[K"), "the line is erased at the end", repr(shown[-40:]))
    eq(run_on_tty(["check", "--no-progress", "."], env), "")
    # not a terminal: silent
    r = run("check", ".", env={"XPUIFY_PROGRESS_DELAY_MS": "0"})
    eq(r.err, "")
    # a short run under the default delay shows nothing
    env = dict(os.environ)
    env.pop("XPUIFY_PROGRESS_DELAY_MS", None)
    eq(run_on_tty(["check", "m000.py"], env), "")


if __name__ == "__main__":
    main(globals())
