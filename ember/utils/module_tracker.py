"""torch.utils.module_tracker: which modules are running, forward and backward.

`ModuleTracker.parents` is the set of the fully qualified names of the modules whose forward is
running now ('Global' always among them): global forward pre/post hooks add and remove each
module's name ('Net', 'Net.fc', ... named from the outermost module seen). In backward it is
the set of the modules that were running when the autograd node now executing was created in
forward (entered as soon as that node's result gradient arrives, before the user's tensor hooks
on it run).

Note [how backward is attributed]: PyTorch's tracker puts multi-grad hooks on each module's
inputs and outputs and enters a module when all its output gradients have arrived. ember tags
instead each autograd node made inside the tracker with the module set current at its creation
(a dispatch mode sees every op's result), and sets `parents` from the tag while the node runs
(a node pre-hook; its post-hook returns to {'Global'}). For a module boundary both give the same
sets; the tag is also right for modules with several outputs of which only some are used.
"""
import weakref

from .._core.tensor import Tensor
from .._dispatch import dispatcher as _dispatcher
from ..nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook

__all__ = ["ModuleTracker"]


class ModuleTracker:
    """`with ModuleTracker() as tracker:` ... `tracker.parents` names the running modules."""

    def __init__(self):
        self.parents = {"Global"}
        self._known_modules = weakref.WeakKeyDictionary()
        self._seen_modules = weakref.WeakSet()
        self._tagged = weakref.WeakSet()
        self._hooks = []
        self._in_backward = False

    @property
    def is_bw(self):
        """True while backward runs through nodes made inside the tracker."""
        return self._in_backward

    def _get_mod_name(self, mod):
        if mod not in self._known_modules:
            self._known_modules[mod] = type(mod).__name__
        name = self._known_modules[mod]
        if mod not in self._seen_modules:  # name the children from here, once
            stack = [(mod, name)]
            while stack:
                parent, parent_name = stack.pop()
                self._seen_modules.add(parent)
                for child_name, child in parent.named_children():
                    self._known_modules[child] = f"{parent_name}.{child_name}"
                    if child not in self._seen_modules:
                        stack.append((child, f"{parent_name}.{child_name}"))
        return name

    def _fw_pre_hook(self, mod, input):
        self.parents.add(self._get_mod_name(mod))

    def _fw_post_hook(self, mod, input, output):
        self.parents.discard(self._get_mod_name(mod))

    def _on_op(self, op, args, level):
        out = _dispatcher.call_in_modes(op, args, level - 1)
        first = out[0] if isinstance(out, (tuple, list)) and out else out
        node = first.grad_fn if isinstance(first, Tensor) else None
        if node is not None and node not in self._tagged:
            self._tag(first, node, frozenset(self.parents))
        return out

    def _tag(self, first, node, parents):
        """Enter `parents` when the gradient of the op's result arrives (a hook on the result,
        registered before any of the user's, so theirs see the modules too) or at the latest
        when its node starts; go back to {'Global'} when the node is done."""
        self._tagged.add(node)

        def enter(*grads):
            self._in_backward = True
            self.parents = set(parents)

        def leave(grad_inputs, grad_outputs):
            self._in_backward = False
            self.parents = {"Global"}
        if first._rg:
            self._hooks.append(first.register_hook(enter))
        self._hooks.append(node.register_prehook(enter))
        self._hooks.append(node.register_hook(leave))

    def __enter__(self):
        self._fw_pre_handle = register_module_forward_pre_hook(self._fw_pre_hook)
        self._fw_post_handle = register_module_forward_hook(self._fw_post_hook)
        _dispatcher._modes.append(self._on_op)
        return self

    def __exit__(self, *args):
        _dispatcher._modes.remove(self._on_op)
        self._fw_pre_handle.remove()
        self._fw_post_handle.remove()
        for h in self._hooks:
            h.remove()
        self._hooks.clear()
