"""ember.hub against torch.hub: weights from URLs (file:// here: no network) into the cache,
hash checking, the legacy zip format, and entry points from hubconf.py."""
import hashlib
import os
import zipfile

import numpy as np
import pytest

import ember


def _saved_state(tmp_path, name="weights.pt"):
    torch = pytest.importorskip("torch")
    state = {"w": torch.arange(6.0).reshape(2, 3), "b": torch.tensor([1, 2])}
    path = tmp_path / name
    torch.save(state, path)
    return state, path


def _assert_same_state(got, want):
    assert sorted(got) == sorted(want)
    for k in want:
        np.testing.assert_array_equal(got[k].numpy(), want[k].numpy())
        assert str(got[k].dtype) == str(want[k].dtype)


def test_load_state_dict_from_url_downloads_once_into_the_cache(tmp_path, capsys):
    torch = pytest.importorskip("torch")
    state, path = _saved_state(tmp_path)
    for lib in (ember, torch):
        model_dir = tmp_path / f"cache_{lib.__name__}"
        got = lib.hub.load_state_dict_from_url(path.as_uri(), model_dir=str(model_dir),
                                               progress=False)
        _assert_same_state(got, state)
        assert os.listdir(model_dir) == ["weights.pt"]
    assert capsys.readouterr().out.count("Downloading:") == 2
    os.remove(path)  # the cached copy is used from now on
    again = ember.hub.load_state_dict_from_url(path.as_uri(), model_dir=str(tmp_path / "cache_ember"))
    _assert_same_state(again, state)


def test_hash_prefix_in_the_file_name_is_checked(tmp_path):
    torch = pytest.importorskip("torch")
    state, path = _saved_state(tmp_path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    good = tmp_path / f"resnet-{digest[:8]}.pt"
    bad = tmp_path / "resnet-deadbeef.pt"
    for p in (good, bad):
        p.write_bytes(path.read_bytes())
    for lib in (ember, torch):
        d = tmp_path / f"h_{lib.__name__}"
        _assert_same_state(lib.hub.load_state_dict_from_url(good.as_uri(), model_dir=str(d),
                                                            check_hash=True, progress=False), state)
        with pytest.raises(RuntimeError, match="invalid hash value"):
            lib.hub.load_state_dict_from_url(bad.as_uri(), model_dir=str(d), check_hash=True,
                                             progress=False)
        assert not os.path.exists(d / bad.name)  # a failed download leaves nothing behind


def test_legacy_zip_of_one_file(tmp_path):
    torch = pytest.importorskip("torch")
    state, path = _saved_state(tmp_path, "inner.pth")
    archive = tmp_path / "legacy.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.write(path, "inner.pth")
    with pytest.warns(FutureWarning):
        got = ember.hub.load_state_dict_from_url(archive.as_uri(), model_dir=str(tmp_path / "z"),
                                                 progress=False)
    _assert_same_state(got, state)


HUBCONF = '''
dependencies = ["numpy"]
import ember


def tiny(width=3, **kwargs):
    """A one-layer model."""
    return ember.nn.Linear(2, width, **kwargs)


def _helper():
    return None


not_callable = 3
'''


def test_local_hubconf_entry_points(tmp_path):
    (tmp_path / "hubconf.py").write_text(HUBCONF)
    model = ember.hub.load(str(tmp_path), "tiny", 4, source="local", bias=False)
    assert isinstance(model, ember.nn.Linear) and model.weight.shape == (4, 2) and model.bias is None
    with pytest.raises(RuntimeError, match="Cannot find callable nope in hubconf"):
        ember.hub.load(str(tmp_path), "nope", source="local")
    with pytest.raises(RuntimeError, match="Cannot find callable not_callable"):
        ember.hub.load(str(tmp_path), "not_callable", source="local")
    with pytest.raises(ValueError, match="Unknown source"):
        ember.hub.load(str(tmp_path), "tiny", source="gitlab")
    (tmp_path / "hubconf.py").write_text(HUBCONF.replace('["numpy"]', '["no_such_pkg_x"]'))
    with pytest.raises(RuntimeError, match="Missing dependencies: no_such_pkg_x"):
        ember.hub.load(str(tmp_path), "tiny", source="local")


def test_github_repo_from_the_cache(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(ember.hub, "_hub_dir", None)  # set_dir below changes it for this test
    ember.hub.set_dir(str(tmp_path))
    repo = tmp_path / "someone_models_v1"
    repo.mkdir()
    (repo / "hubconf.py").write_text(HUBCONF)
    model = ember.hub.load("someone/models:v1", "tiny", trust_repo=True, width=5)
    assert model.weight.shape == (5, 2)
    assert "Using cache found in" in capsys.readouterr().err
    assert ember.hub.list("someone/models:v1", trust_repo=True) == ["tiny"]
    assert ember.hub.help("someone/models:v1", "tiny", trust_repo=True) == "A one-layer model."


def test_hub_dir_follows_torch_home(monkeypatch, tmp_path):
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(ember.hub, "_hub_dir", None)
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    assert ember.hub.get_dir() == torch.hub.get_dir() == str(tmp_path / "hub")
