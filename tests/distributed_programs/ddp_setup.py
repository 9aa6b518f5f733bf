"""Models, data and single-process reference training shared by the DDP rank program
(ddp.py, run under mpiexec) and the test that checks it (tests/test_distributed_multirank.py).

Each scenario trains a model for a few steps; under DDP rank r sees its slice of the global
batch, the reference sees the whole batch in one process. DDP averages the ranks'
gradients, so the reference's loss is the average of the ranks' (mean) losses."""
import ember
import ember.nn as nn

BATCH = 8          # per rank
STEPS = 4


class Net(nn.Module):
    """An MLP; with `extras`, also a branch used on some steps only and a layer that is never
    used."""

    def __init__(self, extras=False):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh())
        if extras:
            self.branch = nn.Linear(32, 32)
            self.never = nn.Linear(3, 3)
        self.head = nn.Linear(32, 4)

    def forward(self, x, use_branch=False):
        h = self.body(x)
        if use_branch:
            h = h + self.branch(h).tanh()
        return self.head(h)


def make_model(seed=0, extras=False):
    ember.manual_seed(seed)
    return Net(extras)


def make_optimizer(model):
    return ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)


def global_batch(step, world, micro=0):
    g = ember.Generator()
    g.manual_seed(1000 * step + micro)
    x = ember.randn(BATCH * world, 10, generator=g)
    y = ember.randn(BATCH * world, 4, generator=g)
    return x, y


def rank_slice(t, rank):
    return t[rank * BATCH:(rank + 1) * BATCH]


def loss_fn(out, y):
    return ((out - y) ** 2).mean()


def branch_used(step, rank):
    """find_unused_parameters scenario: the branch runs on rank 0 only, on even steps."""
    return step % 2 == 0 and rank == 0


def rank_batches(rank):
    """join scenario: rank r has 2 + r batches."""
    return 2 + rank


def reference(scenario, world):
    """Single-process training equal to `scenario` run by `world` DDP ranks."""
    model = make_model(0, extras=scenario == "unused")
    opt = make_optimizer(model)
    steps = max(rank_batches(r) for r in range(world)) if scenario == "join" else STEPS
    for step in range(steps):
        opt.zero_grad()
        if scenario == "no_sync":
            for micro in range(2):
                x, y = global_batch(step, world, micro)
                loss_fn(model(x), y).backward()
        elif scenario == "unused":
            x, y = global_batch(step, world)
            losses = [loss_fn(model(rank_slice(x, r), branch_used(step, r)), rank_slice(y, r))
                      for r in range(world)]
            (sum(losses) / world).backward()
        elif scenario == "join":
            x, y = global_batch(step, world)
            active = [r for r in range(world) if step < rank_batches(r)]
            losses = [loss_fn(model(rank_slice(x, r)), rank_slice(y, r)) for r in active]
            (sum(losses) / world).backward()     # divide_by_initial_world_size=True
        else:
            x, y = global_batch(step, world)
            loss_fn(model(x), y).backward()
        opt.step()
    return model
