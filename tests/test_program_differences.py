"""Differences found by running ordinary PyTorch programs under `import ember as torch`, each
against torch: views made in no_grad mode (Note [Views made in no_grad mode]) and the text of a
refused weights-only load."""
import io
import pickle

import pytest

import ember

torch = pytest.importorskip("torch")


def _no_grad_views(lib):
    w = lib.nn.Parameter(lib.ones(3, 2))
    seen = []
    with lib.no_grad():
        v = w[0]
        views = (w[:, 1], w.t(), w.view(6), w.unsqueeze(0), v[0])
        others = (w.detach(), w * 1, w.data)
        seen.append((repr(v), v.is_leaf, v.grad_fn is None, (v * 2).requires_grad,
                     [t.requires_grad for t in views], [t.requires_grad for t in others]))
        z = lib.zeros(4)
        seen.append(z[1:].requires_grad)
    with lib.inference_mode():
        seen.append(w[0].requires_grad)
    y = v * 2  # a graph is recorded on the view; its gradient reaches nobody
    seen.append((repr(y), y.requires_grad))
    y.sum().backward()
    seen.append((w.grad, v.grad))
    with pytest.raises(RuntimeError) as info:
        v.add_(1)
    seen.append(str(info.value))
    with lib.no_grad():
        v.add_(1)  # allowed: view and write both without grad
    seen.append(w.tolist())
    return seen


def test_views_made_in_no_grad_mode_equal_torch():
    assert _no_grad_views(ember) == _no_grad_views(torch)


def _written_no_grad_view(lib):
    """A no_grad view whose memory was written since, used with grad mode on: refused."""
    w = lib.nn.Parameter(lib.ones(3, 2))
    with lib.no_grad():
        v, u = w[0], w[1]
    seen = [(u * 2).requires_grad]
    with lib.no_grad():
        v.mul_(2)  # u shares the memory: it is out of date too
    for fn in (lambda: v * 2, lambda: lib.sin(u)):
        with pytest.raises(RuntimeError) as info:
            fn()
        seen.append(str(info.value))
    with lib.no_grad():
        seen.append((v * 2).tolist())
    return seen


def test_no_grad_view_written_in_place_is_refused_with_grad_on_like_torch():
    assert _written_no_grad_view(ember) == _written_no_grad_view(torch)


def test_weights_only_refusal_text_equals_torch():
    texts = []
    for lib in (ember, torch):
        buf = io.BytesIO()
        lib.save(lib.nn.Identity(), buf)
        buf.seek(0)
        with pytest.raises(pickle.UnpicklingError) as info:
            lib.load(buf)
        # the refused global's module path is the library's own
        texts.append(str(info.value).replace(lib.__name__ + ".nn.", "LIB.nn."))
    assert texts[0] == texts[1]
