#!/usr/bin/env python3
"""audit.py: the precision/recall audit of the Python rules on real projects (docs/precision.md).

  audit.py sample   --xpuify BIN --out labels.jsonl [--findings N] [--candidates N] [--seed S]
  audit.py review   labels.jsonl [--unlabelled]          # prints each item with context, for labelling by hand
  audit.py score    --xpuify BIN labels.jsonl [--json]   # re-scores the hand labels on the current build
  audit.py extend   --xpuify BIN labels.jsonl [--per-rule N]  # adds unlabelled findings of rules without a sample

The projects are listed in projects.tsv (set: dev = the bench corpus, used while writing rules; heldout = never
read while writing rules). Items are of two kinds:
  finding    a finding of the build that drew the sample (path, line, rule). Label: tp (the line is CUDA-only code
             the rule is right about), fp (wrong), debatable (counted against precision).
  candidate  a line that matches the CUDA-token search (cuda, nccl, cudnn, nvidia, nvml; case-insensitive; not a
             comment-only line) on which that build reported nothing. Label: miss (CUDA-only code that should be
             reported) or ok (rightly not reported: prose, a string for the user, code that already handles
             several devices, CUDA by design...).
Scoring on the current build: precision = tp / (tp + fp + debatable) over labelled findings that it still reports
on the same line with the same rule; recall = labelled CUDA-only lines (tp findings and miss candidates) on which it
reports any finding / all of them. Items whose line text changed (the project moved) are dropped. New findings on
labelled 'ok' candidate lines are counted as unlabelled and listed, so that they get a label.
"""
import argparse, collections, hashlib, json, os, random, re, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TOKENS = re.compile(r"cuda|nccl|cudnn|nvidia|nvml", re.I)


def projects():
    for line in open(os.path.join(HERE, "projects.tsv")):
        if line.startswith("#") or not line.strip():
            continue
        s, name, repo, commit, where = line.rstrip("\n").split("\t")
        yield {"set": s, "project": name, "repo": repo, "commit": commit, "dir": os.path.join(ROOT, where)}


def run_check(xpuify, d):
    """findings of xpuify on one project directory (paths relative to it)"""
    p = subprocess.run([xpuify, "check", "--no-cache", "--no-config", "--format", "json", "--exit-zero", "."],
                       cwd=d, capture_output=True, text=True)
    if p.returncode not in (0, 1):
        sys.exit("xpuify failed on %s: %s" % (d, p.stderr[-500:]))
    return [f for f in json.loads(p.stdout or "[]") if f["path"].endswith((".py", ".pyi"))]


def lines_of(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read().split("\n")
    except OSError:
        return None


def digest(text):
    return hashlib.sha1(text.strip().encode()).hexdigest()[:12]


def sample(a):
    rnd = random.Random(a.seed)
    items = []
    for pr in projects():
        if not os.path.isdir(pr["dir"]):
            sys.exit("missing %s (see bench/fetch_corpus.md)" % pr["dir"])
    for s in ("dev", "heldout"):
        finds, cands = [], []
        for pr in projects():
            if pr["set"] != s:
                continue
            fs = run_check(a.xpuify, pr["dir"])
            reported = {(f["path"], f["line"]) for f in fs}
            for f in fs:
                finds.append((pr, f))
            for dp, dn, fn in os.walk(pr["dir"]):
                dn[:] = sorted(x for x in dn if not x.startswith("."))
                for n in sorted(fn):
                    if not n.endswith(".py"):
                        continue
                    full = os.path.join(dp, n)
                    rel = os.path.relpath(full, pr["dir"])
                    for i, t in enumerate(lines_of(full) or [], 1):
                        if TOKENS.search(t) and not t.lstrip().startswith("#") and (rel, i) not in reported:
                            cands.append((pr, rel, i, t))
        # findings: stratified by rule (every rule gets a share, large rules are capped by proportion)
        by_rule = collections.defaultdict(list)
        for pr, f in finds:
            by_rule[f["code"]].append((pr, f))
        want = a.findings // 2
        per = max(2, want // max(1, len(by_rule)))
        chosen = []
        for code in sorted(by_rule):
            pool = by_rule[code]
            chosen += rnd.sample(pool, min(per, len(pool)))
        rest = [x for code in sorted(by_rule) for x in by_rule[code] if x not in chosen]
        chosen += rnd.sample(rest, max(0, min(len(rest), want - len(chosen))))
        for pr, f in chosen:
            t = (lines_of(os.path.join(pr["dir"], f["path"])) or [""])[f["line"] - 1]
            items.append({"set": s, "project": pr["project"], "kind": "finding", "path": f["path"], "line": f["line"],
                          "rule": f["code"], "text": t.strip()[:200], "digest": digest(t), "label": "", "note": ""})
        for pr, rel, i, t in rnd.sample(cands, min(len(cands), a.candidates // 2)):
            items.append({"set": s, "project": pr["project"], "kind": "candidate", "path": rel, "line": i,
                          "rule": "", "text": t.strip()[:200], "digest": digest(t), "label": "", "note": ""})
    with open(a.out, "w") as o:
        for it in items:
            o.write(json.dumps(it, sort_keys=True) + "\n")
    print("%d items written to %s" % (len(items), a.out))


def count_candidates(pr, found):
    n = 0
    for dp, dn, fn in os.walk(pr["dir"]):
        dn[:] = [x for x in dn if not x.startswith(".")]
        for name in fn:
            if not name.endswith(".py"):
                continue
            full = os.path.join(dp, name)
            rel = os.path.relpath(full, pr["dir"])
            for i, t in enumerate(lines_of(full) or [], 1):
                if TOKENS.search(t) and not t.lstrip().startswith("#") and (pr["project"], rel, i) not in found:
                    n += 1
    return n


def extend(a):
    """adds findings of rules that have no labelled sample in a set (a new rule, or a rule that now fires where it
    did not): up to --per-rule items per rule and set, drawn with the seed, unlabelled (label them with review)"""
    items = load(a.labels)
    rnd = random.Random(a.seed)
    have = {(it["project"], it["path"], it["line"], it["rule"]) for it in items}
    judged = {(it["set"], it["rule"]) for it in items if it["kind"] == "finding"}
    added = 0
    for s in ("dev", "heldout"):
        pool = collections.defaultdict(list)
        for pr in projects():
            if pr["set"] != s:
                continue
            for f in run_check(a.xpuify, pr["dir"]):
                if (s, f["code"]) not in judged and (pr["project"], f["path"], f["line"], f["code"]) not in have:
                    pool[f["code"]].append((pr, f))
        for code in sorted(pool):
            for pr, f in rnd.sample(pool[code], min(a.per_rule, len(pool[code]))):
                t = (lines_of(os.path.join(pr["dir"], f["path"])) or [""])[f["line"] - 1]
                items.append({"set": s, "project": pr["project"], "kind": "finding", "path": f["path"],
                              "line": f["line"], "rule": f["code"], "text": t.strip()[:200], "digest": digest(t),
                              "label": "", "note": ""})
                added += 1
    with open(a.labels, "w") as o:
        for it in items:
            o.write(json.dumps(it, sort_keys=True) + "\n")
    print("%d items added to %s" % (added, a.labels))


def load(path):
    return [json.loads(l) for l in open(path) if l.strip()]


def review(a):
    dirs = {p["project"]: p["dir"] for p in projects()}
    for k, it in enumerate(load(a.labels)):
        if a.unlabelled and it["label"]:
            continue
        ls = lines_of(os.path.join(dirs[it["project"]], it["path"])) or []
        lo, hi = max(1, it["line"] - a.before), min(len(ls), it["line"] + a.after)
        print("=== #%d %s %s %s:%d %s" % (k, it["kind"], it["project"], it["path"], it["line"], it["rule"]))
        for i in range(lo, hi + 1):
            print("%s%5d| %s" % (">" if i == it["line"] else " ", i, ls[i - 1][:160]))


def score(a):
    items = load(a.labels)
    dirs = {p["project"]: p["dir"] for p in projects()}
    sets = {p["project"]: p["set"] for p in projects()}
    found = {}
    pop = {s: {"rules": collections.Counter(), "lines": 0, "unreported_candidates": 0} for s in ("dev", "heldout")}
    for pr in projects():
        for f in run_check(a.xpuify, pr["dir"]):
            found.setdefault((pr["project"], f["path"], f["line"]), set()).add(f["code"])
            pop[pr["set"]]["rules"][f["code"]] += 1
        pop[pr["set"]]["lines"] += len({k for k in found if k[0] == pr["project"]})
        pop[pr["set"]]["unreported_candidates"] += count_candidates(pr, found)
    res = {}
    per_rule = collections.defaultdict(lambda: collections.Counter())
    unlabelled, dropped, missing_label = [], 0, 0
    for s in ("dev", "heldout", "all"):
        res[s] = collections.Counter()
    for it in items:
        if not it["label"]:
            missing_label += 1
            continue
        t = (lines_of(os.path.join(dirs[it["project"]], it["path"])) or [])
        if it["line"] > len(t) or digest(t[it["line"] - 1]) != it["digest"]:
            dropped += 1
            continue
        codes = found.get((it["project"], it["path"], it["line"]), set())
        for s in (sets[it["project"]], "all"):
            c = res[s]
            cuda_only = (it["kind"] == "finding" and it["label"] == "tp") or (it["kind"] == "candidate" and it["label"] == "miss")
            if cuda_only:
                c["cuda_lines"] += 1
                c["cuda_lines_reported"] += bool(codes)
            if it["kind"] == "finding" and it["rule"] in codes:
                c["findings"] += 1
                c[it["label"]] += 1
                if s == "all":
                    per_rule[it["rule"]][it["label"]] += 1
            elif it["kind"] == "finding" and s == "all":
                per_rule[it["rule"]]["no longer reported (%s)" % it["label"]] += 1
            if it["kind"] == "candidate" and it["label"] == "ok" and codes and s == "all":
                unlabelled.append("%s %s:%d %s" % (it["project"], it["path"], it["line"], ",".join(sorted(codes))))
    out = {"sets": {}, "per_rule": {r: dict(c) for r, c in sorted(per_rule.items())},
           "new_findings_on_ok_lines": unlabelled, "dropped_changed_lines": dropped, "unlabelled_items": missing_label}
    for s in ("dev", "heldout", "all"):
        ss = ("dev", "heldout") if s == "all" else (s,)
        rules = sum((pop[x]["rules"] for x in ss), collections.Counter())
        judged = collections.defaultdict(collections.Counter)
        for it in items:
            if it["label"] and it["kind"] == "finding" and sets[it["project"]] in ss and \
                    it["rule"] in found.get((it["project"], it["path"], it["line"]), ()):
                judged[it["rule"]][it["label"]] += 1
        covered = {r: n for r, n in rules.items() if sum(judged[r].values())}
        wp = sum(n * judged[r]["tp"] / sum(judged[r].values()) for r, n in covered.items()) / max(1, sum(covered.values()))
        # the sampled candidate lines this build still leaves unreported: their miss rate estimates that of the
        # unreported lines now (a miss the build has since learnt to report is no longer one)
        cands = [it for it in items if it["label"] and it["kind"] == "candidate" and sets[it["project"]] in ss
                 and not found.get((it["project"], it["path"], it["line"]))]
        miss_rate = sum(it["label"] == "miss" for it in cands) / max(1, len(cands))
        lines = sum(pop[x]["lines"] for x in ss)
        unrep = sum(pop[x]["unreported_candidates"] for x in ss)
        if s == "all":  # the sum of the two sets' estimates, each with its own rates
            est_tp_lines = sum(out["population"][x]["_tp_lines"] for x in ("dev", "heldout"))
            est_missed = sum(out["population"][x]["_missed"] for x in ("dev", "heldout"))
        else:
            est_tp_lines, est_missed = lines * wp, unrep * miss_rate
        out.setdefault("population", {})[s] = {
            "findings": sum(rules.values()), "findings_of_judged_rules": sum(covered.values()),
            "rules_without_judged_sample": sorted(set(rules) - set(covered)),
            "precision_weighted": round(wp, 4), "reported_lines": lines, "unreported_candidate_lines": unrep,
            "candidate_miss_rate": round(miss_rate, 4),
            "recall_estimated": round(est_tp_lines / (est_tp_lines + est_missed), 4) if est_tp_lines + est_missed else None,
            "_tp_lines": est_tp_lines, "_missed": est_missed}
    for s, c in res.items():
        n = c["tp"] + c["fp"] + c["debatable"]
        out["sets"][s] = {"findings_judged": n, "tp": c["tp"], "fp": c["fp"], "debatable": c["debatable"],
                          "precision": round(c["tp"] / n, 4) if n else None,
                          "cuda_only_lines": c["cuda_lines"], "reported": c["cuda_lines_reported"],
                          "recall": round(c["cuda_lines_reported"] / c["cuda_lines"], 4) if c["cuda_lines"] else None}
    if a.json:
        print(json.dumps(out, indent=1, sort_keys=True))
        return
    print("| set | findings judged | tp | fp | debatable | precision | CUDA-only lines | reported | recall |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for s in ("dev", "heldout", "all"):
        v = out["sets"][s]
        pct = lambda x: "%.1f%%" % (100 * x) if x is not None else "-"
        print("| %s | %d | %d | %d | %d | %s | %d | %d | %s |" % (s, v["findings_judged"], v["tp"], v["fp"], v["debatable"],
              pct(v["precision"]), v["cuda_only_lines"], v["reported"], pct(v["recall"])))
    print()
    print("Population estimates (precision weighted by each rule's share of the findings; recall from the reported")
    print("lines' estimated true share and the miss rate of the unreported candidate lines):")
    print()
    print("| set | findings | precision (weighted) | reported lines | unreported candidate lines | miss rate | recall (estimated) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for s in ("dev", "heldout", "all"):
        v = out["population"][s]
        print("| %s | %d | %.1f%% | %d | %d | %.1f%% | %s |" % (s, v["findings"], 100 * v["precision_weighted"], v["reported_lines"],
              v["unreported_candidate_lines"], 100 * v["candidate_miss_rate"],
              "%.1f%%" % (100 * v["recall_estimated"]) if v["recall_estimated"] is not None else "-"))
    print()
    print("| rule | tp | fp | debatable | labelled but no longer reported |")
    print("|---|---:|---:|---:|---|")
    for r, c in out["per_rule"].items():
        gone = ", ".join("%s %d" % (k, v) for k, v in c.items() if k.startswith("no longer"))
        print("| %s | %d | %d | %d | %s |" % (r, c.get("tp", 0), c.get("fp", 0), c.get("debatable", 0), gone))
    if unlabelled:
        print("\nnew findings on lines labelled ok (label them):")
        for u in unlabelled:
            print("  " + u)
    print("\n%d items dropped (line changed), %d items without a label" % (dropped, missing_label))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sample"); s.add_argument("--xpuify", default=os.path.join(ROOT, "build/xpuify"))
    s.add_argument("--out", required=True); s.add_argument("--findings", type=int, default=320)
    s.add_argument("--candidates", type=int, default=320); s.add_argument("--seed", type=int, default=17)
    r = sub.add_parser("review"); r.add_argument("labels"); r.add_argument("--unlabelled", action="store_true")
    r.add_argument("--before", type=int, default=3); r.add_argument("--after", type=int, default=1)
    e = sub.add_parser("extend"); e.add_argument("--xpuify", default=os.path.join(ROOT, "build/xpuify"))
    e.add_argument("labels"); e.add_argument("--per-rule", type=int, default=12); e.add_argument("--seed", type=int, default=17)
    c = sub.add_parser("score"); c.add_argument("--xpuify", default=os.path.join(ROOT, "build/xpuify"))
    c.add_argument("labels"); c.add_argument("--json", action="store_true")
    a = ap.parse_args()
    if hasattr(a, "xpuify"):
        a.xpuify = os.path.abspath(a.xpuify)
    {"sample": sample, "review": review, "score": score, "extend": extend}[a.cmd](a)


if __name__ == "__main__":
    main()
