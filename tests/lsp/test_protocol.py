"""Transcript tests of `xpuify lsp`'s protocol layer: lifecycle, encoding negotiation, JSON-RPC errors, and bad
input (malformed JSON, wrong Content-Length, garbage headers, batches, a 50 MB document) that must give proper
errors or a logged skip, never a crash or a hang."""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import check, eq, main, run  # noqa: E402
from lspclient import Server, frame  # noqa: E402

CUDA = "import torch\nx = torch.zeros(3).cuda()\ntorch.cuda.synchronize()\n"


def alive(s):
    """The server still answers: an unknown request gets MethodNotFound."""
    r = s.call("xpuify/nonexistent", {})
    eq(r["error"]["code"], -32601, "still serving")


def test_requests_before_initialize_are_refused(d):
    s = Server()
    r = s.call("textDocument/hover", {"textDocument": {"uri": "file:///a.py"}, "position": {"line": 0, "character": 0}})
    eq(r["error"]["code"], -32002)
    s.notify("textDocument/didOpen", {"textDocument": {"uri": "file:///a.py", "languageId": "python", "version": 1, "text": CUDA}})
    s.initialize()
    alive(s)
    # the didOpen sent before initialize was dropped, not queued
    check(not s.messages("textDocument/publishDiagnostics"), "nothing published for a pre-initialize didOpen", s.seen)
    eq(s.stop(), 0)


def test_initialize_capabilities(d):
    s = Server()
    res = s.initialize()
    caps = res["capabilities"]
    eq(caps["positionEncoding"], "utf-16")
    eq(caps["textDocumentSync"]["change"], 2)
    eq(caps["textDocumentSync"]["openClose"], True)
    check(caps["hoverProvider"])
    eq(set(caps["codeActionProvider"]["codeActionKinds"]), {"quickfix", "source.fixAll", "source.fixAll.xpuify"})
    eq(caps["executeCommandProvider"]["commands"], ["xpuify.applyAll", "xpuify.writeHelper"])
    check("diagnosticProvider" not in caps, "no pull diagnostics for a client that cannot pull")
    eq(res["serverInfo"]["name"], "xpuify")
    r = s.call("initialize", {"capabilities": {}})
    eq(r["error"]["code"], -32600, "a second initialize is refused")
    eq(s.stop(), 0)


def test_position_encoding_negotiation(d):
    s = Server()
    eq(s.initialize({"general": {"positionEncodings": ["utf-16", "utf-8"]}})["capabilities"]["positionEncoding"], "utf-8")
    s.stop()
    s = Server()
    eq(s.initialize({"general": {"positionEncodings": ["utf-32", "utf-16"]}})["capabilities"]["positionEncoding"], "utf-32")
    s.stop()
    s = Server()
    eq(s.initialize({"general": {"positionEncodings": ["utf-16"]}})["capabilities"]["positionEncoding"], "utf-16")
    s.stop()
    # clangd's older offsetEncoding extension
    s = Server()
    res = s.initialize({"offsetEncoding": ["utf-8", "utf-16"]})
    eq((res["capabilities"]["positionEncoding"], res.get("offsetEncoding")), ("utf-8", "utf-8"))
    s.stop()


def test_unknown_methods(d):
    s = Server()
    s.initialize()
    r = s.call("textDocument/completion", {"textDocument": {"uri": "file:///a.py"}, "position": {"line": 0, "character": 0}})
    eq(r["error"]["code"], -32601)
    check("textDocument/completion" in r["error"]["message"])
    s.notify("$/setTrace", {"value": "off"})
    s.notify("custom/notification", {"x": 1})
    alive(s)
    # a request id that is neither a number nor a string
    s.send({"jsonrpc": "2.0", "id": {"x": 1}, "method": "shutdown"})
    r = s.wait(lambda m: "error" in m and m.get("id") is None)
    eq(r["error"]["code"], -32600)
    eq(s.stop(), 0)


def test_malformed_json(d):
    s = Server()
    s.initialize()
    s.send_raw(frame(b'{"jsonrpc": "2.0", "id": 7, "method": '))
    r = s.wait(lambda m: "error" in m)
    eq((r["id"], r["error"]["code"]), (None, -32700))
    s.send_raw(frame(b'[1, 2]'))
    r = s.wait(lambda m: "error" in m)
    eq(r["error"]["code"], -32600, "batch")
    s.send_raw(frame(b'"just a string"'))
    r = s.wait(lambda m: "error" in m)
    eq(r["error"]["code"], -32600)
    s.send_raw(frame(b'{"jsonrpc":"2.0","id":9,"method":"shutdown"} trailing'))
    r = s.wait(lambda m: "error" in m)
    eq(r["error"]["code"], -32700, "trailing bytes")
    s.send_raw(frame(b'{"jsonrpc":"2.0","id":10,"method":"textDocument/hover","params":"x"}'))
    eq(s.response(10)["error"]["code"], -32602)
    s.send_raw(frame(b'{"jsonrpc":"2.0","id":11,"method":42}'))
    eq(s.response(11)["error"]["code"], -32600)
    deep = b"[" * 5000 + b"]" * 5000
    s.send_raw(frame(deep))
    r = s.wait(lambda m: "error" in m)
    eq(r["error"]["code"], -32700, "nesting deeper than cJSON's limit")
    alive(s)
    eq(s.stop(), 0)


def test_content_length_too_short(d):
    s = Server()
    s.initialize()
    body = json.dumps({"jsonrpc": "2.0", "id": 50, "method": "xpuify/x", "params": {}}).encode()
    s.send_raw(b"Content-Length: %d\r\n\r\n" % (len(body) - 10) + body)
    r = s.wait(lambda m: "error" in m)
    eq(r["error"]["code"], -32700)
    # the rest of the cut message is skipped up to the next header
    alive(s)
    logs = " ".join(m["params"]["message"] for m in s.messages("window/logMessage"))
    check("not a message header" in logs, "the skip is logged", logs)
    eq(s.stop(), 0)


def test_content_length_too_long(d):
    s = Server()
    s.initialize()
    body = json.dumps({"jsonrpc": "2.0", "id": 60, "method": "xpuify/x", "params": {}}).encode()
    # followed by another message: the first is cut at its JSON end and the second still read
    s.send_raw(b"Content-Length: %d\r\n\r\n" % (len(body) + 30) + body + frame({"jsonrpc": "2.0", "id": 61, "method": "xpuify/y"}))
    eq(s.response(60)["error"]["code"], -32601)
    eq(s.response(61)["error"]["code"], -32601)
    # alone: salvaged once the input stays idle
    body = json.dumps({"jsonrpc": "2.0", "id": 62, "method": "xpuify/z"}).encode()
    s.send_raw(b"Content-Length: %d\r\n\r\n" % (len(body) + 100) + body)
    eq(s.response(62, timeout=10)["error"]["code"], -32601)
    alive(s)
    logs = " ".join(m["params"]["message"] for m in s.messages("window/logMessage"))
    check("Content-Length" in logs, "logged", logs)
    eq(s.stop(), 0)


def test_bad_headers(d):
    s = Server()
    s.initialize()
    s.send_raw(b"garbage before any header\r\n")
    alive(s)
    s.send_raw(b"Content-Type: application/json\r\n\r\n{}")          # no Content-Length
    s.send_raw(b"Content-Length: twelve\r\n\r\n{}")                   # not a number
    s.send_raw(b"content-length: 2\r\nX-Other: 1\r\n\r\n{}")          # lower case, extra header: a valid message
    s.send_raw(b"Content-Length: 99999999999999999999\r\n\r\n")       # absurd
    alive(s)
    logs = [m["params"]["message"] for m in s.messages("window/logMessage")]
    check(any("without Content-Length" in l for l in logs), "missing length logged", logs)
    check(any("not a byte count" in l for l in logs), "bad length logged", logs)
    check(any("not a message header" in l for l in logs), "garbage logged", logs)
    eq(s.stop(), 0)


def test_cancel_request(d):
    s = Server()
    s.initialize()
    s.open("file:///tmp/a.py", CUDA)
    i, msg = s.request("textDocument/hover", {"textDocument": {"uri": "file:///tmp/a.py"}, "position": {"line": 2, "character": 0}}, send=False)
    # the cancellation arrives in the same burst, before the server reads the request
    s.send_raw(frame(msg) + frame({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": i}}))
    eq(s.response(i)["error"]["code"], -32800)
    # a cancellation of something already answered or unknown is harmless
    s.notify("$/cancelRequest", {"id": 12345})
    alive(s)
    eq(s.stop(), 0)


def test_shutdown_and_exit_codes(d):
    s = Server()
    s.initialize()
    r = s.call("shutdown")
    eq(r["result"], None)
    r = s.call("textDocument/hover", {"textDocument": {"uri": "file:///a.py"}, "position": {"line": 0, "character": 0}})
    eq(r["error"]["code"], -32600, "requests after shutdown")
    s.notify("exit")
    eq(s.wait_exit(), 0)
    s = Server()
    s.initialize()
    s.notify("exit")
    eq(s.wait_exit(), 1, "exit without shutdown")
    s = Server()
    s.initialize()
    s.p.stdin.close()
    eq(s.wait_exit(), 1, "end of input without exit: no hang")


def test_null_or_omitted_params(d):
    """JSON-RPC 2.0 lets parameterless requests omit `params` or send null (Emacs eglot's shutdown does)."""
    s = Server()
    s.send_raw(frame(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}'))
    check("capabilities" in s.response(1)["result"], "initialize answered")
    s.send_raw(frame(b'{"jsonrpc":"2.0","method":"initialized","params":null}'))
    s.send_raw(frame(b'{"jsonrpc":"2.0","method":"workspace/didChangeConfiguration","params":null}'))
    s.send_raw(frame(b'{"jsonrpc":"2.0","id":2,"method":"textDocument/hover","params":null}'))
    check("error" in s.response(2) or s.response(2).get("result") is None, "hover without params: an answer, no crash")
    alive(s)
    s.send_raw(frame(b'{"jsonrpc":"2.0","id":3,"method":"shutdown","params":null}'))
    r = s.response(3)
    check("error" not in r, "shutdown with null params accepted", r)
    eq(r["result"], None)
    s.send_raw(frame(b'{"jsonrpc":"2.0","method":"exit","params":null}'))
    eq(s.wait_exit(), 0, "clean exit after shutdown with null params")
    s = Server()
    s.initialize()
    s.send_raw(frame(b'{"jsonrpc":"2.0","id":4,"method":"shutdown"}'))
    eq(s.response(4)["result"], None, "shutdown with params omitted")
    s.send_raw(frame(b'{"jsonrpc":"2.0","method":"exit"}'))
    eq(s.wait_exit(), 0)


def test_large_document_is_skipped_not_fatal(d):
    s = Server()
    s.initialize()
    big = "torch.cuda.synchronize()\n" * (50 * 1024 * 1024 // 25)
    s.open("file:///tmp/big.py", big)
    eq(s.diagnostics("file:///tmp/big.py", timeout=60), [])
    shown = [m["params"]["message"] for m in s.messages("window/showMessage")]
    check(any("over the" in m and "maxFileSize" in m for m in shown), "the skip is shown", shown)
    # edits to it still keep in step, and a small document is still served
    s.change("file:///tmp/big.py", 2, [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": "# x\n"}])
    # no fix-all on it, and no hang computing one
    acts = s.call("textDocument/codeAction", {"textDocument": {"uri": "file:///tmp/big.py"}, "range": {"start": {"line": 0, "character": 0},
                  "end": {"line": 0, "character": 0}}, "context": {"diagnostics": [], "only": ["source.fixAll"]}}, timeout=60)
    eq(acts["result"], [])
    s.open("file:///tmp/small.py", CUDA)
    eq(len(s.diagnostics("file:///tmp/small.py")), 2)
    alive(s)
    eq(s.stop(timeout=60), 0)


def test_unclosed_brackets_are_skipped_not_fatal(d):
    """65,535 unclosed `(` made tree-sitter 0.20.7 free a subtree twice (an abort): such a document is never parsed;
    the server says why, keeps the document in step and serves the others."""
    s = Server()
    s.initialize()
    deep = "import torch\ntorch.cuda.synchronize()\nx = " + "(" * 65535 + "\n"
    s.open("file:///tmp/deep.py", deep)
    eq(s.diagnostics("file:///tmp/deep.py", timeout=60), [])
    shown = [m["params"]["message"] for m in s.messages("window/showMessage")]
    check(any("deep.py: brackets nested more than 1000 deep at line 3" in m for m in shown), "the skip is shown", shown)
    # closing them all makes it ordinary code again: analyzed on the next edit
    s.change("file:///tmp/deep.py", 2, [{"text": "import torch\ntorch.cuda.synchronize()\nx = 1\n"}])
    eq(len(s.diagnostics("file:///tmp/deep.py", version=2, timeout=60)), 1)
    s.change("file:///tmp/deep.py", 3, [{"text": deep}])
    eq(s.diagnostics("file:///tmp/deep.py", version=3, timeout=60), [])
    s.open("file:///tmp/small.py", CUDA)
    eq(len(s.diagnostics("file:///tmp/small.py")), 2)
    alive(s)
    eq(s.stop(timeout=60), 0)


def test_help_and_options(d):
    r = run("lsp", "--help")
    eq(r.code, 0)
    check("language server" in r.out)
    eq(run("lsp", "--bogus").code, 2)
    check("lsp" in run("help").out)


if __name__ == "__main__":
    main(globals())
