"""End-to-end tests of the metadata xpuify publishes about its rules: what `xpuify rule`, `rule --all`,
docs/rules.md and SARIF's rule `properties` say about each rule's fix agrees with the fixes `check` and
`check --statistics` actually produce, for every rule of the catalog (one source of truth: `fix:` in rules/)."""
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from harness import ROOT, check, eq, main, run, write  # noqa: E402

RANK = {"none": 0, "unsafe": 1, "safe": 2}

# Rules whose fixes the labelled fixtures do not exercise: one snippet each, so every declared fix is observed.
EXTRA = {
    "extra/suppress.py": "import torch\nz = 1  # xpuify: ignore[XPU101]\n",
    "extra/amp_module.py": "import torch\nfrom torch.cuda import amp\n",
}


def observed_fixes(paths):
    """rule code -> the strongest applicability of any fix `check` attached to a finding of it (none: findings
    without fixes), over both fix targets."""
    seen = {}
    for target in ("accelerator", "compat"):
        r = run("check", "--format", "json", "--no-cache", "--no-config", "--exit-zero", "--target", target, *paths)
        eq(r.code, 0, r)
        for f in r.json():
            a = f["fix"]["applicability"] if f.get("fix") else "none"
            if RANK[a] >= RANK.get(seen.get(f["code"]), -1):
                seen[f["code"]] = a
    return seen


def test_every_rule_declares_the_fix_it_has(d):
    for path, text in EXTRA.items():
        write(path, text)
    paths = [os.path.join(ROOT, "fixtures", x) for x in ("python", "c", "text", "golden")]
    paths += [os.path.join(ROOT, "examples"), "extra"]
    seen = observed_fixes(paths)
    r = run("rule", "--all", "--format", "json")
    eq(r.code, 0, r)
    declared = {x["code"]: x["fix"] for x in r.json()}
    wrong = []
    for code, fix in sorted(declared.items()):
        got = seen.get(code)
        if got is None:
            # no fixture flags it: only a rule declaring no fix is allowed to go unobserved
            if fix != "none":
                wrong.append(f"{code}: declares fix {fix} but no fixture shows one")
        elif got != fix:
            wrong.append(f"{code}: declares fix {fix}, check produces {got}")
    eq(wrong, [], "rule metadata against the fixes check produces")
    # the rules the C fixers rewrite are among them (the list)
    for code in ("XPC101", "XPC102", "XPC103", "XPC701", "XPC703"):
        eq(declared[code], "safe", code)

    # `xpuify rule CODE` (text), docs/rules.md and SARIF properties say the same for every rule
    with open(os.path.join(ROOT, "docs", "rules.md")) as f:
        md = f.read()
    md_fix = dict(re.findall(r"^## (\w+)\n\n### .*?\n\n- Language: .*?\n- Severity: .*?\n- Fix: (\w+)$", md, re.M))
    eq(md_fix, declared, "docs/rules.md (regenerate with `make docs`)")
    s = run("check", "--format", "sarif", "--no-cache", "--no-config", "--exit-zero", "extra")
    sarif_fix = {x["id"]: x["properties"]["fix"] for x in s.json()["runs"][0]["tool"]["driver"]["rules"]}
    eq(sarif_fix, declared, "SARIF rule properties")
    for code in ("XPC101", "XPC703", "XPC704", "XPU106", "XPU212", "XPU002"):
        t = run("rule", code)
        check(f", fix: {declared[code]})" in t.out.splitlines()[0], code, t)

    # --statistics marks [*] exactly the rules that declare safe fixes and have a finding with one
    st = run("check", "--statistics", "--format", "json", "--no-cache", "--no-config", "--exit-zero", *paths)
    for row in json.loads(st.out):
        if row["fixable"]:
            eq(declared[row["code"]], "safe", row["code"])


if __name__ == "__main__":
    main(globals())
