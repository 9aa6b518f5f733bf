"""torchvision.utils' make_grid and save_image on ember (`ember.vision.utils`), and the torch
alias serving `import torchvision` as ember.vision. Values are checked against the same
arithmetic done by torch."""
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ember
from ember.vision.utils import make_grid, save_image

torch = pytest.importorskip("torch")


def _images(n, c=1, h=4, w=4):
    return np.random.default_rng(0).random((n, c, h, w)).astype(np.float32)


def test_make_grid_layout():
    x = _images(5)
    grid = make_grid(ember.tensor(x), nrow=2, padding=2, pad_value=0.25)
    assert tuple(grid.shape) == (3, 20, 14) and grid.dtype == ember.float32
    g = grid.numpy()
    for k in range(5):                          # row-major tiles, one-channel made three
        y0, x0 = 2 + 6 * (k // 2), 2 + 6 * (k % 2)
        for ch in range(3):
            np.testing.assert_array_equal(g[ch, y0:y0 + 4, x0:x0 + 4], x[k, 0])
    mask = np.ones((20, 14), bool)
    for k in range(5):
        y0, x0 = 2 + 6 * (k // 2), 2 + 6 * (k % 2)
        mask[y0:y0 + 4, x0:x0 + 4] = False
    assert (g[:, mask] == 0.25).all()           # padding and the sixth, empty tile


def test_make_grid_single_image_and_list():
    x = _images(1, 3)
    assert make_grid(ember.tensor(x)).shape == (3, 4, 4)     # one image: no padding
    assert make_grid(ember.tensor(x[0, 0])).shape == (3, 4, 4)  # H x W
    lst = [ember.tensor(a) for a in _images(3, 3)]
    assert tuple(make_grid(lst, padding=0).shape) == (3, 4, 12)
    with pytest.raises(TypeError, match="tensor or list of tensors expected"):
        make_grid("not images")


@pytest.mark.parametrize("value_range,scale_each", [(None, False), (None, True),
                                                    ((0.2, 0.7), False)])
def test_make_grid_normalize_as_torch_arithmetic(value_range, scale_each):
    x = _images(4, 3) * 3 - 1
    e = ember.tensor(x)
    grid = make_grid(e, nrow=4, padding=0, normalize=True, value_range=value_range,
                     scale_each=scale_each)
    np.testing.assert_array_equal(e.numpy(), x)                 # the input is not changed
    t = torch.tensor(x)
    parts = [t[i] for i in range(4)] if scale_each else [t]
    outs = []
    for p in parts:
        lo, hi = value_range or (float(p.min()), float(p.max()))
        outs.append(p.clamp(lo, hi).sub(lo).div(max(hi - lo, 1e-5)))
    expect = torch.cat(list(torch.cat(outs).reshape(4, 3, 4, 4)), dim=2)
    np.testing.assert_allclose(grid.numpy(), expect.numpy(), rtol=1e-6, atol=1e-7)
    with pytest.raises(TypeError, match="value_range has to be a tuple"):
        make_grid(e, normalize=True, value_range=[0, 1])


def test_save_image_png_bytes(tmp_path):
    from PIL import Image
    x = _images(3, 3)
    path = tmp_path / "grid.png"
    save_image(ember.tensor(x), path, nrow=3, padding=1)
    got = np.asarray(Image.open(path))
    grid = torch.tensor(make_grid(ember.tensor(x), nrow=3, padding=1).numpy())
    expect = grid.mul(255).add_(0.5).clamp_(0, 255).permute(1, 2, 0).to(torch.uint8).numpy()
    assert got.shape == (6, 16, 3)
    np.testing.assert_array_equal(got, expect)


def test_torchvision_imports_ember_vision_under_the_alias():
    code = textwrap.dedent('''
        import ember.utils._torch_alias as a
        a.install()
        import torchvision
        from torchvision import datasets, transforms
        from torchvision.utils import make_grid, save_image
        import torchvision.models as models
        print(torchvision.__name__, datasets.MNIST.__module__, transforms.ToTensor.__name__,
              make_grid.__module__, models.resnet18.__module__)
        try:
            import torchvision.no_such_module
        except ModuleNotFoundError as e:
            print(e.name)
        ''')
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.stdout.split() == ["ember.vision", "ember.vision.datasets.mnist", "ToTensor",
                                  "ember.vision.utils", "ember.vision.models.resnet",
                                  "torchvision.no_such_module"], out.stderr
