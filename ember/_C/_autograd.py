"""torch._C._autograd: the autograd engine's switches PyTorch exposes to Python that ember has
(kept in ember/autograd: the profiler's state, setting version counters by hand)."""
from ..autograd.engine import (  # noqa: F401
    current_graph_task_keep_graph as _get_current_graph_task_keep_graph)
from ..autograd.grad_mode import _unsafe_set_version_counter  # noqa: F401
from ..autograd.profiler import _profiler_enabled  # noqa: F401
from ..autograd.graph import SavedTensor  # noqa: F401,E402


def _make_saved_tensor(tensor, is_output, is_inplace_on_view=False):
    """A SavedTensor of `tensor`, packed by the saved-tensor hooks in effect (as a node saves)."""
    return SavedTensor(tensor, is_output)


def _saved_tensors_hooks_is_enabled():
    """Whether saved_tensors_hooks may be entered now (not inside disable_saved_tensors_hooks)."""
    from ..autograd.saved_tensor_hooks import _disabled_message
    return _disabled_message[0] is None
