"""Query sets of the rules a file can match (analyzer/core/an_qlive.c): a file is queried with the patterns of only
the rules whose triggers (or `needs`) its words can match. That must never change a finding, a fix or a message:
every labelled fixture and example is checked both ways (XPUIFY_NO_QLIVE=1: every rule's patterns, always), alone
(one file: the narrowed set is what a pre-commit hook gets) and all in one run (the sets are shared by threads), with
the fixes' diff too. `check -v` says which set each run got, so the narrowing is seen to happen; a user's rule is
never narrowed (its `needs` are not checked against its query)."""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import ROOT, check, eq, fixture, main, run, write  # noqa: E402

OFF = {"XPUIFY_NO_QLIVE": "1"}


def py_files():
    out = []
    for d in ("python", "golden", "runtime"):
        base = fixture(d)
        for dp, _, fs in os.walk(base):
            out += [os.path.join(dp, f) for f in sorted(fs) if f.endswith(".py")]
    ex = os.path.join(ROOT, "examples")
    for dp, _, fs in os.walk(ex):
        out += [os.path.join(dp, f) for f in sorted(fs) if f.endswith(".py")]
    return sorted(out)


def both(*args, env=None):
    a = run(*args, env=env)
    b = run(*args, env={**(env or {}), **OFF})
    return a, b


def test_every_fixture_alone_gives_the_same_findings():
    files = py_files()
    check(len(files) > 60, f"only {len(files)} Python fixtures found")
    for f in files:
        a, b = both("check", "--no-cache", "--no-ignore", "--exit-zero", "--format", "json", f)
        eq(a.code, b.code, f)
        eq(a.out, b.out, f"findings of {f} with and without narrowed query sets")


def test_all_fixtures_in_one_run_and_their_fixes():
    files = py_files()
    for threads in ("1", "2"):
        a, b = both("check", "--no-cache", "--no-ignore", "--exit-zero", "--threads", threads, "--format", "json", *files)
        eq(a.out, b.out, f"one run over every fixture, --threads {threads}")
    a, b = both("fix", "--diff", "--no-cache", "--unsafe-fixes", *files)
    eq(a.code, b.code)
    eq(a.out, b.out, "the fixes' diff")


def test_dense_device_strings_with_and_without_a_quoted_cuda():
    # XPU103/XPU104 need a string starting with `cuda`: a file with only `.cuda()` calls skips their patterns, one
    # that also selects a device by string still gets them (the set is chosen per file)
    write("calls.py", "import torch\n" + "".join(f"x{i} = x.cuda()\n" for i in range(50)))
    write("strings.py", "import torch\n" + "".join(f"x{i} = x.to('cuda:{i}')\n" for i in range(50)) +
          'device = "cuda" if torch.cuda.is_available() else "cpu"\n')
    for f in ("calls.py", "strings.py"):
        a, b = both("check", "--no-cache", "--exit-zero", "--format", "json", f)
        eq(a.out, b.out, f)
    r = run("check", "--no-cache", "--exit-zero", "--format", "concise", "calls.py", "strings.py")
    eq(r.out.count("XPU101"), 50, r.out)
    eq(r.out.count("XPU103"), 50, r.out)
    eq(r.out.count("XPU104"), 1, r.out)
    # each file alone: calls.py gets a narrowed set (XPU101's patterns), a file without any query rule's words gets
    # none, and with XPUIFY_NO_QLIVE every file gets every rule's set
    write("api.py", "from torch import cuda\ncuda.synchronize()\n")  # API-table words only
    for f, want in (("calls.py", "1 with the patterns of the rules the file can match (1 such sets compiled), 0 with none"),
                    ("api.py", "0 with the patterns of the rules the file can match (0 such sets compiled), 1 with none")):
        r = run("check", "--no-cache", "--exit-zero", "-v", f)
        check(want in r.err, r.err)
        r = run("check", "--no-cache", "--exit-zero", "-v", f, env=OFF)
        check("0 with none (no query rule can match), 1 with every rule's" in r.err, r.err)


def test_a_kept_set_serves_every_file_whose_rules_it_holds():
    # one thread, paths in order: a.py's set (`.cuda()` and `is_cuda`) holds every rule b.py (`.cuda()` only) can
    # match, so b.py is served by it and no second set is compiled
    write("a.py", "import torch\nif x.is_cuda:\n    y = x.cuda()\n")
    write("b.py", "import torch\ny = x.cuda()\n")
    r = run("check", "--no-cache", "--exit-zero", "-v", "--threads", "1", "a.py", "b.py")
    check("2 with the patterns of the rules the file can match (1 such sets compiled)" in r.err, r.err)
    # files of many different words: the sets compiled stay few (AN_LIVE_SETS) and small together (half the rules)
    words = ["x.cuda()", "x.is_cuda", "torch.device('cuda')", "x.ipc_handle()", "enable_timing=True",
             "get_device_properties(0)", "GradScaler()", "fork_rng()", "register_kernel('cuda')", "cudnn.benchmark",
             "backend='nccl'", "NCCL_DEBUG", "device_ids=[0]", "CUDA_VISIBLE_DEVICES", "nvidia-smi"]
    files = []
    for i, w in enumerate(words):
        write(f"m{i:02}.py", f"import torch\nv = {w}\n")
        files.append(f"m{i:02}.py")
    a = run("check", "--no-cache", "--exit-zero", "-v", "--threads", "1", "--format", "json", *files)
    m = re.search(r"query runs: (\d+) with the patterns of the rules the file can match \((\d+) such sets compiled\)", a.err)
    check(m, a.err)
    check(int(m.group(2)) <= 8, a.err)
    b = run("check", "--no-cache", "--exit-zero", "--threads", "1", "--format", "json", *files, env=OFF)
    eq(a.out, b.out)


NEEDS_RULE = """rules:
  - code: USR001
    name: user-device-string
    language: python
    severity: warning
    summary: a device string
    message: "device string {text}"
    triggers: ['\\bdevice\\b']
    needs: ['"gpu']
    query: |
      (keyword_argument name: (identifier) @k value: (string) @report (#eq? @k "device"))
"""


def test_a_rules_needs_narrow_only_shipped_rules():
    # a user's rule with `needs` is accepted, but the catalog then never narrows: its finding stays where its
    # `needs` do not hold
    write("rules/r.yml", NEEDS_RULE)
    write("m.py", 'import torch\nx = torch.zeros(3, device="cpu")\n')
    r = run("check", "--no-cache", "--exit-zero", "--rules", "rules", "--format", "concise", "m.py")
    check("USR001" in r.out, str(r))
    write("bad/r.yml", NEEDS_RULE.replace("    query: |\n      (keyword_argument name: (identifier) @k value: "
                                          "(string) @report (#eq? @k \"device\"))\n",
                                          "    qualnames:\n      - name: torch.cuda.foo\n"))
    r = run("check", "--no-cache", "--rules", "bad", "m.py")
    eq(r.code, 2, r)
    check("`needs` only applies to query rules" in r.err, str(r))


if __name__ == "__main__":
    main(globals())
