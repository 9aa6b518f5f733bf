"""torch.load's environment variables (TORCH_FORCE_WEIGHTS_ONLY_LOAD,
TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD) and Module.to_empty, against PyTorch: for every setting of the
variables and of `weights_only` / `pickle_module`, ember.load and torch.load load the same
objects, refuse the same ones with the same exception type, and warn the same way."""
import fractions
import io
import pickle
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch", reason="torch is the oracle")

ENV = ("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD")
SETTINGS = [{}, {ENV[0]: "1"}, {ENV[1]: "1"}, {ENV[0]: "yes"}, {ENV[1]: "TRUE"},
            {ENV[1]: "y"}, {ENV[0]: "0", ENV[1]: "0"}, {ENV[0]: "no"}, {ENV[0]: "1", ENV[1]: "1"},
            {ENV[0]: "true", ENV[1]: "0"}]
CALLS = [{}, {"weights_only": True}, {"weights_only": False}, {"weights_only": None},
         {"pickle_module": pickle}, {"pickle_module": pickle, "weights_only": False},
         {"weights_only": True, "encoding": "latin1"}]


def _checkpoint(unsafe):
    """A torch-written checkpoint: tensors only, or with a global weights-only refuses."""
    obj = {"w": torch.arange(4.0)}
    if unsafe:
        obj["ratio"] = fractions.Fraction(1, 3)
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


def _outcome(lib, data, kwargs):
    """What loading gives: ('ok', keys), or ('raise', the builtin exception class), with the
    sorted warning messages."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = lib.load(io.BytesIO(data), **kwargs)
            outcome = ("ok", sorted(result), result["w"].tolist(), result.get("ratio"))
        except Exception as e:  # noqa: BLE001 -- the exception type is what is compared
            kind = next(c for c in type(e).__mro__ if c.__module__ == "builtins" or
                        c is pickle.UnpicklingError)
            outcome = ("raise", kind)
    messages = sorted(str(w.message) for w in caught
                      if "TORCH_FORCE" in str(w.message) or "pickle_load_args" in str(w.message))
    return outcome, messages


@pytest.mark.parametrize("unsafe", [False, True])
@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: ",".join(f"{k[6:12]}={v}" for k, v
                                                                      in s.items()) or "unset")
def test_env_vars_match_torch_load(monkeypatch, setting, unsafe):
    data = _checkpoint(unsafe)
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    for name, value in setting.items():
        monkeypatch.setenv(name, value)
    for kwargs in CALLS:
        theirs = _outcome(torch, data, dict(kwargs))
        ours = _outcome(ember, data, dict(kwargs))
        assert ours == theirs, (setting, kwargs)


def test_force_no_weights_only_warning_points_at_caller(monkeypatch):
    monkeypatch.setenv(ENV[1], "1")
    monkeypatch.delenv(ENV[0], raising=False)
    with pytest.warns(UserWarning, match="forcing weights_only=False") as record:
        ember.load(io.BytesIO(_checkpoint(True)))
    assert record[0].filename == __file__


def _model(lib, device):
    return lib.nn.Sequential(lib.nn.Linear(3, 4, device=device),
                             lib.nn.Sequential(lib.nn.BatchNorm1d(4, device=device)))


@pytest.mark.parametrize("recurse", [True, False])
def test_module_to_empty(recurse):
    results = []
    for lib in (ember, torch):
        m = _model(lib, "meta")
        assert m.to_empty(device=lib.device("cpu"), recurse=recurse) is m
        results.append([(n, t.device.type, tuple(t.shape), str(t.dtype), type(t).__name__,
                         t.requires_grad)
                        for n, t in list(m.named_parameters()) + list(m.named_buffers())])
    assert results[0] == results[1]


def test_module_to_empty_then_init_trains():
    m = _model(ember, "meta").to_empty(device="cpu")
    for p in m.parameters():
        ember.nn.init.normal_(p)
    m[1][0].reset_running_stats()
    m(ember.randn(5, 3)).sum().backward()
    assert all(np.isfinite(p.grad.numpy()).all() for p in m.parameters())


def test_module_to_empty_device_is_keyword_only():
    with pytest.raises(TypeError):
        _model(ember, "meta").to_empty("cpu")
    with pytest.raises(TypeError):
        _model(torch, "meta").to_empty("cpu")
