#!/usr/bin/env python3
"""project_runs.py: real projects' entry points, original vs `xpuify fix` (default options), on every device tier.

  project_runs.py prepare OUT [--xpuify BIN]   copy each project (bench/corpus, bench/heldout) to OUT/orig/NAME,
                                               write the synthetic data it needs (no network), copy to OUT/fixed/NAME
                                               and run `xpuify fix` there as a new user would (OUT/fix-NAME.log,
                                               OUT/fix-NAME.diff)
  project_runs.py run DIR OUTDIR TIER          TIER cuda: original and fixed on the GPU; TIER cpu: CUDA hidden, the
                                               original with its own CPU flag (where it has one) and the fixed one
                                               without it. Logs and numbers in OUTDIR/TIER-NAME-{orig,fixed}.log
  project_runs.py table OUTDIR                 the comparison (markdown): every number the entry prints (losses,
                                               accuracies, final weights), original vs fixed

The entries are listed in ENTRIES below. Nothing of the projects is committed: they are read from the corpus
(bench/fetch_corpus.md, bench/audit/projects.tsv). The synthetic data (a character corpus for nanoGPT, a tiny
two-class image folder for timm) is made from this repository's own text and a seeded generator.
"""
import argparse, glob, os, re, shutil, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PY = sys.executable

# name, source directory (under the repository), working directory (inside the copy), command, the original's CPU flag
ENTRIES = [
    ("nanogpt", "bench/heldout/nanoGPT", ".",
     "{py} train.py config/train_shakespeare_char.py --max_iters=20 --eval_interval=10 --eval_iters=4 --log_interval=1 "
     "--compile=False --batch_size=8 --block_size=32 --n_layer=2 --n_head=2 --n_embd=32 --always_save_checkpoint=False "
     "--out_dir=out", "--device=cpu"),
    ("ddp-torchrun", "bench/corpus/examples/distributed/ddp-tutorial-series", ".",
     "{py} -m torch.distributed.run --standalone --nproc_per_node=1 multigpu_torchrun.py 3 1 --batch_size 32 "
     "&& {py} {harness}/dump_weights.py snapshot.pt", None),
    ("timm", "bench/corpus/pytorch-image-models", ".",
     "{py} train.py --data-dir data --model resnet18 --num-classes 2 --img-size 32 --batch-size 8 --epochs 1 "
     "--workers 1 --seed 0 --log-interval 1 --no-prefetcher --output out --experiment run --warmup-epochs 0 "
     "--opt sgd --lr 0.01", "--device cpu"),
]


def sh(cmd, cwd, log, env=None, timeout=900):
    with open(log, "w") as f:
        f.write("$ %s\n" % cmd)
        f.flush()
        try:
            p = subprocess.run(cmd, shell=True, cwd=cwd, stdout=f, stderr=subprocess.STDOUT, env=env, timeout=timeout)
            rc = p.returncode
        except subprocess.TimeoutExpired:
            rc = 124
        f.write("\n[exit %d]\n" % rc)
    return rc


def write_png(path, px):
    """an 8-bit RGB PNG (no imaging library on the machine that prepares the copies)"""
    import struct, zlib
    h, w, _ = px.shape
    raw = b"".join(b"\0" + px[y].tobytes() for y in range(h))
    chunk = lambda t, d: struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def make_data(name, d):
    """synthetic inputs, the same bytes in every copy"""
    if name == "nanogpt":
        import pickle
        import numpy as np
        text = ""
        for p in sorted(glob.glob(os.path.join(ROOT, "docs", "*.md"))):
            text += open(p, encoding="utf-8").read()
        chars = sorted(set(text))
        stoi = {c: i for i, c in enumerate(chars)}
        ids = np.array([stoi[c] for c in text], dtype=np.uint16)
        n = int(len(ids) * 0.9)
        dd = os.path.join(d, "data", "shakespeare_char")
        ids[:n].tofile(os.path.join(dd, "train.bin"))
        ids[n:].tofile(os.path.join(dd, "val.bin"))
        with open(os.path.join(dd, "meta.pkl"), "wb") as f:
            pickle.dump({"vocab_size": len(chars), "itos": dict(enumerate(chars)), "stoi": stoi}, f)
    elif name == "timm":
        import numpy as np
        rng = np.random.RandomState(0)
        for split in ("train", "validation"):
            for cls in ("a", "b"):
                cd = os.path.join(d, "data", split, cls)
                os.makedirs(cd, exist_ok=True)
                for i in range(8):
                    base = 60 if cls == "a" else 180
                    px = np.clip(rng.normal(base, 40, (32, 32, 3)), 0, 255).astype(np.uint8)
                    write_png(os.path.join(cd, "%d.png" % i), px)


def prepare(a):
    out = os.path.abspath(a.out)
    for sub in ("orig", "fixed"):
        os.makedirs(os.path.join(out, sub), exist_ok=True)
    shutil.copy(os.path.join(HERE, "dump_weights.py"), out)
    shutil.copy(os.path.join(HERE, "sitecustomize.py"), out)
    for name, src, _wd, _cmd, _cpu in ENTRIES:
        s = os.path.join(ROOT, src)
        if not os.path.isdir(s):
            sys.exit("missing %s (see bench/fetch_corpus.md and bench/audit/projects.tsv)" % s)
        o, f = os.path.join(out, "orig", name), os.path.join(out, "fixed", name)
        for t in (o, f):
            shutil.rmtree(t, ignore_errors=True)
        shutil.copytree(s, o, symlinks=True)
        make_data(name, o)
        shutil.copytree(o, f, symlinks=True)
        fl = os.path.join(out, "fix-%s.log" % name)
        with open(fl, "w") as log:
            rc = subprocess.run([a.xpuify, "fix", "--no-cache", "."], cwd=f, stdout=log, stderr=subprocess.STDOUT).returncode
        diff = subprocess.run(["diff", "-ruN", "orig/" + name, "fixed/" + name], cwd=out, capture_output=True, text=True).stdout
        open(os.path.join(out, "fix-%s.diff" % name), "w").write(diff)
        print("%s: fix exit %d, %d diff lines" % (name, rc, diff.count("\n")))


def run(a):
    d, outdir = os.path.abspath(a.dir), os.path.abspath(a.outdir)
    os.makedirs(outdir, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=d, PYTHONUNBUFFERED="1")  # sitecustomize.py: seeds torch before any import
    if a.tier == "cpu":
        env.update(CUDA_VISIBLE_DEVICES="", ZE_AFFINITY_MASK="")
    for name, _src, wd, cmd, cpu_flag in ENTRIES:
        if a.only and name not in a.only:
            continue
        for which in ("orig", "fixed"):
            c = cmd.format(py=PY, harness=d)
            if a.tier == "cpu" and which == "orig" and cpu_flag:
                c = c.split(" && ")[0] + " " + cpu_flag + "".join(" && " + x for x in c.split(" && ")[1:])
            work = os.path.join(d, which, name, wd)
            rc = sh(c, work, os.path.join(outdir, "%s-%s-%s.log" % (a.tier, name, which)), env=env)
            print("%s %s %s: exit %d" % (a.tier, name, which, rc), flush=True)


NUM = re.compile(r"(?:loss|Loss|Acc@1|Acc@5|weights)[ :=]+\s*([-+]?\d+\.?\d*(?:[eE][-+]?\d+)?)")


def numbers(path):
    if not os.path.exists(path):
        return None, []
    t = open(path, errors="replace").read()
    m = re.search(r"\[exit (\d+)\]", t)
    nums = []
    for line in t.splitlines():
        if line.startswith("weights:"):
            nums += [float(x) for x in line.split()[1:]]
        else:
            nums += [float(x) for x in NUM.findall(line)]
    return (int(m.group(1)) if m else None), nums


def table(a):
    print("| entry | tier | original | fixed | numbers compared | max abs difference |")
    print("|---|---|---|---|---:|---:|")
    for name, *_ in ENTRIES:
        for tier in ("cuda", "cpu"):
            ro, no = numbers(os.path.join(a.outdir, "%s-%s-orig.log" % (tier, name)))
            rf, nf = numbers(os.path.join(a.outdir, "%s-%s-fixed.log" % (tier, name)))
            if ro is None and rf is None:
                continue
            ex = lambda r: "-" if r is None else ("exit 0" if r == 0 else "exit %d" % r)
            if ro == 0 and rf == 0 and len(no) == len(nf) and no:
                diff = max(abs(x - y) for x, y in zip(no, nf))
                print("| %s | %s | %s | %s | %d | %.3g |" % (name, tier, ex(ro), ex(rf), len(no), diff))
            else:
                print("| %s | %s | %s | %s | %d vs %d | - |" % (name, tier, ex(ro), ex(rf), len(no), len(nf)))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare"); p.add_argument("out"); p.add_argument("--xpuify", default=os.path.join(ROOT, "build/xpuify"))
    r = sub.add_parser("run"); r.add_argument("dir"); r.add_argument("outdir"); r.add_argument("tier", choices=("cuda", "cpu"))
    r.add_argument("--only", nargs="*")
    t = sub.add_parser("table"); t.add_argument("outdir")
    a = ap.parse_args()
    if a.cmd == "prepare":
        a.xpuify = os.path.abspath(a.xpuify)
    {"prepare": prepare, "run": run, "table": table}[a.cmd](a)


if __name__ == "__main__":
    main()
