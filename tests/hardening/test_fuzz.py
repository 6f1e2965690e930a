"""Fuzz targets (fuzz/fz_*.c, libFuzzer + ASan + UBSan, built by `make fuzz-build` into $FUZZ_DIR): every input that
ever crashed a target (fuzz/regress/TARGET/) is replayed, then each target fuzzes from its seed corpus for
FUZZ_SMOKE_SECONDS (default 5; `make fuzz` runs them for longer)."""
import glob
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import ROOT, check, main, need_tool  # noqa: E402

FUZZ_DIR = os.environ.get("FUZZ_DIR", os.path.join(ROOT, "build", "fuzz"))
SECONDS = os.environ.get("FUZZ_SMOKE_SECONDS", "5")
TARGETS = sorted(os.path.basename(p)[:-2] for p in glob.glob(os.path.join(ROOT, "fuzz", "fz_*.c")))


def run(*args, timeout=300):
    env = dict(os.environ, FUZZ_DIR=FUZZ_DIR)
    return subprocess.run([os.path.join(ROOT, "fuzz", "fz_run.sh"), *args], capture_output=True, text=True,
                          env=env, timeout=timeout, errors="replace")


def make_tests(t):
    def test_replay(_d):
        check(os.access(os.path.join(FUZZ_DIR, t), os.X_OK), f"{t} is not built (make fuzz-build)")
        # unsymbolized leak stacks never match tests/lsan.supp's function names
        need_tool("llvm-symbolizer", "llvm")
        p = run("replay", t)
        check(p.returncode == 0, f"{t}: a fuzz/regress/{t} input fails again", p.stderr[-4000:])

    def test_smoke(_d):
        p = run("smoke", SECONDS, t)
        check(p.returncode == 0, f"{t}: fuzzing from the seeds for {SECONDS}s found a failure (the input is in "
              f"{FUZZ_DIR}/crashes; add it to fuzz/regress/{t}/ once fixed)", p.stderr[-4000:])
        check("Done " in p.stderr, f"{t}: libFuzzer did not run to its time limit", p.stderr[-2000:])
    return test_replay, test_smoke


def test_every_target_has_a_regression_directory_or_seeds():
    # a target added later needs seeds: fixtures of its language in fuzz/seeds/TARGET or a case in fz_run.sh
    for t in TARGETS:
        known = t in ("fz_python", "fz_output", "fz_rules", "fz_cache", "fz_c") or os.path.isdir(os.path.join(ROOT, "fuzz", "seeds", t))
        check(known, f"{t}: no seed corpus (add fuzz/seeds/{t}/ or a case in fuzz/fz_run.sh seeds())")


for _t in TARGETS:
    _r, _s = make_tests(_t)
    globals()[f"test_{_t}_replay"] = _r
    globals()[f"test_{_t}_smoke"] = _s

if __name__ == "__main__":
    main(globals())
