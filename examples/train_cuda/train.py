"""Train a tiny MLP with mixed precision on the GPU (CUDA-only, as many scripts are written)."""
import argparse
import os
import shutil
import subprocess

import torch
import torch.distributed as dist
from torch.cuda.amp import GradScaler, autocast

from train_cuda.model import TinyMLP
from train_cuda.utils import gpu_report, seed_everything


def setup_distributed(rank, world_size):
    os.environ["CUDA_VISIBLE_DEVICES"] = str(rank)
    dist.init_process_group(backend="nccl", rank=rank, world_size=world_size)
    torch.cuda.set_device(rank)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--distributed", action="store_true")
    args = parser.parse_args()

    seed_everything(0)
    if args.distributed:
        setup_distributed(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]))
    if shutil.which("nvidia-smi"):
        print(subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout)

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = TinyMLP().cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = GradScaler()
    torch.backends.cudnn.benchmark = True

    x = torch.randn(64, 16).cuda()
    y = torch.randn(64, 1, device="cuda")
    for epoch in range(args.epochs):
        opt.zero_grad()
        with autocast():
            loss = torch.nn.functional.mse_loss(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        torch.cuda.synchronize()
        print(f"epoch {epoch} loss {loss.item():.6f} on {device}")
    gpu_report()
    torch.save(model.state_dict(), "model.pt")
    state = torch.load("model.pt", map_location="cuda:0")
    print("reloaded", len(state), "tensors")


if __name__ == "__main__":
    main()
