"""End-to-end tests of user rules (YAML in the built-in format, loaded from the configuration's rule-dirs or
--rules) and of `xpuify test-rules` (flag / ok snippets and fix examples), including the built-in catalog."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import ROOT, check, eq, main, run, write  # noqa: E402

RULE = """rules:
  - code: ACME101
    name: acme-cuda-sync
    language: python
    severity: error
    fix: safe
    summary: Our CUDA-only sync helper.
    message: "`{name}` only syncs CUDA; use `{replacement}`"
    doc: Use the device-agnostic helper.
    qualnames:
      - {name: acme.gpu.cuda_sync, replacement: acme.gpu.sync}
    examples:
      flag: ["import acme.gpu\\nacme.gpu.cuda_sync()\\n"]
      ok: ["import acme.gpu\\nacme.gpu.sync()\\n"]
      fix:
        - before: "import acme.gpu\\nacme.gpu.cuda_sync()\\n"
          after: "%s"
"""
GOOD = RULE % "import acme.gpu\\nacme.gpu.sync()\\n"


def test_builtin_rules_pass_their_examples():
    r = run("test-rules")
    eq(r.code, 0, r)
    check(r.out.strip().endswith("all pass"), "summary", r)
    # the rule files on disk (what a rule author edits) replace the compiled-in ones
    r = run("test-rules", "--verbose", os.path.join(ROOT, "rules", "python"))
    eq(r.code, 0, r)
    check("ok   XPU202 cuda-stream-event (6 examples)" in r.out, "per-rule line", r)


def test_examples_do_not_read_the_working_directory(d):
    """The examples are files of an empty project of their own: run from a directory whose project imports paddle
    (whose objects have a `.cuda()` of their own, which makes `.cuda()` on an unknown receiver unsafe there), the
    built-in examples still pass (XPU101's fix example of an unknown receiver failed there before)."""
    write("proj/pyproject.toml", "")
    write("proj/other.py", "import paddle\nx = paddle.ones([2]).cuda()\n")
    os.makedirs("tmp")
    r = run("test-rules", cwd="proj", env={"TMPDIR": os.path.abspath("tmp")})
    eq(r.code, 0, r)
    check(r.out.strip().endswith("all pass"), "summary", r)
    eq(os.listdir("tmp"), [], "the examples' directory is made under TMPDIR and removed")


def test_user_rule_examples(d):
    write("myrules/acme.yml", GOOD)
    r = run("test-rules", "-v", "myrules")
    eq(r.code, 0, r)
    eq(r.out.splitlines(), ["ok   ACME101 acme-cuda-sync (3 examples)", "1 rule, 3 examples: all pass"])
    # each kind of mismatch is named and fails the run
    write("myrules/acme.yml", RULE % "import acme.gpu\\nacme.gpu.synchronize()\\n")
    r = run("test-rules", "myrules")
    eq(r.code, 1, r)
    check("FAIL ACME101 acme-cuda-sync" in r.out and "fix example 1" in r.out, "fix mismatch", r)
    check("+acme.gpu.sync()" in r.out and "-acme.gpu.synchronize()" in r.out, "diff shown", r)
    write("myrules/acme.yml", GOOD.replace('ok: ["import acme.gpu\\nacme.gpu.sync()\\n"]',
                                           'ok: ["import acme.gpu\\nacme.gpu.cuda_sync()\\n"]'))
    r = run("test-rules", "myrules")
    check(r.code == 1 and "ok example 1 is reported 1 time" in r.out, "ok mismatch", r)
    write("myrules/acme.yml", GOOD.replace('flag: ["import acme.gpu\\nacme.gpu.cuda_sync()\\n"]', 'flag: ["x = 1"]'))
    r = run("test-rules", "myrules")
    check(r.code == 1 and "flag example 1 is not reported: x = 1" in r.out, "flag mismatch", r)
    # a rule that does not load is a usage error naming the place
    write("myrules/acme.yml", GOOD.replace("    examples:", "    bogus: 1\n    examples:"))
    r = run("test-rules", "myrules")
    check(r.code == 2 and "myrules/acme.yml:12:5: unknown rule key `bogus`" in r.err, "load error", r)
    write("myrules/acme.yml", GOOD.replace("          after:", "          aftr:"))
    r = run("test-rules", "myrules")
    check(r.code == 2 and "unknown key `aftr` in a fix example" in r.err, "fix example key", r)
    eq(run("test-rules", "nowhere").code, 2)


def test_user_rules_from_configuration(d):
    write("tools/rules/acme.yml", GOOD)
    write(".xpuify.yml", "rule-dirs: [tools/rules]\n")
    write("a.py", "import acme.gpu\nacme.gpu.cuda_sync()\n")
    write("vendored/.xpuify.yml", "select: [XPU]\n")  # no rule-dirs: the user rule does not run there
    write("vendored/b.py", "import acme.gpu\nacme.gpu.cuda_sync()\n")
    r = run("check", "--format", "json", ".")
    eq(r.code, 1, r)
    eq([(f["path"], f["code"], f["severity"]) for f in r.json()], [("a.py", "ACME101", "error")])
    # selectable by code, configurable like a built-in rule, fixable with `fix`
    eq(run("check", "--ignore", "ACME", "a.py").code, 0)
    eq(run("fix", "a.py").code, 0)
    eq(open("a.py").read(), "import acme.gpu\nacme.gpu.sync()\n")
    # --rules on the command line applies everywhere
    write("c.py", "import acme.gpu\nacme.gpu.cuda_sync()\n")
    r = run("check", "--no-config", "--rules", "tools/rules", "--format", "json", "c.py", "vendored/b.py")
    eq(sorted(f["path"] for f in r.json()), ["c.py", "vendored/b.py"])
    # a user rule may not reuse a built-in code
    write("tools/rules/acme.yml", GOOD.replace("ACME101", "XPU101"))
    r = run("check", "a.py")
    check(r.code == 2 and "defined twice" in r.err, "duplicate code", r)


def test_user_query_rooted_at_a_definition(d):
    """A user rule rooted at a definition (its match spans the header and the body) finds the same with region
    selection as with whole files: queries then run over whole units, not only the statements with a match."""
    write("rules/r.yml", """rules:
  - code: ACME201
    name: acme-cuda-def
    language: python
    message: "a function that calls into torch.cuda"
    triggers: ['torch\\.cuda']
    query: |
      (function_definition name: (identifier) @report body: (block (expression_statement (call) @c))
        (#match? @c "torch\\.cuda"))
""")
    body = "".join(f"def pad{i}(x):\n    return x + {i}\n\n\n" for i in range(40))
    write("m.py", "import torch\n\n\n" + body + "def sync():\n    x = 1\n    torch.cuda.synchronize()\n")
    for extra in ([], ["--whole-files"]):
        r = run("check", "--rules", "rules", "--select", "ACME201", "--format", "json", *extra, "m.py")
        eq([(x["line"], x["code"]) for x in r.json()], [(164, "ACME201")], " ".join(extra) or "regions")

if __name__ == "__main__":
    main(globals())
