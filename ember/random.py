"""torch.random: the default generator's seed and state."""
from ._core.generator import (manual_seed, seed, initial_seed, get_rng_state, set_rng_state,
                              default_generator, Generator)
import contextlib


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, **kwargs):
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
