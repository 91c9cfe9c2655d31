"""lucid.hub, as torch.hub: pretrained weights by URL (load_state_dict_from_url,
download_url_to_file) and models from a repository's hubconf.py (list, help, load), from
GitHub or from a local folder.

The cache is `get_dir()`: set_dir's folder, else $LUCID_HOME/hub, else
$XDG_CACHE_HOME/lucid/hub (~/.cache/lucid/hub). Weights go to its `checkpoints`
folder and GitHub repositories to `owner_name_ref` folders, as torch lays out its own.
Downloads land in a temporary file beside the destination and are renamed into place
only when whole (and, when asked, when their SHA-256 matches), so an interrupted
download never leaves a file that looks complete.

Loading a hubconf.py runs its code, and loading weights with weights_only=False
unpickles arbitrary objects: use repositories and files you trust.
"""

import hashlib
import importlib.util
import os
import re
import shutil
import sys
import tempfile
import urllib.parse
import urllib.request
import zipfile

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load", "load_state_dict_from_url", "set_dir"]

_hub_dir = None
_HASH_IN_NAME = re.compile(r"-([a-f0-9]*)\.")  # torch's: "resnet18-f37072fd.pth" carries its hash prefix
_CHUNK = 1 << 16


def get_dir():
    """The folder lucid.hub caches into (see the module's docstring)."""
    if _hub_dir is not None:
        return _hub_dir
    home = os.environ.get("LUCID_HOME")
    if home is None:
        home = os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "lucid")
    return os.path.join(os.path.expanduser(home), "hub")


def set_dir(d):
    """Caches into folder `d` from now on."""
    global _hub_dir
    _hub_dir = os.path.expanduser(os.fspath(d))


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """Downloads `url` to the file `dst`. With hash_prefix, the file's SHA-256 (hex) must
    begin with it, or RuntimeError and nothing is written. `progress` prints the bytes
    read to stderr."""
    dst = os.path.expanduser(os.fspath(dst))
    folder = os.path.dirname(os.path.abspath(dst))
    os.makedirs(folder, exist_ok=True)
    request = urllib.request.Request(url, headers={"User-Agent": "lucid.hub"})
    sha256 = hashlib.sha256()
    fd, partial = tempfile.mkstemp(prefix=os.path.basename(dst) + ".", suffix=".partial", dir=folder)
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(request) as response:
            total = response.headers.get("Content-Length")
            done = 0
            while True:
                chunk = response.read(_CHUNK)
                if not chunk:
                    break
                out.write(chunk)
                sha256.update(chunk)
                done += len(chunk)
                if progress:
                    sys.stderr.write(f"\rDownloading {url}: {done} bytes" + (f" of {total}" if total else ""))
        if progress:
            sys.stderr.write("\n")
        digest = sha256.hexdigest()
        if hash_prefix is not None and not digest.startswith(hash_prefix):
            raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got "{digest}")')
        os.replace(partial, dst)
    finally:
        if os.path.exists(partial):
            os.remove(partial)


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True, check_hash=False,
                             file_name=None, weights_only=True):
    """The object saved at `url` (a lucid.save or torch.save file), downloaded once into
    `model_dir` (default get_dir()/checkpoints) and loaded with lucid.load. With
    check_hash, the file name's "-<hex>." part is a prefix of its SHA-256 (torch's
    naming, as in "resnet18-f37072fd.pth")."""
    from . import load as lucid_load
    model_dir = os.path.expanduser(os.fspath(model_dir)) if model_dir is not None \
        else os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    name = file_name or os.path.basename(urllib.parse.urlparse(url).path)
    if not name:
        raise ValueError(f"load_state_dict_from_url: no file name in {url!r}; pass file_name=")
    cached = os.path.join(model_dir, name)
    if not os.path.exists(cached):
        hash_prefix = None
        if check_hash:
            found = _HASH_IN_NAME.search(name)
            hash_prefix = found.group(1) if found else None
        download_url_to_file(url, cached, hash_prefix, progress=progress)
    if zipfile.is_zipfile(cached) and _is_legacy_zip(cached):
        cached = _extract_legacy_zip(cached, model_dir)
    return lucid_load(cached, map_location=map_location, weights_only=weights_only)


def _is_legacy_zip(path):
    # torch's old hub format: a zip holding one file that is itself the checkpoint (a
    # torch.save zip holds a folder with data.pkl instead)
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
    return len(names) == 1 and "/" not in names[0]


def _extract_legacy_zip(path, model_dir):
    with zipfile.ZipFile(path) as z:
        (member,) = z.infolist()
        z.extractall(model_dir)
    return os.path.join(model_dir, member.filename)


# ---- models from a hubconf.py -------------------------------------------------------------

def _parse_repo(github):
    """'owner/name[:ref]' -> (owner, name, ref); ref defaults to "main", as torch's."""
    repo, _, ref = github.partition(":")
    if repo.count("/") != 1 or not all(repo.split("/")):
        raise ValueError(f'Invalid input: repo_info "{github}" should be in the form of "repo_owner/repo_name[:ref]"')
    owner, name = repo.split("/")
    return owner, name, ref or "main"


def _github_folder(github, force_reload, verbose):
    owner, name, ref = _parse_repo(github)
    folder = os.path.join(get_dir(), "_".join((owner, name, ref.replace("/", "_"))))
    if os.path.isdir(folder) and not force_reload:
        if verbose:
            sys.stderr.write(f"Using cache found in {folder}\n")
        return folder
    archive = os.path.join(get_dir(), f"{ref.replace('/', '_')}.zip")
    download_url_to_file(f"https://github.com/{owner}/{name}/zipball/{ref}", archive, progress=verbose)
    staging = tempfile.mkdtemp(dir=get_dir())
    try:
        with zipfile.ZipFile(archive) as z:
            top = z.namelist()[0].split("/")[0]
            z.extractall(staging)
        if os.path.isdir(folder):
            shutil.rmtree(folder)
        os.replace(os.path.join(staging, top), folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        os.remove(archive)
    return folder


def _hubconf(repo_or_dir, source, force_reload, verbose):
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    folder = _github_folder(repo_or_dir, force_reload, verbose) if source == "github" \
        else os.path.expanduser(os.fspath(repo_or_dir))
    path = os.path.join(folder, "hubconf.py")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"Cannot find hubconf.py in {folder}")
    sys.path.insert(0, folder)  # (hubconf.py imports its repository's modules, as torch's does)
    try:
        spec = importlib.util.spec_from_file_location("hubconf", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(folder)
    missing = [d for d in getattr(module, "dependencies", []) if importlib.util.find_spec(d) is None]
    if missing:
        raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")
    return module


def _entrypoint(module, model):
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    fn = getattr(module, model, None)
    if fn is None or not callable(fn) or model.startswith("_"):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return fn


def list(github, force_reload=False, skip_validation=False, trust_repo=None, verbose=True, *, source="github"):
    """The entry points (public callables) of the repository's hubconf.py."""
    module = _hubconf(github, source, force_reload, verbose)
    return [name for name in dir(module) if callable(getattr(module, name)) and not name.startswith("_")]


def help(github, model, force_reload=False, skip_validation=False, trust_repo=None, *, source="github"):
    """The docstring of entry point `model`."""
    return _entrypoint(_hubconf(github, source, force_reload, True), model).__doc__


def load(repo_or_dir, model, *args, source="github", trust_repo=None, force_reload=False, verbose=True,
         skip_validation=False, **kwargs):
    """Entry point `model` of the hubconf.py of a GitHub repository ("owner/name[:ref]",
    downloaded once into get_dir()) or of a local folder (source="local"), called with
    *args and **kwargs."""
    return _entrypoint(_hubconf(repo_or_dir, source, force_reload, verbose), model)(*args, **kwargs)
