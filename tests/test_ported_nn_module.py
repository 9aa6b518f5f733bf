"""Checks ported from PyTorch's test/test_nn.py, test/nn/test_module_hooks.py, test/test_optim.py
and test/test_serialization.py (module state, hooks, repr, state_dict, optimizer state), run
against torch and ember."""
import io

import pytest

from _ported import same


def _net(L):
    L.manual_seed(0)
    return L.nn.Sequential(L.nn.Linear(3, 4), L.nn.ReLU(), L.nn.Linear(4, 2))


def _state_dict_keys(L):
    m = L.nn.Module()
    m.register_buffer("persistent", L.ones(2))
    m.register_buffer("transient", L.zeros(2), persistent=False)
    m.register_parameter("w", L.nn.Parameter(L.ones(1)))
    m.register_buffer("none_buffer", None)
    m.lin = L.nn.Linear(1, 1)
    return (list(m.state_dict()), [n for n, _ in m.named_buffers()], [n for n, _ in m.named_parameters()],
            m._non_persistent_buffers_set)


def _register_buffer_errors(L):
    m = L.nn.Module()
    m.x = 1
    out = []
    for args in [("x", L.ones(1)), ("a.b", L.ones(1)), ("", L.ones(1)), ("y", 3)]:
        try:
            m.register_buffer(*args)
        except Exception as e:
            out.append((type(e).__name__, str(e)))
    return out


def _register_parameter_errors(L):
    m = L.nn.Module()
    out = []
    for args in [("a.b", None), ("w", L.ones(1)), ("", None)]:
        try:
            m.register_parameter(*args)
        except Exception as e:
            out.append((type(e).__name__, str(e)))
    m.register_buffer("buf", L.ones(1))
    try:
        m.register_parameter("buf", None)
    except Exception as e:
        out.append((type(e).__name__, str(e)))
    try:
        m.buf = L.nn.Parameter(L.ones(1))
    except Exception as e:
        out.append((type(e).__name__, str(e)))
    try:
        m.lin = L.nn.Linear(1, 1)
        m.lin = L.ones(1)
    except Exception as e:
        out.append((type(e).__name__, str(e)))
    return out


def _load_state_dict_strict(L):
    net = _net(L)
    sd = net.state_dict()
    sd["extra"] = L.ones(1)
    del sd["0.bias"]
    return L.nn.Sequential(L.nn.Linear(3, 4), L.nn.ReLU(), L.nn.Linear(4, 2)).load_state_dict(sd)


def _load_state_dict_nonstrict(L):
    net = _net(L)
    sd = net.state_dict()
    sd["extra"] = L.ones(1)
    del sd["0.bias"]
    res = net.load_state_dict(sd, strict=False)
    return res.missing_keys, res.unexpected_keys, type(res).__name__, repr(res)


def _load_state_dict_size_mismatch(L):
    net = _net(L)
    sd = net.state_dict()
    sd["0.weight"] = L.ones(5, 3)
    sd["2.bias"] = L.ones(3)
    return net.load_state_dict(sd, strict=False)


def _load_state_dict_assign(L):
    net = _net(L)
    with L.device("meta"):
        meta = L.nn.Sequential(L.nn.Linear(3, 4), L.nn.ReLU(), L.nn.Linear(4, 2))
    res = meta.load_state_dict(net.state_dict(), assign=True)
    p = meta[0].weight
    return (str(res), type(p).__name__, p.requires_grad, p.device.type, p, meta[2].bias,
            p is net[0].weight)


def _load_state_dict_keeps_param_identity(L):
    net = _net(L)
    w = net[0].weight
    net.load_state_dict({k: v * 2 for k, v in net.state_dict().items()})
    return net[0].weight is w, w


def _load_state_dict_not_mapping(L):
    _net(L).load_state_dict([1, 2])


def _state_dict_prefix_and_destination(L):
    net = _net(L)
    d = {}
    out = net.state_dict(destination=d, prefix="model.")
    return out is d, list(d), list(net.state_dict(keep_vars=True).values())[0].requires_grad, \
        list(net.state_dict().values())[0].requires_grad, type(net.state_dict()).__name__


def _state_dict_hooks(L):
    net = L.nn.Linear(2, 2)
    log = []
    net.register_state_dict_pre_hook(lambda m, prefix, keep_vars: log.append(("pre", prefix)))
    net.register_load_state_dict_post_hook(lambda m, keys: log.append(("post", list(keys.missing_keys))))
    net.register_load_state_dict_pre_hook(
        lambda sd, prefix, *a: log.append(("load_pre", prefix, sorted(sd))))
    sd = net.state_dict()
    net.load_state_dict(sd)
    return log


def _module_repr(L):
    class Mine(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = L.nn.Conv2d(1, 2, 3, stride=2, padding=1, bias=False)
            self.seq = L.nn.Sequential(L.nn.Linear(2, 3), L.nn.Dropout(0.1), L.nn.BatchNorm1d(3))
            self.lst = L.nn.ModuleList([L.nn.ReLU(), L.nn.ReLU(), L.nn.Tanh()])
            self.dct = L.nn.ModuleDict({"a": L.nn.Identity()})
            self.emb = L.nn.Embedding(10, 3, padding_idx=0)

        def extra_repr(self):
            return "custom=1"
    return repr(Mine()), repr(L.nn.LSTM(2, 3, num_layers=2, batch_first=True)), \
        repr(L.nn.MultiheadAttention(4, 2)), repr(L.nn.LayerNorm(4, elementwise_affine=False)), \
        repr(L.nn.MaxPool2d(2)), repr(L.nn.Upsample(scale_factor=2)), repr(L.nn.Flatten()), \
        repr(L.nn.Softmax(dim=1)), repr(L.nn.CrossEntropyLoss(label_smoothing=0.1)), \
        repr(L.nn.TransformerEncoderLayer(4, 2, 8))


def _parameter_repr(L):
    L.manual_seed(0)
    p = L.nn.Parameter(L.ones(2))
    return repr(p), repr(L.nn.Parameter(L.ones(1), requires_grad=False)), repr(L.nn.Buffer(L.zeros(1)))


def _named_modules_duplicates(L):
    lin = L.nn.Linear(1, 1)
    seq = L.nn.Sequential(lin, lin, L.nn.Sequential(lin))
    return ([n for n, _ in seq.named_modules()], [n for n, _ in seq.named_modules(remove_duplicate=False)],
            [n for n, _ in seq.named_parameters()], [n for n, _ in seq.named_parameters(remove_duplicate=False)],
            len(list(seq.parameters())), [n for n, _ in seq.named_children()],
            [n for n, _ in seq.named_modules(prefix="root")])


def _shared_param_state_dict(L):
    lin = L.nn.Linear(1, 1)
    seq = L.nn.Sequential(lin, lin)
    return list(seq.state_dict())


def _module_hooks(L):
    lin = _net(L)
    log = []
    h1 = lin.register_forward_pre_hook(lambda m, args: log.append(("pre", len(args))))
    lin.register_forward_hook(lambda m, args, out: log.append(("fwd", tuple(out.shape))))
    lin.register_forward_pre_hook(lambda m, args, kwargs: (log.append(("prek", sorted(kwargs))), None)[1],
                                  with_kwargs=True)
    lin[0].register_full_backward_hook(lambda m, gi, go: log.append(("bwd", [g is None for g in gi],
                                                                    [tuple(g.shape) for g in go])))
    lin[0].register_full_backward_pre_hook(lambda m, go: log.append(("bwdpre", len(go))))
    x = L.ones(2, 3, requires_grad=True)
    lin(x).sum().backward()
    h1.remove()
    lin(x)
    return log


def _forward_hook_replaces_output(L):
    lin = _net(L)
    lin.register_forward_hook(lambda m, args, out: out * 0)
    lin.register_forward_pre_hook(lambda m, args: (args[0] + 1,))
    return lin(L.ones(1, 3))


def _forward_hook_always_call(L):
    class Boom(L.nn.Module):
        def forward(self, x):
            raise ValueError("boom")
    m = Boom()
    log = []
    m.register_forward_hook(lambda m, a, o: log.append("called"), always_call=True)
    try:
        m(L.ones(1))
    except ValueError:
        pass
    return log


def _global_hooks(L):
    log = []
    h = L.nn.modules.module.register_module_forward_hook(lambda m, a, o: log.append(type(m).__name__))
    try:
        _net(L)(L.ones(1, 3))
    finally:
        h.remove()
    return log


def _train_eval_requires_grad(L):
    net = L.nn.Sequential(L.nn.Linear(2, 2), L.nn.Dropout())
    a = net.eval()
    flags = [m.training for m in net.modules()]
    net.train()
    b = net.requires_grad_(False)
    return a is net, b is net, flags, [m.training for m in net.modules()], [p.requires_grad for p in net.parameters()]


def _apply_and_to(L):
    net = _net(L)
    net.double()
    d = [p.dtype for p in net.parameters()]
    net.to(L.float16)
    h = [p.dtype for p in net.parameters()]
    net.half().float()
    w = net[0].weight
    net.zero_grad()
    net.to(dtype=L.float32)
    return d, h, net[0].weight is w, w.grad


def _zero_grad_set_to_none(L):
    net = _net(L)
    net(L.ones(1, 3)).sum().backward()
    net.zero_grad(set_to_none=False)
    g = net[0].weight.grad
    net.zero_grad()
    return g, net[0].weight.grad


def _getattr_error(L):
    return _net(L).nonexistent


def _delattr(L):
    net = L.nn.Linear(1, 1)
    del net.bias
    net.register_buffer("b", L.ones(1))
    del net.b
    return list(net.state_dict()), hasattr(net, "bias")


def _get_submodule(L):
    net = L.nn.Sequential(L.nn.Sequential(L.nn.Linear(1, 1)))
    return (type(net.get_submodule("0.0")).__name__, net.get_parameter("0.0.weight").shape,
            type(net.get_submodule("")).__name__)


def _get_submodule_error(L):
    return L.nn.Sequential(L.nn.Linear(1, 1)).get_submodule("0.foo")


def _sequential_indexing(L):
    net = L.nn.Sequential(L.nn.Linear(1, 2), L.nn.ReLU(), L.nn.Linear(2, 1))
    net.append(L.nn.Tanh())
    net.insert(1, L.nn.Identity())
    del net[2]
    return [type(m).__name__ for m in net], type(net[1:]).__name__, len(net[-2:]), [n for n, _ in net.named_children()]


def _module_list_ops(L):
    ml = L.nn.ModuleList([L.nn.ReLU()])
    ml += [L.nn.Tanh()]
    ml.extend([L.nn.Sigmoid()])
    ml.insert(0, L.nn.Identity())
    return [type(m).__name__ for m in ml], type(ml[1:]).__name__, len(ml), list(dict(ml.named_children()))


def _parameter_list_dict(L):
    pl = L.nn.ParameterList([L.nn.Parameter(L.ones(1)), L.ones(2)])
    pd = L.nn.ParameterDict({"a": L.nn.Parameter(L.ones(1))})
    pd["b"] = L.ones(2)
    return [type(p).__name__ for p in pl], [p.requires_grad for p in pl], list(pd.keys()), \
        type(pd["b"]).__name__, [n for n, _ in L.nn.Sequential().named_parameters()]


def _optimizer_state_dict(L):
    net = _net(L)
    opt = L.optim.Adam(net.parameters(), lr=0.1, weight_decay=0.01, amsgrad=True)
    for _ in range(2):
        opt.zero_grad()
        net(L.ones(2, 3)).pow(2).sum().backward()
        opt.step()
    sd = opt.state_dict()
    net2 = _net(L)
    opt2 = L.optim.Adam(net2.parameters(), lr=0.5)
    opt2.load_state_dict(sd)
    sd2 = opt2.state_dict()
    return (sorted(sd), sd["param_groups"], sorted(sd["state"]), sorted(sd["state"][0]),
            sd["state"][0]["step"], sd["state"][0]["exp_avg"], sd2["param_groups"][0]["lr"],
            sd2["state"][3]["max_exp_avg_sq"])


def _optimizer_load_mismatch(L):
    net = _net(L)
    opt = L.optim.SGD(net.parameters(), lr=0.1)
    sd = opt.state_dict()
    sd["param_groups"][0]["params"] = [0, 1]
    opt.load_state_dict(sd)


def _optimizer_group_errors(L):
    p = L.nn.Parameter(L.ones(1))
    out = []
    for make in [lambda: L.optim.SGD([p, p], lr=0.1), lambda: L.optim.SGD([], lr=0.1),
                 lambda: L.optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1),
                 lambda: L.optim.SGD([p], lr=-1), lambda: L.optim.Adam([p], betas=(1.5, 0.9)),
                 lambda: L.optim.SGD(p, lr=0.1), lambda: L.optim.SGD([L.ones(1)], lr=0.1)]:
        try:
            make()
            out.append(None)
        except Exception as e:
            out.append(type(e).__name__)
    return out


def _optimizer_add_param_group(L):
    a, b = L.nn.Parameter(L.ones(1)), L.nn.Parameter(L.ones(1))
    opt = L.optim.SGD([a], lr=0.1, momentum=0.9)
    opt.add_param_group({"params": b, "lr": 0.01})
    (a * 2 + b * 3).sum().backward()
    opt.step()
    return opt.state_dict()["param_groups"], a, b, repr(opt)


def _optimizer_step_closure(L):
    net = _net(L)
    opt = L.optim.LBFGS(net.parameters(), lr=0.5, max_iter=3)

    def closure():
        opt.zero_grad()
        loss = net(L.ones(2, 3)).pow(2).sum()
        loss.backward()
        return loss
    loss = opt.step(closure)
    return loss, net[0].weight


def _optimizer_hooks(L):
    net = _net(L)
    opt = L.optim.SGD(net.parameters(), lr=0.1)
    log = []
    opt.register_step_pre_hook(lambda o, a, k: log.append("pre"))
    opt.register_step_post_hook(lambda o, a, k: log.append("post"))
    opt.register_state_dict_pre_hook(lambda o: log.append("sd_pre"))
    opt.register_load_state_dict_post_hook(lambda o: log.append("load_post"))
    net(L.ones(1, 3)).sum().backward()
    opt.step()
    opt.load_state_dict(opt.state_dict())
    return log


def _save_load_roundtrip(L):
    net = _net(L)
    opt = L.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    net(L.ones(1, 3)).sum().backward()
    opt.step()
    x = L.arange(6.).view(2, 3)
    buf = io.BytesIO()
    L.save({"model": net.state_dict(), "opt": opt.state_dict(), "views": (x, x[1], x.t()), "n": 3,
            "ints": L.tensor([1, 2], dtype=L.int16)}, buf)
    buf.seek(0)
    obj = L.load(buf)
    v = obj["views"]
    v[0][1, 0] = 100.
    return obj["model"], obj["opt"]["state"][0]["momentum_buffer"], v[1], v[2], obj["n"], obj["ints"]


def _load_weights_only_rejects(L):
    class Evil:
        def __reduce__(self):
            return (print, ("x",))
    buf = io.BytesIO()
    L.save({"e": Evil()}, buf)
    buf.seek(0)
    L.load(buf, weights_only=True)


def _save_parameter_roundtrip(L):
    buf = io.BytesIO()
    p = L.nn.Parameter(L.ones(2))
    L.save([p, p], buf)
    buf.seek(0)
    a, b = L.load(buf)
    return type(a).__name__, a is b, a.requires_grad


CHECKS = {
    "state_dict_keys_persistent": _state_dict_keys,
    "register_buffer_errors": _register_buffer_errors,
    "register_parameter_errors": _register_parameter_errors,
    "load_state_dict_strict": (_load_state_dict_strict, 'Error\\(s\\) in loading state_dict for Sequential:\n\t'
                               'Missing key\\(s\\) in state_dict: "0.bias". \n\tUnexpected key\\(s\\) in '
                               'state_dict: "extra". '),
    "load_state_dict_nonstrict": _load_state_dict_nonstrict,
    "load_state_dict_size_mismatch": (_load_state_dict_size_mismatch,
                                      "size mismatch for 0.weight: copying a param with shape torch.Size\\(\\[5, 3\\]\\) "
                                      "from checkpoint, the shape in current model is torch.Size\\(\\[4, 3\\]\\)"),
    "load_state_dict_assign": _load_state_dict_assign,
    "load_state_dict_keeps_identity": _load_state_dict_keeps_param_identity,
    "load_state_dict_not_mapping": (_load_state_dict_not_mapping, "Expected state_dict to be dict-like, got"),
    "state_dict_prefix_destination": _state_dict_prefix_and_destination,
    "state_dict_hooks": _state_dict_hooks,
    "module_repr": _module_repr,
    "parameter_repr": _parameter_repr,
    "named_modules_duplicates": _named_modules_duplicates,
    "shared_param_state_dict": _shared_param_state_dict,
    "module_hooks": _module_hooks,
    "forward_hook_replaces_output": _forward_hook_replaces_output,
    "forward_hook_always_call": _forward_hook_always_call,
    "global_forward_hook": _global_hooks,
    "train_eval_requires_grad": _train_eval_requires_grad,
    "apply_and_to": _apply_and_to,
    "zero_grad_set_to_none": _zero_grad_set_to_none,
    "getattr_error": (_getattr_error, "'Sequential' object has no attribute 'nonexistent'"),
    "delattr": _delattr,
    "get_submodule": _get_submodule,
    "get_submodule_error": (_get_submodule_error, "Linear has no attribute `foo`"),
    "sequential_indexing": _sequential_indexing,
    "module_list_ops": _module_list_ops,
    "parameter_list_dict": _parameter_list_dict,
    "optimizer_state_dict": _optimizer_state_dict,
    "optimizer_load_mismatch": (_optimizer_load_mismatch, "loaded state dict contains a parameter group that doesn't "
                                                          "match the size of optimizer's group"),
    "optimizer_group_errors": _optimizer_group_errors,
    "optimizer_add_param_group": _optimizer_add_param_group,
    "optimizer_step_closure": _optimizer_step_closure,
    "optimizer_hooks": _optimizer_hooks,
    "save_load_roundtrip": _save_load_roundtrip,
    "load_weights_only_rejects": (_load_weights_only_rejects, "Weights only load failed"),
    "save_parameter_roundtrip": _save_parameter_roundtrip,
}


@pytest.mark.parametrize("name", list(CHECKS))
def test_nn_module(name):
    check = CHECKS[name]
    fn, match = check if isinstance(check, tuple) else (check, None)
    same(fn, match=match)
