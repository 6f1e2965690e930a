"""fz_lsp_seeds: the seed corpus of fuzz/fz_lsp.c (an option byte, then a client's byte stream).

  fz_lsp_seeds.py DIR        writes the seeds into DIR: the client streams of the LSP tests (fuzz/seeds/fz_lsp/,
                             each whole and in 7-byte chunks with the debounced work run between them) and a
                             session per fixture (Python, C, C++, CUDA): initialize with every capability,
                             didOpen, pull diagnostics, code actions over the file, hover on each finding's line,
                             an edit, fix-all through executeCommand and the client's answer to workspace/applyEdit,
                             settings, cancellation, shutdown, exit.
  fz_lsp_seeds.py --record   runs the LSP tests (tests/lsp/test_{protocol,actions,diagnostics}.py) with
                             XPUIFY_LSP_RECORD and keeps their client streams under 32 KiB in fuzz/seeds/fz_lsp/
                             (needs build/xpuify or $XPUIFY)."""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RECORDED = os.path.join(ROOT, "fuzz", "seeds", "fz_lsp")
LANG = {".py": "python", ".c": "c", ".h": "cpp", ".cpp": "cpp", ".cu": "cuda", ".cuh": "cuda"}
MAX_FIXTURE = 6000  # bytes: a session holds the file twice and stays under the 16 KiB max_len


def frame(obj):
    body = json.dumps(obj).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def session(path, text, lang):
    uri = "file:///fuzz/project/" + os.path.basename(path)
    lines = text.split("\n")
    whole = {"start": {"line": 0, "character": 0}, "end": {"line": len(lines), "character": 0}}
    caps = {"general": {"positionEncodings": ["utf-8", "utf-16"]},
            "textDocument": {"diagnostic": {}, "hover": {"contentFormat": ["markdown", "plaintext"]}},
            "workspace": {"applyEdit": True, "workspaceEdit": {"documentChanges": True}, "configuration": True,
                          "diagnostics": {"refreshSupport": True}, "didChangeWatchedFiles": {"dynamicRegistration": True}}}
    out = [frame({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                  "params": {"processId": 1, "rootUri": "file:///fuzz/project", "capabilities": caps,
                             "initializationOptions": {"target": "compat", "unsafeFixes": True}}}),
           frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
           frame({"jsonrpc": "2.0", "id": 1, "result": None}),  # the client's answer to registerCapability
           frame({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                  "params": {"textDocument": {"uri": uri, "languageId": lang, "version": 1, "text": text}}}),
           frame({"jsonrpc": "2.0", "id": 2, "method": "textDocument/diagnostic", "params": {"textDocument": {"uri": uri}}}),
           frame({"jsonrpc": "2.0", "id": 3, "method": "textDocument/codeAction",
                  "params": {"textDocument": {"uri": uri}, "range": whole, "context": {"diagnostics": []}}}),
           frame({"jsonrpc": "2.0", "id": 4, "method": "textDocument/codeAction",
                  "params": {"textDocument": {"uri": uri}, "range": whole,
                             "context": {"diagnostics": [], "only": ["source.fixAll.xpuify"]}}})]
    n = 5
    for i, line in enumerate(lines[:40]):
        if any(w in line for w in ("cuda", "nccl", "torch", "__global__", "<<<")):
            out.append(frame({"jsonrpc": "2.0", "id": n, "method": "textDocument/hover",
                              "params": {"textDocument": {"uri": uri}, "position": {"line": i, "character": len(line) // 2}}}))
            n += 1
    out += [frame({"jsonrpc": "2.0", "method": "textDocument/didChange",
                   "params": {"textDocument": {"uri": uri, "version": 2},
                              "contentChanges": [{"range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 0}},
                                                  "text": "# edited\n" if lang == "python" else "// edited\n"}]}}),
            frame({"jsonrpc": "2.0", "id": n, "method": "workspace/executeCommand",
                   "params": {"command": "xpuify.applyAll", "arguments": [uri]}}),
            frame({"jsonrpc": "2.0", "id": 2, "result": {"applied": True}}),  # to workspace/applyEdit
            frame({"jsonrpc": "2.0", "method": "workspace/didChangeConfiguration",
                   "params": {"settings": {"xpuify": {"ignore": ["XPU1"], "target": "accelerator"}}}}),
            frame({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": n + 1}}),
            frame({"jsonrpc": "2.0", "id": n + 1, "method": "textDocument/diagnostic", "params": {"textDocument": {"uri": uri}}}),
            frame({"jsonrpc": "2.0", "method": "textDocument/didClose", "params": {"textDocument": {"uri": uri}}}),
            frame({"jsonrpc": "2.0", "id": n + 2, "method": "shutdown"}),
            frame({"jsonrpc": "2.0", "method": "exit"})]
    return b"".join(out)


def write_seeds(d):
    os.makedirs(d, exist_ok=True)
    k = 0
    for f in sorted(glob.glob(os.path.join(RECORDED, "*"))):
        data = open(f, "rb").read()
        for opt in (b"\x00", b"\x06"):  # whole; 7-byte chunks with the debounced work between them
            k += 1
            open(os.path.join(d, f"{k}-{os.path.basename(f)}"), "wb").write(opt + data)
    fixtures = sorted(glob.glob(os.path.join(ROOT, "fixtures", "python", "*.py")))[::4]
    fixtures += sorted(glob.glob(os.path.join(ROOT, "fixtures", "c", "*")))
    for f in fixtures:
        lang = LANG.get(os.path.splitext(f)[1])
        text = open(f, encoding="utf-8", errors="replace").read()
        if not lang or len(text.encode()) > MAX_FIXTURE:
            continue
        k += 1
        open(os.path.join(d, f"{k}-{os.path.basename(f)}"), "wb").write(b"\x04" + session(f, text, lang))


def record():
    xpuify = os.environ.get("XPUIFY", os.path.join(ROOT, "build", "xpuify"))
    tmp = tempfile.mkdtemp()
    env = dict(os.environ, XPUIFY=xpuify, XPUIFY_LSP_RECORD=tmp)
    for t in ("test_protocol", "test_actions", "test_diagnostics"):
        subprocess.run([sys.executable, os.path.join(ROOT, "tests", "lsp", t + ".py")], env=env,
                       stdout=subprocess.DEVNULL, check=False)
    shutil.rmtree(RECORDED, ignore_errors=True)
    os.makedirs(RECORDED)
    kept = 0
    for f in sorted(os.listdir(tmp)):
        if os.path.getsize(os.path.join(tmp, f)) <= 32768:
            shutil.copy(os.path.join(tmp, f), RECORDED)
            kept += 1
    shutil.rmtree(tmp)
    print(f"{kept} client streams in {os.path.relpath(RECORDED, ROOT)}")


if __name__ == "__main__":
    if sys.argv[1:] == ["--record"]:
        record()
    elif len(sys.argv) == 2:
        write_seeds(sys.argv[1])
    else:
        sys.exit(__doc__)
