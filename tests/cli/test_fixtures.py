"""Labelled fixtures: every file under fixtures/python, fixtures/c and fixtures/text states its own expectations
inline.

A line that must be flagged carries `# expect: CODE[, CODE...]` (C and CUDA: `// expect:` or `/* expect: */`;
every finding that starts on that line, all rules); every other line must produce no finding at all. A fixture may
also begin with `# xpuify-args: ...` (`// xpuify-args: ...`) to pass extra arguments. Each fixture is also checked
with one thread, which must agree."""
import glob
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import ROOT, check, main, run  # noqa: E402

EXPECT = re.compile(r"(?:#|//|/\*)\s*expect:\s*([A-Z0-9_, ]+)")
ARGS = re.compile(r"^(?:#|//)\s*xpuify-args:(.*)$")


def expectations(path):
    want = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = EXPECT.search(line)
            if m:
                codes = [c.strip() for c in m.group(1).split(",") if c.strip()]
                want[n] = sorted(codes)
    return want


def make_test(path):
    def test(_d):
        args = []
        with open(path, encoding="utf-8") as f:
            first = f.readline()
        m = ARGS.match(first.strip())
        if m:
            args = m.group(1).split()
        r = run("check", "--format", "json", "--no-ignore", *args, path)
        check(r.code in (0, 1), "unexpected exit", r)
        got = {}
        for d in r.json():
            got.setdefault(d["line"], []).append(d["code"])
        got = {k: sorted(v) for k, v in got.items()}
        want = expectations(path)
        missing = {k: v for k, v in want.items() if got.get(k) != v}
        extra = {k: v for k, v in got.items() if k not in want}
        check(not missing and not extra,
              f"{os.path.relpath(path, ROOT)}: lines whose findings differ from their `# expect:` markers",
              "\n".join([f"  line {k}: expected {v}, got {got.get(k, [])}" for k, v in sorted(missing.items())] +
                        [f"  line {k}: unexpected {v}" for k, v in sorted(extra.items())]))
        r1 = run("check", "--format", "json", "--no-ignore", "--threads", "1", *args, path)
        check(r1.out == r.out, "single-threaded run differs")
    return test


for p in sorted(glob.glob(os.path.join(ROOT, "fixtures", "python", "*.py"))):
    rel = os.path.relpath(p, os.path.join(ROOT, "fixtures", "python"))
    globals()["test_fixture_" + re.sub(r"\W", "_", rel)] = make_test(p)

for lang in ("c", "text"):
    for p in sorted(glob.glob(os.path.join(ROOT, "fixtures", lang, "**", "*"), recursive=True)):
        if not os.path.isfile(p) or os.path.basename(p).startswith("."):
            continue
        rel = os.path.relpath(p, os.path.join(ROOT, "fixtures"))
        globals()["test_fixture_" + re.sub(r"\W", "_", rel)] = make_test(p)

if __name__ == "__main__":
    main(globals())
