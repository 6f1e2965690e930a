"""A user rule whose PCRE2 pattern hits the match limit (catastrophic backtracking) is a reported rule error, never
"no more matches" (issue 19, item 5): the text and C front ends name the rule and the byte where it stopped, the file
appears as not completely checked in the report, a named file is an input error (exit 2), and under CI=true so is a
walked one. The findings made before the error stand; nothing of a failed file is cached."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import check, eq, main, run, write  # noqa: E402

# (a+)+b against a run of 40 "a" without "b" backtracks 2^40 ways: PCRE2 stops at its match limit
RULES = """rules:
  - code: %(code)s
    name: slow-pattern
    language: %(lang)s
    severity: warning
    summary: "A pattern that backtracks catastrophically."
    message: "found `{text}`"
    pattern: '(?<report>(a+)+b)|(?<report2>nvidia-smi)'
"""
SUBJECT = "nvidia-smi\n" + "a" * 40 + "c\nnvidia-smi\n"


def rules(code, lang):
    write(f"myrules/{code}.yml", RULES % {"code": code, "lang": lang})


def test_a_text_rule_that_hits_the_match_limit_is_a_rule_error(d):
    rules("XPT901", "text")
    write("run.sh", SUBJECT)
    reason = "rule XPT901: its pattern failed at byte 10 (match limit exceeded)"
    r = run("check", "--no-cache", "--rules", "myrules", "--select", "XPT9", "run.sh")
    eq(r.code, 2, "named: the rule error is an input error")
    check(f"xpuify: error: run.sh: {reason}; findings of this rule in this file may be missing" in r.err, "", r)
    check("run.sh:1:1: XPT901" in r.out, "the finding before the error stands", r)
    check(f"run.sh: not checked: {reason}" in r.out and "All checks passed" not in r.out, "", r)
    # walked: a warning, in the report of every format
    r = run("check", "--no-cache", "--rules", "myrules", "--select", "XPT9", "--format", "json", ".")
    eq(r.code, 1, r)
    errs = [f for f in r.json() if f["name"] == "not-checked"]
    eq([(f["path"], f["severity"]) for f in errs], [("run.sh", "warning")], r)
    check(reason in errs[0]["message"], "", r)
    r = run("check", "--no-cache", "--rules", "myrules", "--select", "XPT9", "--format", "sarif", ".")
    notes = json.loads(r.out)["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    check(reason in notes[0]["message"]["text"], "", r)
    eq(run("check", "--no-cache", "--rules", "myrules", "--select", "XPT9", ".", env={"CI": "true"}).code, 2)
    # the cache never keeps the results of a file whose analysis failed
    for _ in range(2):
        r = run("check", "--rules", "myrules", "--select", "XPT9", "run.sh", env={"XPUIFY_CACHE_STATS": "1"})
        check(reason in r.err and "0 hits" in r.err, "the rule error comes back on every run", r)


def test_a_c_rule_that_hits_the_match_limit_is_a_rule_error(d):
    rules("XPC901", "c")
    write("k.cu", "int nvidia, smi;\nint y = nvidia-smi;\nint " + "a" * 40 + "c;\n")
    r = run("check", "--no-cache", "--rules", "myrules", "--select", "XPC9", "k.cu")
    if "libclang" in r.err and "not analyzed" in r.err:
        return  # no libclang here: C files are not analyzed at all (reported as such, tested elsewhere)
    eq(r.code, 2, r)
    check("k.cu: rule XPC901: its pattern failed at byte" in r.err and "(match limit exceeded)" in r.err, "", r)


def test_an_ordinary_pattern_is_not_an_error(d):
    rules("XPT902", "text")
    write("run.sh", "nvidia-smi\n" + "a" * 10 + "c\n")
    r = run("check", "--no-cache", "--rules", "myrules", "--select", "XPT9", "run.sh")
    eq(r.code, 1, r)
    check("not checked" not in r.out and r.err == "", "", r)


if __name__ == "__main__":
    main(globals())
