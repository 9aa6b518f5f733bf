"""The dispatcher's stack of dispatch modes (PyTorch's TorchDispatchMode stack, which ember's
own recorders share) and the TorchDispatchModes on it: a leaf module, so that Tensor methods
written outside the dispatcher (`detach`) can see whether a TorchDispatchMode must see them.
The dispatcher's `_modes` is `modes`; its entries and their protocol are described there
(ember/_dispatch/dispatcher.py)."""
modes = []
torch_dispatch_modes = []   # the TorchDispatchModes among them, bottom first
