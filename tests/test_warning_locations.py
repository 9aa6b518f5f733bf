"""A warning ember raises names the user's line, as PyTorch's do (its C++ warnings point at the
calling Python frame), however many ember frames lie between (`ember/_core/_warnings.py`)."""
import warnings

import pytest

import ember

torch = pytest.importorskip("torch")

CASES = {
    "typed_storage": lambda L: L.ones(2).storage(),
    "upsample": lambda L: L.nn.functional.upsample(L.ones(1, 1, 2, 2), scale_factor=2),
    "softmax_implicit_dim": lambda L: L.nn.functional.softmax(L.ones(2)),
    "tensor_of_tensor": lambda L: L.tensor(L.ones(1)),
    "non_leaf_grad": lambda L: (L.ones(2, requires_grad=True) * 2).grad,
    "init_uniform": lambda L: L.nn.init.uniform(L.ones(2)),
    "clip_grad_norm": lambda L: L.nn.utils.clip_grad_norm(L.nn.Linear(1, 1).parameters(), 1.0),
    "range": lambda L: L.range(0, 2),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_warning_names_the_callers_line(name):
    where = []
    for lib in (torch, ember):
        always = lib.storage._get_always_warn_typed_storage_removal()
        lib.storage._set_always_warn_typed_storage_removal(True)  # (a once-per-process warning)
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                CASES[name](lib)
        finally:
            lib.storage._set_always_warn_typed_storage_removal(always)
        assert caught, f"{lib.__name__} gave no warning"
        where.append([(w.filename, w.lineno) for w in caught][:1])
    assert where[1] == where[0]


def test_scalar_of_grad_tensor_warns_only_in_grad_mode():
    """float() of a tensor that requires grad warns once per process, and not at all under
    no_grad (LBFGS calls float(closure()) inside its no_grad step): fresh processes for both."""
    import subprocess
    import sys
    code = ("import warnings, {lib} as L\nwarnings.simplefilter('always')\n"
            "y = L.ones((), requires_grad=True) * 2\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    with L.no_grad():\n        float(y)\n    int(y)\n    a = len(w)\n"
            "    float(y)\n    b = len(w)\n    float(y); complex(y)\n"
            "print(a, b, len(w), str(w[0].message).splitlines()[0] if w else '')")
    outs = [subprocess.run([sys.executable, "-c", code.format(lib=lib)], capture_output=True,
                           text=True, timeout=120).stdout for lib in ("torch", "ember")]
    assert outs[1] == outs[0] and outs[0].startswith("0 1 1 Converting a tensor"), outs
