"""spconv's module plumbing: SparseModule (the mark of a module that takes a SparseConvTensor),
SparseSequential (sparse modules get the SparseConvTensor, every other module -- BatchNorm1d,
ReLU, Dropout -- gets its features), and ToDense."""
from collections import OrderedDict

from ..nn import Module
from .core import SparseConvTensor


class SparseModule(Module):
    """A module whose forward takes and returns a SparseConvTensor."""

    def __init__(self, name=None):
        super().__init__()
        self.name = name


class SparseSequential(SparseModule):
    """Sequential over sparse and dense modules: a SparseModule receives the SparseConvTensor,
    any other module is applied to its features (N, C), keeping the sites and rulebooks.

        net = SparseSequential(SubMConv3d(4, 16, 3, indice_key="subm0"),
                               nn.BatchNorm1d(16), nn.ReLU(),
                               SparseConv3d(16, 32, 3, stride=2), ToDense())
    """

    def __init__(self, *args, **kwargs):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)
        for name, module in kwargs.items():
            if name in self._modules:
                raise ValueError(f"name {name!r} exists")
            self.add_module(name, module)

    def __getitem__(self, idx):
        if not -len(self) <= idx < len(self):
            raise IndexError(f"index {idx} is out of range")
        return list(self._modules.values())[idx]

    def __len__(self):
        return len(self._modules)

    def add(self, module, name=None):
        if name is None:
            name = str(len(self._modules))
            if name in self._modules:
                raise KeyError("name exists")
        self.add_module(name, module)

    def forward(self, input):
        for module in self._modules.values():
            if isinstance(module, SparseModule) or not isinstance(input, SparseConvTensor):
                input = module(input)
            elif input.indices.shape[0] != 0:
                input = input.replace_feature(module(input.features))
        return input


class ToDense(SparseModule):
    """SparseConvTensor -> dense (batch, C, *spatial) tensor."""

    def forward(self, x):
        return x.dense()
