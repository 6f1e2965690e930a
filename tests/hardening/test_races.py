"""Races with other writers, end to end: a file edited while `fix` runs keeps the edit (the fix of its old content
is not written over it), and two `fix` runs at once on one tree both succeed, the device helper included."""
import glob
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import XPUIFY, check, eq, main, read, run, write  # noqa: E402

CUDA = "import torch\nx = torch.zeros(3).cuda()\ntorch.cuda.synchronize()\n"


def test_file_changed_while_fix_runs_keeps_the_change(d):
    # a big file written slowly (XPUIFY_FAULT_WRITE=slow: 1 KiB every 2 ms) leaves time to edit it meanwhile
    big = CUDA + "".join(f"y{i} = torch.cuda.device_count()\n" for i in range(8000))
    write("big.py", big)
    write("other.py", CUDA)
    env = dict(os.environ, XPUIFY_FAULT_WRITE="slow")
    env.pop("NO_COLOR", None)
    p = subprocess.Popen([XPUIFY, "fix", "--no-cache", "--threads", "1", "--target", "accelerator", "big.py"],
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while not glob.glob(".big.py.xpuify-*") and time.time() < deadline and p.poll() is None:
        time.sleep(0.001)
    check(glob.glob(".big.py.xpuify-*"), "the temporary file of the fix appeared")
    edited = big + "print('edited by the user')\n"
    write("big.py", edited)
    out, err = p.communicate(timeout=120)
    eq(read("big.py"), edited, "the user's edit survives")
    check("big.py: changed since it was read; not written (run fix again)" in err, "says why", err[-2000:])
    eq(p.returncode, 2, "a file left unfixed because of it is an error")
    eq(glob.glob(".*.xpuify-*"), [], "no temporary file left behind")
    # the next run fixes the edited file
    r = run("fix", "--no-cache", "--target", "accelerator", "big.py")
    check("print('edited by the user')" in read("big.py") and "torch.cuda.synchronize()" not in read("big.py"), "", r)


def test_two_fix_runs_at_once(d):
    for i in range(30):
        write(f"pkg/m{i}.py", CUDA)
    expected = None
    for attempt in range(4):
        for i in range(30):
            write(f"pkg/m{i}.py", CUDA)
        for f in glob.glob("pkg/xpuify_device.py"):
            os.unlink(f)
        env = dict(os.environ)
        env.pop("NO_COLOR", None)
        ps = [subprocess.Popen([XPUIFY, "fix", "--no-cache", "--target", "compat", "pkg"], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
        res = [(p.wait(timeout=120), p.stderr.read()) for p in ps]
        for code, err in res:
            check(code in (0, 1), f"attempt {attempt}: exit {code}", err[-2000:])
            check("error" not in err, f"attempt {attempt}: no error", err[-2000:])
        texts = [read(f"pkg/m{i}.py") for i in range(30)]
        eq(len(set(texts)), 1, "every file fixed the same way")
        check(texts[0] != CUDA, "fixed")
        expected = expected or texts[0]
        eq(texts[0], expected, "the same fix every time")
        check(os.path.isfile("pkg/xpuify_device.py"), "the helper exists")


if __name__ == "__main__":
    main(globals())
