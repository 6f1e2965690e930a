"""End-to-end with the second real editor: Emacs (batch) with eglot (Debian: emacs-nox, elpa-eglot) opens the
CUDA-only file of test_nvim.py, receives xpuify's diagnostics through Flymake, hovers a finding, applies its quick
fix and then source.fixAll.xpuify through eglot's own code-action path, and shuts down with `eglot-shutdown`,
which sends `shutdown` with `"params": null` (refused before: eglot then signalled an error and killed the
server). The buffer ends up as `xpuify fix` would write the file."""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import XPUIFY, check, eq, main, read, run, skip, write  # noqa: E402
from test_nvim import SOURCE  # noqa: E402

CLIENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "eglot_client.el")
PACKAGES = "emacs-nox elpa-eglot (apt-get install emacs-nox elpa-eglot)"


def emacs_with_eglot():
    if not shutil.which("emacs"):
        skip("emacs is not installed: " + PACKAGES)
    p = subprocess.run(["emacs", "--batch", "--eval", "(progn (require 'eglot) (princ \"eglot-ok\"))"],
                       capture_output=True, text=True, timeout=60, env=dict(os.environ, HOME=os.getcwd()))
    if "eglot-ok" not in p.stdout:
        skip("eglot is not available to emacs: " + PACKAGES)


def eglot(path):
    # --batch loads the site files (Debian's elpa packages) but no user init; HOME keeps ~/.emacs.d out of it
    env = dict(os.environ, LSP_CMD=f"{XPUIFY} lsp", OUT="result.txt", HOME=os.getcwd())
    p = subprocess.run(["timeout", "120", "emacs", "--batch", "-l", CLIENT, path], env=env,
                       capture_output=True, text=True, timeout=150)
    check(os.path.exists("result.txt"), "emacs wrote its result", p.stdout + p.stderr)
    return read("result.txt").split("\n"), p.stdout + p.stderr


def test_eglot_diagnostics_hover_quick_fix_fix_all_shutdown(d):
    emacs_with_eglot()
    write("train.py", SOURCE)
    out, log = eglot("train.py")
    check(not any(l.startswith("error:") for l in out), "the session ran through", "\n".join(out) + log)
    eq(out[0], "diagnostics 4")
    eq(sorted(out[1].split()[1:]), ["XPU101", "XPU201", "XPU202", "XPU203"])
    check(out[2].startswith("hover: XPU202 "), "hover names the finding's rule", out[2])
    eq(out[3], "quickfix: Replace `torch.cuda.synchronize` with `xpuify_device.synchronize`")
    eq(out[4:6], ["before 4", "after 3"])
    check(out[6].startswith("fixall: Fix all auto-fixable xpuify findings"), "fix-all", out)
    eq(out[7:9], ["before 3", "after 0"])  # `.cuda()` too: nothing in reach has a `.cuda()` of another meaning
    # eglot-shutdown's request with "params": null is answered; (Emacs 28's jsonrpc then deletes the process
    # itself, so the server's exit status is not the editor's to see)
    eq(out[9], "shutdown: ok", "\n".join(out))
    check("-32602" not in log, "no JSON-RPC error in the session", log)
    buffer = "\n".join(out[out.index("--- buffer") + 1:])
    write("cli/train.py", SOURCE)
    run("fix", "cli/train.py")
    eq(buffer.rstrip("\n"), read("cli/train.py").rstrip("\n"))
    eq(read("train.py"), SOURCE)  # the edits land in the buffer, not on disk


if __name__ == "__main__":
    main(globals())
