"""torch.testing._utils: the seeding helpers the public testing code shares with the OpInfo
database (which wraps its random ops -- dropout, bernoulli, ... -- in `wrapper_set_seed` so
that two calls of the op give the same result)."""
import contextlib

import ember


@contextlib.contextmanager
def freeze_rng_state():
    """Run the block and put the global generator back as it was."""
    state = ember.get_rng_state()
    try:
        yield
    finally:
        ember.set_rng_state(state)


def wrapper_set_seed(op, *args, **kwargs):
    """`op(*args, **kwargs)` with the generator seeded to 42, leaving the generator's state as
    it was before the call."""
    with freeze_rng_state():
        ember.manual_seed(42)
        return op(*args, **kwargs)
