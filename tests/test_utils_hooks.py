"""ember.utils.hooks against torch.utils.hooks: RemovableHandle (extra_dict, pickling, context
manager) is the handle every register_*hook returns; full backward hooks through BackwardHook;
unserializable_hook / warn_if_has_hooks when a tensor with hooks is saved or pickled."""
import collections
import copy
import io
import pickle
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _libs():
    return (torch, ember)


def test_handle_is_the_one_class_everywhere():
    from ember.utils.hooks import RemovableHandle
    m = ember.nn.Linear(2, 2)
    t = ember.ones(2, requires_grad=True)
    opt = ember.optim.SGD(m.parameters(), lr=0.1)
    handles = [m.register_forward_hook(lambda *a: None),
               m.register_full_backward_hook(lambda *a: None),
               ember.nn.modules.module.register_module_forward_hook(lambda *a: None),
               t.register_hook(lambda g: g),
               (t * 2).grad_fn.register_hook(lambda *a: None),
               opt.register_step_pre_hook(lambda *a: None)]
    assert all(type(h) is RemovableHandle for h in handles)
    assert ember.autograd.graph.RemovableHandle is RemovableHandle
    for h in handles:
        h.remove()


def test_removable_handle_as_torch():
    results = []
    for lib in _libs():
        RH = lib.utils.hooks.RemovableHandle
        hooks, extra1, extra2 = (collections.OrderedDict() for _ in range(3))
        h = RH(hooks, extra_dict=[extra1, extra2])
        hooks[h.id], extra1[h.id], extra2[h.id] = "f", True, True
        single = RH(hooks, extra_dict=extra1)
        hooks[single.id], extra1[single.id] = "g", True
        state = h.__getstate__()
        out = [len(state), state[0] is hooks, [d is e for d, e in zip(state[2], (extra1, extra2))]]
        with single:
            pass
        out.append((list(hooks.values()), list(extra1.values())))
        h.remove()
        h.remove()  # twice is harmless
        out.append((len(hooks), len(extra1), len(extra2)))
        copied = pickle.loads(pickle.dumps((hooks, h)))
        out.append(type(copied[1]).__name__)
        dead = RH.__new__(RH)
        dead.__setstate__((None, 5))  # a dict gone: a dead reference
        dead.remove()
        out.append((dead.extra_dict_ref, RH.next_id > 5))
        results.append(out)
    assert results[0] == results[1]


def test_module_flags_cleared_on_remove():
    for lib in _libs():
        m = lib.nn.Linear(2, 2)
        h = m.register_forward_hook(lambda mod, args, kwargs, out: None, with_kwargs=True,
                                    always_call=True)
        p = m.register_forward_pre_hook(lambda mod, args, kwargs: None, with_kwargs=True)
        assert dict(m._forward_hooks_with_kwargs) == {h.id: True}
        assert dict(m._forward_hooks_always_called) == {h.id: True}
        assert dict(m._forward_pre_hooks_with_kwargs) == {p.id: True}
        m(lib.ones(1, 2))
        h.remove()
        p.remove()
        assert not m._forward_hooks and not m._forward_hooks_with_kwargs
        assert not m._forward_hooks_always_called and not m._forward_pre_hooks_with_kwargs
        c = copy.deepcopy(m)
        g = c.register_forward_hook(lambda *a, **k: None, with_kwargs=True)
        assert c._forward_hooks_with_kwargs[g.id] and g.id not in m._forward_hooks_with_kwargs


def test_full_backward_hooks_as_torch():
    seen = []
    for lib in _libs():
        lib.manual_seed(0)
        m = lib.nn.Linear(3, 2)
        got = []
        m.register_full_backward_pre_hook(lambda mod, go: got.append(("pre", go[0].shape)))
        m.register_full_backward_hook(
            lambda mod, gi, go: got.append(("post", [g.shape if g is not None else None
                                                     for g in gi], go[0].sum().item())))
        x = lib.tensor(np.arange(6.0).reshape(2, 3), dtype=lib.float32, requires_grad=True)
        (m(x) * 3).sum().backward()
        got.append(x.grad.numpy().round(5).tolist())
        m2 = lib.nn.Linear(3, 2)
        m2.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 0,))
        x2 = lib.ones(1, 3, requires_grad=True)
        m2(x2).sum().backward()
        got.append(x2.grad.numpy().tolist())
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            m3 = lib.nn.Linear(3, 2)
            m3.register_full_backward_hook(lambda mod, gi, go: got.append(gi))
            m3(lib.ones(1, 3)).sum().backward()
        got.append([str(x.message)[:40] for x in w])
        seen.append([tuple(map(str, g)) if isinstance(g, tuple) else g for g in got])
    assert seen[0] == seen[1]


def test_backward_hook_wrong_count_raises():
    for lib in _libs():
        m = lib.nn.Linear(3, 2)
        m.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
        with pytest.raises(RuntimeError, match="invalid number of grad_input, got 2, but "
                                               "expected 1"):
            m(lib.ones(1, 3, requires_grad=True)).sum().backward()


def test_warn_if_has_hooks_on_save_and_pickle():
    def hook(g):
        return g
    results = []
    for lib in _libs():
        t = lib.ones(2, requires_grad=True)
        t.register_hook(hook)
        quiet = lib.ones(2, requires_grad=True)
        quiet.register_hook(lib.utils.hooks.unserializable_hook(lambda g: g))
        out = []
        for save in (lambda x: pickle.dumps(x), lambda x: lib.save(x, io.BytesIO())):
            for tensor in (t, quiet, lib.ones(2)):
                with warnings.catch_warnings(record=True) as w:
                    warnings.simplefilter("always")
                    save(tensor)
                out.append([str(x.message).replace("torch", "T").replace("ember", "T")
                            .split(" at 0x")[0] for x in w])
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lib.utils.hooks.warn_if_has_hooks(t)
        out.append(len(w))
        results.append(out)
    assert results[0] == results[1]
    assert results[0][0] == ["backward hook <function test_warn_if_has_hooks_on_save_and_pickle."
                             "<locals>.hook"]
