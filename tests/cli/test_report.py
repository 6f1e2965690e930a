"""End-to-end tests of `xpuify report --html`: the page is self-contained (no network), and rendered in headless
Chromium it loads without errors, draws its charts and shows the key numbers; the verify matrix is read from an
`xpuify verify --format json` document."""
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import check, eq, fixture, main, need_tool, read, run, write  # noqa: E402

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--enable-logging=stderr", "--v=0"]


def chromium(page, *extra):
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    exe or need_tool("chromium", "chromium")
    profile = tempfile.mkdtemp(prefix="xpuify-chromium-")
    try:
        p = subprocess.run([exe, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *extra,
                            "file://" + os.path.abspath(page)], capture_output=True, text=True, timeout=120)
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    return p


def project():
    write("train.py", "import torch, mylib\n"
                      "torch.cuda.synchronize()\n"           # XPU202, safe fix
                      "torch.cuda.empty_cache()\n"           # XPU203, safe fix
                      "x = mylib.load().cuda()\n")          # XPU101 (a receiver of unknown type: unsafe only): needs a human
    write("pkg/model.py", "import torch\nn = torch.cuda.device_count()\ntorch.cuda.synchronize()\n")
    write("csrc/kernel.cu", "__global__ void k(float *x) { x[0] = 1; }\n")
    write("pkg/clean.py", "x = 1\n")
    write("verify.json", json.dumps({
        "xpuify_verify": 1, "devices": ["cpu", "cuda", "xpu"],
        "note": "XPU is covered by API parity: no Intel GPU here",
        "checks": [{"name": "train.py", "results": {"cpu": "pass", "cuda": {"status": "pass", "detail": "1 GPU"},
                                                    "xpu": {"status": "not-run", "detail": "no device"}}},
                   {"name": "tests/test_model.py", "results": {"cpu": {"status": "fail", "detail": "rtol 1e-3"}}}]}))


def test_report_renders_in_chromium(d):
    project()
    r = run("report", "--html", "report.html", "--target", "accelerator", "--verify", "verify.json", ".")
    eq(r.code, 0, r)
    check("wrote the report report.html (6 findings in 4 files)" in r.err, "summary", r)  # the kernel is a C finding
    html = read("report.html")
    # self-contained: no external resources, and a policy that forbids loading any
    check(not re.search(r"""\bsrc\s*=\s*["']?(https?:|//)""", html) and not re.search(r"<link\b", html),
          "no external resource")
    # addresses out of the page are links to follow (the rules' documentation), never loads
    eq(set(re.findall(r"""<(\w+)[^>]*\shref\s*=\s*["']?(?:https?:|//)""", html)), {"a"})
    check("default-src 'none'" in html, "content security policy")
    # rendered: the script ran without error and drew the charts
    p = chromium("report.html", "--dump-dom")
    eq(p.returncode, 0, p.stderr[-2000:])
    dom = p.stdout
    body = re.search(r"<body[^>]*>", dom).group(0)
    check('data-rendered="ok"' in body, "script finished", body)
    check("data-error" not in body and "data-blocked" not in body, "no error, nothing blocked", body)
    check("Uncaught" not in p.stderr and "Refused to" not in p.stderr, "no console error", p.stderr[-2000:])
    rules_chart = re.search(r'<div id="chart-rules"[^>]*>(.*?)</div>', dom, re.S).group(1)
    bars = re.findall(r'<rect[^>]*class="bar"[^>]*data-value="(\d+)"', rules_chart)
    eq(sorted(map(int, bars), reverse=True), [2, 1, 1, 1, 1])  # XPU202 x2, XPU101, XPU201, XPU203, XPC501
    dirs_chart = re.search(r'<div id="chart-dirs"[^>]*>(.*?)</div>', dom, re.S).group(1)
    # three rows: ./ (top-level files), pkg/ and csrc/
    eq(sorted(map(int, re.findall(r'class="bar"[^>]*data-value="(\d+)"', dirs_chart))), [1, 2, 3])
    # the key numbers
    for ident, n in (("n-files", 4), ("n-findings", 6), ("n-fixable", 4), ("n-human", 2), ("n-changed", 2),
                     ("n-kernels", 1)):
        check(f'id="{ident}">{n}<' in dom, f"{ident} = {n}", re.findall(r'id="n-[a-z]+">\d+<', dom))
    # what fix changes, what needs a human, the kernels, the verify matrix
    check("torch.accelerator.synchronize()" in dom and "-torch.cuda.empty_cache()" in dom, "diffs")
    human = re.search(r'<table id="human-table">(.*?)</table>', dom, re.S).group(1)
    check(re.search(r"XPU101</code></a> cuda-method-call</td><td class=\"r\">0</td><td class=\"r\">1</td>", human),
          "needs a human: XPU101 has one unsafe fix to review", human)
    # the findings, grouped by rule, each linked to its file and line and to its rule
    grp = re.search(r'<details class="grp" data-rule="XPU101">(.*?)</details>', dom, re.S).group(1)
    check('data-fix="unsafe"' in grp and 'data-sev="warning"' in grp and "train.py:4:" in grp, "the XPU101 group", grp)
    check(re.search(r'href="file:///[^"]*/train\.py"><code>train\.py:4:\d+</code>', grp), "file link", grp)
    check('href="https://github.com/xpuify/xpuify/blob/main/docs/rules.md#XPU101"' in grp, "docs link", grp)
    check("csrc/kernel.cu" in dom, "kernel listed")
    matrix = re.search(r'<table id="verify-matrix">(.*?)</table>', dom, re.S).group(1)
    check('st-fail">fail</span> <span class="muted">rtol 1e-3' in matrix, "matrix cell", matrix)
    eq(matrix.count('st-not-run">not-run'), 3)  # xpu for both checks, cuda for the second
    # a screenshot renders too (look at it: build the page and open it in a browser)
    p = chromium("report.html", "--screenshot=shot.png", "--window-size=1200,1600")
    eq(p.returncode, 0, p.stderr[-2000:])
    png = read("shot.png", "rb")
    check(png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20000, "a real screenshot", len(png))


LINES = ["torch.cuda.synchronize()",                # XPU202, safe
         "x = y.cuda()",                            # XPU101, unsafe (the file imports a library unknown to xpuify)
         "n = torch.cuda.device_count()",           # XPU201, safe
         "torch.backends.cudnn.benchmark = True",   # XPU501, by hand (info)
         "z = torch.zeros(3, device='cuda')"]       # XPU103, safe


def big_project(top_dirs, per_top, depth_name):
    """About 3,000 findings over many directories: TOP_DIRS top-level directories, each with PER_TOP subdirectories
    (one of them nested under a long name), plus top-level files. Deterministic."""
    k = 0
    dirs = [""]
    for t in range(top_dirs):
        top = f"top{t:02}" + (f"_{depth_name}" if t == top_dirs - 1 else "")  # one long name at the top
        dirs.append(top)
        for m in range(per_top):
            dirs.append(f"{top}/mod{m}")
            dirs.append(f"{top}/mod{m}/{depth_name}/inner")
    i = 0
    while k < 3000:
        d = dirs[(i * 11) % len(dirs)]
        n = 1 + (i * 5) % 9
        body = "import torch, mylib\n" + "".join(LINES[(i + j) % len(LINES)] + "\n" for j in range(n))
        write(os.path.join(d, f"f{i}.py") if d else f"f{i}.py", body)
        k += n
        i += 1


def page_state(page, fragment=""):
    """The DOM after the script ran, with FRAGMENT (#filter:...) in the address: (body attributes, DOM)."""
    p = chromium(page + fragment, "--dump-dom") if fragment else chromium(page, "--dump-dom")
    eq(p.returncode, 0, p.stderr[-2000:])
    body = dict(re.findall(r'(data-[a-z-]+)="([^"]*)"', re.search(r"<body[^>]*>", p.stdout).group(0)))
    check(body.get("data-rendered") == "ok" and "data-error" not in body, "rendered without error", body)
    return body, p.stdout


def chart_rows(dom, ident):
    chart = re.search(r'<div id="%s"([^>]*)>(.*?)</div>' % ident, dom, re.S)
    rows = re.findall(r'<g class="row" data-value="(\d+)" data-label="([^"]*)"', chart.group(2))
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", chart.group(2))
    left = int(re.search(r'data-label-left="(-?\d+)"', chart.group(1)).group(1))
    return [(int(v), html.unescape(l)) for v, l in rows], [html.unescape(t) for t in texts], left


def test_report_of_a_large_project(d):
    """3,000 findings in ~150 directories: the directory chart rolls up to at most 20 rows that sum to the total,
    labels whole; the page is short (grouped findings); the filters (read from #filter:... in the address, as a
    link to a filtered view gives them) change the counts to the right numbers."""
    big_project(8, 8, "a_rather_long_subpackage_name_that_must_not_be_cut")
    r = run("report", "--html", "report.html", ".")
    eq(r.code, 0, r)
    body, dom = page_state("report.html")
    total = int(re.search(r'id="n-findings">(\d+)<', dom).group(1))
    check(3000 <= total < 3020, "about 3,000 findings", total)
    eq(body["data-shown"], str(total), "no filter: every finding shown")
    check(int(body["data-height"]) < 12000, "the page is short (grouped findings, folded diffs)", body["data-height"])
    for section in ("summary", "by-dir", "by-rule", "effort", "findings", "fixes", "human"):
        check(f'href="#{section}"' in dom and f'id="{section}"' in dom, f"table of contents: {section}")
    rows, texts, left = chart_rows(dom, "chart-dirs")
    check(2 <= len(rows) <= 20, "at most 20 directory rows", rows)
    eq(sum(v for v, _ in rows), total, "the directory chart sums to the total")
    check(left >= 0, "no label starts left of the chart (cut)", left)
    check(any("a_rather_long_subpackage_name_that_must_not_be_cut" in l for _, l in rows), "a long label", rows)
    for _, label in rows:
        check(label in texts, "the whole label is drawn", (label, texts))
    check(any("/" in l.rstrip("/") for _, l in rows), "the biggest directories are split into subdirectories", rows)
    # the same numbers in the table
    table = re.search(r'<table id="dir-table">(.*?)</table>', dom, re.S).group(1)
    eq(sum(int(n) for n in re.findall(r'</a></td><td class="r">(\d+)</td>', table)), total)
    rules, _, left = chart_rows(dom, "chart-rules")
    eq(sum(v for v, _ in rules), total, "the rule chart sums to the total")
    by_rule = {l.split()[0]: v for v, l in rules}
    eq(set(by_rule), {"XPU202", "XPU101", "XPU201", "XPU501", "XPU103"})
    # mechanical vs human: the cards add up, and the effort follows the rates the page states
    n = {k: int(re.search(r'id="n-%s">(\d+)<' % k, dom).group(1)) for k in ("fixable", "unsafe", "human")}
    eq(n["fixable"], by_rule["XPU202"] + by_rule["XPU201"] + by_rule["XPU103"])
    eq(n["unsafe"], by_rule["XPU101"])
    eq(n["human"], by_rule["XPU101"] + by_rule["XPU501"])
    effort = float(re.search(r'id="n-effort">([\d.]+) h<', dom).group(1))
    minutes = n["fixable"] * 1 + by_rule["XPU101"] * 5 + by_rule["XPU501"] * 15
    check(abs(effort - minutes / 60) < 0.06, "effort = 1 min per safe fix + 5 per unsafe + 15 by hand", (effort, minutes))
    check("Method: every finding is counted at a fixed rate" in dom, "the method is stated")
    # filters
    body, _ = page_state("report.html", "#filter:rule=XPU101")
    eq(body["data-shown"], str(by_rule["XPU101"]), "filter by rule")
    body, _ = page_state("report.html", "#filter:sev=info")
    eq(body["data-shown"], str(by_rule["XPU501"]), "filter by severity: XPU501 is the only info rule")
    body, _ = page_state("report.html", "#filter:fix=safe")
    eq(body["data-shown"], str(n["fixable"]), "filter by kind of fix")
    for k, (v, label) in enumerate(rows[:3]):
        body, fdom = page_state("report.html", f"#filter:dir={k}")
        eq(body["data-shown"], str(v), f"filter by directory {label}")
        trs = re.findall(r'<tr class="f" [^>]*>', fdom)
        eq(len(trs), total, "every row is still in the page")
        eq(sum(1 for t in trs if "hidden" not in t), v, "the others hidden")
    body, fdom = page_state("report.html", "#filter:rule=XPU202&q=top03/")
    expected = sum(1 for p, c in re.findall(r'<tr class="f" data-rule="(XPU202)"[^>]*data-path="(top03/[^"]*)"', dom))
    check(expected > 0, "the combination selects something", expected)
    eq(body["data-shown"], str(expected), "rule and path together")
    # look at it: a screenshot of the top of the page renders
    p = chromium("report.html", "--screenshot=shot.png", "--window-size=1300,2400")
    eq(p.returncode, 0, p.stderr[-2000:])
    check(read("shot.png", "rb")[:8] == b"\x89PNG\r\n\x1a\n", "a screenshot")


def test_report_rolls_many_top_level_directories_into_other(d):
    """30 top-level directories do not fit in 20 rows: 19 rows and "other (11 directories)", still the total."""
    big_project(30, 1, "sub")
    eq(run("report", "--html", "r.html", ".").code, 0)
    body, dom = page_state("r.html")
    total = int(re.search(r'id="n-findings">(\d+)<', dom).group(1))
    rows, texts, left = chart_rows(dom, "chart-dirs")
    eq(len(rows), 20)
    eq(sum(v for v, _ in rows), total)
    check(re.fullmatch(r"other \(\d+ directories\)", rows[-1][1]), "the last row is other", rows[-1])
    body, _ = page_state("r.html", "#filter:dir=19")
    eq(body["data-shown"], str(rows[-1][0]), "filtering on other lists its findings")


def test_report_of_many_rules(d):
    """The repository's fixtures fire more than 20 rules: the rule chart shows 19 and "other (N rules)", still summing
    to the total; the table lists every rule."""
    eq(run("report", "--html", "r.html", fixture()).code, 0)
    body, dom = page_state("r.html")
    total = int(re.search(r'id="n-findings">(\d+)<', dom).group(1))
    rows, _, left = chart_rows(dom, "chart-rules")
    table = re.findall(r'<tr id="rule-([A-Z]+\d+)">', dom)
    check(len(table) > 20, "more than 20 rules fire", len(table))
    eq(len(rows), 20)
    eq(rows[-1][1], f"other ({len(table) - 19} rules)")
    eq(sum(v for v, _ in rows), total)
    check(left >= 0, "labels whole", left)


def test_report_without_findings(d):
    write("clean.py", "x = 1\n")
    eq(run("report", "--html", "r.html", "clean.py").code, 0)
    dom = chromium("r.html", "--dump-dom").stdout
    check('data-rendered="ok"' in dom and 'id="n-findings">0<' in dom and "No findings." in dom, "empty report",
          dom[-3000:])


def test_report_errors(d):
    project()
    eq(run("report", ".").code, 2)  # --html is required
    write("bad.json", json.dumps({"devices": ["cpu"], "checks": [{"name": "t", "results": {"cpu": 3}}]}))
    r = run("report", "--html", "r.html", "--verify", "bad.json", ".")
    check(r.code == 2 and "checks[0].results.cpu must be a status string" in r.err, "bad verify named", r)
    check(not os.path.exists("r.html"), "nothing written")
    write("bad.json", "{")
    eq(run("report", "--html", "r.html", "--verify", "bad.json", ".").code, 2)
    eq(run("report", "--html", "/nonexistent/dir/r.html", ".").code, 2)


def test_report_reads_verify_output(d):
    """The document `xpuify verify --format json` writes is read as it is: one row per program variant, one column
    per tier, absent tiers not-run with the reason."""
    write("main.py", "import torch\nx = torch.ones(3).cuda()\nprint(float(x.sum()))\n")
    v = run("verify", ".", "--run", "/usr/bin/python3 main.py",
            "--devices", "cpu", "--format", "json", "-q")
    out = json.loads(v.out)
    eq(v.code, 0, v)
    write("v.json", v.out)
    r = run("report", "--html", "r.html", "--verify", "v.json", ".")
    eq(r.code, 0, r)
    dom = chromium("r.html", "--dump-dom").stdout
    matrix = re.search(r'<table id="verify-matrix">(.*?)</table>', dom, re.S).group(1)
    check("original: /usr/bin/python3 main.py" in matrix and "patched: /usr/bin/python3 main.py" in matrix, "rows",
          matrix)
    # the CUDA-only original fails on the CPU; the patched program matches the reference... or runs: a pass
    check('st-fail">fail</span>' in matrix and 'st-pass">pass</span>' in matrix, "cells", matrix)
    check(out["passed"] is True, "verify passed", out.get("summary"))


if __name__ == "__main__":
    main(globals())
