"""torch.fx.passes.fake_tensor_prop: run a GraphModule node by node on fake tensors (within one
FakeTensorMode) and record each node's fake result in `node.meta["val"]`: every node's shape,
dtype, strides and device without computing any data."""
from ..interpreter import Interpreter
from ..node import map_aggregate

__all__ = ["FakeTensorProp"]


class FakeTensorProp(Interpreter):
    """FakeTensorProp(gm, mode).propagate(*real_inputs): the inputs become fakes of `mode` (a
    new FakeTensorMode if none is given); the module's parameters must be fakes of the same
    mode or real tensors the mode accepts."""

    def __init__(self, module, mode=None):
        super().__init__(module)
        if mode is None:
            from ..._subclasses.fake_tensor import FakeTensorMode
            mode = FakeTensorMode()
        self._mode = mode

    def run_node(self, n):
        result = super().run_node(n)
        from ..._subclasses.fake_tensor import FakeTensor
        if any(isinstance(r, FakeTensor) for r in _leaves(result)):
            n.meta["val"] = result
        return result

    def propagate(self, *args):
        from ..._core.tensor import Tensor
        fake_args = [self._mode.from_tensor(a) if isinstance(a, Tensor) else a for a in args]
        return self.propagate_dont_convert_inputs(*fake_args)

    def propagate_dont_convert_inputs(self, *args):
        with self._mode:
            return super().run(*args)


def _leaves(result):
    found = []
    map_aggregate(result, found.append)
    return found
