"""Reading and writing tokenizer files, and the argument checks the tokenizers share.

Formats (Hugging Face's, so published vocabularies load unchanged):
  vocab.json   {"token": id, ...}                       (BPE)
  merges.txt   "#version: 0.2" header, then "left right" per line, line order = rank
  vocab.txt    one token per line, line number = id      (WordPiece and the lookup tokenizers)
  tokenizer.json  {"algo": ..., "model": {"type": ..., "vocab": ..., ...}, ...}
  special_tokens_map.json  {"pad_token": "<pad>", ..., "additional_special_tokens": [...]}
"""

import json
import os

from ._special import SpecialTokens


def check_vocab(vocab, owner: str) -> dict[str, int]:
    """A copy of `vocab` after checking it maps distinct str tokens to distinct ids >= 0."""
    if vocab is None:
        return {}
    if not isinstance(vocab, dict):
        raise TypeError(f"{owner}: vocab must be a dict of token -> id, got {type(vocab).__name__}")
    seen: dict[int, str] = {}
    for token, tid in vocab.items():
        if not isinstance(token, str) or not token:
            raise TypeError(f"{owner}: vocab keys must be non-empty str tokens, got {token!r}")
        if not isinstance(tid, int) or isinstance(tid, bool) or tid < 0:
            raise ValueError(f"{owner}: vocab[{token!r}] = {tid!r}; ids must be ints >= 0")
        if tid in seen:
            raise ValueError(f"{owner}: tokens {seen[tid]!r} and {token!r} share id {tid}; ids must be distinct")
        seen[tid] = token
    return dict(vocab)


def check_vocab_size(vocab_size, owner: str) -> int:
    if not isinstance(vocab_size, int) or isinstance(vocab_size, bool) or vocab_size < 1:
        raise ValueError(f"{owner}.train: vocab_size must be a positive int, got {vocab_size!r}")
    return vocab_size


def check_corpus(corpus, owner: str) -> list[str]:
    """Materialize the training corpus; a lone str would be iterated per character, so refuse it."""
    if isinstance(corpus, str):
        raise TypeError(f"{owner}.train: corpus must be an iterable of documents (str), got a single str; "
                        "wrap it in a list")
    docs = list(corpus)
    for i, doc in enumerate(docs):
        if not isinstance(doc, str):
            raise TypeError(f"{owner}.train: corpus[{i}] is {type(doc).__name__}; every document must be a str")
    return docs


def read_json(path: str, what: str):
    with open(path, encoding="utf-8") as f:
        try:
            return json.load(f)
        except json.JSONDecodeError as e:
            raise ValueError(f"{what}: {path} is not valid JSON ({e})") from None


def write_json(data, path: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False, indent=2)


def require_file(directory: str, names: list[str], owner: str) -> str:
    """The first of `names` that exists in `directory`, else FileNotFoundError listing them."""
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"{owner}.from_file: {directory!r} is not a directory")
    for name in names:
        path = os.path.join(directory, name)
        if os.path.isfile(path):
            return path
    raise FileNotFoundError(f"{owner}.from_file: none of {', '.join(names)} found in {directory!r}")


def read_model_block(directory: str, owner: str) -> dict | None:
    """tokenizer.json's "model" object when the file exists, else None."""
    path = os.path.join(directory, "tokenizer.json")
    if not os.path.isfile(path):
        return None
    data = read_json(path, owner)
    model = data.get("model") if isinstance(data, dict) else None
    if not isinstance(model, dict):
        raise ValueError(f"{owner}.from_file: {path} has no \"model\" object")
    return model


def load_special_tokens(directory: str, override: SpecialTokens | None) -> SpecialTokens | None:
    """`override` if given, else the saved registry: tokenizer.json's "special_tokens"
    (lucid's, which keeps extra's names), then special_tokens_map.json, else None."""
    if override is not None:
        return override
    unified = os.path.join(directory, "tokenizer.json")
    if os.path.isfile(unified):
        data = read_json(unified, "special tokens")
        if isinstance(data, dict) and isinstance(data.get("special_tokens"), dict):
            return SpecialTokens(**data["special_tokens"])
    path = os.path.join(directory, "special_tokens_map.json")
    if os.path.isfile(path):
        return SpecialTokens.from_map(read_json(path, "special_tokens_map.json"))
    return None


def write_vocab_txt(vocab: dict[str, int], path: str) -> None:
    """One token per line at line number = id; ids missing from the vocab leave empty lines."""
    if any("\n" in token or "\r" in token for token in vocab):
        # A line-per-token file cannot hold such a token. tokenizer.json, written alongside
        # and read first, can; drop any older vocab.txt so no stale copy is left behind.
        if os.path.isfile(path):
            os.remove(path)
        return
    by_id = {tid: token for token, tid in vocab.items()}
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for tid in range(max(by_id, default=-1) + 1):
            f.write(by_id.get(tid, "") + "\n")


def read_vocab_txt(path: str) -> dict[str, int]:
    vocab: dict[str, int] = {}
    with open(path, encoding="utf-8", newline="\n") as f:
        for tid, line in enumerate(f):
            token = line.rstrip("\n").rstrip("\r")
            if token:
                vocab.setdefault(token, tid)
    return vocab


def parse_merge(entry, where: str) -> tuple[str, str]:
    """A merge given as "left right" (split at the last space) or as a [left, right] pair."""
    if isinstance(entry, str):
        cut = entry.rfind(" ")
        if cut <= 0 or cut == len(entry) - 1:
            raise ValueError(f"{where}: malformed merge {entry!r}; expected 'left right'")
        return entry[:cut], entry[cut + 1:]
    if isinstance(entry, (list, tuple)) and len(entry) == 2 and all(isinstance(s, str) and s for s in entry):
        return entry[0], entry[1]
    raise ValueError(f"{where}: malformed merge {entry!r}; expected a (left, right) pair of non-empty str")


def write_merges_txt(merges: list[tuple[str, str]], path: str) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write("#version: 0.2\n")
        for left, right in merges:
            f.write(f"{left} {right}\n")


def read_merges_txt(path: str) -> list[tuple[str, str]]:
    merges = []
    with open(path, encoding="utf-8", newline="\n") as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n").rstrip("\r")
            if not line or (number == 1 and line.startswith("#version")):
                continue
            merges.append(parse_merge(line, f"{path} line {number}"))
    return merges
