"""End-to-end tests of the report formats' edges: `check --help` names every format that works, a message with a
line break stays one line in text/concise and survives as a character reference in JUnit attributes, and
merge-sarif drops (and reports) results it already has."""
import json
import os
import re
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import check, eq, main, read, run, write  # noqa: E402

RULE = """rules:
  - code: ACME301
    name: acme-two-line-message
    language: python
    message: "first line\\nsecond line"
    triggers: ['torch\\\\.cuda']
    query: |
      ((attribute) @report (#eq? @report "torch.cuda.synchronize"))
"""


def test_help_lists_every_format_that_works(d):
    r = run("check", "--help")
    line = next(x for x in r.out.splitlines() if "--format FMT" in x)
    listed = re.findall(r"\b(\w+)\b", line.split("FMT", 1)[1].replace("(default)", ""))
    write("a.py", "import torch\ntorch.cuda.synchronize()\n")
    for fmt in listed:
        got = run("check", "--no-cache", "--format", fmt, "a.py")
        eq(got.code, 1, f"{fmt}: {got}")
    # and every format check accepts is listed
    bad = run("check", "--format", "nope", "a.py")
    known = bad.err.split("known: ", 1)[1].rstrip(")\n").split(", ")
    eq(sorted(listed), sorted(known))
    eq(len(known), 7)


def test_a_message_with_a_line_break_stays_one_line(d):
    write("rules/r.yml", RULE)
    write("a.py", "import torch\ntorch.cuda.synchronize()\n")
    args = ("check", "--no-cache", "--no-config", "--rules", "rules", "--select", "ACME301")
    c = run(*args, "--format", "concise", "a.py")
    eq(c.code, 1, c)
    eq(c.out.splitlines()[0], "a.py:2:1: ACME301 [acme-two-line-message] first line second line")
    eq(len(c.out.splitlines()), 2, c)  # the finding and the summary line
    t = run(*args, "a.py")
    eq(t.out.splitlines()[0], "a.py:2:1: ACME301 [acme-two-line-message] first line second line")
    j = run(*args, "--format", "junit", "a.py")
    check("first line&#10;second line" in j.out and "first line\nsecond line\"" not in j.out, "escaped", j.out)
    fail = ET.fromstring(j.out).find(".//failure")
    eq(fail.get("message"), "first line\nsecond line")  # an XML parser gives the line break back
    # json and sarif keep the message as it is
    eq(run(*args, "--format", "json", "a.py").json()[0]["message"], "first line\nsecond line")


def test_merge_sarif_drops_and_reports_duplicates(d):
    write("a.py", "import torch\ntorch.cuda.synchronize()\nx = y.cuda()\n")
    write("b.py", "import torch\ntorch.cuda.synchronize()\n")
    r = run("check", "--no-cache", "--no-config", "--format", "sarif", "-o", "s1.sarif", "a.py", "b.py")
    eq(r.code, 1, r)
    n = len(json.loads(read("s1.sarif"))["runs"][0]["results"])
    eq(n, 3)
    m = run("merge-sarif", "-o", "m.sarif", "s1.sarif", "s1.sarif")
    eq(m.code, 0, m)
    check("3 results were already in an earlier input" in m.err, "warned", m)
    merged = json.loads(read("m.sarif"))["runs"][0]
    eq(len(merged["results"]), 3)
    # the base the results' locations name is still declared
    eq(merged["originalUriBaseIds"], json.loads(read("s1.sarif"))["runs"][0]["originalUriBaseIds"])
    # shards that do not overlap merge without a word
    run("check", "--no-cache", "--no-config", "--format", "sarif", "-o", "s2.sarif", "a.py")
    run("check", "--no-cache", "--no-config", "--format", "sarif", "-o", "s3.sarif", "b.py")
    m = run("merge-sarif", "-o", "m2.sarif", "s2.sarif", "s3.sarif")
    eq((m.code, m.err), (0, ""))
    eq(len(json.loads(read("m2.sarif"))["runs"][0]["results"]), 3)


def test_xpu212_message_keeps_prose_out_of_code_spans(d):
    write("p.py", "import torch\nacts = [torch.profiler.ProfilerActivity.CUDA]\n")
    r = run("check", "--no-cache", "--no-config", "--format", "json", "p.py")
    msg = r.json()[0]["message"]
    for span in re.findall(r"`([^`]*)`", msg):
        check(re.fullmatch(r"[\w.()]+", span), f"code span holds code only: `{span}`", msg)


def test_a_long_line_is_shown_around_each_finding(d):
    """A source line longer than 160 code points is shown as a window around the finding ("..." where the line goes
    on), with the carets under the finding; columns count code points (an `é` precedes the calls). Printing the
    whole line for each finding made the text report of a 1 MB one-line file 80 GB; the baseline's `source` is cut
    the same way."""
    calls = ", ".join(f"a{i}.cuda()" for i in range(2000))
    line = f"y = ['é', {calls}]"
    write("a.py", f"import torch\n{line}\n")
    r = run("check", "--no-cache", "a.py")
    eq(r.code, 1, r)
    out = r.out.splitlines()
    heads = [i for i, x in enumerate(out) if x.startswith("a.py:2:")]
    eq(len(heads), 2000, r.out[-300:])
    cols = [int(out[i].split(":")[2]) for i in heads]
    want = [line.index(f"a{k}.cuda()") + len(f"a{k}.") + 1 for k in range(2000)]
    eq(cols, want, "columns in code points")
    for n, i in enumerate(heads):
        shown, carets = out[i + 1].split(" | ", 1)[1], out[i + 2].split(" | ", 1)[1]
        check(len(shown) <= 160 + 6, f"finding {n}: a window, not the whole line: {len(shown)} characters")
        at = len(carets) - len(carets.lstrip(" "))
        eq(shown[at:at + len(carets.strip())], "cuda", f"finding {n}: carets under the call\n{shown}\n{carets}")
        check(shown.startswith("...") == (cols[n] - 1 > 40), f"finding {n}: '...' where the line goes on before: {shown[:20]}")
        ends = cols[n] - 1 + len("cuda") + 40 >= len(line)
        check(shown.endswith("...") != ends, f"finding {n}: '...' where the line goes on after: {shown[-20:]}")
    check(len(r.out) < 2000 * 400, f"text report {len(r.out)} bytes for 2,000 findings")
    write("short.py", "import torch\nx = [a.cuda(), b.cuda()]\n")
    short = run("check", "--no-cache", "--select", "XPU101", "short.py")
    check(" 2 | x = [a.cuda(), b.cuda()]\n   | " + " " * 7 + "^^^^\n" in short.out, str(short))  # short lines whole
    b = run("check", "--no-cache", "--write-baseline", "base.json", "a.py")
    entries = json.loads(read("base.json"))["findings"]
    eq(len(entries), 2000)
    check(all(len(e["source"]) <= 203 and e["source"].endswith("...") for e in entries), entries[0]["source"])
    eq(run("check", "--no-cache", "--baseline", "base.json", "a.py").code, 0, "the cut source does not matter")


if __name__ == "__main__":
    main(globals())
