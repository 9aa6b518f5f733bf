"""ember.utils.flop_counter and ember.utils.module_tracker against torch's: the flops counted
per module and per op (forward and backward) for linear, matmul in every folding case, the mm
family, einsum, convolutions (transposed, grouped, 1-3 d) and attention on its math path; the
table; custom formulas; ModuleTracker's parents during forward and backward."""
import importlib

import numpy as np
import pytest

import ember
from ember.utils.flop_counter import FlopCounterMode

torch = pytest.importorskip("torch")
from torch.utils.flop_counter import FlopCounterMode as TorchFlopCounterMode  # noqa: E402


def _t(lib, *shape, rg=False):
    return lib.tensor(np.random.default_rng(sum(shape)).normal(size=shape).astype(np.float32),
                      requires_grad=rg)


def _counts(lib, fn):
    FC = TorchFlopCounterMode if lib is torch else FlopCounterMode
    with FC(display=False) as fc:
        fn(lib)
    name = (lambda k: str(k)) if lib is torch else (lambda k: f"{k._namespace}.{k._name}")
    return {mod: {name(k): v for k, v in d.items()} for mod, d in
            fc.get_flop_counts().items()}, fc


def _same(fn):
    t, tfc = _counts(torch, fn)
    e, efc = _counts(ember, fn)
    assert e == t
    assert efc.get_total_flops() == tfc.get_total_flops()
    return efc, tfc


MATMUL_SHAPES = [((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 5)), ((3, 4), (4, 5)),
                 ((2, 3, 4), (4,)), ((2, 3, 4), (4, 5)), ((4,), (2, 4, 5)), ((3, 4), (2, 4, 5)),
                 ((2, 3, 4), (2, 4, 5)), ((2, 3, 4), (1, 4, 5)), ((1, 3, 4), (2, 4, 5)),
                 ((2, 1, 3, 4), (5, 4, 6)), ((7, 2, 3, 4), (7, 2, 4, 5))]


@pytest.mark.parametrize("grads", ["none", "a", "b", "both"])
@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES)
def test_matmul_folding_as_torch(sa, sb, grads):
    def fn(lib):
        a = _t(lib, *sa, rg=grads in ("a", "both"))
        b = _t(lib, *sb, rg=grads in ("b", "both"))
        out = lib.matmul(a, b)
        if grads != "none":
            out.sum().backward()
    _same(fn)


def test_matmul_noncontiguous_as_torch():
    _same(lambda lib: lib.matmul(_t(lib, 2, 4, 3).transpose(1, 2), _t(lib, 4, 5)))
    _same(lambda lib: lib.nn.functional.linear(_t(lib, 2, 4, 3).transpose(1, 2), _t(lib, 6, 4),
                                               _t(lib, 6)))


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("grad", [False, True])
@pytest.mark.parametrize("xs", [(4,), (2, 4), (2, 3, 4), (2, 3, 5, 4)])
def test_linear_as_torch(xs, bias, grad):
    def fn(lib):
        x, w = _t(lib, *xs, rg=grad), _t(lib, 6, 4, rg=grad)
        out = lib.nn.functional.linear(x, w, _t(lib, 6, rg=grad) if bias else None)
        if grad:
            out.sum().backward()
    _same(fn)


def test_mm_family_as_torch():
    def fn(lib):
        lib.bmm(_t(lib, 2, 3, 4), _t(lib, 2, 4, 5))
        lib.addmm(_t(lib, 3), _t(lib, 2, 4), _t(lib, 4, 3))
        lib.baddbmm(_t(lib, 2, 3, 5), _t(lib, 2, 3, 4), _t(lib, 2, 4, 5))
        lib.mm(_t(lib, 3, 4, rg=True), _t(lib, 4, 5, rg=True)).sum().backward()
        lib.bmm(_t(lib, 2, 3, 4, rg=True), _t(lib, 2, 4, 5, rg=True)).sum().backward()
        lib.addmm(_t(lib, 3), _t(lib, 2, 4, rg=True), _t(lib, 4, 3)).sum().backward()
    _same(fn)


def test_einsum_as_torch():
    def fn(lib):
        lib.einsum("ij,jk->ik", _t(lib, 2, 3), _t(lib, 3, 4))
        lib.einsum("bij,bjk->bik", _t(lib, 5, 2, 3), _t(lib, 5, 3, 4))
        lib.einsum("ij,jk,kl->il", _t(lib, 2, 3), _t(lib, 3, 4), _t(lib, 4, 5))
        lib.einsum("...ij,...jk", _t(lib, 7, 2, 3), _t(lib, 7, 3, 4))
        lib.einsum("ii", _t(lib, 3, 3))
        lib.einsum("ij,ij->i", _t(lib, 3, 4), _t(lib, 3, 4))
        lib.einsum("i,j->ij", _t(lib, 3), _t(lib, 4))
        lib.einsum("abc,cd->abd", _t(lib, 2, 3, 4, rg=True), _t(lib, 4, 5, rg=True)).sum() \
            .backward()
    _same(fn)


def test_convolutions_as_torch():
    def fn(lib):
        F = lib.nn.functional
        F.conv_transpose2d(_t(lib, 1, 2, 5, 5, rg=True), _t(lib, 2, 3, 3, 3, rg=True),
                           stride=2).sum().backward()
        F.conv1d(_t(lib, 1, 2, 5, rg=True), _t(lib, 4, 1, 3, rg=True), groups=2,
                 padding=1).sum().backward()
        F.conv3d(_t(lib, 2, 2, 4, 4, 4), _t(lib, 3, 2, 2, 2, 2, rg=True), stride=2).sum() \
            .backward()
        F.conv2d(_t(lib, 2, 3, 6, 6, rg=True), _t(lib, 4, 3, 3, 3), dilation=2).sum().backward()
    _same(fn)


class _Net:
    @staticmethod
    def make(lib):
        nn = lib.nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 4, 3, padding=1)
                self.fc = nn.Linear(64, 5)
                self.inner = nn.Sequential(nn.Linear(5, 6, bias=False), nn.ReLU())

            def forward(self, x):
                return self.inner(self.fc(self.conv(x).flatten(1)[:, :64]))
        lib.manual_seed(0)
        return Net()


def test_module_hierarchy_and_table_as_torch():
    efc, tfc = _same(lambda lib: _Net.make(lib)(_t(lib, 2, 3, 8, 8, rg=True)).sum().backward())
    for depth in (1, 2, None):
        assert _cells(efc.get_table(depth)) == _cells(tfc.get_table(depth))
        assert efc.get_table(depth).splitlines()[0].split() == ["Module", "FLOP", "%", "Total"]
    assert efc.get_table(2).splitlines()[3].startswith(" - aten.convolution")


def _cells(table):
    """A table's cells without their indentation: PyTorch indents rows by module depth
    (asking tabulate to PRESERVE_WHITESPACE, which tabulate 0.10 no longer reads, so the
    indentation torch prints depends on the tabulate installed); ember always indents."""
    pytest.importorskip("tabulate")
    rows = table.splitlines()
    return [[c.strip() for c in row.split("  ") if c.strip()] for row in rows[:1] + rows[2:]]


def test_attention_math_path_as_torch():
    def fn(lib):
        att = importlib.import_module(lib.__name__ + ".nn.attention")
        with att.sdpa_kernel(att.SDPBackend.MATH):
            q, k = _t(lib, 2, 3, 4, 8, rg=True), _t(lib, 2, 3, 5, 8, rg=True)
            v = _t(lib, 2, 3, 5, 6, rg=True)
            lib.nn.functional.scaled_dot_product_attention(q, k, v).sum().backward()
            lib.manual_seed(0)
            m = lib.nn.MultiheadAttention(8, 2, batch_first=True)
            x = _t(lib, 2, 3, 8, rg=True)
            m(x, x, x, need_weights=False)[0].sum().backward()
    _same(fn)


def test_small_table_and_empty_as_torch():
    efc, tfc = _same(lambda lib: lib.mm(_t(lib, 2, 3), _t(lib, 3, 4)))
    assert _cells(efc.get_table()) == _cells(tfc.get_table())
    efc, tfc = _same(lambda lib: lib.ones(2) + 1)
    assert efc.get_table() == tfc.get_table() and efc.get_total_flops() == 0


def test_display_prints_the_table(capsys):
    with FlopCounterMode(depth=1):
        ember.mm(ember.ones(2, 3), ember.ones(3, 4))
    assert capsys.readouterr().out.splitlines()[2].split() == ["Global", "48", "100.00%"]


def test_custom_mapping_and_nested_counters():
    def add_flop(a_shape, b_shape, *args, out_shape=None, **kwargs):
        return 7
    with FlopCounterMode(display=False, custom_mapping={ember.ops.aten.add: add_flop}) as fc:
        with FlopCounterMode(display=False) as inner:
            ember.ones(2) + ember.ones(2)
            ember.mm(ember.ones(2, 3), ember.ones(3, 4))
    assert fc.get_flop_counts()["Global"] == {ember.ops.aten.add: 7, ember.ops.aten.mm: 48}
    assert inner.get_total_flops() == 48
    with pytest.warns(UserWarning, match="mods argument is not needed"):
        FlopCounterMode(ember.nn.Linear(2, 2), display=False)


def _tracked(lib):
    MT = importlib.import_module(lib.__name__ + ".utils.module_tracker").ModuleTracker
    nn = lib.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 5)
            self.out = nn.Sequential(nn.Linear(5, 2))

        def forward(self, x):
            self.hidden = self.fc(x).relu()
            return self.out(self.hidden)
    net, log = Net(), []
    with MT() as tracker:
        def note(what):
            return lambda *a: log.append((what, sorted(tracker.parents), tracker.is_bw))
        net.fc.register_forward_pre_hook(note("fc pre"))
        net.out[0].register_forward_pre_hook(note("out.0 pre"))
        y = net(lib.ones(3, 4, requires_grad=True))
        y.register_hook(note("grad y"))
        net.hidden.register_hook(note("grad hidden"))
        y.sum().backward()
        note("after")()
        lib.nn.Linear(2, 2)(lib.ones(1, 2))
        note("outside a named root")()
    note("exited")()
    return log


def test_module_tracker_parents_as_torch():
    assert _tracked(ember) == _tracked(torch)


def test_module_tracker_attributes_backward_by_creation():
    """Two calls of one module: PyTorch's boundary hooks let the first call's backward region
    stay open while the second's runs; ember names each node's own modules."""
    from ember.utils.module_tracker import ModuleTracker
    fc = ember.nn.Linear(3, 3)
    log = []
    with ModuleTracker() as tracker:
        x = ember.ones(1, 3, requires_grad=True)
        a = fc(x)
        b = (a * 2).sum()
        a.register_hook(lambda g: log.append(sorted(tracker.parents)))
        b.backward()
    assert log == [["Global", "Linear"]]


def test_attention_on_the_flash_path_counts_as_torch():
    """PyTorch's CPU flash kernel has no flop formula: attention on that path counts nothing;
    dropout or 3-d inputs take the math kernel, whose products count."""
    def fn(lib):
        q, k = _t(lib, 2, 3, 4, 8, rg=True), _t(lib, 2, 3, 5, 8, rg=True)
        lib.nn.functional.scaled_dot_product_attention(q, k, k).sum().backward()
        lib.nn.functional.scaled_dot_product_attention(_t(lib, 3, 4, 8), _t(lib, 3, 5, 8),
                                                       _t(lib, 3, 5, 8))
        lib.manual_seed(0)
        m = lib.nn.MultiheadAttention(8, 2, batch_first=True)
        x = _t(lib, 2, 3, 8, rg=True)
        m(x, x, x, need_weights=False)[0].sum().backward()
    _same(fn)


def test_transformer_layer_as_torch_but_for_dropout_attribution():
    """PyTorch's tracker leaves an identity Dropout (p=0 returns its input) entered in backward,
    so it charges every later backward product to `...dropout`, `...dropout1`, `...dropout2`;
    ember charges each product to the modules that made it. Everything else is equal."""
    def fn(lib):
        lib.manual_seed(0)
        layer = lib.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True)
        layer(_t(lib, 2, 5, 16, rg=True)).sum().backward()
    t, _ = _counts(torch, fn)
    e, _ = _counts(ember, fn)
    assert e == {k: v for k, v in t.items() if "dropout" not in k}
