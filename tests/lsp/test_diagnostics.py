"""Transcript tests of `xpuify lsp` diagnostics: what is published for a CUDA-only file (the same findings as
`xpuify check`), positions in UTF-8 and UTF-16 on non-ASCII lines, incremental changes, pull diagnostics,
settings from initializationOptions / didChangeConfiguration / workspace/configuration, and .xpuify.yml with
didChangeWatchedFiles."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import check, eq, main, run, write  # noqa: E402
from lspclient import Server, position, uri_of  # noqa: E402

CUDA = ("import torch\n"
        "x = torch.zeros(3).cuda()\n"
        "torch.cuda.synchronize()\n"
        "n = torch.cuda.device_count()\n")


def summary(diags):
    """Sorted (code, start line, start char, end line, end char) tuples."""
    return sorted((x["code"], x["range"]["start"]["line"], x["range"]["start"]["character"],
                   x["range"]["end"]["line"], x["range"]["end"]["character"]) for x in diags)


def test_publishes_what_check_reports(d):
    text = CUDA + "s = '𝔁é'; torch.cuda.synchronize()  # non-ASCII before a finding\n"
    write("train.py", text)
    s = Server()
    s.initialize({"general": {"positionEncodings": ["utf-32"]}})  # code points: like check's columns
    uri = uri_of("train.py")
    s.open(uri, text)
    diags = s.diagnostics(uri, version=1)
    got = summary(diags)
    want = sorted((f["code"], f["line"] - 1, f["column"] - 1, f["end_line"] - 1, f["end_column"] - 1)
                  for f in run("check", "--format", "json", "train.py").json())
    eq(got, want)
    for x in diags:
        eq(x["source"], "xpuify")
        eq(x["codeDescription"]["href"], "https://github.com/xpuify/xpuify/blob/main/docs/rules.md#" + x["code"])
        eq(x["severity"], 2)
        check(x["message"], "a message")
        check("fix" in x["data"] and "name" in x["data"], "data carries the fix", x)
    by = {x["code"]: x for x in diags}
    eq(len(got), 4)
    eq(by["XPU202"]["data"]["fix"]["applicability"], "safe")
    eq(by["XPU101"]["data"]["fix"]["applicability"], "safe")  # torch.zeros(3) is a known tensor (an_types)
    check(any(e["newText"] == "xpuify_device.synchronize" for e in by["XPU202"]["data"]["fix"]["edits"]), "the fix's edits", by["XPU202"])
    eq(s.stop(), 0)



def test_untranslatable_kernel_published_like_check(d):
    """XPC517 (a kernel the OpenCL translator keeps CUDA-only) comes from the C analyzer both share: the LSP
    publishes it where `check` reports it."""
    text = ("#include <cuda_runtime.h>\n__global__ void warp(float *x) {\n"
            "  x[0] += __shfl_down_sync(0x0000ffffu, x[0], 1);\n}\n")
    write("k.cu", text)
    s = Server()
    s.initialize({"general": {"positionEncodings": ["utf-32"]}})
    uri = uri_of("k.cu")
    s.open(uri, text, language="cuda")
    got = [x for x in summary(s.diagnostics(uri, version=1)) if x[0] == "XPC517"]
    want = [("XPC517", f["line"] - 1, f["column"] - 1, f["end_line"] - 1, f["end_column"] - 1)
            for f in run("check", "--format", "json", "k.cu").json() if f["code"] == "XPC517"]
    eq(got, want)
    eq(got, [("XPC517", 2, 10, 2, 26)])
    eq(s.stop(), 0)

NON_ASCII = "import torch\ns = '𝔁é'; torch.cuda.synchronize()\n"


def test_positions_utf16_and_utf8(d):
    idx = NON_ASCII.index("torch.cuda.synchronize")
    end = idx + len("torch.cuda.synchronize")
    for enc, caps in (("utf-16", {}), ("utf-8", {"general": {"positionEncodings": ["utf-8"]}})):
        s = Server()
        eq(s.initialize(caps)["capabilities"]["positionEncoding"], enc)
        s.open("file:///tmp/u.py", NON_ASCII)
        (x,) = s.diagnostics("file:///tmp/u.py")
        eq(x["range"]["start"], position(NON_ASCII, idx, enc), enc)
        eq(x["range"]["end"], position(NON_ASCII, end, enc), enc)
        # an edit addressed in the same encoding lands where it should: delete the call
        a, b = position(NON_ASCII, idx, enc), position(NON_ASCII, end + 2, enc)
        s.change("file:///tmp/u.py", 2, [{"range": {"start": a, "end": b}, "text": "pass"}])
        eq(s.diagnostics("file:///tmp/u.py", version=2), [])
        s.stop()
    eq(position(NON_ASCII, idx, "utf-32")["character"], 10)
    eq(position(NON_ASCII, idx, "utf-16")["character"], 11)  # 𝔁 is two UTF-16 units
    eq(position(NON_ASCII, idx, "utf-8")["character"], 14)   # four bytes, and é two


def test_incremental_changes(d):
    s = Server()
    s.initialize()
    uri = "file:///tmp/inc.py"
    s.open(uri, CUDA)
    eq(len(s.diagnostics(uri, 1)), 3)
    # delete line 3 (torch.cuda.synchronize())
    s.change(uri, 2, [{"range": {"start": {"line": 2, "character": 0}, "end": {"line": 3, "character": 0}}, "text": ""}])
    eq(sorted(x["code"] for x in s.diagnostics(uri, 2)), ["XPU101", "XPU201"])
    # type a new call one character at a time, several changes per notification
    text = "torch.cuda.empty_cache()\n"
    s.change(uri, 3, [{"range": {"start": {"line": 3, "character": i}, "end": {"line": 3, "character": i}}, "text": c}
                      for i, c in enumerate(text)])
    eq(sorted(x["code"] for x in s.diagnostics(uri, 3)), ["XPU101", "XPU201", "XPU203"])
    # a full-text change
    s.change(uri, 4, [{"text": "import torch\n"}])
    eq(s.diagnostics(uri, 4), [])
    # closing clears
    s.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    eq(s.diagnostics(uri), [])
    # a change to a document that is not open is logged, not fatal
    s.change("file:///tmp/nope.py", 1, [{"text": "x"}])
    eq(s.call("xpuify/x")["error"]["code"], -32601)
    eq(s.stop(), 0)


def test_burst_of_changes_is_analyzed_once(d):
    from lspclient import frame
    s = Server()
    s.initialize()
    uri = "file:///tmp/burst.py"
    s.open(uri, CUDA)
    s.diagnostics(uri, 1)
    # 60 keystrokes written at once, as a fast typist or a paste produces them
    text = "torch.cuda.empty_cache()  # typed quickly, one change per character\n"
    burst = b"".join(frame({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
        "textDocument": {"uri": uri, "version": 2 + i},
        "contentChanges": [{"range": {"start": {"line": 4, "character": i}, "end": {"line": 4, "character": i}}, "text": c}]}})
        for i, c in enumerate(text))
    s.send_raw(burst)
    last = 1 + len(text)
    eq(sorted(x["code"] for x in s.diagnostics(uri, last)), ["XPU101", "XPU201", "XPU202", "XPU203"])
    pubs = [m for m in s.messages("textDocument/publishDiagnostics") if m["params"]["version"] > 1]
    check(len(pubs) <= 5, f"{len(text)} changes in one burst, {len(pubs)} analyses", [m["params"]["version"] for m in pubs])
    eq(s.stop(), 0)


def test_debounce_setting(d):
    s = Server()
    s.initialize(options={"debounceMs": 2000})
    uri = "file:///tmp/deb.py"
    s.open(uri, CUDA)
    s.diagnostics(uri, 1, timeout=30)
    s.change(uri, 2, [{"range": {"start": {"line": 2, "character": 0}, "end": {"line": 3, "character": 0}}, "text": ""}])
    import time
    time.sleep(0.2)
    s.change(uri, 3, [{"range": {"start": {"line": 1, "character": 0}, "end": {"line": 2, "character": 0}}, "text": ""}])
    # a request inside the window is answered from the current text at once
    h = s.call("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 1, "character": 5}})
    check(h["result"] and "XPU201" in h["result"]["contents"]["value"], "hover on the current text", h)
    eq([x["code"] for x in s.diagnostics(uri, 3, timeout=30)], ["XPU201"])
    check(not [m for m in s.messages("textDocument/publishDiagnostics") if m["params"]["version"] == 2],
          "the change inside the debounce window was not analyzed on its own")
    eq(s.stop(), 0)


def test_pull_diagnostics(d):
    s = Server()
    caps = s.initialize({"textDocument": {"diagnostic": {"dynamicRegistration": False}}})["capabilities"]
    eq(caps["diagnosticProvider"]["identifier"], "xpuify")
    uri = "file:///tmp/pull.py"
    s.open(uri, CUDA)
    r = s.call("textDocument/diagnostic", {"textDocument": {"uri": uri}})["result"]
    eq(r["kind"], "full")
    eq(len(r["items"]), 3)
    r2 = s.call("textDocument/diagnostic", {"textDocument": {"uri": uri}, "previousResultId": r["resultId"]})["result"]
    eq((r2["kind"], r2["resultId"]), ("unchanged", r["resultId"]))
    s.change(uri, 2, [{"range": {"start": {"line": 2, "character": 0}, "end": {"line": 3, "character": 0}}, "text": ""}])
    r3 = s.call("textDocument/diagnostic", {"textDocument": {"uri": uri}, "previousResultId": r["resultId"]})["result"]
    eq((r3["kind"], len(r3["items"])), ("full", 2))
    check(r3["resultId"] != r["resultId"])
    # a client that pulls gets nothing pushed
    check(not s.messages("textDocument/publishDiagnostics"), "no push in pull mode")
    eq(s.call("textDocument/diagnostic", {"textDocument": {"uri": "file:///tmp/closed.py"}})["error"]["code"], -32602)
    eq(s.stop(), 0)


def test_settings_from_initialization_options(d):
    s = Server()
    s.initialize(options={"select": ["XPU2"], "ignore": "XPU201"})
    s.open("file:///tmp/s.py", CUDA)
    eq([x["code"] for x in s.diagnostics("file:///tmp/s.py")], ["XPU202"])
    s.stop()
    # the same under a "settings" or "xpuify" key, and a bad selector is shown, not fatal
    s = Server()
    s.initialize(options={"xpuify": {"select": ["XPU1", "NOPE"], "unknownKey": 1}})
    s.open("file:///tmp/s.py", CUDA)
    eq([x["code"] for x in s.diagnostics("file:///tmp/s.py")], ["XPU101"])
    shown = " ".join(m["params"]["message"] for m in s.messages("window/showMessage"))
    check("`NOPE` matches no rule" in shown and "unknown setting `unknownKey`" in shown, "warnings shown", shown)
    # a second file does not show the same warning again
    s.open("file:///tmp/t.py", CUDA)
    s.diagnostics("file:///tmp/t.py")
    eq(sum("NOPE" in m["params"]["message"] for m in s.messages("window/showMessage")), 1)
    s.stop()


def test_did_change_configuration(d):
    s = Server()
    s.initialize()
    uri = "file:///tmp/c.py"
    s.open(uri, CUDA)
    eq(len(s.diagnostics(uri, 1)), 3)
    s.notify("workspace/didChangeConfiguration", {"settings": {"xpuify": {"ignore": ["cuda-method-call", "XPU201"]}}})
    eq([x["code"] for x in s.diagnostics(uri, 1)], ["XPU202"])
    # target none: findings without fixes
    s.notify("workspace/didChangeConfiguration", {"settings": {"xpuify": {"target": "none"}}})
    diags = s.diagnostics(uri, 1)
    eq(len(diags), 3)
    check(all(x["data"]["fix"] is None for x in diags), "no fixes with target none", diags)
    # accelerator: torch.accelerator fixes
    s.notify("workspace/didChangeConfiguration", {"settings": {"xpuify": {"target": "accelerator"}}})
    by = {x["code"]: x for x in s.diagnostics(uri, 1)}
    check(any("torch.accelerator.synchronize()" in e["newText"] for e in by["XPU202"]["data"]["fix"]["edits"]), "accelerator", by)
    eq(s.stop(), 0)


def test_workspace_configuration_pull(d):
    s = Server()
    s.initialize({"workspace": {"configuration": True}})
    uri = "file:///tmp/wc.py"
    s.open(uri, CUDA)
    eq(len(s.diagnostics(uri, 1)), 3)
    s.notify("workspace/didChangeConfiguration", {"settings": None})
    req = s.wait(lambda m: m.get("method") == "workspace/configuration")
    eq(req["params"]["items"], [{"section": "xpuify"}])
    s.send({"jsonrpc": "2.0", "id": req["id"], "result": [{"select": ["XPU201"]}]})
    eq([x["code"] for x in s.diagnostics(uri, 1)], ["XPU201"])
    eq(s.stop(), 0)


def test_project_config_and_watched_files(d):
    write("proj/.xpuify.yml", "ignore: [XPU101]\nother_key: kept for the full configuration system\n")
    write("proj/pkg/m.py", CUDA)
    s = Server()
    caps = {"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": True}}}
    s.initialize(caps, root=uri_of("proj"))
    reg = s.wait(lambda m: m.get("method") == "client/registerCapability")
    eq(reg["params"]["registrations"][0]["registerOptions"]["watchers"][0]["globPattern"], "**/.xpuify.yml")
    s.send({"jsonrpc": "2.0", "id": reg["id"], "result": None})
    uri = uri_of("proj/pkg/m.py")
    s.open(uri, CUDA)
    eq(sorted(x["code"] for x in s.diagnostics(uri, 1)), ["XPU201", "XPU202"])
    # the client's settings win over the project's
    write("proj/.xpuify.yml", "select: [XPU1, XPU2]\nignore: XPU202\n")
    s.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": uri_of("proj/.xpuify.yml"), "type": 2}]})
    eq(sorted(x["code"] for x in s.diagnostics(uri, 1)), ["XPU101", "XPU201"])
    # a broken file: shown with its location, its values dropped
    write("proj/.xpuify.yml", "select: [XPU1\n")
    s.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": uri_of("proj/.xpuify.yml"), "type": 2}]})
    eq(len(s.diagnostics(uri, 1)), 3)
    shown = " ".join(m["params"]["message"] for m in s.messages("window/showMessage"))
    check(".xpuify.yml:" in shown, "the broken configuration is shown with its location", shown)
    write("proj/.xpuify.yml", "target: sideways\n")
    s.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": uri_of("proj/.xpuify.yml"), "type": 2}]})
    s.wait(lambda m: m.get("method") == "window/showMessage" and "`target` must be one of" in m["params"]["message"],
           what="the bad value shown")
    # the same findings as before: not published again
    # other watched files change nothing
    n = len(s.messages("textDocument/publishDiagnostics"))
    s.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": uri_of("proj/pkg/other.py"), "type": 1}]})
    eq(s.call("xpuify/x")["error"]["code"], -32601)
    eq(len(s.messages("textDocument/publishDiagnostics")), n)
    eq(s.stop(), 0)


def test_target_auto_reads_the_project(d):
    # torch >= 2.6 declared: fixes use torch.accelerator, as `xpuify fix` would
    write("p/requirements.txt", "torch>=2.7\n")
    write("p/a.py", CUDA)
    s = Server()
    s.initialize()
    uri = uri_of("p/a.py")
    s.open(uri, CUDA)
    by = {x["code"]: x for x in s.diagnostics(uri, 1)}
    check(any("torch.accelerator.synchronize()" in e["newText"] for e in by["XPU202"]["data"]["fix"]["edits"]), "accelerator", by)
    logs = " ".join(m["params"]["message"] for m in s.messages("window/logMessage"))
    check("target accelerator" in logs and "torch >= 2.7" in logs, "the choice is logged", logs)
    eq(s.stop(), 0)
    # the same choice as the command line
    r = run("fix", "--diff", "p/a.py")
    check("accelerator:" in r.err and "requirements.txt:1 guarantees torch >= 2.7" in r.err, "fix agrees", r)


def test_non_python_and_syntax_errors(d):
    s = Server()
    s.initialize()
    s.open("file:///tmp/notes.txt", "torch.cuda.synchronize()\n", language="plaintext")
    eq(s.diagnostics("file:///tmp/notes.txt"), [])
    s.open("file:///tmp/broken.py", "import torch\ndef f(:\n    torch.cuda.synchronize()\n")
    codes = [x["code"] for x in s.diagnostics("file:///tmp/broken.py")]
    check("XPU001" in codes, "syntax errors are reported", codes)
    eq(s.stop(), 0)


if __name__ == "__main__":
    main(globals())
