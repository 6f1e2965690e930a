"""End-to-end tests of `xpuify verify`: usage errors, verdicts and exit codes, tolerance, line structure,
file comparisons (.npy, raw float32/float64, text, bytes), build commands, timeouts that kill the whole
process group, interruption, --keep and clean-up, the user's tree left untouched, and device tiers (a fake
nvidia-smi on PATH stands for an NVIDIA machine). The programs are small /usr/bin/python3 or sh scripts; a
script tells the variants apart by XPUIFY_VERIFY_VARIANT, which verify exports, to play a patched program that
differs from its original."""
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import ROOT, XPUIFY, check, eq, main, read, run, skip, write  # noqa: E402

PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


def env_for(d, **extra):
    """A private TMPDIR (to see what verify leaves behind) and no inherited accelerator masks."""
    tmp = os.path.join(d, "tmp")
    os.makedirs(tmp, exist_ok=True)
    e = {"TMPDIR": tmp, "CUDA_VISIBLE_DEVICES": None, "ZE_AFFINITY_MASK": None}
    e.update(extra)
    return e


def verify(d, *args, env=None, timeout=300):
    e = dict(os.environ)
    for k, v in (env or env_for(d)).items():
        if v is None:
            e.pop(k, None)
        else:
            e[k] = v
    p = subprocess.run([XPUIFY, "verify", *args], capture_output=True, text=True, env=e, timeout=timeout)
    return p


def leftovers(d):
    return os.listdir(os.path.join(d, "tmp"))


def runs(report):
    return {(r["tier"], r["variant"]): r for r in report["runs"]}


def tree_hash(root):
    h = hashlib.sha256()
    for base, dirs, files in sorted(os.walk(root)):
        dirs.sort()
        for f in sorted(files):
            p = os.path.join(base, f)
            h.update(os.path.relpath(p, root).encode())
            st = os.stat(p)
            h.update(str((st.st_mode, st.st_mtime_ns)).encode())
            with open(p, "rb") as fh:
                h.update(fh.read())
    return h.hexdigest()


def program(d, body, name="prog.py"):
    write(os.path.join(d, "proj", name), "import os, sys\nVARIANT = os.environ.get('XPUIFY_VERIFY_VARIANT')\n" + body)
    return os.path.join(d, "proj")


def test_help(d):
    r = run("verify", "--help")
    eq(r.code, 0)
    check("--run CMD" in r.out and "--compare" in r.out and "--reference" in r.out, "help lists the options", r)
    check("verify" in run("help").out, "the top-level help lists verify")


def test_usage_errors(d):
    proj = program(d, "print(1)\n")
    write(os.path.join(d, "afile"), "x")
    cases = [
        [proj],                                                  # no --run
        [proj, "--run"],                                         # --run without a value
        [proj, "--run", "true", "--rtol", "abc"],
        [proj, "--run", "true", "--atol", "-1"],
        [proj, "--run", "true", "--timeout", "0"],
        [proj, "--run", "true", "--devices", "gpu"],
        [proj, "--run", "true", "--devices", ","],
        [proj, "--run", "true", "--format", "sarif"],
        [proj, "--run", "true", "--bogus"],
        [proj, proj, "--run", "true"],
        [os.path.join(d, "missing"), "--run", "true"],
        [os.path.join(d, "afile"), "--run", "true"],
        [proj, "--run", "true", "--compare", "/etc/passwd"],
        [proj, "--run", "true", "--compare", "out/../../x"],
        [proj, "--run", "true", "--compare"],
        [proj, "--run", "true", "--target", "gpu"],
        [proj, "--run", "true", "--helper-path", "/abs/xpuify_device.py"],
    ]
    for args in cases:
        p = verify(d, *args)
        eq(p.returncode, 2, f"exit status of {args}\n{p.stderr}")
        check("error" in p.stderr, f"an error message for {args}", p.stderr)
        eq(leftovers(d), [], f"temporary files left by {args}")
    p = verify(d, os.path.join(d, "missing"), "--run", "true")
    check("missing" in p.stderr and "No such file" in p.stderr, "names the missing path", p.stderr)
    p = verify(d, proj, "--run", "true", "--compare", "out/../../x")
    check("leaves the project" in p.stderr, "says why a compare path is refused", p.stderr)


def test_devices_not_present_is_a_usage_error(d):
    proj = program(d, "print(1)\n")
    empty_bin = os.path.join(d, "bin")
    os.makedirs(empty_bin)
    p = verify(d, proj, "--run", "true", "--devices", "cuda", env=env_for(d, PATH=empty_bin + ":/usr/bin:/bin"))
    eq(p.returncode, 2, p.stderr)
    check("--devices cuda: not present" in p.stderr, "says the tier is absent", p.stderr)
    eq(leftovers(d), [])
    p = verify(d, proj, "--run", "true", "--devices", "mps")
    eq(p.returncode, 2, p.stderr)


def test_match_fixes_a_copy_and_never_writes_the_project(d):
    proj = os.path.join(d, "proj")
    write(os.path.join(proj, "main.py"),
          "import torch\n\nx = torch.arange(4.0)\nif torch.cuda.is_available():\n    x = x.cuda()\n"
          "torch.cuda.manual_seed(0)\nprint('sum', float(x.sum()))\n")
    os.chmod(os.path.join(proj, "main.py"), 0o640)
    before = tree_hash(proj)
    p = verify(d, proj, "--run", f"{PY} main.py", "--devices", "cpu", "--target", "compat", "--format", "json", "--keep")
    eq(p.returncode, 0, p.stdout + p.stderr)
    rep = json.loads(p.stdout)
    eq(tree_hash(proj), before, "the project is unchanged")
    check(not os.path.exists(os.path.join(proj, "xpuify_device.py")), "no helper written into the project")
    check(rep["fix"]["fixed"] >= 2 and rep["fix"]["target"] == "compat", "the copy was fixed", rep["fix"])
    kept = rep["kept"]
    check(kept and os.path.isdir(kept), "--keep keeps the temporary directory", rep)
    patched = read(os.path.join(kept, "patched", "proj", "main.py"))
    check("xpuify_device" in patched and ".cuda()" not in patched, "the patched copy holds the fix", patched)
    eq(read(os.path.join(kept, "original", "proj", "main.py")), read(os.path.join(proj, "main.py")))
    eq(oct(os.stat(os.path.join(kept, "original", "proj", "main.py")).st_mode & 0o777), "0o640", "modes are copied")
    check(os.path.exists(os.path.join(kept, "patched", "proj", "xpuify_device.py")), "the helper is in the patched copy")
    rr = runs(rep)
    eq(rr[("cpu", "original")]["verdict"], "reference")
    eq(rr[("cpu", "patched")]["verdict"], "match")
    eq(rr[("cpu", "patched")]["compared_with"], "original/cpu")
    eq(rr[("cpu", "patched")]["max_abs"], 0)
    eq(rep["reference"], "original/cpu")
    check(rep["passed"] is True and rep["summary"].startswith("PASS"), "passes", rep)
    eq(read(os.path.join(kept, "results", "cpu-patched", "stdout")), "sum 6.0\n")


def test_differs_and_tolerance(d):
    proj = program(d, "print('step 0 loss', 1.0 if VARIANT == 'original' else 1.5)\nprint('done')\n")
    p = verify(d, proj, "--run", f"{PY} prog.py", "--devices", "cpu")
    eq(p.returncode, 1, p.stdout + p.stderr)
    check("DIFFERS" in p.stdout, "the table shows the difference", p.stdout)
    check("stdout line 1: 1.5, the reference has 1.0" in p.stdout, "names the first difference", p.stdout)
    check(p.stdout.rstrip().splitlines()[-1].startswith("FAIL: cpu: patched differs from the original"), "summary",
          p.stdout)
    p = verify(d, proj, "--run", f"{PY} prog.py", "--devices", "cpu", "--format", "json")
    r = runs(json.loads(p.stdout))[("cpu", "patched")]
    eq((r["verdict"], r["max_abs"], r["max_rel"], r["equal"]), ("DIFFERS", 0.5, 0.5, False))
    # within tolerance
    eq(verify(d, proj, "--run", f"{PY} prog.py", "--devices", "cpu", "--rtol", "0.5").returncode, 0)
    eq(verify(d, proj, "--run", f"{PY} prog.py", "--devices", "cpu", "--atol", "0.5").returncode, 0)
    eq(verify(d, proj, "--run", f"{PY} prog.py", "--devices", "cpu", "--atol", "0.49").returncode, 1)
    eq(leftovers(d), [], "temporary directories are removed")


def test_line_structure_must_match(d):
    proj = program(d, "print('loss 1.0')\nif VARIANT == 'patched':\n    print('extra 2')\n")
    p = verify(d, proj, "--run", f"{PY} prog.py", "--devices", "cpu")
    eq(p.returncode, 1)
    check("stdout: 2 lines, the reference has 1" in p.stdout, "line counts", p.stdout)
    proj = program(d, "print('loss 1.0' if VARIANT == 'original' else 'loss: 1.0')\n")
    p = verify(d, proj, "--run", f"{PY} prog.py", "--devices", "cpu")
    eq(p.returncode, 1)
    check("stdout line 1: `loss: 1.0`, the reference has `loss 1.0`" in p.stdout, "text between numbers", p.stdout)
    # numbers inside words are text; nan equals nan; exponents are numbers
    proj = program(d, "print('fp16 layer2 nan 1e-3', 'x' if VARIANT else '')\n")
    eq(verify(d, proj, "--run", f"{PY} prog.py", "--devices", "cpu").returncode, 0)
    proj = program(d, "print('v 1e-3' if VARIANT == 'original' else 'v 0.001')\n")
    eq(verify(d, proj, "--run", f"{PY} prog.py", "--devices", "cpu").returncode, 0)


def test_patched_fails(d):
    proj = program(d, "print(1)\nif VARIANT == 'patched':\n    sys.stderr.write('boom: no device\\n'); sys.exit(3)\n")
    p = verify(d, proj, "--run", f"{PY} prog.py", "--devices", "cpu")
    eq(p.returncode, 1)
    check("exit 3" in p.stdout and "FAILS" in p.stdout, "status and verdict", p.stdout)
    check("| boom: no device" in p.stdout, "the end of its stderr", p.stdout)
    check("FAIL: cpu: patched fails (exit 3)" in p.stdout, "summary", p.stdout)


def test_original_fails_patched_runs(d):
    proj = program(d, "if VARIANT == 'original':\n    sys.exit('CUDA only')\nprint('loss', 0.25)\n")
    p = verify(d, proj, "--run", f"{PY} prog.py", "--devices", "cpu", "--format", "json")
    eq(p.returncode, 0, p.stdout + p.stderr)
    rep = json.loads(p.stdout)
    rr = runs(rep)
    eq(rr[("cpu", "original")]["verdict"], "fails")
    eq(rr[("cpu", "patched")]["verdict"], "runs")
    eq(rep["reference"], None)
    check("original fails, patched runs" in rep["summary"] and "--reference" in rep["summary"], "summary", rep)
    # with a reference command: compared with it
    write(os.path.join(proj, "ref.py"), "print('loss', 0.25)\n")
    p = verify(d, proj, "--run", f"{PY} prog.py", "--reference", f"{PY} ref.py", "--devices", "cpu", "--format", "json")
    eq(p.returncode, 0, p.stdout)
    rep = json.loads(p.stdout)
    rr = runs(rep)
    eq(rr[("cpu", "ref-cmd")]["verdict"], "ran")
    eq((rr[("cpu", "patched")]["verdict"], rr[("cpu", "patched")]["compared_with"]), ("match", "ref-cmd/cpu"))
    check("original fails, patched runs and matches the reference command" in rep["summary"], "summary", rep)
    write(os.path.join(proj, "ref.py"), "print('loss', 0.5)\n")
    p = verify(d, proj, "--run", f"{PY} prog.py", "--reference", f"{PY} ref.py", "--devices", "cpu")
    eq(p.returncode, 1, p.stdout)
    check("patched differs from the reference command" in p.stdout, "summary", p.stdout)
    # a reference command that fails makes the comparison impossible: not a pass
    p = verify(d, proj, "--run", f"{PY} prog.py", "--reference", "exit 4", "--devices", "cpu")
    eq(p.returncode, 1, p.stdout)
    # the reference command does not run where the original runs
    proj2 = program(d, "print('loss', 0.25)\n", name="ok.py")
    p = verify(d, proj2, "--run", f"{PY} ok.py", "--reference", "exit 4", "--devices", "cpu", "--format", "json")
    eq(p.returncode, 0, p.stdout)
    check(("cpu", "ref-cmd") not in runs(json.loads(p.stdout)), "no reference run", p.stdout)


def pid_alive(pid, grace=5.0):
    """whether pid still runs `grace` seconds from now: SIGKILL sent to a process group is delivered
    asynchronously, and on a loaded machine the killed process can take a moment to die"""
    end = time.time() + grace
    while _pid_alive_now(pid) and time.time() < end:
        time.sleep(0.05)
    return _pid_alive_now(pid)


def _pid_alive_now(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is dead for our purposes
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_timeout_kills_the_process_group(d):
    proj = os.path.join(d, "proj")
    os.makedirs(proj)
    piddir = os.path.join(d, "pids")
    os.makedirs(piddir)
    cmd = 'sleep 300 & echo $! > "$PIDDIR/$XPUIFY_VERIFY_VARIANT"; wait'
    t0 = time.time()
    p = verify(d, proj, "--run", cmd, "--devices", "cpu", "--timeout", "1", "--format", "json",
               env=env_for(d, PIDDIR=piddir))
    took = time.time() - t0
    eq(p.returncode, 1, p.stdout + p.stderr)
    rr = runs(json.loads(p.stdout))
    eq((rr[("cpu", "original")]["status"], rr[("cpu", "patched")]["status"]), ("timeout", "timeout"))
    check(rr[("cpu", "patched")]["timed_out"] is True and rr[("cpu", "patched")]["verdict"] == "FAILS", "verdict", rr)
    check(took < 30, f"verify returned quickly after the timeouts ({took:.1f} s)")
    for v in ("original", "patched"):
        pid = int(read(os.path.join(piddir, v)))
        check(not pid_alive(pid), f"the {v} run's background child {pid} was killed")
    eq(leftovers(d), [])


def test_leftover_children_are_killed_after_a_normal_exit(d):
    proj = os.path.join(d, "proj")
    os.makedirs(proj)
    piddir = os.path.join(d, "pids")
    os.makedirs(piddir)
    cmd = '(sleep 300 >/dev/null 2>&1 &  echo $! > "$PIDDIR/$XPUIFY_VERIFY_VARIANT"); echo ok'
    p = verify(d, proj, "--run", cmd, "--devices", "cpu", env=env_for(d, PIDDIR=piddir))
    eq(p.returncode, 0, p.stdout + p.stderr)
    for v in ("original", "patched"):
        pid = int(read(os.path.join(piddir, v)))
        check(not pid_alive(pid), f"the {v} run's leftover child {pid} was killed")


def test_interrupt_kills_the_run_and_cleans_up(d):
    proj = os.path.join(d, "proj")
    os.makedirs(proj)
    piddir = os.path.join(d, "pids")
    os.makedirs(piddir)
    e = dict(os.environ)
    e.update(TMPDIR=os.path.join(d, "tmp"), PIDDIR=piddir)
    os.makedirs(e["TMPDIR"])
    proc = subprocess.Popen([XPUIFY, "verify", proj, "--run", 'sleep 300 & echo $! > "$PIDDIR/pid"; wait',
                             "--devices", "cpu"], env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for _ in range(200):
        if os.path.exists(os.path.join(piddir, "pid")) and read(os.path.join(piddir, "pid")).strip():
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    eq(proc.returncode, 2, out + err)
    check("interrupted" in out, "the report says so", out)
    check(not pid_alive(int(read(os.path.join(piddir, "pid")))), "the running command was killed")
    eq(os.listdir(e["TMPDIR"]), [], "the temporary directory was removed")


def test_keep_prints_the_directory(d):
    proj = program(d, "print(2)\n")
    p = verify(d, proj, "--run", f"{PY} prog.py", "--devices", "cpu", "--keep")
    eq(p.returncode, 0)
    kept = [line.split(": ", 1)[1] for line in p.stdout.splitlines() if line.startswith("kept: ")]
    eq(len(kept), 1, p.stdout)
    check(os.path.isdir(os.path.join(kept[0], "original", "proj")) and
          os.path.isdir(os.path.join(kept[0], "patched", "proj")), "both copies are kept")
    eq(read(os.path.join(kept[0], "results", "cpu-original", "stdout")), "2\n")
    check(kept[0] in p.stderr, "and says where on stderr", p.stderr)
    eq(leftovers(d), [os.path.basename(kept[0])])


NPY_PROG = """
import numpy as np
scale = float(os.environ.get('SCALE_' + VARIANT, '1'))
a = np.arange(6, dtype=os.environ.get('DTYPE_' + VARIANT, 'float32')).reshape(os.environ.get('SHAPE_' + VARIANT, '2x3').split('x') and [int(x) for x in os.environ.get('SHAPE_' + VARIANT, '2x3').split('x')]) * scale
os.makedirs('out', exist_ok=True)
if os.environ.get('SKIP_' + VARIANT) != '1':
    np.save('out/a.npy', a)
a.astype('<f4').tofile('raw32.f32')
a.astype('<f8').tofile('raw64.bin')
with open('blob.bin', 'wb') as f:
    f.write(b'\\x00\\x01' + (b'\\x02' if os.environ.get('BLOB_' + VARIANT) is None else b'\\x03'))
with open('result.txt', 'w') as f:
    f.write('mean %.6f\\n' % a.mean())
print('ok')
"""


def test_compare_files(d):
    proj = program(d, NPY_PROG)
    args = [proj, "--run", f"{PY} prog.py", "--devices", "cpu", "--compare", "stdout", "out/a.npy", "raw32.f32",
            "f64:raw64.bin", "blob.bin", "result.txt", "--format", "json"]

    def go(**env):
        p = verify(d, *args, env=env_for(d, **env))
        rep = json.loads(p.stdout)
        return p.returncode, runs(rep)[("cpu", "patched")]

    code, r = go()
    eq((code, r["verdict"], r["max_abs"]), (0, "match", 0), r)
    check(r["numbers"] == 6 + 6 + 6 + 1, "every value of the four numeric outputs was compared", r)
    code, r = go(SCALE_patched="1.000001")
    eq((code, r["verdict"]), (0, "match"), "within the default rtol 1e-5")
    code, r = go(SCALE_patched="1.01")
    eq((code, r["verdict"]), (1, "DIFFERS"))
    check(r["difference"].startswith("out/a.npy: value 1 is 1.00999999"), "the first differing .npy value", r)
    check(abs(r["max_rel"] - 0.01) < 1e-6, "relative difference", r)
    code, r = go(DTYPE_patched="float64")
    eq(code, 1)
    eq(r["difference"], "out/a.npy: dtype <f8, the reference has <f4")
    code, r = go(SHAPE_patched="3x2")
    eq(r["difference"], "out/a.npy: shape (3, 2), the reference has (2, 3)")
    code, r = go(SKIP_patched="1")
    eq((code, r["difference"]), (1, "out/a.npy: not produced (the reference has it)"))
    code, r = go(SKIP_original="1", SKIP_patched="1")
    eq((code, r["difference"]), (1, "out/a.npy: neither run produced it"), "a named output must exist")
    code, r = go(BLOB_patched="1")
    eq((code, r["difference"]), (1, "blob.bin: the bytes differ from offset 2"))


def test_compare_raw_float_details(d):
    # raw values: NaN equals NaN, a length mismatch is reported, f32: forces the kind
    proj = program(d, "import struct\n"
                      "n = 3 if VARIANT == 'original' else int(os.environ.get('N', '3'))\n"
                      "open('v.dat', 'wb').write(struct.pack('<%df' % n, *([float('nan'), 1.0, 2.0, 3.0][:n])))\n")
    p = verify(d, proj, "--run", f"{PY} prog.py", "--devices", "cpu", "--compare", "f32:v.dat")
    eq(p.returncode, 0, p.stdout)
    p = verify(d, proj, "--run", f"{PY} prog.py", "--devices", "cpu", "--compare", "f32:v.dat", env=env_for(d, N="4"))
    eq(p.returncode, 1, p.stdout)
    check("v.dat: 4 values, the reference has 3" in p.stdout, "length mismatch", p.stdout)
    # without the prefix the binary file is compared byte by byte
    p = verify(d, proj, "--run", f"{PY} prog.py", "--devices", "cpu", "--compare", "v.dat", env=env_for(d, N="4"))
    check("v.dat: 16 bytes, the reference has 12" in p.stdout, "exact bytes otherwise", p.stdout)


def test_text_output_file_uses_tolerance(d):
    proj = program(d, "open('m.txt', 'w').write('acc %s\\n' % (0.9 if VARIANT == 'original' else 0.90000001))\n"
                      "print('run', os.getpid() > 0)\n")
    p = verify(d, proj, "--run", f"{PY} prog.py", "--devices", "cpu", "--compare", "stdout", "m.txt")
    eq(p.returncode, 0, p.stdout)
    p = verify(d, proj, "--run", f"{PY} prog.py", "--devices", "cpu", "--compare", "m.txt", "--rtol", "0", "--atol", "0")
    eq(p.returncode, 1, p.stdout)
    check("m.txt line 1: 0.90000001, the reference has 0.9" in p.stdout, "text file numbers", p.stdout)


def test_build_command(d):
    proj = program(d, "print(open('built.txt').read().strip())\n")
    p = verify(d, proj, "--build", "echo built-$XPUIFY_VERIFY_VARIANT-0 > built.txt", "--run", f"{PY} prog.py",
               "--devices", "cpu", "--format", "json")
    eq(p.returncode, 1, p.stdout + p.stderr)  # the outputs name the variant: they differ in the text
    rep = json.loads(p.stdout)
    eq([b["ok"] for b in rep["builds"]], [True, True])
    p = verify(d, proj, "--build", "echo built 1 > built.txt", "--run", f"{PY} prog.py", "--devices", "cpu")
    eq(p.returncode, 0, p.stdout + p.stderr)
    build = 'test "$XPUIFY_VERIFY_VARIANT" = original && echo built 1 > built.txt || { echo "no compiler here" >&2; exit 3; }'
    p = verify(d, proj, "--build", build, "--run", f"{PY} prog.py", "--devices", "cpu", "--format", "json")
    eq(p.returncode, 1, p.stdout)
    rep = json.loads(p.stdout)
    eq([b["ok"] for b in rep["builds"]], [True, False])
    # the failed build's stderr is in the report (a CI log may only keep the report)
    eq([(b["exit"], b["stderr_tail"]) for b in rep["builds"]], [(0, None), (3, "no compiler here")])
    p = verify(d, proj, "--build", build, "--run", f"{PY} prog.py", "--devices", "cpu", "-q")
    check("the build of the patched copy failed (non-zero exit)\n  | no compiler here\n" in p.stdout, p.stdout)
    r = runs(rep)[("cpu", "patched")]
    eq((r["ran"], r["status"], r["verdict"]), (False, "build failed", "FAILS"))



def test_c_program_gets_the_portable_layer(d):
    # the patched copy of a CUDA C program includes xpuify_gpu.h, which verify's fix must write into the copy (as
    # `xpuify fix` does): here the patched host code builds with gcc against Level Zero and runs (no Intel GPU: it
    # reports the missing device and exits 0), while the original cannot build without the CUDA toolkit
    proj = os.path.join(d, "cproj")
    os.makedirs(proj)
    shutil.copy(os.path.join(ROOT, "fixtures", "programs", "host.c"), proj)
    before = tree_hash(proj)
    build = "test -f xpuify_gpu.h && grep -q '#include \"xpuify_gpu.h\"' host.c && gcc -std=c11 -Wall -Werror -o host host.c -lze_loader"
    p = verify(d, proj, "--build", build, "--run", "./host", "--devices", "cpu", "--format", "json")
    rep = json.loads(p.stdout)
    b = {x["variant"]: x for x in rep["builds"]}
    eq((b["patched"]["ok"], b["patched"]["stderr_tail"]), (True, None), p.stdout)
    check(rep["fix"]["fixed"] > 0 and rep["fix"]["files_changed"] == 1, "verify fixed host.c", rep["fix"])
    r = runs(rep)[("cpu", "patched")]
    eq((r["ran"], r["exit"]), (True, 0), p.stdout)
    eq(tree_hash(proj), before, "the project itself is not written")


def need_pocl():
    if not os.path.exists("/usr/include/CL/cl.h") or not shutil.which("g++"):
        skip("no OpenCL headers or g++ (ocl-icd-opencl-dev, opencl-c-headers)")
    if not os.path.isdir("/etc/OpenCL/vendors") or not os.listdir("/etc/OpenCL/vendors"):
        skip("no OpenCL platform is installed (pocl-opencl-icd)")


C_BUILD = "$XPUIFY_CC -O2 -o p matmul_tiled.cu $XPUIFY_LIBS"


def test_c_tier_opencl_on_pocl(d):
    """The C tier: a CUDA program (fixtures/kernels/matmul_tiled.cu: a tiled matmul with __shared__ tiles that
    checks itself against a CPU product) fixed, its patched copy built by the one build command with the OpenCL
    backend (XPUIFY_CC, XPUIFY_LIBS) and run on PoCL; the cuda tier (no NVIDIA GPU here; nvcc hidden from PATH)
    is reported as skipped with the reason, not an error. With a reference (the original's output as recorded),
    the OpenCL run is compared with it and a different output fails."""
    need_pocl()
    proj = os.path.join(d, "cproj")
    os.makedirs(proj)
    shutil.copy(os.path.join(ROOT, "fixtures", "kernels", "matmul_tiled.cu"), proj)
    before = tree_hash(proj)
    env = env_for(d, PATH="/usr/bin:/bin", XPUIFY_OPENCL_PLATFORM="Portable Computing Language")
    p = verify(d, proj, "--build", C_BUILD, "--run", "./p", "--devices", "cuda,opencl", "--format", "json", env=env)
    eq(p.returncode, 0, p.stdout + p.stderr)
    rep = json.loads(p.stdout)
    tiers = {t["tier"]: t for t in rep["devices"]}
    check(not tiers["cuda"]["present"] and "nvcc is not on PATH" in tiers["cuda"]["how"], "cuda skipped, and why", tiers["cuda"])
    check(tiers["opencl"]["present"] and "Portable Computing Language" in tiers["opencl"]["how"], "PoCL found", tiers["opencl"])
    r = runs(rep)
    eq(sorted(r), [("opencl", "patched")])
    eq((r[("opencl", "patched")]["exit"], r[("opencl", "patched")]["verdict"]), (0, "runs"), p.stdout)
    check("patched (OpenCL backend) runs and exits 0" in rep["summary"], "summary", rep["summary"])
    eq(tree_hash(proj), before, "the project itself is not written")
    # the original's output as recorded (the program prints its own max abs error vs its CPU product: 0)
    ok = "echo 'matmul no error max abs error 0.00e+00'"
    p = verify(d, proj, "--build", C_BUILD, "--run", "./p", "--devices", "cuda,opencl", "--reference", ok, env=env)
    eq(p.returncode, 0, p.stdout + p.stderr)
    check("opencl patched" in p.stdout and "match" in p.stdout, "compared with the reference", p.stdout)
    p = verify(d, proj, "--build", C_BUILD, "--run", "./p", "--devices", "opencl", "--reference",
               "echo 'matmul no error max abs error 1.00e+00'", env=env)
    eq(p.returncode, 1, p.stdout + p.stderr)
    check("differs" in p.stdout, "a different output fails", p.stdout)
    # the OpenCL tier is never part of `auto`
    p = verify(d, proj, "--run", "true", "--devices", "auto", "--format", "json", env=env)
    eq([x for x in runs(json.loads(p.stdout)) if x[0] == "opencl"], [])


FAKE_SMI = "#!/bin/sh\n[ \"$1\" = -L ] && echo 'GPU 0: Fake Tesla X (UUID: GPU-0000)' && exit 0\nexit 1\n"


def test_tiers_with_a_fake_nvidia_machine(d):
    """nvidia-smi on PATH reports a GPU: the cuda tier is present and runs first; the CPU tier hides it."""
    bindir = os.path.join(d, "bin")
    write(os.path.join(bindir, "nvidia-smi"), FAKE_SMI)
    os.chmod(os.path.join(bindir, "nvidia-smi"), 0o755)
    log = os.path.join(d, "envlog")
    proj = program(d, "e = os.environ\n"
                      "with open(e['ENVLOG'], 'a') as f:\n"
                      "    f.write('%s %s CVD=%r ZE=%r DEV=%r\\n' % (e['XPUIFY_VERIFY_TIER'], VARIANT,\n"
                      "            e.get('CUDA_VISIBLE_DEVICES'), e.get('ZE_AFFINITY_MASK'), e.get('XPUIFY_DEVICE')))\n"
                      "if VARIANT == 'original' and e.get('CUDA_VISIBLE_DEVICES') == '':\n"
                      "    sys.exit('RuntimeError: no CUDA GPUs are available')\n"
                      "print('loss', 0.125 if e['XPUIFY_VERIFY_TIER'] == 'cuda' else 0.126)\n")
    env = env_for(d, PATH=bindir + ":" + os.environ["PATH"], ENVLOG=log)
    p = verify(d, proj, "--run", f"{PY} prog.py", "--format", "json", "--devices", "cuda,cpu", env=env)
    eq(p.returncode, 0, p.stdout + p.stderr)
    rep = json.loads(p.stdout)
    devs = {x["tier"]: x for x in rep["devices"]}
    check(devs["cuda"]["present"] and "Fake Tesla X" in devs["cuda"]["how"], "found through nvidia-smi", devs)
    eq([(r["tier"], r["variant"], r["verdict"]) for r in rep["runs"]],
       [("cuda", "original", "reference"), ("cuda", "patched", "match"),
        ("cpu", "original", "fails"), ("cpu", "patched", "runs")])
    eq(rep["reference"], "original/cuda")
    r = runs(rep)[("cpu", "patched")]
    eq(r["compared_with"], "original/cuda", "compared with the reference for information")
    check(abs(r["max_abs"] - 0.001) < 1e-12, "the information difference", r)
    check("cuda: patched matches the original; cpu: original fails, patched runs" in rep["summary"], "summary", rep)
    lines = read(log).splitlines()
    eq(lines, ["cuda original CVD=None ZE='' DEV='cuda'", "cuda patched CVD=None ZE='' DEV='cuda'",
               "cpu original CVD='' ZE='' DEV='cpu'", "cpu patched CVD='' ZE='' DEV='cpu'"])
    # CUDA_VISIBLE_DEVICES="" in the caller's environment hides the tier
    env2 = dict(env, CUDA_VISIBLE_DEVICES="")
    p = verify(d, proj, "--run", f"{PY} prog.py", "--format", "json", "--devices", "cuda,cpu", env=env2)
    eq(p.returncode, 2, p.stderr)
    check("hidden by CUDA_VISIBLE_DEVICES" in p.stderr, "says why", p.stderr)


def test_auto_finds_every_tier_present(d):
    """No --devices: nvidia-smi and xpu-smi on PATH report a GPU each, so cuda, xpu and cpu run, in that order,
    each with the other accelerators hidden; MPS is absent off macOS."""
    bindir = os.path.join(d, "bin")
    write(os.path.join(bindir, "nvidia-smi"), FAKE_SMI)
    write(os.path.join(bindir, "xpu-smi"), "#!/bin/sh\n[ \"$1\" = discovery ] && echo '| 0 | Device Name: Intel(R) Data Center GPU Max 1100 |'\n")
    for f in ("nvidia-smi", "xpu-smi"):
        os.chmod(os.path.join(bindir, f), 0o755)
    proj = program(d, "e = os.environ\n"
                      "print(e['XPUIFY_VERIFY_TIER'], 'CVD=%r ZE=%r' % (e.get('CUDA_VISIBLE_DEVICES'), e.get('ZE_AFFINITY_MASK')))\n")
    p = verify(d, proj, "--run", f"{PY} prog.py", "--format", "json", "--python", "/nonexistent/python3",
               env=env_for(d, PATH=bindir + ":" + os.environ["PATH"]))
    rep = json.loads(p.stdout)
    devs = {x["tier"]: x for x in rep["devices"]}
    eq([t for t in ("cuda", "xpu", "mps", "cpu") if devs[t]["present"]], ["cuda", "xpu", "cpu"], devs)
    check("xpu-smi" in devs["xpu"]["how"] and "macOS" in devs["mps"]["how"], "how each was decided", devs)
    eq([(r["tier"], r["variant"]) for r in rep["runs"]],
       [("cuda", "original"), ("cuda", "patched"), ("xpu", "original"), ("xpu", "patched"), ("cpu", "original"),
        ("cpu", "patched")])
    # the tiers print different text, so the original on xpu and cpu differs from the cuda reference (for
    # information), while each patched run matches its own original: a pass
    eq(p.returncode, 0, p.stdout)
    kept = verify(d, proj, "--run", f"{PY} prog.py", "--keep", "-q", env=env_for(d, PATH=bindir + ":" + os.environ["PATH"]))
    root = [x.split(": ", 1)[1] for x in kept.stdout.splitlines() if x.startswith("kept: ")][0]
    outs = {t: read(os.path.join(root, "results", f"{t}-patched", "stdout")).strip() for t in ("cuda", "xpu", "cpu")}
    eq(outs, {"cuda": "cuda CVD=None ZE=''", "xpu": "xpu CVD='' ZE=None", "cpu": "cpu CVD='' ZE=''"})


def test_text_report_layout(d):
    proj = program(d, "print('loss', 1.5)\n")
    p = verify(d, proj, "--run", f"{PY} prog.py", "--devices", "cpu")
    eq(p.returncode, 0)
    lines = p.stdout.splitlines()
    eq(lines[0], f"xpuify verify {proj}")
    header = [x for x in lines if x.startswith("tier ")]
    eq(len(header), 1, p.stdout)
    for col in ("variant", "status", "seconds", "compared with", "max abs", "max rel", "verdict"):
        check(col in header[0], f"column {col}", header[0])
    row = [x for x in lines if x.startswith("cpu   patched")]
    eq(len(row), 1, p.stdout)
    check(row[0].split()[2:4] == ["exit", "0"] and row[0].endswith("match"), "row", row)
    eq(lines[-1], "PASS: cpu: patched matches the original")
    check("xpuify: verify: patched on cpu: exit 0" in p.stderr, "progress on stderr", p.stderr)
    q = verify(d, proj, "--run", f"{PY} prog.py", "--devices", "cpu", "-q")
    eq(q.stderr, "", "--quiet")


if __name__ == "__main__":
    main(globals())
