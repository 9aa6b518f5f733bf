"""torch._C.parse_schema: ember's one schema parser (ember/_dispatch/schema.py) answers as PyTorch's."""
import subprocess
import sys

import pytest

import ember

torch = pytest.importorskip("torch")

CASES = [
    "any.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    "any.not_out(Tensor self, Tensor b) -> Tensor",
    "foo(Tensor self, int a = 2) -> Tensor(a!)",
    "foo(Tensor self, *, int a = 2) -> Tensor(a!)",
    "foo(Tensor(a!) self, int a = 2) -> Tensor(a!)",
    "foo(Tensor self, *, Tensor(a!)[] out) -> ()",
    "example::op(Tensor self) -> Tensor",
]


@pytest.mark.parametrize("text", CASES)
def test_parse_schema_fields(text):
    e, t = ember._C.parse_schema(text), torch._C.parse_schema(text)
    assert (e.name, e.overload_name, str(e)) == (t.name, t.overload_name, str(t))
    assert [a.name for a in e.arguments] == [a.name for a in t.arguments]
    assert [a.is_out for a in e.arguments] == [a.is_out for a in t.arguments]
    assert [a.kwarg_only for a in e.arguments] == [a.kwarg_only for a in t.arguments]
    assert [a.default_value for a in e.arguments] == [a.default_value for a in t.arguments]
    assert ([a.alias_info.is_write if a.alias_info else None for a in e.arguments] ==
            [a.alias_info.is_write if a.alias_info else None for a in t.arguments])


def test_parse_schema_equality_and_hash():
    for a in CASES:
        for b in CASES:
            te = torch._C.parse_schema(a) == torch._C.parse_schema(b)
            ee = ember._C.parse_schema(a) == ember._C.parse_schema(b)
            assert ee == te, (a, b)
            if te:
                assert hash(ember._C.parse_schema(a)) == hash(ember._C.parse_schema(b))


def test_import_under_alias():
    code = ("import torch\nfrom torch._C import parse_schema\n"
            "s = parse_schema('any.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)')\n"
            "assert s.arguments[-1].is_out and s.overload_name == 'out'\nprint('ok')")
    r = subprocess.run([sys.executable, "-m", "ember", "-c", code], capture_output=True, text=True,
                       timeout=120)
    assert r.stdout.strip().endswith("ok"), r.stderr[-2000:]
