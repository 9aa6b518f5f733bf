"""`out=` and autograd: a result that would need a grad_fn cannot be written into `out`
(PyTorch raises, naming the op); under no_grad the same call writes `out`."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("call", [
    lambda m, x, out: m.erf(x, out=out),
    lambda m, x, out: m.add(x, 1, out=out),
    lambda m, x, out: m.mul(x, x, out=out),
    lambda m, x, out: m.exp(x, out=out),
], ids=["erf", "add", "mul", "exp"])
def test_out_with_requires_grad_raises(call):
    data = np.arange(3, dtype=np.float32)
    with pytest.raises(RuntimeError) as t:
        call(torch, torch.tensor(data, requires_grad=True), torch.empty(3))
    with pytest.raises(RuntimeError) as e:
        call(ember, ember.tensor(data, requires_grad=True), ember.empty(3))
    assert str(e.value) == str(t.value)
    with torch.no_grad():
        t_out = call(torch, torch.tensor(data, requires_grad=True), torch.empty(3))
    with ember.no_grad():
        e_out = call(ember, ember.tensor(data, requires_grad=True), ember.empty(3))
    np.testing.assert_allclose(e_out.numpy(), t_out.numpy(), rtol=1e-6)
