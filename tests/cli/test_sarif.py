"""End-to-end tests of SARIF fixes as a consumer applies them: safe and unsafe fixes are told apart, a compat fix
creates the helper module it imports (so the SARIF fixes alone give the code `xpuify fix` writes), and every
relative location names a base declared in the run's originalUriBaseIds. The structure is checked against the
parts of the SARIF 2.1.0 schema these objects use (the schema itself is not ours to commit)."""
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import check, eq, main, read, run, write  # noqa: E402

TRAIN = "import torch\n\n\ndef step(x):\n    torch.cuda.synchronize()\n    return x, torch.cuda.mem_get_info()\n"


def offset(text, line, col):
    """The index of a 1-based line and code-point column in text."""
    lines = text.split("\n")
    return sum(len(x) + 1 for x in lines[:line - 1]) + col - 1


def apply_sarif(sarif, root, want=("safe",)):
    """Applies the fixes of the given applicabilities as a SARIF consumer does: the replacements of every chosen
    fix, grouped by artifact, identical ones once, from the end of each file."""
    run_ = sarif["runs"][0]
    bases = run_["originalUriBaseIds"]
    edits = {}
    for res in run_["results"]:
        for fx in res.get("fixes", []):
            if fx["properties"]["applicability"] not in want:
                continue
            for ch in fx["artifactChanges"]:
                loc = ch["artifactLocation"]
                check(loc["uriBaseId"] in bases, "declared base", loc)
                path = os.path.join(root, loc["uri"])
                for rep in ch["replacements"]:
                    edits.setdefault(path, set()).add((tuple(sorted(rep["deletedRegion"].items())),
                                                       rep["insertedContent"]["text"]))
    for path, reps in edits.items():
        text = read(path) if os.path.exists(path) else ""
        spans = []
        for region, ins in reps:
            r = dict(region)
            if "charOffset" in r:
                a, b = r["charOffset"], r["charOffset"] + r["charLength"]
            else:
                a, b = offset(text, r["startLine"], r["startColumn"]), offset(text, r["endLine"], r["endColumn"])
            spans.append((a, b, ins))
        for a, b, ins in sorted(spans, reverse=True):
            text = text[:a] + ins + text[b:]
        write(path, text)


def schema_check(sarif):
    """What the SARIF 2.1.0 schema requires of the objects xpuify writes."""
    eq(sarif["version"], "2.1.0")
    for run_ in sarif["runs"]:
        check(isinstance(run_["tool"]["driver"]["name"], str))
        for name, base in run_.get("originalUriBaseIds", {}).items():
            # an artifactLocation's uri here must be absolute and end in a slash (SARIF 3.14.14)
            check(base["uri"].startswith("file:///") and base["uri"].endswith("/"), name, base)
        for res in run_["results"]:
            check(isinstance(res["message"]["text"], str) and res["ruleId"])
            for fx in res.get("fixes", []):
                check(fx["artifactChanges"], "a fix has at least one change", fx)
                check(fx["properties"]["applicability"] in ("safe", "unsafe"), "marked", fx)
                for ch in fx["artifactChanges"]:
                    check(isinstance(ch["artifactLocation"]["uri"], str) and ch["replacements"], "change", ch)
                    for rep in ch["replacements"]:
                        check(set(rep) <= {"deletedRegion", "insertedContent", "properties"}, "replacement", rep)


def test_sarif_fixes_alone_give_what_fix_writes_including_the_helper(d):
    write("proj/pkg/__init__.py", "")
    write("proj/pkg/train.py", TRAIN)
    shutil.copytree("proj", "by_fix")
    r = run("check", "--format", "sarif", "--no-cache", "--no-config", "--target", "compat", ".", cwd="proj")
    eq(r.code, 1, r)
    sarif = r.json()
    schema_check(sarif)
    root = sarif["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"]
    eq(root, "file://" + os.path.realpath("proj") + "/")
    fixes = [(res["ruleId"], fx["properties"]["applicability"]) for res in sarif["runs"][0]["results"]
             for fx in res.get("fixes", [])]
    eq(sorted(fixes), [("XPU202", "safe"), ("XPU203", "unsafe")])
    helper_changes = [ch for res in sarif["runs"][0]["results"] for fx in res.get("fixes", [])
                      for ch in fx["artifactChanges"] if ch["artifactLocation"]["uri"].endswith("xpuify_device.py")]
    eq(len(helper_changes), 2, "both fixes import the helper, so both create it")
    check(not os.path.exists("proj/pkg/xpuify_device.py"))
    apply_sarif(sarif, "proj", want=("safe",))
    f = run("fix", "--no-cache", "--no-config", "--target", "compat", ".", cwd="by_fix")
    eq(f.code, 1, f)  # the unsafe fix is left, as in the SARIF applied without it
    for p in ("pkg/train.py", "pkg/xpuify_device.py"):
        eq(read(os.path.join("proj", p)), read(os.path.join("by_fix", p)), p)
    check("import xpuify_device" in read("proj/pkg/train.py") or "from . import xpuify_device"
          in read("proj/pkg/train.py"), "the fixed file imports the helper")
    # the helper once created, a later report does not create it again
    r = run("check", "--format", "sarif", "--no-cache", "--no-config", "--target", "compat", ".", cwd="proj")
    uris = {ch["artifactLocation"]["uri"] for res in r.json()["runs"][0]["results"] for fx in res.get("fixes", [])
            for ch in fx["artifactChanges"]}
    eq(uris, {"pkg/train.py"})


def test_accelerator_fixes_create_nothing_and_absolute_paths_need_no_base(d):
    write("a.py", TRAIN)
    r = run("check", "--format", "sarif", "--no-cache", "--no-config", "--target", "accelerator", "a.py")
    sarif = r.json()
    schema_check(sarif)
    uris = {ch["artifactLocation"]["uri"] for res in sarif["runs"][0]["results"] for fx in res.get("fixes", [])
            for ch in fx["artifactChanges"]}
    eq(uris, {"a.py"})
    r = run("check", "--format", "sarif", "--no-cache", "--no-config", os.path.abspath("a.py"))
    schema_check(r.json())
    locs = [res["locations"][0]["physicalLocation"]["artifactLocation"] for res in r.json()["runs"][0]["results"]]
    check(locs, "findings", r)
    for loc in locs:
        eq(loc, {"uri": "file://" + os.path.abspath("a.py")})


if __name__ == "__main__":
    main(globals())
