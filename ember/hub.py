"""torch.hub: load models and weights published by others. Weights come from a URL into a cache
directory (`$TORCH_HOME/hub/checkpoints`, the one PyTorch uses, so files it downloaded are found),
checked against the hash prefix in their name, then read with `ember.load`. Models come from a
`hubconf.py` whose public callables are entry points: in a local directory (`source="local"`) or
in a GitHub repository downloaded once into the hub directory and trusted explicitly.

A download goes to a temporary file beside the destination and is moved in place only when
complete (and its hash checked), so a broken download never replaces a working file.
"""
import contextlib
import hashlib
import importlib.util
import json
import os
import re
import shutil
import sys
import uuid
import warnings
from ember._core._warnings import user_stacklevel as _user_stacklevel
import zipfile
from pathlib import Path
from urllib.error import HTTPError, URLError
from urllib.parse import urlparse
from urllib.request import Request, urlopen

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load", "load_state_dict_from_url",
           "set_dir"]

HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
MODULE_HUBCONF = "hubconf.py"
VAR_DEPENDENCY = "dependencies"
READ_DATA_CHUNK = 128 * 1024
_TRUSTED_REPO_OWNERS = ("facebookresearch", "facebookincubator", "pytorch", "fairinternal")
_hub_dir = None


def _get_torch_home():
    default = os.path.join(os.getenv("XDG_CACHE_HOME", "~/.cache"), "torch")
    return os.path.expanduser(os.getenv("TORCH_HOME", default))


def get_dir():
    """The hub directory: set_dir's, else $TORCH_HOME/hub (~/.cache/torch/hub)."""
    if os.getenv("TORCH_HUB"):
        warnings.warn("TORCH_HUB is deprecated, please use env TORCH_HOME instead", stacklevel=_user_stacklevel())
    return _hub_dir if _hub_dir is not None else os.path.join(_get_torch_home(), "hub")


def set_dir(d):
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


# ---- files from URLs ----------------------------------------------------------------------
def _progress_bar(total, enabled):
    if enabled:
        try:
            from tqdm import tqdm
            return tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024)
        except ImportError:
            pass
    return contextlib.nullcontext(type("NoBar", (), {"update": lambda self, n: None})())


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """Download `url` to `dst`, checking the SHA-256 digest starts with `hash_prefix` if given."""
    dst = os.path.expanduser(dst)
    partial = f"{dst}.{uuid.uuid4().hex}.partial"
    sha256 = hashlib.sha256() if hash_prefix is not None else None
    try:
        with urlopen(Request(url, headers={"User-Agent": "torch.hub"})) as response, \
                open(partial, "wb") as f:
            size = response.info().get("Content-Length")
            with _progress_bar(int(size) if size else None, progress) as bar:
                while True:
                    chunk = response.read(READ_DATA_CHUNK)
                    if not chunk:
                        break
                    f.write(chunk)
                    if sha256 is not None:
                        sha256.update(chunk)
                    bar.update(len(chunk))
        if sha256 is not None:
            digest = sha256.hexdigest()
            if digest[:len(hash_prefix)] != hash_prefix:
                raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got '
                                   f'"{digest}")')
        shutil.move(partial, dst)
    finally:
        if os.path.exists(partial):
            os.remove(partial)


def _safe_extract_zip(archive, target):
    """Extract every member, refusing absolute paths and paths that climb out of `target`."""
    target = Path(target).resolve(strict=False)
    for member in archive.infolist():
        name = os.path.normpath(member.filename)
        if name.startswith(("/", "\\")) or (len(name) >= 2 and name[1] == ":"):
            raise ValueError(f"Archive entry has absolute path: {member.filename}")
        if ".." in re.split(r"[/\\]", name) or \
                not (target / name).resolve(strict=False).is_relative_to(target):
            raise ValueError(f"Archive entry contains directory traversal: {member.filename}")
        archive.extract(member, target)


def _is_legacy_zip_format(filename):
    """PyTorch < 1.6 published weights as a zip holding one pickled file."""
    if zipfile.is_zipfile(filename):
        with zipfile.ZipFile(filename) as zf:
            members = zf.infolist()
        return len(members) == 1 and not members[0].is_dir()
    return False


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True,
                             check_hash=False, file_name=None, weights_only=False):
    """The object saved at `url`, downloaded once into `model_dir` (hub dir/checkpoints)."""
    from .serialization import load
    if os.getenv("TORCH_MODEL_ZOO"):
        warnings.warn("TORCH_MODEL_ZOO is deprecated, please use env TORCH_HOME instead",
                      stacklevel=_user_stacklevel())
    model_dir = model_dir if model_dir is not None else os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name if file_name is not None else os.path.basename(urlparse(url).path)
    cached_file = os.path.join(model_dir, filename)
    if not os.path.exists(cached_file):
        sys.stdout.write(f'Downloading: "{url}" to {cached_file}\n')
        match = HASH_REGEX.search(filename) if check_hash else None
        download_url_to_file(url, cached_file, match.group(1) if match else None, progress)
    if _is_legacy_zip_format(cached_file):
        warnings.warn("Falling back to the old format < 1.6. This support will be deprecated in "
                      "favor of default zipfile format introduced in 1.6. Please redo "
                      "torch.save() to save it in the new zipfile format.", FutureWarning,
                      stacklevel=_user_stacklevel())
        with zipfile.ZipFile(cached_file) as archive:
            _safe_extract_zip(archive, model_dir)
            cached_file = os.path.join(model_dir, archive.infolist()[0].filename)
    return load(cached_file, map_location=map_location, weights_only=weights_only)


# ---- models from hubconf.py -----------------------------------------------------------------
@contextlib.contextmanager
def _on_sys_path(path):
    sys.path.insert(0, path)
    try:
        yield
    finally:
        sys.path.remove(path)


def _import_hubconf(repo_dir):
    path = os.path.join(repo_dir, MODULE_HUBCONF)
    spec = importlib.util.spec_from_file_location(MODULE_HUBCONF, path)
    module = importlib.util.module_from_spec(spec)
    with _on_sys_path(repo_dir):
        spec.loader.exec_module(module)
    return module


def _entry_point(module, model):
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    missing = [pkg for pkg in getattr(module, VAR_DEPENDENCY, None) or ()
               if importlib.util.find_spec(pkg) is None]
    if missing:
        raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")
    fn = getattr(module, model, None)
    if fn is None or not callable(fn):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return fn


def _parse_repo_info(github):
    repo_info, _, ref = github.partition(":")
    owner, name = repo_info.split("/")
    if ref:
        return owner, name, ref
    try:  # the default branch: main if it exists, else master
        with urlopen(f"https://github.com/{owner}/{name}/tree/main/"):
            return owner, name, "main"
    except HTTPError as e:
        if e.code == 404:
            return owner, name, "master"
        raise
    except URLError as e:  # offline: a cached copy of either will do
        for ref in ("main", "master"):
            if os.path.exists(os.path.join(get_dir(), f"{owner}_{name}_{ref}")):
                return owner, name, ref
        raise RuntimeError(f"It looks like there is no internet connection and the repo could "
                           f"not be found in the cache ({get_dir()})") from e


def _check_repo_is_trusted(owner, name, cache_name, trust_repo):
    hub_dir = get_dir()
    trusted_file = os.path.join(hub_dir, "trusted_list")
    Path(trusted_file).touch()
    with open(trusted_file) as f:
        trusted = {line.strip() for line in f}
    owner_name = f"{owner}_{name}"
    is_trusted = (owner_name in trusted or owner in _TRUSTED_REPO_OWNERS
                  or os.path.isdir(os.path.join(hub_dir, cache_name)))  # downloaded before
    if trust_repo is False or (trust_repo == "check" and not is_trusted):
        answer = input(f"The repository {owner_name} does not belong to the list of trusted "
                       f"repositories and as such cannot be downloaded. Do you trust this "
                       f"repository and wish to add it to the trusted list of repositories "
                       f"(y/N)?").lower()
        if answer in ("n", "no", ""):
            raise Exception("Untrusted repository.")  # PyTorch raises a bare Exception here
        if answer not in ("y", "yes"):
            raise ValueError(f"Unrecognized response {answer}.")
    if not is_trusted:
        with open(trusted_file, "a") as f:
            f.write(owner_name + "\n")


def _validate_not_a_forked_repo(owner, name, ref):
    headers = {"Accept": "application/vnd.github.v3+json"}
    if os.environ.get("GITHUB_TOKEN"):
        headers["Authorization"] = f"token {os.environ['GITHUB_TOKEN']}"
    for kind in ("branches", "tags"):
        page = 0
        while True:
            page += 1
            url = f"https://api.github.com/repos/{owner}/{name}/{kind}?per_page=100&page={page}"
            with urlopen(Request(url, headers=headers)) as r:
                entries = json.loads(r.read().decode(r.headers.get_content_charset("utf-8")))
            if not entries:
                break
            if any(e["name"] == ref or e["commit"]["sha"].startswith(ref) for e in entries):
                return
    raise ValueError(f"Cannot find {ref} in https://github.com/{owner}/{name}. If it's a commit "
                     f"from a forked repo, please call hub.load() with forked repo directly.")


def _get_cache_or_reload(github, force_reload, trust_repo, verbose=True, skip_validation=False):
    """The directory of `owner/name[:ref]` in the hub directory, downloaded if not there yet."""
    hub_dir = get_dir()
    os.makedirs(hub_dir, exist_ok=True)
    owner, name, ref = _parse_repo_info(github)
    cache_name = f"{owner}_{name}_{ref.replace('/', '_')}"
    repo_dir = os.path.join(hub_dir, cache_name)
    _check_repo_is_trusted(owner, name, cache_name, trust_repo)
    if not force_reload and os.path.exists(repo_dir):
        if verbose:
            sys.stderr.write(f"Using cache found in {repo_dir}\n")
        return repo_dir
    if not skip_validation:
        _validate_not_a_forked_repo(owner, name, ref)
    archive_path = os.path.join(hub_dir, ref.replace("/", "_") + ".zip")
    url = f"https://github.com/{owner}/{name}/zipball/{ref}"
    sys.stdout.write(f'Downloading: "{url}" to {archive_path}\n')
    download_url_to_file(url, archive_path, progress=False)
    with zipfile.ZipFile(archive_path) as archive:
        extracted = os.path.join(hub_dir, archive.infolist()[0].filename)
        shutil.rmtree(extracted, ignore_errors=True)
        _safe_extract_zip(archive, hub_dir)
    os.remove(archive_path)
    shutil.rmtree(repo_dir, ignore_errors=True)
    shutil.move(extracted, repo_dir)
    return repo_dir


def list(github, force_reload=False, skip_validation=False, trust_repo="check", verbose=True):
    """The entry points (public callables) of a GitHub repository's hubconf.py."""
    module = _import_hubconf(_get_cache_or_reload(github, force_reload, trust_repo, verbose,
                                                  skip_validation))
    return [n for n in dir(module) if callable(getattr(module, n)) and not n.startswith("_")]


def help(github, model, force_reload=False, skip_validation=False, trust_repo="check"):
    """The docstring of one entry point."""
    module = _import_hubconf(_get_cache_or_reload(github, force_reload, trust_repo, True,
                                                  skip_validation))
    return _entry_point(module, model).__doc__


def load(repo_or_dir, model, *args, source="github", trust_repo="check", force_reload=False,
         verbose=True, skip_validation=False, **kwargs):
    """Call entry point `model` of a hubconf.py (a GitHub repo, or a directory with
    source="local") with *args and **kwargs."""
    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "github":
        repo_or_dir = _get_cache_or_reload(repo_or_dir, force_reload, trust_repo, verbose,
                                           skip_validation)
    module = _import_hubconf(repo_or_dir)
    with _on_sys_path(repo_or_dir):
        return _entry_point(module, model)(*args, **kwargs)
