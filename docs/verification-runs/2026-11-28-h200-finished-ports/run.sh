#!/bin/bash
# GPU check of this session's fixes: original vs compat-fixed vs accelerator-fixed on CUDA; fixed with CUDA hidden
cd "$(dirname "$0")"
python3 -c "import torch; print(torch.__version__, torch.cuda.get_device_name(0))"
for v in orig fixed fixed_acc; do python3 -W ignore $v/legacy.py > $OUT/$v.txt 2>&1; echo "$v rc=$?"; done
CUDA_VISIBLE_DEVICES= python3 -W ignore fixed/legacy.py > $OUT/fixed_cpu.txt 2>&1; echo "fixed_cpu rc=$?"
CUDA_VISIBLE_DEVICES= python3 -W ignore fixed_acc/legacy.py > $OUT/fixed_acc_cpu.txt 2>&1; echo "fixed_acc_cpu rc=$?"
cmp $OUT/orig.txt $OUT/fixed.txt && echo "compat: identical on CUDA"
cmp $OUT/orig.txt $OUT/fixed_acc.txt && echo "accelerator: identical on CUDA"
cat $OUT/orig.txt; diff $OUT/orig.txt $OUT/fixed_acc.txt; for f in fixed_cpu fixed_acc_cpu; do echo "== $f"; tail -n 3 $OUT/$f.txt; done
