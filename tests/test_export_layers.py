"""ember.export of common layers and functions against torch.export (torch 2.13, non-strict):
node for node before run_decompositions (the composites torch keeps whole -- conv_transpose2d,
group_norm, instance_norm, adaptive_avg_pool2d -- stay whole), and after it where ember's
lowering equals torch's; the programs compute torch's results either way. Then each through
ember.onnx.export in ONNX Runtime against ember's eager result."""
import warnings

import numpy as np
import pytest

import ember
from ember.utils import _pytree as pytree

torch = pytest.importorskip("torch", reason="torch is the oracle for ember.export")
from test_export import (twins, pair, t_export, node_sequence,  # noqa: E402
                         readable, assert_close)
from test_export_attention import _check_onnx, assert_same_graph  # noqa: E402


def module(build, forward=None):
    def make(lib):
        lib.manual_seed(0)

        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.m = build(lib)

            def forward(self, *xs):
                return forward(lib, self.m, *xs) if forward else self.m(*xs)
        return M()
    return make


def ints(a):
    return ember.from_numpy(np.array(a)), torch.from_numpy(np.array(a))


# name: (model, inputs, whether run_decompositions also gives torch's graph)
CASES = {
    "Conv1d": (module(lambda L: L.nn.Conv1d(3, 4, 3, padding=1)), [pair(2, 3, 8)], True),
    "ConvTranspose2d": (module(lambda L: L.nn.ConvTranspose2d(3, 4, 3, stride=2)),
                        [pair(2, 3, 5, 5)], True),
    "GroupNorm": (module(lambda L: L.nn.GroupNorm(2, 4)), [pair(2, 4, 5, 5)], True),
    "InstanceNorm2d": (module(lambda L: L.nn.InstanceNorm2d(4, affine=True)),
                       [pair(2, 4, 5, 5)], False),
    "Embedding": (module(lambda L: L.nn.Embedding(10, 4)), [ints([[1, 2, 3], [4, 5, 9]])],
                  True),
    "PixelShuffle": (module(lambda L: L.nn.PixelShuffle(2)), [pair(1, 8, 3, 3)], False),
    "AdaptiveAvgPool2d": (module(lambda L: L.nn.AdaptiveAvgPool2d((1, 1))), [pair(2, 3, 5, 5)],
                          False),
    "AvgPool2d": (module(lambda L: L.nn.AvgPool2d(2)), [pair(2, 3, 4, 4)], True),
    "MaxPool1d": (module(lambda L: L.nn.MaxPool1d(2)), [pair(2, 3, 8)], False),
    "LayerNorm": (module(lambda L: L.nn.LayerNorm(5)), [pair(2, 5)], True),
    "GELU-tanh": (module(lambda L: L.nn.GELU("tanh")), [pair(2, 5)], True),
    "SiLU": (module(lambda L: L.nn.SiLU()), [pair(2, 5)], False),
    "Hardswish": (module(lambda L: L.nn.Hardswish()), [pair(2, 5)], False),
    "cumsum": (module(lambda L: None, lambda L, m, x: x.cumsum(1)), [pair(2, 5)], True),
    "topk": (module(lambda L: None, lambda L, m, x: tuple(x.topk(2, dim=1))), [pair(2, 5)],
             True),
    "gather": (module(lambda L: None, lambda L, m, x, i: x.gather(1, i)),
               [pair(2, 5), ints([[0, 1], [4, 3]])], True),
    "einsum": (module(lambda L: None, lambda L, m, x, y: L.einsum("bij,bjk->bik", x, y)),
               [pair(2, 3, 4), pair(2, 4, 5, seed=1)], False),
}


@pytest.mark.parametrize("name", list(CASES))
def test_layer_graph_equals_torchs(name):
    make, inputs, decomposed_too = CASES[name]
    em, tm = twins(make)
    em.eval(), tm.eval()
    eargs, targs = zip(*inputs)
    eep, tep = ember.export.export(em, eargs), t_export(tm, targs)
    assert_same_graph(eep, tep)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tdec = tep.run_decompositions()
    edec = eep.run_decompositions()
    if decomposed_too:
        assert node_sequence(edec) == node_sequence(tdec)
        assert readable(edec) == readable(tdec)
    for e, t in ((eep, tep), (edec, tdec)):
        for eo, to in zip(pytree.tree_leaves(e.module()(*eargs)),
                          pytree.tree_leaves(t.module()(*targs))):
            assert_close(eo, to)


ONNX_CASES = ["Conv1d", "ConvTranspose2d", "GroupNorm", "InstanceNorm2d", "Embedding",
              "PixelShuffle", "AdaptiveAvgPool2d", "AvgPool2d", "LayerNorm", "GELU-tanh",
              "SiLU", "Hardswish", "cumsum", "topk", "gather", "einsum"]


@pytest.mark.parametrize("name", ONNX_CASES)
def test_layer_runs_in_onnx_runtime(name):
    pytest.importorskip("onnx", reason="ONNX export needs `pip install 'ember[onnx]'`")
    ort = pytest.importorskip("onnxruntime", reason="needs `pip install 'ember[onnx]'`")
    make, inputs, _ = CASES[name]
    model = make(ember).eval()
    args = tuple(e for e, _ in inputs)
    session = ort.InferenceSession(ember.onnx.export(model, args, f=None).SerializeToString())
    _check_onnx(session, model, args)
