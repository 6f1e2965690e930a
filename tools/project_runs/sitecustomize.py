# Loaded by every Python process of tools/project_runs.py (PYTHONPATH): seeds torch's generators before the entry
# point runs, so that entries which draw their data without a seed (pytorch/examples' MyTrainDataset) draw the same
# data in the original and the fixed copy. Nothing else.
try:
    import torch

    torch.manual_seed(0)
except Exception:  # noqa: BLE001 -- a process without torch is not ours to break
    pass
