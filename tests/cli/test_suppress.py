"""End-to-end tests of suppression comments: every directive form, the unused-suppression rule (XPU002) and its
fix, and `check --add-ignore[=REASON]` (placement, merging, reasons, CRLF, idempotency)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import check, eq, main, read, run, write  # noqa: E402


def findings(*args):
    r = run("check", "--format", "json", *args)
    check(r.code in (0, 1), "check ran", r)
    return [(f["line"], f["code"]) for f in r.json()]


def test_directive_forms(d):
    write("a.py", "import torch\n"
                  "torch.cuda.synchronize()  # xpuify: ignore[XPU202]\n"
                  "# xpuify: ignore[cuda-stream-event]\n"
                  "torch.cuda.synchronize(\n"
                  "    torch.cuda.current_stream())\n"
                  "x = y.cuda()  # noqa: E501  # xpuify: ignore[XPU1] reason text\n"
                  "# xpuify: disable[XPU2]\n"
                  "torch.cuda.synchronize()\n"
                  "# xpuify: enable[XPU2]\n"
                  "torch.cuda.synchronize()\n")
    eq(findings("a.py"), [(10, "XPU202")])
    write("b.py", "# xpuify: ignore-file[XPU202]\nimport torch\ntorch.cuda.synchronize()\nx.cuda()\n")
    eq(findings("b.py"), [(4, "XPU101")])
    # a suppression inside a multi-line import is seen too
    write("c.py", "from torch.cuda.amp import (\n    autocast,  # xpuify: ignore[XPU301]\n)\n")
    eq(findings("--select", "XPU301,XPU002", "c.py"), [])


def test_unused_suppression_reported_and_fixed(d):
    src = ("import torch\n"
           "x = 1  # xpuify: ignore[XPU101]\n"
           "y = z.cuda()  # xpuify: ignore[XPU101, XPU202]\n"
           "# xpuify: disable[XPU202]\n"
           "w = 2\n"
           "# xpuify: enable[XPU202]\n"
           "v = 3  # xpuify: ignore[XPU999]\n")
    write("a.py", src)
    r = run("check", "a.py")
    eq(r.code, 1)
    check("a.py:2:8: XPU002 [unused-suppression] [*] unused suppression `# xpuify: ignore[XPU101]`: `XPU101` hides "
          "no finding here" in r.out, "message", r)
    check("`XPU999` names no rule" in r.out, "unknown code named", r)
    eq(findings("a.py"), [(2, "XPU002"), (3, "XPU002"), (4, "XPU002"), (7, "XPU002")])
    r = run("fix", "a.py")
    eq(r.code, 0, r)
    eq(read("a.py"), "import torch\nx = 1\ny = z.cuda()  # xpuify: ignore[XPU101]\nw = 2\nv = 3\n")
    # the fix is idempotent
    eq(run("fix", "--diff", "a.py").code, 0)
    # not reported when the rule did not run, or when XPU002 is off
    write("b.py", "x = 1  # xpuify: ignore[XPU101]\n")
    eq(findings("--ignore", "XPU101", "b.py"), [])
    eq(findings("--ignore", "XPU002", "b.py"), [])
    # a file that no rule could match is still read for its suppressions
    eq(findings("b.py"), [(1, "XPU002")])


def test_add_ignore(d):
    src = ("import torch\n"
           "\n"
           "def f(x):\n"
           "    y = x.cuda()   \n"
           "    torch.cuda.synchronize()  # noqa: E501\n"
           "    s = torch.cuda.synchronize() + \\\n"
           "        torch.cuda.synchronize()\n"
           "    z = f\"\"\"\n"
           "{torch.cuda.current_device()}\n"
           "\"\"\"\n"
           "    v = x.cuda() + torch.cuda.current_device()  # xpuify: ignore[XPU101]\n"
           "    return y\n")
    write("a.py", src)
    write("clean.py", "import torch\nx = 1\n")
    before = findings(".")
    eq(len(before), 6)
    r = run("check", "--add-ignore=legacy, see #12", ".")
    eq(r.code, 0, r)
    check("added suppressions for 6 findings in 1 file" in r.err, "summary", r)
    eq(read("a.py"), "import torch\n"
                     "\n"
                     "def f(x):\n"
                     "    y = x.cuda()  # xpuify: ignore[XPU101] legacy, see #12\n"
                     "    torch.cuda.synchronize()  # noqa: E501  # xpuify: ignore[XPU202] legacy, see #12\n"
                     "    # xpuify: ignore[XPU202] legacy, see #12\n"
                     "    s = torch.cuda.synchronize() + \\\n"
                     "        torch.cuda.synchronize()  # xpuify: ignore[XPU202] legacy, see #12\n"
                     "    # xpuify: ignore[XPU201] legacy, see #12\n"
                     "    z = f\"\"\"\n"
                     "{torch.cuda.current_device()}\n"
                     "\"\"\"\n"
                     "    v = x.cuda() + torch.cuda.current_device()  # xpuify: ignore[XPU101, XPU201]\n"
                     "    return y\n")
    eq(read("clean.py"), "import torch\nx = 1\n")
    eq(run("check", ".").code, 0)
    # idempotent: nothing left to add, nothing changes
    after = read("a.py")
    r = run("check", "--add-ignore", ".")
    eq(r.code, 0)
    eq(read("a.py"), after)


def test_add_ignore_keeps_crlf_and_selection(d):
    write("w.py", b"import torch\r\nx = torch.zeros(1).cuda()\r\ntorch.cuda.synchronize()\r\n", "wb")
    eq(run("check", "--add-ignore", "--select", "XPU101", "w.py").code, 0)
    eq(read("w.py", "rb"), b"import torch\r\nx = torch.zeros(1).cuda()  # xpuify: ignore[XPU101]\r\n"
                           b"torch.cuda.synchronize()\r\n")
    eq(findings("w.py"), [(3, "XPU202")])


if __name__ == "__main__":
    main(globals())
