import random

import torch


def seed_everything(seed):
    random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def gpu_report():
    print("allocated", torch.cuda.memory_allocated(), "reserved", torch.cuda.memory_reserved())
    torch.cuda.empty_cache()
    try:
        print("device", torch.cuda.get_device_name(0))
    except Exception:
        pass
