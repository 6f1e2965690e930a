#!/usr/bin/env bash
# try_projects.sh (`make try-projects`, not part of `make test`): `xpuify fix` with default options, as a new user
# would run it, on real CUDA-only projects. Two parts:
# 1. entry points: for each entry of the list below (a project directory under CORPUS, the entry script, its
#    arguments): copies the directory, runs the entry on the original, runs plain `xpuify fix` (TARGET, default auto)
#    over the copy, byte-compiles every fixed .py file and runs the entry again. A row passes when every fixed file
#    compiles and the fixed entry does at least as well as the original (exit 0 wherever the original exits 0).
# 2. tools/real_projects.py on every project directory of CORPUS: every changed module imported the ways its
#    project imports it, before and after the fix (import regressions: goal 0), helper copies, compile,
#    idempotency, `.cuda(` and `torch.cuda.` uses left (the table of docs/real-projects.md).
# Usage: tools/try_projects.sh CORPUS [XPUIFY [PYTHON]]   (CORPUS: bench/corpus, see bench/fetch_corpus.md)
#        TRY_MORE="bench/heldout ..." adds part 2 for more directories of projects
set -u
corpus=${1:?usage: tools/try_projects.sh CORPUS [XPUIFY [PYTHON]]}
xp=$(realpath "${2:-build/xpuify}")
py=${3:-/usr/bin/python3}
target=${TARGET:-auto}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
echo "| project | entry | fixes | remaining | files refused | fixed .py files compile | original | fixed | verdict |"
echo "|---|---|---|---|---|---|---|---|---|"
while read -r dir entry args; do
  [ -z "$dir" ] || [ "${dir#\#}" != "$dir" ] && continue
  [ -d "$corpus/$dir" ] || { echo "| $dir | $entry | | | | | not in the corpus | | skipped |"; continue; }
  rm -rf "$work/o" "$work/f"
  cp -r "$corpus/$dir" "$work/o"
  cp -r "$corpus/$dir" "$work/f"
  orc=0 frc=0
  # shellcheck disable=SC2086
  if [ "$entry" != - ]; then (cd "$work/o" && timeout 120 "$py" $entry $args >"$work/o.out" 2>&1); orc=$?; fi
  out=$(cd "$work/f" && "$xp" fix --target "$target" --no-cache -q . 2>"$work/fix.err" | grep '^Fixed ' | tail -1)
  errors=$(grep -c 'error:' "$work/fix.err")
  fixed=$(echo "$out" | sed -n 's/^Fixed \([0-9]*\) finding.*/\1/p')
  remaining=$(echo "$out" | sed -n 's/.*; \([0-9]*\) remaining.*/\1/p')
  changed=$(cd "$work/f" && find . -name '*.py' | while read -r p; do cmp -s "$p" "$work/o/$p" || echo "$p"; done)
  bad=0 n=0
  for p in $changed; do
    n=$((n + 1))
    "$py" -m py_compile "$work/f/$p" 2>>"$work/compile.err" || bad=$((bad + 1))
  done
  # shellcheck disable=SC2086
  if [ "$entry" != - ]; then (cd "$work/f" && timeout 120 "$py" $entry $args >"$work/f.out" 2>&1); frc=$?; fi
  verdict=pass
  [ "$bad" -eq 0 ] || verdict=FAIL
  [ "$orc" -ne 0 ] || [ "$frc" -eq 0 ] || verdict=FAIL
  [ "$verdict" = pass ] || fail=1
  why() { [ "$entry" = - ] && echo "not run" && return; [ "$1" -eq 0 ] && echo "exit 0" || echo "exit $1: $(grep -E '^[A-Za-z]*(Error|Exception)|error:' "$2" | tail -1 | cut -c1-70)"; }
  echo "| $dir | \`$entry ${args:-}\` | ${fixed:-0} | ${remaining:-0} | $errors | $((n - bad)) of $n | $(why $orc "$work/o.out") | $(why $frc "$work/f.out") | $verdict |"
done <<'LIST'
# project directory (under CORPUS)   entry script   arguments
examples/mnist                        main.py         --help
examples/imagenet                     main.py         --help
examples/dcgan                        main.py         --help
examples/word_language_model          main.py         --help
examples/word_language_model          generate.py     --help
examples/vae                          main.py         --help
examples/super_resolution             main.py         --help
examples/super_resolution             super_resolve.py --help
examples/siamese_network              main.py         --help
examples/mnist_hogwild                main.py         --help
examples/mnist_rnn                    main.py         --help
examples/mnist_forward_forward        main.py         --help
examples/fast_neural_style            neural_style/neural_style.py --help
examples/gat                          main.py         --help
examples/gcn                          main.py         --help
examples/time_sequence_prediction     train.py        --help
examples/reinforcement_learning       actor_critic.py --help
examples/distributed/ddp              example.py      --help
pytorch-image-models                  train.py        --help
pytorch-image-models                  validate.py     --help
pytorch-image-models                  inference.py    --help
# whole projects whose dependencies Debian does not package: fixed files must compile (no entry point run)
accelerate                            -
pytorch-lightning                     -
diffusers                             -
fairseq                               -
detectron2                            -
DeepSpeed                             -
unsloth                               -
LIST
echo
"$py" "$(dirname "$0")/real_projects.py" "$corpus" --xpuify "$xp" --python "$py" || fail=1
# more projects (TRY_MORE: directories of project directories, such as bench/heldout, never used while writing the
# rules; see bench/fetch_corpus.md): the same checks, a table each
for more in ${TRY_MORE:-}; do
  [ -d "$more" ] || { echo "try_projects: $more: no such directory (skipped)" >&2; continue; }
  echo
  "$py" "$(dirname "$0")/real_projects.py" "$more" --xpuify "$xp" --python "$py" || fail=1
done
exit $fail
