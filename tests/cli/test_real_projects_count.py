"""The real-project harness's counts (tools/real_projects.py, `make try-projects`): `.cuda(` calls and `torch.cuda.`
uses are counted in code only (not in comments or strings), before and after plain `xpuify fix`; the ones inside
what XPU810, XPU811 and XPU812 leave as it is (their findings' `scope`) are counted apart, and so are `torch.cuda.`
assignment targets (writes: a test's spoof of the CUDA API), and the share left is taken without them (with the
writes counted as uses too, apart). Checked on a small project whose every use is known."""
import importlib.util
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import ROOT, XPUIFY, check, eq, main, write  # noqa: E402

spec = importlib.util.spec_from_file_location("real_projects", os.path.join(ROOT, "tools", "real_projects.py"))
rp = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rp)

TRAIN = '''"""Trains. Call model.cuda() first and torch.cuda.synchronize() after."""
import torch

# torch.cuda.empty_cache() here would be too early; so would x.cuda()
NOTE = "torch.cuda.is_available() and .cuda( in a string"


def step(model, batch):
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    return model(batch.cuda())


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()
    elif device.type == "npu":
        torch.npu.synchronize()


def test_spoof():
    torch.cuda.is_available = lambda: True
    torch.cuda.memory.max_memory_allocated = lambda *a: 0
    assert torch.cuda.is_available() == True
'''

BACKEND = '''import torch


class Accelerator:
    pass


class CUDAAccelerator(Accelerator):
    def count(self):
        return torch.cuda.device_count()

    def move(self, t):
        return t.cuda()
'''


def test_code_uses_only(d):
    calls, mods = rp.use_positions(TRAIN)
    eq(calls, [(11, 23)])  # batch.cuda(); not the docstring's, the comment's or the string's
    eq(mods, [(9, 5), (10, 5), (16, 9), (22, 5), (23, 5), (24, 12)])
    eq(rp.write_positions(TRAIN), [(22, 5), (23, 5)])  # the spoofs; not the comparison
    # a spoof undone through a tuple, and the save it undoes with (not a read that is never put back)
    spoof = ("import torch\n"
             "saved = (torch.cuda.is_available, torch.cuda.is_bf16_supported)\n"
             "torch.cuda.is_available = lambda: True\n"
             "torch.cuda.is_available, torch.cuda.is_bf16_supported = saved\n"
             "probe = torch.cuda.is_available\n"
             "ok = torch.cuda.is_available()\n")
    eq(rp.use_positions(spoof)[1], [(2, 10), (2, 35), (3, 1), (4, 1), (4, 26), (5, 9), (6, 6)])
    eq(rp.write_positions(spoof), [(2, 10), (2, 35), (3, 1), (4, 1), (4, 26)])
    # text that does not tokenize is counted as text
    eq(rp.use_positions("x = (\n torch.cuda.sync()\n"), ([], [(2, 2)]))


def test_counts_before_and_after_with_design_scopes_apart(d):
    write("orig/train.py", TRAIN)
    write("orig/accel/backend.py", BACKEND)
    shutil.copytree("orig", "fixed")
    p = subprocess.run([XPUIFY, "fix", "-q", "--no-cache", "."], cwd="fixed", capture_output=True, text=True)
    eq(p.returncode in (0, 1), True, p.stderr)
    files = ["train.py", os.path.join("accel", "backend.py")]
    before = rp.count_uses("orig", files, rp.design_scopes(XPUIFY, "orig"))
    after = rp.count_uses("fixed", files, rp.design_scopes(XPUIFY, "fixed"))
    # .cuda(: batch.cuda() (fixed: the file imports only torch, and the project defines no other .cuda()) and the
    # backend's t.cuda() (by design); torch.cuda.: two in step (fixed), one in the dispatch's CUDA branch and one in
    # the backend (both by design), two writes (left, counted apart) and the assert's read (left: a use in a test)
    eq(before, (2, 7, 1, 2, 2))
    eq(after, (1, 5, 1, 2, 2))
    eq(rp.left_pct(before[0], after[0], before[2], after[2]), 0)
    eq(rp.left_pct(before[1], after[1], before[3] + before[4], after[3] + after[4]), 33)  # 1 of 3: the assert
    eq(rp.left_pct(2, 2, 1, 1), 100)
    eq(rp.left_pct(3, 3, 3, 3), None)


def test_markdown_has_the_columns(d):
    u = {"before": 4, "after": 2, "design_before": 1, "design_after": 1, "left_pct": 33}
    w = dict(u, writes_before=0, writes_after=0)
    row = {"project": "p", "changed": 1, "helpers": [], "imports": 2, "imports_ok": 2, "imports_fail_both": 0,
           "regressions": [], "compile_failures": [], "idempotent": True, "fix_seconds": 0.1,
           "uses": {".cuda(": dict(u), "torch.cuda.": w}}
    lines = rp.markdown([row, row]).splitlines()
    eq(lines[0].count("|"), lines[1].count("|"))
    eq(lines[2].count("|"), lines[0].count("|"))
    eq(lines[2].split(" | ")[7:14], ["4 → 2", "1", "33%", "4 → 2", "1", "0", "33%"])
    check(lines[4].startswith("| all |") and lines[4].endswith("| 8 → 4 | 2 | 33% | 8 → 4 | 2 | 0 | 33% | |"), lines[4])
    eq(lines[-1], "`torch.cuda.` left with the writes counted as uses to port: 33%.")


if __name__ == "__main__":
    main(globals())
