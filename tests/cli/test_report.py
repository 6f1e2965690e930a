"""End-to-end tests of `xpuify report --html`: the page is self-contained (no network), and rendered in headless
Chromium it loads without errors, draws its charts and shows the key numbers; the verify matrix is read from an
`xpuify verify --format json` document."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import check, eq, main, read, run, write  # noqa: E402

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--enable-logging=stderr", "--v=0"]


def chromium(page, *extra):
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    check(exe, "chromium is installed (tools/deps.sh test)")
    profile = tempfile.mkdtemp(prefix="xpuify-chromium-")
    try:
        p = subprocess.run([exe, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *extra,
                            "file://" + os.path.abspath(page)], capture_output=True, text=True, timeout=120)
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    return p


def project():
    write("train.py", "import torch\n"
                      "torch.cuda.synchronize()\n"           # XPU202, safe fix
                      "torch.cuda.empty_cache()\n"           # XPU203, safe fix
                      "x = load().cuda()\n")                # XPU101 (a receiver of unknown type: unsafe only): needs a human
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
    check(not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", html), "no external resource")
    check("default-src 'none'" in html, "content security policy")
    # rendered: the script ran without error and drew the charts
    p = chromium("report.html", "--dump-dom")
    eq(p.returncode, 0, p.stderr[-2000:])
    dom = p.stdout
    body = re.search(r"<body[^>]*>", dom).group(0)
    check('data-rendered="ok"' in body, "script finished", body)
    check("data-error" not in body and "data-blocked" not in body, "no error, nothing blocked", body)
    check("Uncaught" not in p.stderr and "Refused to" not in p.stderr, "no console error", p.stderr[-2000:])
    rules_chart = re.search(r'<div id="chart-rules">(.*?)</div>', dom, re.S).group(1)
    bars = re.findall(r'<rect[^>]*class="bar"[^>]*data-value="(\d+)"', rules_chart)
    eq(sorted(map(int, bars), reverse=True), [2, 1, 1, 1, 1])  # XPU202 x2, XPU101, XPU201, XPU203, XPC501
    dirs_chart = re.search(r'<div id="chart-dirs">(.*?)</div>', dom, re.S).group(1)
    eq(sorted(map(int, re.findall(r'class="bar"[^>]*data-value="(\d+)"', dirs_chart))), [1, 2, 3])  # csrc too
    # the key numbers
    for ident, n in (("n-files", 4), ("n-findings", 6), ("n-fixable", 4), ("n-human", 2), ("n-changed", 2),
                     ("n-kernels", 1)):
        check(f'id="{ident}">{n}<' in dom, f"{ident} = {n}", re.findall(r'id="n-[a-z]+">\d+<', dom))
    # what fix changes, what needs a human, the kernels, the verify matrix
    check("torch.accelerator.synchronize()" in dom and "-torch.cuda.empty_cache()" in dom, "diffs")
    human = re.search(r'<table id="human-table">(.*?)</table>', dom, re.S).group(1)
    check("train.py:4:" in human and "XPU101" in human and "unsafe fix" in human, "needs a human", human)
    check("csrc/kernel.cu" in dom, "kernel listed")
    matrix = re.search(r'<table id="verify-matrix">(.*?)</table>', dom, re.S).group(1)
    check('st-fail">fail</span> <span class="muted">rtol 1e-3' in matrix, "matrix cell", matrix)
    eq(matrix.count('st-not-run">not-run'), 3)  # xpu for both checks, cuda for the second
    # a screenshot renders too (look at it: build the page and open it in a browser)
    p = chromium("report.html", "--screenshot=shot.png", "--window-size=1200,1600")
    eq(p.returncode, 0, p.stderr[-2000:])
    png = read("shot.png", "rb")
    check(png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20000, "a real screenshot", len(png))


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
