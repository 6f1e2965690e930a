"""Messages that quote source text (syntax errors, query rules' {text}) are cut at a length limit; the cut must
not split a UTF-8 sequence, or the JSON and SARIF reports are not valid UTF-8."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import XPUIFY, check, main, write  # noqa: E402
import subprocess  # noqa: E402


def report_bytes(*args):
    return subprocess.run([XPUIFY, "check", *args], capture_output=True).stdout


def test_snippets_cut_on_code_point_boundaries(d):
    # the 40-byte syntax-error snippet and the 60-byte {text} snippet both end inside a two-byte é
    write("a.py", "import torch\ntorch.cuda.synchronize()\nx = (" + "a" * 34 + "é" * 5 + " +\n")
    write("b.py", "import os\nos.system('nvidia-smi" + "b" * 36 + "é" * 10 + "')\n")
    for f in ("a.py", "b.py"):
        for fmt in ("json", "sarif", "concise"):
            out = report_bytes("--format", fmt, f)
            check(out, f"{f} {fmt}: a report")
            try:
                out.decode("utf-8")
            except UnicodeDecodeError as e:
                raise AssertionError(f"{f} --format {fmt}: not valid UTF-8: {e}")


if __name__ == "__main__":
    main(globals())
