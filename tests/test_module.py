"""nn.Module machinery and the containers against torch: each scenario is one function run with
`lib` = ember and then torch, returning a log of reprs, values, exceptions and hook calls that
must come out identical."""
import warnings
from collections import OrderedDict

import pytest
import torch

import ember


def catch(fn):
    try:
        return ("ok", repr(fn()))
    except Exception as e:
        return (type(e).__name__, str(e).replace("ember.", "torch."))


def same(scenario):
    assert scenario(ember) == scenario(torch)


def _net(lib, seed=0):
    lib.manual_seed(seed)
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 4)
            self.register_buffer("running", lib.zeros(4))
            self.register_buffer("scratch", lib.ones(2), persistent=False)

        def forward(self, x):
            return self.fc(x) + self.running

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.block = Block()
            self.head = nn.Sequential(nn.ReLU(), nn.Linear(4, 2))
            self.scale = nn.Parameter(lib.ones(1))

        def forward(self, x):
            return self.head(self.block(x)) * self.scale

    return Net()


def test_registration_errors():
    def scenario(lib):
        nn = lib.nn
        log = []

        class Early(nn.Module):
            def __init__(self):
                self.w = nn.Parameter(lib.ones(1))

        class EarlyMod(nn.Module):
            def __init__(self):
                self.m = nn.Linear(1, 1)

        log.append(catch(Early))
        log.append(catch(EarlyMod))
        m = nn.Module()
        m.w = nn.Parameter(lib.ones(2))
        m.sub = nn.Linear(1, 1)
        m.register_buffer("b", lib.zeros(1))
        m.plain = 3
        log += [catch(lambda: m.register_parameter("a.b", None)),
                catch(lambda: m.register_parameter("", None)),
                catch(lambda: m.register_parameter(1, None)),
                catch(lambda: m.register_parameter("plain", None)),
                catch(lambda: m.register_parameter("x", lib.ones(1))),
                catch(lambda: m.register_parameter("y", nn.Parameter(lib.ones(1)) * 2)),
                catch(lambda: m.register_buffer("a.b", None)),
                catch(lambda: m.register_buffer("", None)),
                catch(lambda: m.register_buffer("w", lib.ones(1))),
                catch(lambda: m.register_buffer("c", 3)),
                catch(lambda: m.add_module("x", 3)),
                catch(lambda: m.add_module("a.b", nn.ReLU())),
                catch(lambda: m.add_module("", nn.ReLU())),
                catch(lambda: m.add_module("plain", nn.ReLU())),
                catch(lambda: setattr(m, "w", lib.ones(2))),
                catch(lambda: setattr(m, "sub", 3)),
                catch(lambda: setattr(m, "b", "x")),
                catch(lambda: m.missing),
                catch(lambda: nn.Module(3))]
        m.b = lib.ones(3)  # a tensor assigned to a buffer name stays a buffer
        m.w = None
        m.nb = nn.Buffer(lib.ones(1), persistent=False)
        log.append((isinstance(m.nb, nn.Buffer), isinstance(m.b, nn.Buffer)))
        log.append(sorted(m.state_dict()))
        log.append([n for n, _ in m.named_buffers()])
        del m.sub, m.b, m.plain
        log.append((list(m._modules), list(m._buffers), list(m._parameters)))
        m.w = nn.Parameter(lib.ones(1))
        m.w2 = m.w
        log.append([n for n, _ in m.named_parameters(remove_duplicate=False)])
        return log
    same(scenario)


def test_get_submodule_parameter_buffer():
    def scenario(lib):
        net = _net(lib)
        log = [repr(net.get_submodule("head.1")), net.get_parameter("block.fc.bias").shape,
               net.get_buffer("block.running").shape, net.get_submodule("") is net]
        for fn, target in [(net.get_submodule, "block.nope"), (net.get_submodule, "scale"),
                           (net.get_parameter, "block.running"), (net.get_buffer, "scale"),
                           (net.get_parameter, "head.0.weight"), (net.get_buffer, "x.y")]:
            log.append(catch(lambda: fn(target)))
        net.set_submodule("head.0", lib.nn.Tanh())
        net.set_submodule("block.extra", lib.nn.ReLU())
        log += [repr(net), catch(lambda: net.set_submodule("", lib.nn.ReLU())),
                catch(lambda: net.set_submodule("head.0", 3)),
                catch(lambda: net.set_submodule("block.nope", lib.nn.ReLU(), strict=True)),
                catch(lambda: net.set_submodule("scale", lib.nn.ReLU()))]
        return log
    same(scenario)


def test_named_iteration():
    def scenario(lib):
        net = _net(lib)
        net.again = net.block  # shared submodule
        log = [[n for n, _ in net.named_modules()],
               [n for n, _ in net.named_modules(prefix="p", remove_duplicate=False)],
               [n for n, _ in net.named_children()],
               [n for n, _ in net.named_parameters(prefix="q")],
               [n for n, _ in net.named_parameters(recurse=False)],
               [n for n, _ in net.named_parameters(remove_duplicate=False)],
               [n for n, _ in net.named_buffers()],
               [n for n, _ in net.block.named_buffers(recurse=False)],
               len(list(net.parameters())), len(list(net.children())), len(list(net.modules()))]
        visited = []
        net.apply(lambda m: visited.append(type(m).__name__))
        log.append(visited)
        return log
    same(scenario)


def test_modes_conversions_and_grads():
    def scenario(lib):
        net = _net(lib)
        log = [net.eval().head[1].training, net.train().block.training,
               catch(lambda: net.train("yes"))]
        net.requires_grad_(False)
        log.append([p.requires_grad for p in net.parameters()])
        net.requires_grad_()
        net(lib.ones(2, 3)).sum().backward()
        net.zero_grad(set_to_none=False)
        log.append([p.grad.abs().sum().item() for p in net.parameters()])
        net.zero_grad()
        log.append([p.grad for p in net.parameters()])
        for conv in (lambda m: m.double(), lambda m: m.half(), lambda m: m.bfloat16(),
                     lambda m: m.float(), lambda m: m.to(lib.float64),
                     lambda m: m.to("cpu", non_blocking=True), lambda m: m.cpu(),
                     lambda m: m.to(device="cpu", dtype=lib.float32),
                     lambda m: m.type(lib.float64)):
            conv(net)
            log.append([str(t.dtype) for t in net.state_dict().values()])
        net.block.register_buffer("count", lib.tensor(3))
        net.to(lib.float16)
        log.append(str(net.block.count.dtype))
        log.append(catch(lambda: net.to(lib.int32)))
        return log
    same(scenario)


def test_forward_hooks_order_kwargs_always_call():
    def scenario(lib):
        nn = lib.nn
        log = []

        class Add(nn.Module):
            def forward(self, x, y=0, fail=False):
                if fail:
                    raise ValueError("boom")
                return x + y

        m = Add()
        h1 = m.register_forward_pre_hook(lambda mod, args: log.append(("pre1", args)))
        m.register_forward_pre_hook(lambda mod, args: log.append(("pre0",)), prepend=True)
        m.register_forward_pre_hook(lambda mod, args, kw: (args, {**kw, "y": 10}),
                                    with_kwargs=True)
        m.register_forward_hook(lambda mod, args, out: log.append(("post", out)) or out * 2)
        m.register_forward_hook(lambda mod, args, kw, out: log.append(("postkw", kw, out)),
                                with_kwargs=True)
        m.register_forward_hook(lambda mod, args, out: log.append(("always", out)),
                                always_call=True)
        log.append(m(1, y=2))
        h1.remove()
        log.append(m(5))
        log.append(catch(lambda: m(1, fail=True)))
        m.register_forward_pre_hook(lambda mod, args, kw: 3, with_kwargs=True)
        log.append(catch(lambda: m(1)))
        g1 = nn.modules.module.register_module_forward_pre_hook(
            lambda mod, args: log.append(("gpre", type(mod).__name__)))
        g2 = nn.modules.module.register_module_forward_hook(
            lambda mod, args, out: log.append(("gpost", type(mod).__name__)))
        try:
            nn.Sequential(nn.Identity())(lib.ones(1))
        finally:
            g1.remove()
            g2.remove()
        nn.Identity()(1)
        return [repr(x) for x in log]
    same(scenario)


def test_full_backward_hooks():
    def scenario(lib):
        nn = lib.nn
        log = []
        lin = _net(lib).block.fc
        lin.register_full_backward_pre_hook(
            lambda m, go: log.append(("pre", [g.tolist() for g in go])) or (go[0] * 3,))
        lin.register_full_backward_hook(
            lambda m, gi, go: log.append(("post", [g if g is None else g.mul(1e4).round().tolist() for g in gi]))
            or (None if gi[0] is None else (gi[0] * 2,)))
        h = nn.modules.module.register_module_full_backward_hook(
            lambda m, gi, go: log.append(("global", type(m).__name__)))
        x = lib.ones(2, 3, requires_grad=True)
        try:
            lin(x).sum().backward()
        finally:
            h.remove()
        log.append(x.grad.mul(1e4).round().tolist())
        log.append([round(v, 5) for v in lin.weight.grad.flatten().tolist()])
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lin(lib.ones(1, 3)).sum().backward()
        log.append([str(x.message)[:60] for x in w])
        return log
    same(scenario)


def test_state_dict_keys_metadata_and_hooks():
    def scenario(lib):
        net = _net(lib)
        log = []
        sd = net.state_dict()
        log.append([(k, tuple(v.shape), v.requires_grad) for k, v in sd.items()])
        log.append(dict(sd._metadata))
        log.append(list(net.state_dict(prefix="model.").keys()))
        log.append([type(v).__name__ for v in net.state_dict(keep_vars=True).values()])
        net.block.register_state_dict_pre_hook(
            lambda m, prefix, keep_vars: log.append(("pre", prefix, keep_vars)))
        net._register_state_dict_hook(
            lambda m, sd, prefix, meta: log.append(("post", len(sd), prefix, meta)))
        net.state_dict()
        return log
    same(scenario)


def test_load_state_dict_strict_assign_and_errors():
    def scenario(lib):
        net = _net(lib)
        src = _net(lib, seed=1).state_dict()
        log = []
        net.block.register_load_state_dict_post_hook(
            lambda m, keys: log.append(("post", list(keys.missing_keys))))
        log.append(repr(net.load_state_dict(src)))
        log.append(net.block.fc.weight.sum().item() == src["block.fc.weight"].sum().item())
        bad = OrderedDict(src)
        del bad["scale"]
        bad["extra.weight"] = lib.ones(1)
        bad["block.fc.bias"] = lib.ones(7)
        bad["head.1.weight"] = [1.0]
        log.append(catch(lambda: net.load_state_dict(bad)))
        del bad["block.fc.bias"], bad["head.1.weight"]
        log.append(repr(net.load_state_dict(bad, strict=False)))
        log.append(catch(lambda: net.load_state_dict([1])))
        new = lib.zeros(4)
        src["block.fc.bias"] = new
        net.load_state_dict(src, assign=True)
        log.append((net.block.fc.bias.data_ptr() == new.data_ptr(),
                    type(net.block.fc.bias).__name__, net.block.fc.bias.requires_grad))
        return log
    same(scenario)


def test_extra_state_and_overridable_load():
    def scenario(lib):
        nn = lib.nn
        log = []

        class Stateful(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(1, 1)
                self.counter = 0

            def get_extra_state(self):
                return {"counter": self.counter}

            def set_extra_state(self, state):
                self.counter = state["counter"]

            def _load_from_state_dict(self, state_dict, prefix, *args):
                log.append(("load", prefix, sorted(state_dict)))
                super()._load_from_state_dict(state_dict, prefix, *args)

        outer = nn.Sequential(Stateful())
        outer[0].counter = 7
        sd = outer.state_dict()
        log.append(list(sd))
        fresh = nn.Sequential(Stateful())
        fresh.load_state_dict(sd)
        log.append(fresh[0].counter)
        del sd["0._extra_state"]
        log.append(catch(lambda: fresh.load_state_dict(sd)))
        log.append(catch(lambda: nn.Sequential(nn.Linear(1, 1)).load_state_dict(
            fresh.state_dict())))
        return log
    same(scenario)


def test_repr_and_parameter():
    def scenario(lib):
        nn = lib.nn
        net = _net(lib)
        net.layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)] + [nn.ReLU()])
        net.heads = nn.ModuleDict({"a": nn.Identity(), "b": nn.Tanh()})
        net.empty = nn.ModuleList()
        net.none = None
        p = nn.Parameter(lib.ones(2))
        return [repr(net), repr(p), repr(nn.Parameter(lib.ones(1), requires_grad=False)),
                p.requires_grad, repr(nn.Module()), nn.Linear(1, 2).extra_repr()]
    same(scenario)


def test_sequential_operations():
    def scenario(lib):
        nn = lib.nn
        a, b, c = nn.ReLU(), nn.Tanh(), nn.Sigmoid()
        s = nn.Sequential(a, b, c)
        log = [repr(s[1:]), repr(s[-1]), catch(lambda: s[3]), len(s)]
        s[0] = nn.Identity()
        del s[1]
        log.append(list(s._modules))
        s.insert(1, nn.GELU())
        s.append(nn.ReLU())
        s.extend([nn.Tanh()])
        log.append(repr(s))
        log.append(repr(s.pop(0)))
        log.append(list(s._modules))
        log += [repr(s + nn.Sequential(a)), repr(nn.Sequential(a, b) * 2),
                repr(2 * nn.Sequential(a)), catch(lambda: s + 1), catch(lambda: s * 0),
                catch(lambda: s * 1.5), catch(lambda: s.insert(9, a)),
                catch(lambda: s.insert(0, 3))]
        t = nn.Sequential(a)
        t += nn.Sequential(b)
        t *= 2
        log.append(repr(t))
        del t[1:3]
        log.append(repr(t))
        od = nn.Sequential(OrderedDict([("first", a), ("second", b)]))
        log += [repr(od), repr(od[1:]), od(lib.ones(1)).tolist()]
        return log
    same(scenario)


def test_module_list_and_dict():
    def scenario(lib):
        nn = lib.nn
        ml = nn.ModuleList([nn.ReLU(), nn.Tanh()])
        ml.append(nn.ReLU())
        ml.insert(0, nn.Identity())
        ml += [nn.ReLU()]
        log = [repr(ml), repr(ml[1:3]), repr(ml[-1]), catch(lambda: ml[9]),
               catch(lambda: ml.extend(3)), repr(ml + nn.ModuleList([nn.Tanh()]))]
        ml[0] = nn.Sigmoid()
        del ml[1]
        log.append(repr(ml.pop(-1)))
        log.append(repr(ml))
        md = nn.ModuleDict([("x", nn.ReLU()), ("y", nn.Tanh())])
        md["z"] = nn.Identity()
        del md["x"]
        log += [repr(md), list(md.keys()), "y" in md, len(md), repr(md.pop("y")),
                catch(lambda: md.update(3)), catch(lambda: md.update([("a",)])),
                catch(lambda: md.update([3]))]
        md.clear()
        log.append(repr(md))
        return log
    same(scenario)


def test_parameter_list_and_dict():
    def scenario(lib):
        nn = lib.nn
        pl = nn.ParameterList([nn.Parameter(lib.ones(2, 3)), lib.zeros(4), "text"])
        pl.append(lib.ones(1, dtype=lib.float64))
        log = [repr(pl), len(pl), [n for n, _ in pl.named_parameters()], repr(pl[1:]),
               type(pl[1]).__name__, catch(lambda: pl[7]), catch(lambda: pl.extend(lib.ones(1))),
               catch(lambda: pl(1))]
        pd = nn.ParameterDict({"b": lib.ones(2), "a": nn.Parameter(lib.zeros(1))})
        pd["c"] = 5
        pd.update(OrderedDict([("z", lib.ones(1))]))
        log += [repr(pd), list(pd.keys()), [n for n, _ in pd.named_parameters()],
                "a" in pd, pd.get("nope", 1), catch(lambda: pd[1]), repr(pd.pop("c")),
                len(pd), list(pd.state_dict())]
        log.append(catch(lambda: pd(1)))
        return log
    same(scenario)


def test_share_memory():
    net = _net(ember).share_memory()
    assert all(t.is_shared() for t in net.state_dict().values())


@pytest.mark.parametrize("name", ["register_module_forward_pre_hook",
                                  "register_module_forward_hook",
                                  "register_module_full_backward_hook",
                                  "register_module_full_backward_pre_hook"])
def test_global_hook_functions_exist(name):
    assert callable(getattr(ember.nn.modules.module, name))


def test_train_calls_each_childs_train():
    def scenario(lib):
        nn = lib.nn

        class Frozen(nn.Linear):
            def train(self, mode=True):
                return super().train(False)

        net = nn.Sequential(Frozen(1, 1), nn.ReLU())
        net.train()
        hooked = nn.Linear(1, 1)
        hooked.register_state_dict_post_hook(lambda *a: {})
        return [m.training for m in net.modules()], catch(hooked.state_dict)
    same(scenario)


def test_pickle_and_deepcopy_keep_hooks_and_fill_missing_state():
    import copy
    import pickle
    nn = ember.nn
    net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    calls = []
    net.register_forward_hook(print)  # a picklable hook
    clone = pickle.loads(pickle.dumps(net))
    assert list(clone.state_dict()) == list(net.state_dict())
    assert len(clone._forward_hooks) == 1
    state = dict(net.__dict__)
    del state["_backward_hooks"], state["_forward_hooks_with_kwargs"]
    old = object.__new__(type(net))
    old.__setstate__(state)
    old._forward_hooks.clear()
    assert old(ember.ones(1, 3)).shape == (1, 2)
    deep = copy.deepcopy(net)
    deep._forward_hooks.clear()
    deep.register_forward_hook(lambda m, a, o: calls.append(1))
    deep(ember.ones(1, 3))
    assert calls == [1]
