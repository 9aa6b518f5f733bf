"""Pieces that several benchmarks share (imported by them; run.py only collects bench_*.py)."""


def training_step(model, optimizer, loss_fn, x, target):
    """The callable to time for one training step on a fixed batch: zero the gradients,
    `loss_fn(model(x), target)`, backward, optimizer step."""
    def step():
        optimizer.zero_grad()
        loss = loss_fn(model(x), target)
        loss.backward()
        optimizer.step()
    return step
