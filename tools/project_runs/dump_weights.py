# Prints the weights of a pytorch/examples DDP snapshot (snapshot.pt) on one line, for tools/project_runs.py.
import sys

import torch

s = torch.load(sys.argv[1], map_location="cpu")
state = s.get("MODEL_STATE", s)
print("weights: " + " ".join("%.9g" % v for v in torch.cat([t.flatten().float() for t in state.values()]).tolist()))
