"""PEP 263 coding cookies (issue 19, item 3): a valid Python file that declares its encoding (latin-1, cp1252,
iso-8859-15, ...) on its first or second line is decoded as Python decodes it and checked, with lines and columns of
the original; `fix` leaves it byte for byte and says why (xpuify writes UTF-8 only: the choice made here, rather than
re-encoding); a cookie naming an unknown encoding, or bytes invalid in the declared one, is reported as not
checked with the reason, never skipped silently."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import check, eq, main, read, run, write  # noqa: E402


def codes(r):
    return sorted((f["path"], f["line"], f["column"], f["code"]) for f in r.json() if f["code"])


def test_coding_cookies_are_decoded_as_python_does(d):
    cases = {
        "l1.py": ("latin-1", "# -*- coding: latin-1 -*-\n# caf\xe9\nx = '\xe9\xe9'; y = torch.zeros(1).cuda()\n"),
        "cp.py": ("cp1252", "#!/usr/bin/env python\n# vim: set fileencoding=cp1252 :\ns = '\u20ac\u2019'; y = t.cuda()\n"),
        "l9.py": ("iso-8859-15", "# coding=iso_8859_15\nz = '\u20ac'; w = v.cuda()\n"),
        "u8.py": ("utf-8", "# -*- coding: utf-8 -*-\nq = '\u00e9'; p = o.cuda()\n"),
    }
    for name, (enc, text) in cases.items():
        write(name, text.encode(enc), "wb")
        check(compile(text.encode(enc), name, "exec"), f"{name} is valid Python")
    r = run("check", "--no-cache", "--format", "json", "--select", "XPU101", ".")
    eq(r.code, 1, r)
    # columns in code points of the decoded line, as Python's tokenizer counts them (+1)
    want = []
    for name, (enc, text) in cases.items():
        lines = text.split("\n")
        n = next(i for i, l in enumerate(lines) if ".cuda()" in l)
        want.append((name, n + 1, lines[n].index(".cuda()") + 2, "XPU101"))  # `cuda`, 1-based, in code points
    eq(codes(r), sorted(want), r)
    check(not [f for f in r.json() if not f["code"]], "nothing is skipped", r)
    r = run("check", "--no-cache", "--select", "XPU101", "l1.py")
    check(" 3 | x = '\u00e9\u00e9'; y = torch.zeros(1).cuda()" in r.out, "the source line is shown decoded", r)


def test_fix_leaves_an_encoded_file_alone_and_says_why(d):
    raw = "# -*- coding: latin-1 -*-\nimport torch\nx = '\xe9'\ntorch.cuda.synchronize()\n".encode("latin-1")
    write("l1.py", raw, "wb")
    write("u.py", "import torch\ntorch.cuda.synchronize()\n")
    r = run("fix", "--target", "accelerator", ".")
    eq(read("l1.py", "rb"), raw, "the latin-1 file is byte for byte the same")
    check("torch.accelerator.synchronize()" in read("u.py"), "the UTF-8 file is fixed", r)
    check("xpuify: warning: l1.py: encoded in ISO-8859-1 (coding cookie); not fixed: xpuify writes UTF-8 files only"
          in r.err, "", r)
    check("l1.py:4:1: XPU202" in r.out, "its finding remains in the report", r)


def test_bad_cookies_are_reported(d):
    write("bad.py", b"# coding: ascii\nx = '\xe9'\n", "wb")
    write("unk.py", b"# coding: klingon\nx = 1\n", "wb")
    write("late.py", b"import torch\n# coding: latin-1\nx = '\xe9'\n", "wb")  # line 2 counts after a comment only
    r = run("check", "--no-cache", ".")
    eq(r.code, 0, r)
    for line in ("bad.py: not checked: not valid ASCII, the encoding its coding cookie declares (byte 0xe9 at line 2)",
                 "unk.py: not checked: declares the encoding `KLINGON` (coding cookie), which this system cannot decode",
                 "late.py: not checked: not valid UTF-8 (first bad byte 0xe9 at line 3, column 6)"):
        check(line in r.out, line, r)
    check("All checks passed" not in r.out, "", r)


if __name__ == "__main__":
    main(globals())
