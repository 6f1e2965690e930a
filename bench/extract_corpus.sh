#!/usr/bin/env bash
# Extract the source tree of one bare git repository into bench/corpus/NAME (CORPUS_DIR=bench/heldout: into
# bench/heldout/NAME), for reading only.
# Nothing is built or installed. Blobs that the snapshot lacks (large binaries left out of the
# mirror) are skipped, so every file that is present is byte-identical to the commit.
# usage: bench/extract_corpus.sh GIT_DIR NAME [COMMIT]
set -euo pipefail
gd=$1; name=$2; rev=${3:-HEAD}
root=${CORPUS_DIR:-$(cd "$(dirname "$0")" && pwd)/corpus}
dest=$root/$name
rm -rf "$dest"; mkdir -p "$dest"
idx=$(mktemp); trap 'rm -f "$idx"' EXIT
export GIT_DIR=$gd GIT_INDEX_FILE=$idx
git read-tree "$rev"
# drop index entries whose blob is absent from the snapshot, gitlinks (submodules) and symlinks (so that
# every tool in bench.sh sees the same regular files: ripgrep and ast-grep do not follow links, xpuify does)
git ls-files -s -z | python3 -c '
import sys, subprocess
ents = [e for e in sys.stdin.buffer.read().split(b"\0") if e]
recs = [(e.split(b" ")[0], e.split(b" ")[1], e.split(b"\t", 1)[1]) for e in ents]
chk = subprocess.run(["git", "cat-file", "--batch-check"], input=b"".join(r[1] + b"\n" for r in recs),
                     capture_output=True, check=True).stdout.splitlines()
drop = [r[2] for r, c in zip(recs, chk) if r[0] in (b"160000", b"120000") or c.endswith(b" missing")]
if drop:
    subprocess.run(["git", "update-index", "--force-remove", "-z", "--stdin"], input=b"\0".join(drop) + b"\0", check=True)
sys.stderr.write("%s: %d files, %d skipped (absent from snapshot, submodules, symlinks)\n" % (sys.argv[1], len(recs) - len(drop), len(drop)))
' "$name"
git checkout-index -a -f --prefix="$dest/"
echo "$name $(git rev-parse "$rev")"
