"""End-to-end tests of `xpuify fix`: golden before/after fixtures per target, idempotency, every output compiles,
--diff, unsafe fixes, safety (read-only files, failed writes, non-converging and syntax-breaking fixes),
target selection from the project's torch requirement, compat helper placement, fixes in check's JSON/SARIF."""
import glob
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import ROOT, check, eq, main, read, run, write  # noqa: E402

GOLDEN = os.path.join(ROOT, "fixtures", "python", "golden")
PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


def _compile(path):
    """What `python3 -m py_compile` checks: the file byte-compiles (nothing is written)."""
    with open(path, "rb") as f:
        compile(f.read(), path, "exec", dont_inherit=True)


def compiles(path):
    try:
        _compile(path)
        return True
    except (SyntaxError, ValueError) as e:
        raise AssertionError(f"{path} does not compile: {e}")


def debian_torch():
    """Whether /usr/bin/python3 imports torch (Debian's python3-torch), which the runtime tests run the fixed scripts
    with; prints the skip line when it does not."""
    if os.path.exists("/usr/bin/python3") and subprocess.run(["/usr/bin/python3", "-c", "import torch"],
                                                             capture_output=True).returncode == 0:
        return True
    print("ok # SKIP no torch for /usr/bin/python3")
    return False


def golden_case(case, expected_name):
    target, _, ver = expected_name[:-3].partition("-")

    def test(d):
        shutil.copy(os.path.join(GOLDEN, case, "input.py"), "input.py")
        args = ["fix", "-q", "--unsafe-fixes", "--target", target, "--torch-version", ver or "2.10", "input.py"]
        r = run(*args)
        check(r.code in (0, 1), "fix failed", r)
        want = read(os.path.join(GOLDEN, case, expected_name), "rb")
        eq(read("input.py", "rb").decode("utf-8"), want.decode("utf-8"), f"{case}/{expected_name}")
        compiles("input.py")
        if target == "compat" and b"xpuify_device" in want:
            check(os.path.exists("xpuify_device.py"), "the compat helper is written beside the script")
            compiles("xpuify_device.py")
        # idempotent: a second run changes nothing
        r2 = run(*args[:-1], "--diff", "input.py")
        eq((r2.code, r2.out), (0, ""), "second fix is a no-op")
    return test


for case in sorted(os.listdir(GOLDEN)):
    for exp in sorted(glob.glob(os.path.join(GOLDEN, case, "*.py"))):
        name = os.path.basename(exp)
        if name != "input.py":
            globals()[f"test_golden_{case}_{name[:-3].replace('-', '_').replace('.', '_')}"] = golden_case(case, name)


def test_whole_fixture_set_twice(d):
    """Every labelled fixture, fixed on both targets: the second run changes nothing and outputs compile."""
    src = os.path.join(ROOT, "fixtures", "python")
    for target in ("accelerator", "compat"):
        tree = os.path.join(d, target)
        shutil.copytree(src, tree, ignore=shutil.ignore_patterns("golden"))
        broken = {p for p in glob.glob(os.path.join(tree, "*.py")) if not _parses(p)}
        r = run("fix", "-q", "--no-ignore", "--unsafe-fixes", "--target", target, "--torch-version", "2.10", tree)
        check(r.code in (0, 1), f"{target}: first fix failed", r)
        r2 = run("fix", "-q", "--no-ignore", "--unsafe-fixes", "--target", target, "--torch-version", "2.10",
                 "--diff", tree)
        eq((r2.code, r2.out), (0, ""), f"{target}: second fix changed something")
        for p in glob.glob(os.path.join(tree, "*.py")):
            if p not in broken:
                compiles(p)


def _parses(p):
    try:
        _compile(p)
        return True
    except (SyntaxError, ValueError):
        return False


# load(): a receiver of unknown type from a library xpuify knows nothing of (its .cuda() fix is unsafe)
CUDA = "import torch, mylib\nx = mylib.load().cuda()\ntorch.cuda.synchronize()\n"


def test_diff_writes_nothing(d):
    write("a.py", CUDA)
    r = run("fix", "--diff", "--target", "compat", "a.py")
    eq(r.code, 1)
    eq(read("a.py"), CUDA)
    check("--- a/a.py\n+++ b/a.py\n" in r.out and "+xpuify_device.synchronize()" in r.out, "diff", r)
    check("--- /dev/null\n+++ b/xpuify_device.py" in r.out, "the helper shows as a new file", r)
    check(not os.path.exists("xpuify_device.py"), "helper not written under --diff")
    check("would fix 1 finding in 1 file" in r.err, "summary", r)


def test_unsafe_fixes_need_the_flag(d):
    write("a.py", CUDA)
    r = run("fix", "--target", "compat", "a.py")
    eq(r.code, 1)  # .cuda() remains: its fix is unsafe
    check(".cuda()" in read("a.py") and "xpuify_device.synchronize()" in read("a.py"), "only the safe fix", read("a.py"))
    check("Fixed 1 finding in 1 file; 1 remaining" in r.out, "summary", r)
    r = run("fix", "--unsafe-fixes", "--target", "compat", "a.py")
    eq(r.code, 0)
    check(".to(xpuify_device.DEV)" in read("a.py"), "unsafe fix applied")


TYPED = """import torch
from torch import nn
from torch.utils.data import DataLoader
from mylib import Thing


class Net(nn.Module):
    pass


def train(model: nn.Module, data, other, rank):
    model = model.cuda()
    net = Net().cuda()
    loader = DataLoader(data, batch_size=2)
    for x, y in loader:
        x = x.cuda(non_blocking=True)
        y = y.cuda(rank)
    w = torch.zeros(3).float().cuda()
    other = other.cuda()
    thing = Thing().cuda()
    return model, net, x, y, w, other, thing
"""


def test_cuda_method_is_safe_on_known_torch_receivers(d):
    """Plain `fix` rewrites `.cuda()` where the receiver is known to be a torch tensor or module (an annotated
    parameter, a module class of the file, a DataLoader batch, a factory's result) and keeps `.cuda(i)` and
    `non_blocking=` meaning the same; unknown receivers (an untyped parameter, an imported class) stay."""
    write("t.py", TYPED)
    r = run("fix", "--target", "accelerator", "--torch-version", "2.10", "t.py")
    eq(r.code, 1)
    got = read("t.py")
    for want in ("model = model.to(DEVICE_TYPE)", "net = Net().to(DEVICE_TYPE)",
                 "x = x.to(DEVICE_TYPE, non_blocking=True)", "y = y.to(f\"{DEVICE_TYPE}:{rank}\" if DEVICE_TYPE != \"cpu\" else \"cpu\")",
                 "w = torch.zeros(3).float().to(DEVICE_TYPE)", "other = other.cuda()", "thing = Thing().cuda()"):
        check(want in got, want, got)
    check("2 remaining" in r.out, "the two unknown receivers remain", r)
    compiles("t.py")


RECEIVERS = """import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)


class Runner:
    def __init__(self, model):
        self.model = model
        self.model.cuda()  # an attribute of unknown type (assumed: nothing in reach means more by it)

    def step(self, x):
        n = x.size(0)  # a parameter used as a tensor
        x = x.cuda(non_blocking=True)
        return self.model(x).sum() / n


def build():
    return Net()


torch.manual_seed(0)
data = TensorDataset(torch.randn(8, 4), torch.randn(8, 2))
loader = DataLoader(data, batch_size=4)
runner = Runner(build())
total = 0.0
for xb, yb in loader:  # batches of a DataLoader
    yb = yb.cuda()
    total += float(runner.step(xb)) + float(yb.sum())
print("%.6f" % total)
"""


def test_cuda_receivers_fixed_safely_run_on_cpu(d):
    """Plain `fix` (no --unsafe-fixes) rewrites every `.cuda()` of a script whose receivers are a parameter used as a
    tensor, an attribute holding a module, and DataLoader batches; the fixed script runs on the CPU with CUDA
    hidden (Debian's torch) and prints what the original computes on the CPU by hand."""
    if not debian_torch():
        return
    write("train.py", RECEIVERS)
    r = run("fix", "--target", "compat", "train.py")
    check(r.code in (0, 1), "fix ran", r)
    got = read("train.py")
    check(".cuda(" not in got, "every .cuda() fixed by plain fix", got)
    check("x.to(xpuify_device.DEV, non_blocking=True)" in got, "non_blocking kept", got)
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    p = subprocess.run(["/usr/bin/python3", "train.py"], capture_output=True, text=True, env=env)
    eq(p.returncode, 0, p.stderr)
    ref = subprocess.run(["/usr/bin/python3", "-c", RECEIVERS.replace(".cuda(non_blocking=True)", "").replace(".cuda()", "")],
                         capture_output=True, text=True, env=env)
    eq(ref.returncode, 0, ref.stderr)
    eq(p.stdout, ref.stdout)
    r2 = run("fix", "--target", "compat", "--diff", "train.py")
    eq((r2.code, r2.out), (0, ""), "second fix is a no-op")


SELECT = """import torch
if torch.cuda.is_available():
    device = torch.device("cuda")
elif (
    hasattr(torch.backends, "mps")
    and torch.backends.mps.is_available()
):
    device = torch.device("mps")
else:
    device = torch.device("cpu")
other = "cuda" if torch.cuda.is_available() else "mps"
print(device.type, other)
"""

FAKE = ("import runpy, sys, torch\n"
        "if sys.argv[1] == 'mps': torch.backends.mps.is_available = lambda: True\n"
        "if sys.argv[1] == 'cuda': torch.cuda.is_available = lambda: True\n"
        "runpy.run_path('sel.py', run_name='__main__')\n")


def test_device_cascades_pick_as_before(d):
    """Plain `fix` turns a CUDA > MPS > CPU cascade (an `elif` that only probes MPS) and `"cuda" if ... else "mps"`
    into the run-time device; run with Debian's torch told it has no accelerator, MPS, or CUDA, the fixed script
    picks what the original picks (the helper adds XPU before MPS)."""
    if not debian_torch():
        return
    write("sel.py", SELECT)
    write("fake.py", FAKE)
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    before = {k: subprocess.run(["/usr/bin/python3", "fake.py", k], capture_output=True, text=True, env=env)
              for k in ("none", "mps", "cuda")}
    r = run("fix", "--target", "compat", "sel.py")
    check(r.code in (0, 1), "fix ran", r)
    got = read("sel.py")
    check("device = torch.device(xpuify_device.DEV)\n" in got and "elif" not in got, "the cascade is one assignment", got)
    check('other = xpuify_device.DEV' in got, "the MPS fallback too", got)
    for k, p in before.items():
        eq(p.returncode, 0, p.stderr)
        a = subprocess.run(["/usr/bin/python3", "fake.py", k], capture_output=True, text=True, env=env)
        eq(a.returncode, 0, a.stderr)
        # the original's "mps" fallback without MPS names a device that is not there; the helper picks the CPU
        want = p.stdout if k != "none" else "cpu cpu\n"
        eq(a.stdout, want, k)
    eq(before["mps"].stdout, "mps mps\n")
    r2 = run("fix", "--target", "compat", "--diff", "sel.py")
    eq((r2.code, r2.out), (0, ""), "second fix is a no-op")


FORMATTED = """import torch
torch.save(torch.arange(3.0), "t.pt")
gpu = 0
loc = 'cuda:{}'.format(gpu)
t = torch.load("t.pt", map_location=loc)
u = torch.zeros(2).to("cuda:%d" % gpu)
v = torch.load("t.pt", map_location=torch.device("cuda", gpu))
print(t.device.type, t.tolist(), u.device.type, v.device.type)
"""


def test_formatted_device_index_runs_on_cpu(d):
    """`'cuda:{}'.format(i)`, `"cuda:%d" % i` and `torch.device("cuda", i)` reaching map_location and `.to()`: the
    device of the index, plain CPU on the CPU (an f-string keeping ":{}" gave "cpu:0", and `torch.device(DEV, i)` is
    cpu:0 too, which torch.load's map_location rejects). Run with Debian's torch, CUDA hidden, on both targets."""
    if not debian_torch():
        return
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    for target in ("compat", "accelerator"):
        write("load.py", FORMATTED)
        r = run("fix", "--target", target, "--torch-version", "2.10" if target == "accelerator" else "1.13", "load.py")
        check(r.code in (0, 1), "fix ran", r)
        got = read("load.py")
        check("cuda" not in got, "every CUDA string ported", got)
        if target == "accelerator":  # Debian's torch 1.13 has no torch.accelerator: run the compat copy only
            check('"%s:%s" % (DEVICE_TYPE, gpu) if DEVICE_TYPE != "cpu" else "cpu"' in got, "the CPU form", got)
            continue
        check("xpuify_device.device_str(gpu)" in got and "xpuify_device.device(gpu)" in got, "the helper's device", got)
        p = subprocess.run(["/usr/bin/python3", "load.py"], capture_output=True, text=True, env=env)
        eq(p.returncode, 0, p.stderr)
        eq(p.stdout, "cpu [0.0, 1.0, 2.0] cpu cpu\n")


LIGHTNING = """import torch
import lightning as L


def run(model):
    if torch.cuda.is_available():
        accelerator = "cuda"
    elif torch.backends.mps.is_available():
        accelerator = "mps"
    else:
        accelerator = "cpu"
    fabric = L.Fabric(accelerator=accelerator, devices=1)
    trainer = L.Trainer(accelerator="cuda" if torch.cuda.is_available() else "cpu")
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    return fabric, trainer, model.to(dev)
"""


def test_device_selection_for_lightning_accelerator_not_fixed(d):
    """A device selection whose value is Lightning's `accelerator=` (directly, or through the name it is assigned
    to) is reported without a fix, and the message says why: Lightning has no "xpu" accelerator, so the run-time
    device would make Fabric/Trainer raise on an XPU host. The selection that reaches `.to()` is still fixed."""
    write("lit.py", LIGHTNING)
    r = run("check", "--no-cache", "--format", "json", "lit.py")
    found = {x["line"]: x for x in r.json() if x["code"] == "XPU104"}
    eq(sorted(found), [6, 13, 14])
    for ln in (6, 13):
        check(not found[ln].get("fix"), "no fix", found[ln])
        check("(not fixed: the value is Lightning's `accelerator=` (line %d)" % (12 if ln == 6 else 13) in found[ln]["message"],
              "why", found[ln]["message"])
    check(found[14].get("fix"), "the .to() selection is fixed", found[14])
    r = run("fix", "--target", "compat", "lit.py")
    got = read("lit.py")
    check('accelerator = "cuda"' in got and 'accelerator="cuda" if torch.cuda.is_available() else "cpu"' in got,
          "Lightning's selections left as they are", got)
    check("dev = xpuify_device.DEV" in got, "the other one fixed", got)


STREAMS = """import torch
s = torch.cuda.Stream()
e = torch.cuda.Event(enable_timing=True)


def record(st: torch.cuda.Stream) -> torch.cuda.Event:
    e.record(st)
    return e


print(isinstance(s, torch.cuda.Stream), isinstance(record(s), torch.cuda.Event), isinstance(3, torch.cuda.Stream))
"""


def test_stream_and_event_classes_keep_isinstance(d):
    """`torch.cuda.Stream`/`Event` as names (isinstance, annotations) become the helper's, which are classes whose
    call makes the picked device's object: `isinstance(s, xpuify_device.Stream)` works (fairscale's tests; a function
    in their place raised TypeError). Run with Debian's torch, CUDA hidden."""
    if not debian_torch():
        return
    write("st.py", STREAMS)
    r = run("fix", "--target", "compat", "st.py")
    check(r.code in (0, 1), "fix ran", r)
    got = read("st.py")
    check("isinstance(s, xpuify_device.Stream)" in got and "st: xpuify_device.Stream" in got, "names ported", got)
    p = subprocess.run(["/usr/bin/python3", "st.py"], capture_output=True, text=True,
                       env=dict(os.environ, CUDA_VISIBLE_DEVICES=""))
    eq(p.returncode, 0, p.stderr)
    eq(p.stdout, "True True False\n")


LEGACY = """import torch
from torch.cuda import LongTensor
torch.manual_seed(0)
n = 3
a = torch.cuda.FloatTensor(2, n).fill_(1.5)
b = torch.cuda.FloatTensor([0.5, 2.0]) + torch.cuda.FloatTensor().sum()
c = LongTensor(n).zero_() + torch.cuda.LongTensor(len([1, 2, 3])).fill_(2)
d = torch.cuda.ByteTensor(n).fill_(7)
e = torch.cuda.DoubleTensor((1, 2)).sum()
f = torch.cuda.HalfTensor(b.size()).fill_(0.25).float()
g = torch.arange(0, n, out=torch.cuda.LongTensor(n))
for t in (a, b, c, d, e, f, g):
    print(t.dtype, tuple(t.shape), t.tolist())
"""


def test_legacy_tensor_types_fixed_run_on_cpu(d):
    """Plain `fix` rewrites the called legacy CUDA tensor types (sizes, data, no argument, one argument that could be
    either: the helper's new_tensor); the fixed script runs on the CPU with CUDA hidden and prints what the CPU's
    own legacy types (`torch.FloatTensor`, ...) make from the same arguments."""
    if not debian_torch():
        return
    write("legacy.py", LEGACY)
    r = run("fix", "--target", "compat", "legacy.py")
    check(r.code in (0, 1), "fix ran", r)
    got = read("legacy.py")
    check("torch.cuda." not in got and "LongTensor" not in got, "every legacy type called is fixed", got)
    check("xpuify_device.new_tensor(torch.int64, n)" in got, "an argument that could be data goes to the helper", got)
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    p = subprocess.run(["/usr/bin/python3", "legacy.py"], capture_output=True, text=True, env=env)
    eq(p.returncode, 0, p.stderr)
    ref = subprocess.run(["/usr/bin/python3", "-c", LEGACY.replace("torch.cuda.", "torch.").replace(
        "from torch.cuda import", "from torch import")], capture_output=True, text=True, env=env)
    eq(ref.returncode, 0, ref.stderr)
    eq(p.stdout, ref.stdout)
    check(p.stdout.count("\n") == 7, "seven tensors printed", p.stdout)
    r2 = run("fix", "--target", "compat", "--diff", "legacy.py")
    eq((r2.code, r2.out), (0, ""), "second fix is a no-op")


MOVE = """import torch


def move_to_cuda(sample, device=None):
    device = device or torch.cuda.current_device()
    return sample.to(device=device, non_blocking=True)


def here(x):
    dev = torch.cuda.current_device()
    return x.to(dev)


x = torch.arange(3.0)
print(move_to_cuda(x).device.type, move_to_cuda(x, "cpu").device.type, move_to_cuda(x, torch.device("cpu")).device.type,
      here(x).device.type, move_to_cuda(x).tolist())
"""


def test_current_device_index_used_as_a_device(d):
    """`torch.cuda.current_device()` is an int, which `.to()` reads as a CUDA device: where it reaches a device
    position (also as the default of `device or ...`, fairseq's move_to_cuda) plain `fix` wraps the use in the
    helper's device_str, which takes an index or a caller's device; the fixed script runs on the CPU with CUDA
    hidden. The accelerator target's inline form takes an index only, so the mixed case keeps the finding."""
    if not debian_torch():
        return
    write("move.py", MOVE)
    r = run("fix", "--target", "compat", "move.py")
    check(r.code in (0, 1), "fix ran", r)
    got = read("move.py")
    check("sample.to(device=xpuify_device.device_str(device), non_blocking=True)" in got, "mixed use wrapped", got)
    check("x.to(xpuify_device.device_str(dev))" in got, "index use wrapped", got)
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    p = subprocess.run(["/usr/bin/python3", "move.py"], capture_output=True, text=True, env=env)
    eq(p.returncode, 0, p.stderr)
    eq(p.stdout, "cpu cpu cpu cpu [0.0, 1.0, 2.0]\n")
    r2 = run("fix", "--target", "compat", "--diff", "move.py")
    eq((r2.code, r2.out), (0, ""), "second fix is a no-op")
    write("acc.py", MOVE)
    r = run("fix", "--target", "accelerator", "--torch-version", "2.10", "acc.py")
    got = read("acc.py")
    check("sample.to(device=device, non_blocking=True)" in got, "accelerator: the mixed use is left", got)
    check('x.to(f"{DEVICE_TYPE}:{dev}" if DEVICE_TYPE != "cpu" else "cpu")' in got, "accelerator: index use fixed", got)
    r = run("check", "--target", "accelerator", "--torch-version", "2.10", "--select", "XPU109", "acc.py")
    check("acc.py:7:" in r.out and "`device` is a caller's device or else the current device's index" in r.out, "the mixed use is still reported", r)


IMPORTED = """import torch


def run(x, device="cuda"):
    return x.to(device)
"""

# Debian's torch told it is a CUDA build: NVML's count (argv[2]; "raise": NVML fails), whether CUDA is initialised
# (argv[1]), and torch.cuda.is_available() counted (it initialises the CUDA driver, which reads CUDA_VISIBLE_DEVICES
# then and never again)
PICK = """import sys, torch
asked = []
torch.backends.cuda.is_built = lambda: True
torch.cuda.is_initialized = lambda: sys.argv[1] == "initialised"
def nvml():
    if sys.argv[2] == "raise":
        raise RuntimeError("NVML")
    return int(sys.argv[2])
torch.cuda._device_count_nvml = nvml
def available():
    asked.append(1)
    return True
torch.cuda.is_available = available
import lib  # its default argument picks the device when it is imported
import xpuify_device
print(lib.run.__defaults__[0], len(asked))
"""


def test_pick_at_import_leaves_cuda_uninitialised(d):
    """A device string in a default argument becomes `xpuify_device.DEV`, which picks the device when the fixed
    module is imported. torch.cuda.is_available() would initialise the CUDA driver then, so a CUDA_VISIBLE_DEVICES
    that the program sets after its imports would no longer count (the original `"cuda"` probed nothing). The helper
    asks NVML while CUDA is not initialised, and torch only where NVML cannot answer or sees no device, or once CUDA
    is initialised."""
    if not debian_torch():
        return
    write("lib.py", IMPORTED)
    write("pick.py", PICK)
    r = run("fix", "--target", "compat", "lib.py")
    check(r.code in (0, 1), "fix ran", r)
    check('def run(x, device=xpuify_device.DEV):' in read("lib.py"), "the default picks at import", read("lib.py"))
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    for state, nvml, want in (("fresh", "2", "cuda 0"), ("fresh", "0", "cuda 1"), ("fresh", "-1", "cuda 1"),
                              ("fresh", "raise", "cuda 1"), ("initialised", "2", "cuda 1")):
        p = subprocess.run(["/usr/bin/python3", "pick.py", state, nvml], capture_output=True, text=True, env=env)
        eq((p.returncode, p.stdout, p.stderr), (0, want + "\n", ""), f"CUDA {state}, NVML count {nvml}")


PRECISION = """import torch


def precision():
    if torch.cuda.is_available():
        if torch.cuda.is_bf16_supported():
            return "bf16-mixed"
        return "16-mixed"
    return "bf16-mixed"
"""

# Debian's torch with an MPS device that takes bfloat16 (argv[1] "bf16", macOS 14 on) or not (older macOS)
FAKE_MPS = """import sys, torch
real = torch.ones
def ones(*a, **k):
    if k.get("device") == "mps":
        if sys.argv[1] == "bf16":
            return real(*a, dtype=k["dtype"])
        raise RuntimeError("MPS: bfloat16 is not supported on this macOS")
    return real(*a, **k)
torch.ones = ones
import prec
print(prec.precision())
"""


def test_bf16_support_on_mps(d):
    """torch.mps has no is_bf16_supported(), so the helper asked nothing and said False on MPS: litgpt's default
    precision, which falls through to bf16 off CUDA, turned to fp16 on a Mac once its guard was ported. The helper
    asks MPS for a bfloat16 tensor (macOS 14 on takes one)."""
    if not debian_torch():
        return
    write("prec.py", PRECISION)
    write("fake.py", FAKE_MPS)
    r = run("fix", "--target", "compat", "prec.py")
    check(r.code in (0, 1), "fix ran", r)
    check("if xpuify_device.is_bf16_supported():" in read("prec.py"), "ported", read("prec.py"))
    for arg, want in (("bf16", "bf16-mixed"), ("old", "16-mixed")):
        p = subprocess.run(["/usr/bin/python3", "fake.py", arg], capture_output=True, text=True,
                           env=dict(os.environ, XPUIFY_DEVICE="mps"))
        eq((p.returncode, p.stdout), (0, want + "\n"), p.stderr)
    p = subprocess.run(["/usr/bin/python3", "-c", "import prec; print(prec.precision())"], capture_output=True, text=True)
    eq(p.stdout, "bf16-mixed\n", p.stderr)


MEMSUM = """import torch


def report():
    return torch.cuda.memory_summary(device=0, abbreviated=True)
"""

# runs mem.py's report() with torch.cuda.memory_summary or torch.xpu faked (Debian's torch has neither device)
FAKE_MEM = """import sys, types, torch
torch.cuda.memory_summary = lambda device=None, abbreviated=False: "CUDA summary %s %s" % (device, abbreviated)
stats = {"allocated_bytes.all.current": 512, "num_alloc_retries": 0, "allocated_bytes.small_pool.peak": 7}
torch.xpu = types.SimpleNamespace(is_available=lambda: True, memory_stats=lambda dev=None: stats)
import mem
print(mem.report())
"""


def test_memory_summary_on_every_device(d):
    """torch.cuda.memory_summary (trainers log it on out-of-memory) has no XPU twin: the compat helper returns CUDA's
    own summary on CUDA, exactly as before, and a table of the device's allocator statistics elsewhere."""
    if not debian_torch():
        return
    write("mem.py", MEMSUM)
    write("fake.py", FAKE_MEM)
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    before = subprocess.run([PY, "fake.py"], capture_output=True, text=True, env=env)
    eq((before.returncode, before.stdout), (0, "CUDA summary 0 True\n"), before.stderr)
    r = run("fix", "-q", "--no-cache", "--target", "compat", "mem.py")
    check(r.code in (0, 1), "fix failed", r)
    check("return xpuify_device.memory_summary(device=0, abbreviated=True)" in read("mem.py"), "ported", read("mem.py"))
    runs = {dev: subprocess.run([PY, "fake.py"], capture_output=True, text=True, env={**env, "XPUIFY_DEVICE": dev})
            for dev in ("cuda", "xpu", "cpu")}
    for dev, p in runs.items():
        eq(p.returncode, 0, f"{dev}: {p.stderr[-2000:]}")
    eq(runs["cuda"].stdout, before.stdout, "CUDA: the same summary as before")
    xpu = runs["xpu"].stdout
    check("XPU memory summary (allocator statistics)" in xpu and "allocated_bytes.all.current" in xpu and " 512 |" in xpu
          and "num_alloc_retries" in xpu and "small_pool" not in xpu, "XPU: the statistics, abbreviated", xpu)
    eq(runs["cpu"].stdout, "memory summary: no accelerator, no device memory\n", "CPU")


def test_read_only_file_left_untouched(d):
    write("a.py", CUDA)
    os.chmod("a.py", 0o444)
    r = run("fix", "--target", "accelerator", "a.py")
    eq(r.code, 2)
    eq(read("a.py"), CUDA)
    check("a.py: file is read-only; left untouched" in r.err, "reported", r)


def test_failed_write_keeps_original(d):
    write("a.py", CUDA)
    r = run("fix", "--target", "accelerator", "a.py", env={"XPUIFY_FAULT_WRITE": "enospc"})
    eq(r.code, 2)
    eq(read("a.py"), CUDA)
    check("No space left on device" in r.err, "reported", r)
    eq(sorted(os.listdir(".")), ["a.py"])  # no temporary file left behind


def test_mode_is_kept(d):
    write("a.py", CUDA)
    os.chmod("a.py", 0o750)
    run("fix", "--target", "accelerator", "a.py")
    eq(os.stat("a.py").st_mode & 0o777, 0o750)


GROW = """rules:
  - code: USR001
    name: grow
    language: python
    fix: safe
    message: "grow {name}"
    doc: test rule whose fix never converges
    qualnames:
      - {name: mylib.grow, replacement: mylib.grow.grow}
"""
BREAK = """rules:
  - code: USR002
    name: breaker
    language: python
    fix: safe
    message: "break {name}"
    doc: test rule whose fix breaks the syntax
    qualnames:
      - {name: mylib.bad, replacement: "mylib.bad("}
"""


def test_non_converging_fix_is_a_reported_bug(d):
    write("rules/grow.yml", GROW)
    write("a.py", "import mylib\nmylib.grow(1)\n")
    r = run("fix", "--rules", "rules", "--select", "USR001", "a.py")
    eq(r.code, 2)
    eq(read("a.py"), "import mylib\nmylib.grow(1)\n")
    check("did not converge after 20 passes" in r.err and "USR001 (grow)" in r.err and "bug in xpuify" in r.err, "msg", r)


def test_syntax_breaking_fix_is_reverted(d):
    write("rules/break.yml", BREAK)
    write("a.py", "import mylib\nmylib.bad(1)\n")
    r = run("fix", "--rules", "rules", "--select", "USR002", "a.py")
    eq(r.code, 2)
    eq(read("a.py"), "import mylib\nmylib.bad(1)\n")
    check("introduced a syntax error" in r.err and "USR002 (breaker)" in r.err, "names the rule", r)


def test_auto_target_reads_requirements(d):
    write("proj/train.py", CUDA)
    r = run("fix", "--diff", "proj")
    check("target: compat: the project declares no minimum torch version" in r.err, "no requirement", r)
    write("proj/requirements.txt", "numpy\ntorch>=2.1.0  # old\n")
    r = run("fix", "--diff", "proj")
    check("target: compat: proj/requirements.txt:2 guarantees torch >= 2.1, but torch.cuda.synchronize" in r.err
          or ("target: compat:" in r.err and "guarantees torch >= 2.1" in r.err), "old torch", r)
    write("proj/requirements.txt", "torch>=2.10\n")
    r = run("fix", "--diff", "proj")
    check("target: accelerator:" in r.err and "guarantees torch >= 2.10" in r.err, "new torch", r)
    check('+if DEVICE_TYPE != "cpu": torch.accelerator.synchronize()' in r.out, "accelerator fix", r)
    write("proj/requirements.txt", "torch>=2.6\n")
    r = run("fix", "--diff", "--torch-version", "2.9", "proj")
    check("--torch-version guarantees torch >= 2.9" in r.err, "explicit version wins", r)


def test_accelerator_version_gating(d):
    write("a.py", "import torch\ntorch.cuda.empty_cache()\ntorch.cuda.synchronize()\n")
    r = run("fix", "--target", "accelerator", "--torch-version", "2.6", "a.py")
    eq(read("a.py"), "import torch\n" + DEV_INIT + "torch.cuda.empty_cache()\n"
                     "if DEVICE_TYPE != \"cpu\": torch.accelerator.synchronize()\n")
    eq(r.code, 1)


DEV_INIT = ("DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.current_accelerator() "
            "and torch.get_device_module(torch.accelerator.current_accelerator()).device_count() else \"cpu\"\n")
OLD_DEV_INIT = ("DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() "
                "else \"cpu\"\n")


def test_accelerator_device_definition_probes_no_cuda_at_import(d):
    """The accelerator target's DEVICE_TYPE is defined at the module's top, so it runs at import: it counts the
    build's accelerator's devices through its device module (NVML for CUDA) instead of torch.accelerator.is_available(),
    which initialises CUDA (a CUDA_VISIBLE_DEVICES set after the import then no longer counted, and a forked CUDA
    worker failed: H200 in docs/verification.md). Run here with Debian's torch told it is a CUDA build with one device
    (torch 1.13 has no torch.accelerator: told that too): the definition picks cuda without asking torch.cuda, and the
    CPU without a device. A file fixed by an earlier xpuify keeps its definition: no second one."""
    write("a.py", "import torch\ntorch.cuda.synchronize()\n")
    r = run("fix", "--target", "accelerator", "--torch-version", "2.10", "a.py")
    check(read("a.py").startswith("import torch\n" + DEV_INIT), "the definition", read("a.py"))
    if debian_torch():
        probe = ("import sys, types, torch\n"
                 "asked = []\n"
                 "torch.accelerator = types.SimpleNamespace(current_accelerator=lambda: torch.device('cuda'),\n"
                 "    is_available=lambda: asked.append(1) or True)\n"
                 "torch.get_device_module = lambda d: types.SimpleNamespace(device_count=lambda: int(sys.argv[1]))\n"
                 "torch.cuda.is_available = lambda: asked.append(1) or True\n"
                 + DEV_INIT + "print(DEVICE_TYPE, len(asked))\n")
        write("probe.py", probe)
        for n, want in (("1", "cuda 0"), ("0", "cpu 0")):
            p = subprocess.run(["/usr/bin/python3", "probe.py", n], capture_output=True, text=True)
            eq((p.returncode, p.stdout), (0, want + "\n"), p.stderr)
    write("b.py", "import torch\n" + OLD_DEV_INIT + "torch.cuda.synchronize()\n")
    run("fix", "--target", "accelerator", "--torch-version", "2.10", "b.py")
    eq(read("b.py"), "import torch\n" + OLD_DEV_INIT + "if DEVICE_TYPE != \"cpu\": torch.accelerator.synchronize()\n")


def test_compat_helper_imports_from_scripts_and_packages(d):
    write("scripts/run.py", "import torch\nprint(torch.cuda.device_count())\n")
    write("pkg/__init__.py", "")
    write("pkg/sub/__init__.py", "")
    write("pkg/sub/m.py", "import torch\n\ndef n():\n    return torch.cuda.device_count()\n")
    write("main.py", "import pkg.sub.m\nprint(pkg.sub.m.n())\n")
    r = run("fix", "--target", "compat", ".")
    eq(r.code, 0, r)
    check("import xpuify_device" in read("scripts/run.py"), "script imports its sibling helper")
    check("from .. import xpuify_device" in read("pkg/sub/m.py"), "package module imports the package helper relatively")
    check(os.path.exists("scripts/xpuify_device.py") and os.path.exists("pkg/xpuify_device.py"), "helpers written")
    env = dict(os.environ, PYTHONPATH="")
    for cmd in ([PY, "scripts/run.py"], [PY, "main.py"], [PY, "-m", "pkg.sub.m"]):
        p = subprocess.run(cmd, capture_output=True, text=True, env=env)
        eq(p.returncode, 0, f"{cmd}: {p.stderr}")
    # the helper itself is never reported or rewritten
    r = run("check", "--format", "json", ".")
    eq([f["path"] for f in r.json()], [])


def test_unused_import_with_a_comment_keeps_the_comment(d):
    """An unused CUDA-only import removed from its own line keeps the comment after it (`# why`), not `pass  # why`;
    where it is the only statement of a block (comments are not statements) `pass` stands in for it."""
    write("t.py", "import torch\nfrom torch.cuda import amp  # mixed precision\n\n\ndef f():\n"
                  "    from torch.cuda import amp  # the only statement\n\n\nx = 1\n")
    r = run("fix", "-q", "--no-cache", "t.py")
    check(r.code in (0, 1), "fix failed", r)
    eq(read("t.py"), "import torch\n# mixed precision\n\n\ndef f():\n    pass  # the only statement\n\n\nx = 1\n", "fixed")
    compiles("t.py")


HYBRID = """import contextlib, sys, types, torch
sys.path.insert(0, sys.argv[1])
entered = []
def recorder(kind):
    @contextlib.contextmanager
    def device(i):
        entered.append((kind, i))
        yield
    return device
# a host with CUDA and XPU (Debian's torch has neither: both told)
torch.cuda.is_available = lambda: True
torch.cuda.device = recorder("cuda")
torch.cuda.device_count = lambda: 2
torch.xpu = types.SimpleNamespace(is_available=lambda: True, device=recorder("xpu"), device_count=lambda: 2)
import xpuify_device as h
args = [torch.device("cuda", 1), "cuda:1", 1] + ([torch.device("xpu", 0)] if h._dev() == "xpu" else [])
for a in args:
    with h.device_ctx(a):
        pass
print(h._dev(), entered)
"""


def test_device_ctx_on_a_host_with_two_accelerators(d):
    """`with torch.cuda.device(x.device):` becomes `device_ctx(x.device)`: on a host with CUDA and XPU where XPU is
    picked, a CUDA tensor's device still enters CUDA's context (as the original does), while an index or a "cuda"
    string means the picked device; with CUDA picked every form enters CUDA's, as before."""
    if not debian_torch():
        return
    os.mkdir("h")
    with open("h/xpuify_device.py", "w") as f:
        f.write(read(os.path.join(ROOT, "rewriters", "templates", "xpuify_device.py")))
    write("t.py", HYBRID)
    out = lambda dev: subprocess.run([PY, "t.py", "h"], capture_output=True, text=True, env={**os.environ, "XPUIFY_DEVICE": dev})
    r = out("xpu")
    eq(r.stdout.strip(), "xpu [('cuda', 1), ('xpu', 1), ('xpu', 1), ('xpu', 0)]", r.stderr)
    r = out("cuda")
    eq(r.stdout.strip(), "cuda [('cuda', 1), ('cuda', 1), ('cuda', 1)]", r.stderr)


AUTOCAST = """import torch


@torch.cuda.amp.autocast(enabled=False)
def exact(x):
    return x.float() * 2


def step(x):
    with torch.cuda.amp.autocast(enabled=False):
        y = exact(x)
    with torch.cuda.amp.autocast():
        z = x + 1
    return (y + z).tolist()


print(step(torch.ones(2)))
"""


def test_autocast_on_a_device_without_autocast(d):
    """torch.cuda.amp.autocast (a decorator and a context, enabled or not) becomes the helper's autocast; on a device
    whose torch has no autocast (MPS before torch 2.5: torch.autocast("mps") raises even when disabled; Debian's
    torch 1.13 has none for MPS) the fixed code runs without it, warning only where autocast was asked for."""
    if not debian_torch():
        return
    write("t.py", AUTOCAST)
    r = run("fix", "-q", "--no-cache", "t.py")
    check(r.code in (0, 1), "fix failed", r)
    check(read("t.py").count("xpuify_device.autocast(") == 3, "the three uses go through the helper", read("t.py"))
    for dev, warned in (("mps", 1), ("cpu", 0)):
        p = subprocess.run([PY, "-W", "always", "t.py"], capture_output=True, text=True,
                           env={**os.environ, "XPUIFY_DEVICE": dev, "CUDA_VISIBLE_DEVICES": ""})
        eq((p.returncode, p.stdout.strip()), (0, "[4.0, 4.0]"), f"{dev}: {p.stderr[-2000:]}")
        eq(p.stderr.count("autocast is not available"), warned, f"{dev}: {p.stderr[-2000:]}")


DTYPES = """import sys

import torch

a, b = torch.ones(4, 4), torch.ones(4, 4)


@torch.cuda.amp.autocast(dtype=torch.float16)
def deco():
    return torch.mm(a, b).dtype


with torch.cuda.amp.autocast(dtype=torch.float16):
    ctx = torch.mm(a, b).dtype
with torch.autocast("cuda", dtype=torch.float16):
    plain = torch.mm(a, b).dtype
print(deco(), ctx, plain)
if len(sys.argv) > 1:  # the CPU's own autocast dtype, and no dtype: bfloat16 (the fixed code only: torch 1.13's CUDA
    # autocast asks CUDA whether it has bfloat16, and raises without CUDA)
    with torch.cuda.amp.autocast(dtype=torch.bfloat16):
        bf = torch.mm(a, b).dtype
    with torch.cuda.amp.autocast():
        default = torch.mm(a, b).dtype
    print(bf, default)
"""


def test_float16_autocast_is_off_on_the_cpu(d):
    """A float16 autocast (the CUDA dtype, as sgm's `dtype=torch.get_autocast_gpu_dtype()` gives it) is off where the
    fixed code picks the CPU, as the original's was on a host without CUDA: the matmuls stay float32 (CPU float16
    autocast is slow and lossy: trial2 P11). bfloat16, the CPU's autocast dtype, and no dtype autocast on the CPU
    (the runtime fixtures' hand-written CPU references, fixtures/runtime/amp_*)."""
    if not debian_torch():
        return
    write("t.py", DTYPES)
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    orig = subprocess.run([PY, "t.py"], capture_output=True, text=True, env=env)
    eq((orig.returncode, orig.stdout.strip()), (0, "torch.float32 torch.float32 torch.float32"), orig.stderr[-2000:])
    r = run("fix", "-q", "--no-cache", "t.py")
    check(r.code in (0, 1), "fix failed", r)
    check(read("t.py").count("xpuify_device.autocast(") == 5, "the five uses go through the helper", read("t.py"))
    p = subprocess.run([PY, "-W", "error::UserWarning", "t.py", "more"], capture_output=True, text=True,
                       env={**env, "XPUIFY_DEVICE": "cpu"})
    eq((p.returncode, p.stdout.strip().split("\n")),
       (0, [orig.stdout.strip(), "torch.bfloat16 torch.bfloat16"]), f"fixed, on the CPU: {p.stderr[-2000:]}")


def test_helper_path_and_priority(d):
    write("a.py", CUDA)
    r = run("fix", "--target", "compat", "--helper-path", "lib/devhelp.py", "--device-priority", "xpu,cuda,cpu", "a.py")
    check("import devhelp" in read("a.py") and "devhelp.synchronize()" in read("a.py"), "custom module", read("a.py"))
    check('_DEFAULT_PRIORITY = "xpu,cuda,cpu"' in read("lib/devhelp.py"), "priority baked in")
    eq(run("fix", "--helper-path", "x.txt", "a.py").code, 2)
    eq(run("fix", "--helper-module", "1bad", "a.py").code, 2)
    eq(run("fix", "--target", "gpu", "a.py").code, 2)


def test_check_json_and_sarif_carry_fixes(d):
    write("a.py", CUDA)
    f = run("check", "--format", "json", "--target", "accelerator", "--torch-version", "2.10", "a.py").json()
    by = {x["code"]: x for x in f}
    fix = by["XPU202"]["fix"]
    eq(fix["applicability"], "safe")
    check(any(e["content"] == 'if DEVICE_TYPE != "cpu": torch.accelerator.synchronize()' and e["line"] == 3 and
              e["column"] == 1 for e in fix["edits"]), "edit", fix)
    eq(by["XPU101"]["fix"]["applicability"], "unsafe")
    s = run("check", "--format", "sarif", "--target", "compat", "a.py").json()
    res = [x for x in s["runs"][0]["results"] if x["ruleId"] == "XPU202"][0]
    reps = res["fixes"][0]["artifactChanges"][0]["replacements"]
    check(any(rp["insertedContent"]["text"] == "xpuify_device.synchronize" for rp in reps), "sarif fix", reps)


def test_crlf_and_bom_kept(d):
    write("w.py", b"\xef\xbb\xbfimport torch\r\nx = 1\r\ntorch.cuda.synchronize()\r\n", "wb")
    run("fix", "--target", "compat", "w.py")
    data = read("w.py", "rb")
    check(data.startswith(b"\xef\xbb\xbf"), "BOM kept")
    check(b"\n" not in data.replace(b"\r\n", b""), "only CRLF line ends", data)
    check(b"xpuify_device.synchronize()\r\n" in data, "fixed", data)


if __name__ == "__main__":
    main(globals())
