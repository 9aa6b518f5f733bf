"""nn.Module machinery against PyTorch: hook handles survive pickling and deep copying (a lazy
module before its first forward), uninitialized state dicts load into lazy modules, and
operations on an UninitializedParameter raise PyTorch's ValueError. Also the Meta kernels of
native_layer_norm / native_group_norm (their values and gradients are rows of op_db_nn.py)."""
import copy
import pickle

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

LIBS = [torch, ember]


def _copies(m):
    return [pickle.loads(pickle.dumps(m)), copy.deepcopy(m)]


@pytest.mark.parametrize("lib", LIBS, ids=["torch", "ember"])
def test_lazy_linear_copies_work_and_leave_original_lazy(lib):
    m = lib.nn.LazyLinear(3)
    for c in _copies(m):
        # the copy's initialization hook is registered in the copy's own dict
        assert c._initialize_hook.hooks_dict_ref() is c._forward_pre_hooks
        assert len(c._forward_pre_hooks) == 1
        out = c(lib.randn(2, 4))
        assert tuple(out.shape) == (2, 3)
        assert tuple(c.weight.shape) == (3, 4)
        assert type(c.weight) is lib.nn.Parameter
        assert len(c._forward_pre_hooks) == 0
        # ... and removing it there leaves the original's hooks alone
        assert len(m._forward_pre_hooks) == 1
        assert type(m.weight).__name__ == "UninitializedParameter"
    assert tuple(m(lib.randn(2, 5)).shape) == (2, 3)
    assert tuple(m.weight.shape) == (3, 5)


def _forward_hook(module, args, kwargs, output):
    return output


def _pre_hook(module, args):
    return None


def _hook_counts(lib):
    m = lib.nn.Linear(2, 2)
    h = m.register_forward_hook(_forward_hook, with_kwargs=True, always_call=True)
    m.register_forward_pre_hook(_pre_hook)
    counts = []
    for c in _copies((m, h)):
        cm, ch = c
        ch.remove()
        counts.append((len(cm._forward_hooks), len(cm._forward_hooks_with_kwargs),
                       len(cm._forward_hooks_always_called), len(cm._forward_pre_hooks),
                       len(m._forward_hooks), len(m._forward_hooks_with_kwargs)))
    h.remove()
    counts.append((len(m._forward_hooks), len(m._forward_hooks_with_kwargs)))
    return counts


def test_copied_handle_removes_from_copy_only():
    assert _hook_counts(ember) == _hook_counts(torch)


@pytest.mark.parametrize("lib", LIBS, ids=["torch", "ember"])
def test_handle_of_dead_dict_pickles_to_dead_handle(lib):
    m = lib.nn.Linear(2, 2)
    h = pickle.loads(pickle.dumps(m.register_forward_pre_hook(_pre_hook)))
    assert h.hooks_dict_ref() is None   # the unpickled dict had no other owner
    h.remove()  # no error
    assert len(m._forward_pre_hooks) == 1
    # ids stay unique: new handles count on from the unpickled one
    assert m.register_forward_pre_hook(_pre_hook).id > h.id


def _load_uninitialized(lib):
    src = lib.nn.LazyLinear(3)
    dst = lib.nn.LazyLinear(3)
    result = dst.load_state_dict(src.state_dict())
    still_lazy = type(dst.weight).__name__
    shape = tuple(dst(lib.randn(2, 4)).shape)
    with pytest.raises(RuntimeError) as info:
        lib.nn.Linear(4, 3).load_state_dict(lib.nn.LazyLinear(3).state_dict())
    return (repr(result), list(result.missing_keys), still_lazy, shape,
            "uninitialized" in str(info.value))


def test_uninitialized_state_dict_loads_into_lazy_module():
    assert _load_uninitialized(ember) == _load_uninitialized(torch)


def test_initialized_state_dict_materializes_lazy_module():
    src = ember.nn.Linear(4, 3)
    dst = ember.nn.LazyLinear(3)
    dst.load_state_dict(src.state_dict())
    assert type(dst.weight) is ember.nn.Parameter
    np.testing.assert_array_equal(dst.weight.detach().numpy(), src.weight.detach().numpy())
    np.testing.assert_array_equal(dst.bias.detach().numpy(), src.bias.detach().numpy())


OPS_ON_UNINITIALIZED = {
    "p + 1": lambda lib, p: p + 1,
    "p * t": lambda lib, p: p * lib.ones(2),
    "t - p": lambda lib, p: lib.ones(2) - p,
    "p.exp()": lambda lib, p: p.exp(),
}


@pytest.mark.parametrize("expr", list(OPS_ON_UNINITIALIZED))
def test_op_on_uninitialized_parameter_raises_value_error(expr):
    f = OPS_ON_UNINITIALIZED[expr]
    with pytest.raises(Exception) as t_info:
        f(torch, torch.nn.UninitializedParameter())
    with pytest.raises(t_info.type, match="uninitialized parameter"):
        f(ember, ember.nn.UninitializedParameter())


def test_shape_mismatch_still_reports_broadcast_error():
    with pytest.raises(RuntimeError, match="must match the size"):
        ember.ones(2) + ember.ones(3)
    with pytest.raises(RuntimeError):
        ember.ones(2).add_(ember.ones(3))


NATIVE_NORM_CALLS = {
    "layer_norm": lambda lib, x, w: lib.native_layer_norm(x, [3, 4], w, None, 1e-5),
    "layer_norm_no_affine": lambda lib, x, w: lib.native_layer_norm(x, [4], None, None, 1e-5),
    "group_norm": lambda lib, x, w: lib.native_group_norm(x, w[:, 0], None, 2, 3, 4, 3, 1e-5),
}


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("call", list(NATIVE_NORM_CALLS))
def test_native_norm_meta_matches_torch_cpu(call, dtype):
    """ember's Meta kernels give what the CPU kernels give. (torch's own meta kernels differ
    from its CPU kernels in the dtype of float16/bfloat16 mean and rstd, so torch's CPU
    results are the reference here.)"""
    f = NATIVE_NORM_CALLS[call]
    results = []
    for lib, device in ((torch, "cpu"), (ember, "meta")):
        x = lib.zeros(2, 3, 4, device=device, dtype=getattr(lib, dtype))
        w = lib.ones(3, 4, device=device)   # float32: the mixed-dtype case for bfloat16
        outs = f(lib, x, w)
        results.append([(tuple(o.shape), str(o.dtype).split(".")[-1]) for o in outs])
        assert all(o.device.type == device for o in outs)
    assert results[1] == results[0]


def test_native_norm_stats_dtype_and_node_names():
    got = []
    for lib in LIBS:
        x = lib.randn(2, 3, 4).to(lib.bfloat16).requires_grad_()
        ln = lib.native_layer_norm(x, [4], lib.ones(4), None, 1e-5)
        gn = lib.native_group_norm(x, None, None, 2, 3, 4, 3, 1e-5)
        got.append([str(t.dtype) for t in ln + gn] +
                   [type(ln[0].grad_fn).__name__, type(gn[0].grad_fn).__name__,
                    type(lib.nn.functional.layer_norm(x, [4]).grad_fn).__name__])
    assert got[1] == got[0]


def test_batchnorm_load_without_version_keeps_num_batches_tracked():
    """A plain dict has no `_metadata` version: torch's BatchNorm (version 2) fills in its own
    num_batches_tracked instead of reporting it missing."""
    torch = pytest.importorskip("torch")
    results = []
    for lib in (ember, torch):
        m = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3))
        m(lib.ones(4, 2))
        sd = {k: v for k, v in m.state_dict().items() if k != "1.num_batches_tracked"}
        keys = m.load_state_dict(sd, strict=False)
        versioned = m.state_dict()
        del versioned["1.num_batches_tracked"]
        keys2 = m.load_state_dict(versioned, strict=False)
        results.append((keys.missing_keys, keys2.missing_keys, int(m[1].num_batches_tracked)))
    assert results[0] == results[1]
