"""The layout holds: no import cycle at module level, lower layers reach higher ones only from the
Python-level methods of Tensor and Storage (as torch/_tensor.py does), no module-level global
injected by another module, only public modules at the top of `ember/`, and `ember`'s namespace
holds PyTorch's public names (plus `explain` and the `vision` and `spconv` packages). Also the fixes that came with the layout:
Tensor.storage(), Tensor.conj() through the dispatcher, deterministic mode."""
import pathlib
import re
import sys
import warnings

import numpy as np
import pytest

import ember

ROOT = pathlib.Path(ember.__file__).parent
sys.path.insert(0, str(ROOT.parent / "tools"))
import import_graph  # noqa: E402

# Tensor's and Storage's Python-level methods that belong to higher layers (backward and hooks:
# autograd; pickling: serialization; share_memory_: multiprocessing; storage(): TypedStorage)
ALLOWED_UPWARD = {
    ("ember._core.storage", "ember.multiprocessing.shared_memory"),
    ("ember._core.storage", "ember.serialization.pickling"),
    ("ember._core.tensor", "ember.autograd"),
    ("ember._core.tensor", "ember.autograd.graph"),
    ("ember._core.tensor", "ember.multiprocessing.shared_memory"),
    ("ember._core.tensor", "ember.serialization.pickling"),
    ("ember._core.tensor", "ember.storage"),
    # Tensor.detach as the aten.detach op while a __torch_dispatch__ handler must see it, and
    # Tensor's disabled __torch_dispatch__ running an op below the Python key
    ("ember._core.tensor", "ember._dispatch.dispatcher"),
    ("ember._core.python_key", "ember._dispatch.python_dispatch"),
    # Tensor.size(dim) given something other than an int: PyTorch's parser check and TypeError
    ("ember._core.tensor", "ember._bindings.arg_parser"),
    # stride()/is_contiguous() of a wrapper subclass made with dispatch_sizes_strides_policy=
    # "strides": its handler answers, through the metadata ops
    ("ember._core.tensor", "ember._aten.tensor_metadata"),
    # UntypedStorage.from_buffer within a FakeTensorMode: a meta storage, as in PyTorch
    ("ember._core.storage", "ember._subclasses.fake_tensor"),
}


@pytest.fixture(scope="module")
def edges():
    """ember's import graph, read from the source once for the tests below."""
    return import_graph.edges(import_graph.modules())


def test_no_import_cycle_at_module_level(edges):
    assert import_graph.cycles(edges, {"top"}) == []


def test_lower_layers_reach_up_only_from_tensor_methods_at_call_time(edges):
    up = import_graph.upward(edges)
    assert {(a, b) for a, b, _ in up} <= ALLOWED_UPWARD, up
    assert all(kinds == {"call"} for _, _, kinds in up), up


def test_no_injected_module_globals():
    pattern = re.compile(r"^\w+ = None\s*#.*\bset by\b", re.M)
    offenders = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*.py")
                 if pattern.search(p.read_text())]
    assert offenders == []


def test_top_level_holds_public_modules_and_packages():
    private = sorted(p.name for p in ROOT.glob("_*.py")
                     if p.name not in ("__init__.py", "__main__.py", "__future__.py", "__config__.py"))
    assert private == []


def test_namespace_has_no_helper_names():
    with pytest.raises(AttributeError):
        ember.np
    for name in ("D", "collections", "format_strides", "builtins", "warnings", "math"):
        assert not hasattr(ember, name), name


def test_namespace_names_are_pytorchs():
    torch = pytest.importorskip("torch")
    ours = {n for n in dir(ember) if not n.startswith("_")}
    theirs = {n for n in dir(torch) if not n.startswith("_")}
    # ember's own additions: explain, the torchvision-role package once something imports it,
    # spconv: the spconv-role package (sparse convolution), also there once something imports it,
    # and memory: the device-generic statistics/snapshots torch has only as torch.cuda.memory
    assert ours - theirs <= {"explain", "vision", "spconv", "memory"} and "explain" in ours


def test_typed_storage_as_torch():
    torch = pytest.importorskip("torch")
    results = []
    for lib in (torch, ember):
        t = lib.arange(6.0).view(2, 3)[1]
        lib.storage._set_always_warn_typed_storage_removal(True)  # it warns once per process
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                s = t.storage()
        finally:
            lib.storage._set_always_warn_typed_storage_removal(False)
        assert [str(w.message)[:30] for w in caught] == ["TypedStorage is deprecated. It"]
        s[0] = 7.0
        results.append((str(s.dtype), s.size(), len(s), s[4], s.tolist(), s.element_size(),
                        s.nbytes(), str(s.device), t.tolist(), repr(s)))
    assert results[0] == results[1]


def test_conj_goes_through_the_dispatcher():
    torch = pytest.importorskip("torch")
    data = np.array([1 + 2j, -3 + 0.5j])
    grads = []
    for lib in (torch, ember):
        z = lib.tensor(data, requires_grad=True)
        c = z.conj()
        assert c.requires_grad
        (c * lib.tensor([2 - 1j, 1 + 1j])).real.sum().backward()
        grads.append(z.grad.resolve_conj().numpy().copy())
        r = lib.ones(2, requires_grad=True)
        assert r.conj() is r  # a real tensor's conj is the tensor itself
    np.testing.assert_allclose(grads[0], grads[1])
    m = ember.empty(3, dtype=ember.complex64, device="meta").conj()
    assert m.device.type == "meta" and m.shape == (3,)
    with ember.explain() as ex:
        ember.tensor(data).conj()
    assert "_conj" in [r["op"] for r in ex.records]  # the lazy view op, not a computation


@pytest.fixture
def deterministic():
    yield
    ember.use_deterministic_algorithms(False)


def test_deterministic_mode_as_torch(deterministic):
    torch = pytest.importorskip("torch")
    try:
        for lib in (torch, ember):
            lib.use_deterministic_algorithms(True)
        for make in (lambda m: m.empty(3), lambda m: m.empty(2, dtype=m.int32),
                     lambda m: m.empty(2, dtype=m.bool), lambda m: m.empty_like(m.ones(2)),
                     lambda m: m.empty_strided((2, 2), (1, 2))):
            a, b = make(torch), make(ember)
            np.testing.assert_array_equal(a.numpy(), b.numpy())
        for lib in (torch, ember):
            x = lib.zeros(3)
            x.resize_(5)
            assert np.isnan(x.numpy()[3:]).all() and (x.numpy()[:3] == 0).all()
        for mode, expect in (("warn", (True, True, 1)), (2, (True, False, 2)),
                             ("default", (False, False, 0))):
            for lib in (torch, ember):
                lib.set_deterministic_debug_mode(mode)
                assert (lib.are_deterministic_algorithms_enabled(),
                        lib.is_deterministic_algorithms_warn_only_enabled(),
                        lib.get_deterministic_debug_mode()) == expect
        for lib in (torch, ember):
            with pytest.raises(TypeError):
                lib.use_deterministic_algorithms("yes")
    finally:
        torch.use_deterministic_algorithms(False)


def test_fill_uninitialized_memory_switch(deterministic):
    import ember.utils.deterministic as det
    ember.use_deterministic_algorithms(True)
    det.fill_uninitialized_memory = False
    try:
        assert not det.fill_uninitialized_memory
        ember.empty(4)  # left as it is: nothing to check but that it runs
    finally:
        det.fill_uninitialized_memory = True
    assert np.isnan(ember.empty(2).numpy()).all()
