"""The op registry checks itself: every registered aten op has a row in the op table (some
OpInfo's samples reach it, forward or backward), a Meta kernel, and a derivative or an explicit
mark (`not_differentiable` / `not_implemented`); every variant a schema line declares has a
binding; the hand-written bindings cover exactly the names the generator leaves to them."""
import zlib

import numpy as np
import pytest

import ember
from ember._dispatch import dispatcher
from ember._bindings import codegen
from ember.autograd.variable_type import Derivative, _NONDIFF, _NOT_IMPLEMENTED

from op_db import OPS, FLOATS
from test_ops import build, flat_outputs

ATEN = [op for op in dispatcher._registry.values() if op.schema.namespace == "aten"]


def _run_samples_recording():
    """Every OpInfo's samples in its first floating dtype (else its first dtype), forward and
    backward, in ember only, with a dispatch mode recording each op that runs."""
    seen = set()

    def record(op, args, level):
        seen.add(op.name)
        return dispatcher.call_in_modes(op, args, level - 1)

    dispatcher._modes.append(record)
    try:
        for info in OPS:
            dtype = next((d for d in info.dtypes if d in FLOATS), (*info.dtypes, "float32")[0])
            rng = np.random.default_rng(zlib.crc32(info.name.encode()))
            for sample in info.samples(dtype, rng):
                args, kwargs = build(ember, sample)
                try:
                    out = info.op(ember, *args, **kwargs)
                    diff = [o for o in flat_outputs(out)
                            if isinstance(o, ember.Tensor) and o.requires_grad]
                    if diff:
                        ember.autograd.backward(diff, [ember.ones_like(o) for o in diff])
                except Exception:  # noqa: BLE001 -- a sample that raises still reached its op
                    pass
    finally:
        dispatcher._modes.remove(record)
    return seen


@pytest.fixture(scope="module")
def reached():
    return _run_samples_recording()


# Ops reached only through other tests' code paths than op-db rows, each with the reason.
NOT_IN_OP_DB = {
    "aten::random_": "sampler, bit-exact with torch: tests/test_generator.py",
    "aten::bernoulli": "sampler, bit-exact with torch: tests/test_generator.py",
    "aten::randperm": "sampler, bit-exact with torch: tests/test_generator.py",
    "aten::geometric_": "sampler: tests/test_generator.py",
    "aten::cauchy_": "sampler: tests/test_generator.py",
    "aten::log_normal_": "sampler: tests/test_generator.py",
    "aten::multinomial": "sampler, bit-exact with torch: tests/test_generator.py",
    "aten::set_.source_Tensor": "Tensor.set_(tensor) calls it only for a __torch_dispatch__ "
                                "subclass or under a dispatch mode: "
                                "tests/test_python_dispatch_real.py",
}
# Ops PyTorch's CPU build declares without a CPU (or Meta) kernel; ember declares them for code
# that names them (PyTorch's OpInfo database does), and a call raises as PyTorch's does.
CUDA_ONLY = {"aten::_flash_attention_forward", "aten::_efficient_attention_forward",
             "aten::_scaled_mm_v2", "aten::record_stream"}
NOT_IN_OP_DB.update(dict.fromkeys(CUDA_ONLY, "CUDA-only: no kernel on ember's devices"))


def test_every_op_has_an_op_table_row(reached):
    missing = sorted(op.name for op in ATEN
                     if op.name not in reached and op.name not in NOT_IN_OP_DB)
    assert not missing, f"{len(missing)} ops no op-db sample reaches: {missing}"


def test_the_exemptions_are_still_needed_and_real(reached):
    registered = {op.name for op in ATEN}
    assert set(NOT_IN_OP_DB) <= registered, set(NOT_IN_OP_DB) - registered
    stale = sorted(n for n in NOT_IN_OP_DB if n in reached)
    assert not stale, f"op-db rows now reach these; drop their exemption: {stale}"


def test_every_op_has_a_meta_kernel():
    missing = sorted(op.name for op in ATEN
                     if "Meta" not in op._table and op._composite is None
                     and op.name not in CUDA_ONLY)
    assert not missing, f"ops without a Meta kernel: {missing}"


def test_every_op_has_a_derivative_or_an_explicit_mark():
    unmarked = sorted(op.name for op in ATEN if op._composite is None and op.derivative is None
                      and op.name not in CUDA_ONLY)
    assert not unmarked, f"ops with neither a derivative nor a mark: {unmarked}"
    kinds = {type(op.derivative) for op in ATEN if op.derivative not in (None, _NONDIFF,
                                                                          _NOT_IMPLEMENTED)}
    assert kinds <= {Derivative}, kinds


def test_every_declared_variant_has_a_binding():
    for op in ATEN:
        for name in (op.schema.name,) + op.schema.aliases:
            if "function" in op.schema.variants:
                assert callable(getattr(ember, name, None)), f"ember.{name} ({op.schema.text})"
            if "method" in op.schema.variants:
                assert callable(getattr(ember.Tensor, name, None)), \
                    f"Tensor.{name} ({op.schema.text})"


def test_hand_written_names_are_bound_by_hand():
    from ember._bindings import generated
    for name in codegen.HAND_WRITTEN_FUNCTIONS:
        fn = getattr(ember, name)
        assert name not in generated.FUNCTIONS and not hasattr(fn, "__ember_source__"), name
    for name in codegen.HAND_WRITTEN_METHODS:
        assert not hasattr(getattr(ember.Tensor, name), "__ember_source__"), name


def test_in_place_variants_share_the_functional_derivative():
    x = ember.tensor([0.5, 1.5], requires_grad=True)
    y = x * 1
    y.exp_()
    assert type(y.grad_fn).__name__ == "ExpBackward0"
    y.sum().backward()
    assert np.allclose(x.grad.numpy(), np.exp([0.5, 1.5]))


def test_generated_binding_source_and_docstring():
    src = ember.sum.__ember_source__
    assert src.startswith("def sum(input=_REQUIRED, dim=_NO_DIM, keepdim=False, *, dtype=None, "
                          "out=None, **numpy_names):")
    assert ember.sum.__doc__.startswith(
        "sum(input, dim=None, keepdim=False, *, dtype=None, out=None) -> Tensor")
    assert ember.cumsum.__doc__.startswith("cumsum(input, dim, *, dtype=None, out=None)")
    doc = ember.exp.__doc__
    assert doc.splitlines()[0] == "exp(input, *, out=None) -> Tensor"
    assert "Schema: aten::exp(Tensor self) -> Tensor" in doc
    assert "self: lambda grad, result:" in doc
    assert "Derivative: not differentiable" in ember.eq.__doc__


def test_readme_op_table_is_current():
    import pathlib
    import sys
    root = pathlib.Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(root / "tools"))
    import op_table
    readme = (root / "README.md").read_text()
    assert op_table.markdown() in readme, "README's op table is stale: python tools/op_table.py --write"
