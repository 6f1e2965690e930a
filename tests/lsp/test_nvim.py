"""End-to-end with a real editor: Neovim (Debian's 0.7, headless) opens a CUDA-only file with non-ASCII text,
receives xpuify's diagnostics, applies the quick fix of one finding and receives one fewer, then applies
source.fixAll.xpuify and receives fewer again; the buffer ends up as `xpuify fix` would write the file. Neovim
sends incremental UTF-16 changes, so this also checks the server's sync against a real client."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import XPUIFY, check, eq, main, need_tool, read, run, write  # noqa: E402

CLIENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nvim_client.lua")

SOURCE = ("\"\"\"Training step (𝔁 and é keep the positions honest).\"\"\"\n"
          "import torch\n"
          "\n"
          "def step(model, x, name='é𝔁'):\n"
          "    y = model(x.cuda())\n"
          "    torch.cuda.synchronize(); print(name)\n"
          "    return y, torch.cuda.device_count(), torch.cuda.memory_allocated()\n")


def nvim(path):
    env = dict(os.environ, LSP_CMD=f"{XPUIFY} lsp", OUT="result.txt", HOME=os.getcwd(), XDG_STATE_HOME=os.getcwd())
    p = subprocess.run(["timeout", "90", "nvim", "--headless", "-u", "NONE", "-i", "NONE", "-c",
                        f"luafile {CLIENT}", path], env=env, capture_output=True, text=True, timeout=120)
    check(os.path.exists("result.txt"), "nvim wrote its result", p.stdout + p.stderr)
    return read("result.txt").split("\n")


def test_neovim_quick_fix_and_fix_all(d):
    need_tool("nvim", "neovim")
    write("train.py", SOURCE)
    out = nvim("train.py")
    check(not any(l.startswith("error:") for l in out), "the session ran through", "\n".join(out))
    eq(out[0], "quickfix: Replace `torch.cuda.synchronize` with `xpuify_device.synchronize`")
    eq(out[1:3], ["before 4", "after 3"])
    check(out[3].startswith("fixall: Fix all auto-fixable xpuify findings"), "fix-all", out)
    eq(out[4:6], ["before 3", "after 0"])  # `.cuda()` too: nothing in reach has a `.cuda()` of another meaning
    buffer = "\n".join(out[out.index("--- buffer") + 1:])
    write("cli/train.py", SOURCE)
    run("fix", "cli/train.py")
    eq(buffer.rstrip("\n"), read("cli/train.py").rstrip("\n"))
    eq(read("train.py"), SOURCE)  # the edits land in the buffer, not on disk


if __name__ == "__main__":
    main(globals())
