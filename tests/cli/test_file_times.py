"""XPUIFY_FILE_TIMES=1 (what bench/file_times.sh reads): one `file-time MS PATH` line on stderr for each file the
run checked, with a CPU time that is a number, and nothing of the kind without the variable; the report itself is
the same either way."""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import check, eq, main, run, write  # noqa: E402


def test_one_line_per_file(d):
    write("a.py", "import torch\nx = y.cuda()\n")
    write("b.py", "print('no cuda here')\n")
    write("sub/c.py", "import torch\ntorch.cuda.synchronize()\n")
    plain = run("check", "--format", "json", "--no-cache", "--exit-zero", ".")
    timed = run("check", "--format", "json", "--no-cache", "--exit-zero", ".", env={"XPUIFY_FILE_TIMES": "1"})
    eq(timed.out, plain.out, "the report does not change")
    check("file-time" not in plain.err, "no times without the variable", plain.err)
    lines = [ln for ln in timed.err.splitlines() if ln.startswith("file-time ")]
    paths = sorted(ln.split(" ", 2)[2] for ln in lines)
    eq(paths, ["a.py", "b.py", "sub/c.py"], f"one line per file: {timed.err}")
    for ln in lines:
        check(re.fullmatch(r"file-time \d+\.\d{3} \S+", ln), f"a time in ms: {ln!r}")


if __name__ == "__main__":
    main(globals())
