"""SpecialTokens: the named special-token slots every tokenizer shares.

The slots hold surface forms ("<pad>", "[CLS]"); ids are looked up in the tokenizer's vocab,
so one registry can be handed to tokenizers with different vocabularies.
"""

from dataclasses import dataclass, field

# Canonical slot order: ids are resolved, reserved by `train` and saved in this order.
CANONICAL_SLOTS = ("pad", "unk", "bos", "eos", "mask", "sep", "cls")


@dataclass
class SpecialTokens:
    """Registry of special-token surface forms.

    Each canonical slot (pad, unk, bos, eos, mask, sep, cls) is None when the tokenizer has
    no such token; `extra` maps further names to surface forms (GPT-2's "<|endoftext|>",
    ChatML's "<|im_start|>").

        SpecialTokens(unk="[UNK]", cls="[CLS]", sep="[SEP]", pad="[PAD]", mask="[MASK]")
    """

    pad: str | None = None
    unk: str | None = None
    bos: str | None = None
    eos: str | None = None
    mask: str | None = None
    sep: str | None = None
    cls: str | None = None
    extra: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in CANONICAL_SLOTS:
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise TypeError(f"SpecialTokens.{name} must be a str or None, got {type(value).__name__}")
            if value == "":
                raise ValueError(f"SpecialTokens.{name} is the empty string; use None for no token")
        if not isinstance(self.extra, dict):
            raise TypeError(f"SpecialTokens.extra must be a dict of name -> str, got {type(self.extra).__name__}")
        for name, value in self.extra.items():
            if not isinstance(name, str) or not isinstance(value, str) or not value:
                raise TypeError("SpecialTokens.extra must map str names to non-empty str tokens, "
                                f"got {name!r}: {value!r}")
            if name in CANONICAL_SLOTS:
                raise ValueError(f"SpecialTokens.extra key {name!r} shadows the canonical slot; "
                                 f"set SpecialTokens.{name} instead")

    def named(self) -> list[tuple[str, str]]:
        """(slot name, surface form) for every defined token: canonical slots first, then extra."""
        out = [(name, getattr(self, name)) for name in CANONICAL_SLOTS if getattr(self, name) is not None]
        out.extend(self.extra.items())
        return out

    def all_tokens(self) -> list[str]:
        """Every defined surface form, canonical slots first, without duplicates."""
        seen: list[str] = []
        for _, token in self.named():
            if token not in seen:
                seen.append(token)
        return seen

    def to_map(self) -> dict[str, object]:
        """Hugging Face's special_tokens_map.json layout ("pad_token", ..., "additional_special_tokens")."""
        out: dict[str, object] = {f"{name}_token": getattr(self, name)
                                  for name in CANONICAL_SLOTS if getattr(self, name) is not None}
        if self.extra:
            out["additional_special_tokens"] = list(self.extra.values())
            # Not a Hugging Face key (it ignores it): keeps extra's names across save/load.
            out["additional_special_token_names"] = list(self.extra.keys())
        return out

    @classmethod
    def from_map(cls, data: dict) -> "SpecialTokens":
        """Parse a special_tokens_map.json object: values are strings or {"content": ...} objects."""
        if not isinstance(data, dict):
            raise ValueError(f"special_tokens_map must be a JSON object, got {type(data).__name__}")

        def surface(key: str) -> str | None:
            value = data.get(key)
            if isinstance(value, dict):
                value = value.get("content")
            if value is not None and not isinstance(value, str):
                raise ValueError(f"special_tokens_map[{key!r}] must be a string or {{'content': str}}, got {value!r}")
            return value or None

        extra: dict[str, str] = {}
        names = data.get("additional_special_token_names")  # written by lucid to keep extra's keys
        additional = data.get("additional_special_tokens") or []
        if not isinstance(additional, list):
            raise ValueError("special_tokens_map['additional_special_tokens'] must be a list")
        for i, value in enumerate(additional):
            token = value.get("content") if isinstance(value, dict) else value
            if not isinstance(token, str):
                raise ValueError(f"additional_special_tokens[{i}] must be a string, got {value!r}")
            name = names[i] if isinstance(names, list) and i < len(names) else f"additional_{i}"
            extra[name] = token
        return cls(**{name: surface(f"{name}_token") for name in CANONICAL_SLOTS}, extra=extra)
