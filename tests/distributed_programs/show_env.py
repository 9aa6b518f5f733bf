"""Prints, as JSON, the environment a launcher gave this rank and what the process group
says, then all-reduces to prove the ranks are connected."""
import json
import os
import sys

import ember
import ember.distributed as dist

names = ["RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "ROLE_RANK",
         "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID", "OMP_NUM_THREADS"]
env = {n: os.environ.get(n) for n in names}
dist.init_process_group("gloo", init_method="env://")
t = ember.ones(1)
dist.all_reduce(t)
print(json.dumps({"env": env, "rank": dist.get_rank(), "world": dist.get_world_size(),
                  "local_rank": dist.get_node_local_rank(), "sum": t.item(),
                  "launched": dist.is_torchelastic_launched(), "argv": sys.argv[1:],
                  "name": __name__}), flush=True)
dist.destroy_process_group()
