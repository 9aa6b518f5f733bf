"""Losses beyond cross-entropy, forward + backward: CTC and binary cross-entropy with logits."""
from registry import benchmark


@benchmark(target=3.0)
def bench_ctc_loss(lib):
    """CTC of (100, 16, 30) log-probabilities (a small speech model's batch) against targets of
    10 to 30 labels, through log_softmax."""
    F = lib.nn.functional
    lib.manual_seed(0)
    x = lib.randn(100, 16, 30, requires_grad=True)
    targets = lib.randint(1, 30, (16, 30))
    input_lengths = tuple(range(85, 101))
    target_lengths = tuple(range(10, 26))

    def step():
        F.ctc_loss(x.log_softmax(2), targets, input_lengths, target_lengths).backward()
    return step


@benchmark(target=2.0)
def bench_bce_with_logits(lib):
    """Multi-label binary cross-entropy with logits of (256, 1000) and a positive weight."""
    F = lib.nn.functional
    lib.manual_seed(0)
    x = lib.randn(256, 1000, requires_grad=True)
    y = lib.rand(256, 1000)
    pos_weight = lib.rand(1000) * 2

    def step():
        F.binary_cross_entropy_with_logits(x, y, pos_weight=pos_weight).backward()
    return step
