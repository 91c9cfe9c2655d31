"""lucid.hub against torch.hub's behaviour: weights by URL (file:// URLs here: CI has no
network) cached once, hash-checked by the file name's prefix, never left half-written;
torch.save'd weights; models from a local repository's hubconf.py."""

import hashlib
import os
import pathlib

import pytest
import torch

import lucid
import lucid.nn as nn


@pytest.fixture
def hub_dir(tmp_path):
    before = lucid.hub._hub_dir
    lucid.hub.set_dir(tmp_path / "hub")
    yield tmp_path / "hub"
    lucid.hub._hub_dir = before


def _weights_file(folder, saver, state):
    plain = folder / "weights.pth"
    saver(state, plain)
    digest = hashlib.sha256(plain.read_bytes()).hexdigest()
    named = folder / f"weights-{digest[:8]}.pth"
    plain.rename(named)
    return named, digest


def test_get_dir_follows_set_dir_and_lucid_home(hub_dir, monkeypatch):
    assert lucid.hub.get_dir() == str(hub_dir)
    lucid.hub._hub_dir = None
    monkeypatch.setenv("LUCID_HOME", "/some/home")
    assert lucid.hub.get_dir() == "/some/home/hub"
    monkeypatch.delenv("LUCID_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", "/x/cache")
    assert lucid.hub.get_dir() == "/x/cache/lucid/hub"


@pytest.mark.parametrize("saver", [lucid.save, torch.save])
def test_load_state_dict_from_url_downloads_once_and_checks_the_hash(hub_dir, tmp_path, saver):
    lin = nn.Linear(3, 2)
    state = lin.state_dict() if saver is lucid.save else {k: torch.tensor(v.tolist()) for k, v in lin.state_dict().items()}
    source, _ = _weights_file(tmp_path, saver, state)
    url = source.as_uri()
    got = lucid.hub.load_state_dict_from_url(url, check_hash=True, progress=False)
    assert got["weight"].tolist() == lin.weight.tolist() and got["bias"].tolist() == lin.bias.tolist()
    cached = hub_dir / "checkpoints" / source.name
    assert cached.read_bytes() == source.read_bytes()
    source.unlink()  # the second call reads the cache
    again = lucid.hub.load_state_dict_from_url(url, progress=False, map_location="cpu")
    assert again["weight"].tolist() == lin.weight.tolist()
    fresh = nn.Linear(3, 2)
    fresh.load_state_dict(again)
    assert fresh.weight.tolist() == lin.weight.tolist()


def test_a_wrong_hash_raises_and_leaves_nothing(hub_dir, tmp_path):
    source, digest = _weights_file(tmp_path, lucid.save, {"w": lucid.ones(2)})
    wrong = tmp_path / f"weights-{'0' if digest[0] != '0' else '1'}{digest[1:8]}.pth"
    source.rename(wrong)
    with pytest.raises(RuntimeError, match="invalid hash value"):
        lucid.hub.load_state_dict_from_url(wrong.as_uri(), model_dir=tmp_path / "models", check_hash=True,
                                           progress=False)
    assert os.listdir(tmp_path / "models") == []  # neither the file nor a partial one
    # without check_hash the same file loads
    got = lucid.hub.load_state_dict_from_url(wrong.as_uri(), model_dir=tmp_path / "models", progress=False)
    assert got["w"].tolist() == [1.0, 1.0]


def test_download_url_to_file_and_its_errors(tmp_path):
    src = tmp_path / "data.bin"
    src.write_bytes(b"lucid" * 1000)
    digest = hashlib.sha256(src.read_bytes()).hexdigest()
    lucid.hub.download_url_to_file(src.as_uri(), tmp_path / "out" / "copy.bin", hash_prefix=digest[:10],
                                   progress=False)
    assert (tmp_path / "out" / "copy.bin").read_bytes() == src.read_bytes()
    with pytest.raises(OSError):  # (urllib's URLError is an OSError)
        lucid.hub.download_url_to_file((tmp_path / "missing.bin").as_uri(), tmp_path / "x.bin", progress=False)
    assert not (tmp_path / "x.bin").exists()


HUBCONF = '''
dependencies = ["os"]
import lucid.nn as nn
from helpers import width


def tiny(out_features=2, *, bias=True):
    """A tiny linear model."""
    return nn.Linear(width(), out_features, bias=bias)


def _private():
    return None
'''


def test_models_from_a_local_hubconf(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "hubconf.py").write_text(HUBCONF)
    (repo / "helpers.py").write_text("def width():\n    return 4\n")
    # (every public callable, the imported ones too, as torch lists them)
    assert lucid.hub.list(str(repo), source="local") == ["tiny", "width"]
    assert lucid.hub.help(str(repo), "tiny", source="local") == "A tiny linear model."
    m = lucid.hub.load(str(repo), "tiny", 3, source="local", bias=False)
    assert isinstance(m, nn.Linear) and m.weight.shape == (3, 4) and m.bias is None
    with pytest.raises(RuntimeError, match="Cannot find callable missing in hubconf"):
        lucid.hub.load(str(repo), "missing", source="local")
    with pytest.raises(RuntimeError, match="Cannot find callable _private in hubconf"):
        lucid.hub.load(str(repo), "_private", source="local")
    with pytest.raises(ValueError, match="Unknown source"):
        lucid.hub.load(str(repo), "tiny", source="gitlab")
    with pytest.raises(FileNotFoundError, match="Cannot find hubconf.py"):
        lucid.hub.load(str(tmp_path), "tiny", source="local")
    (repo / "hubconf.py").write_text(HUBCONF.replace('["os"]', '["os", "no_such_module_here"]'))
    with pytest.raises(RuntimeError, match="Missing dependencies: no_such_module_here"):
        lucid.hub.load(str(repo), "tiny", source="local")


def test_github_repositories_come_from_the_cache(hub_dir):
    # A repository already in the cache is used without a download (CI has no network).
    folder = hub_dir / "owner_name_v1.0"
    folder.mkdir(parents=True)
    (folder / "hubconf.py").write_text("def answer():\n    return 42\n")
    (folder / "helpers.py").write_text("")
    assert lucid.hub.load("owner/name:v1.0", "answer", verbose=False) == 42
    assert lucid.hub.list("owner/name:v1.0", verbose=False) == ["answer"]
    with pytest.raises(ValueError, match="repo_owner/repo_name"):
        lucid.hub.load("not-a-repo", "answer")
