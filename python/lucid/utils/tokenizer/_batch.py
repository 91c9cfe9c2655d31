"""Tokenizer.__call__: encode one text or a batch for a model, Hugging Face style.

Returns {"input_ids", "special_tokens_mask", "attention_mask"}: lists for one text, lists
of lists for a batch, or int32 lucid tensors with return_tensors="lucid" (a batch must then
be rectangular, i.e. padded or of equal lengths).
"""

_PADDING_CHOICES = (False, True, "longest", "max_length", "do_not_pad")


def encode_for_model(tokenizer, text, *, add_special_tokens, padding, truncation, max_length,
                     return_tensors, return_attention_mask) -> dict[str, object]:
    name = type(tokenizer).__name__
    batched = isinstance(text, (list, tuple))
    texts = list(text) if batched else [text]
    if not all(isinstance(t, str) for t in texts):
        raise TypeError(f"{name}.__call__: text must be a str or a list of str, got {type(text).__name__}"
                        + (" holding non-str items" if batched else ""))
    if padding not in _PADDING_CHOICES:
        raise ValueError(f"{name}.__call__: padding={padding!r}; expected one of False, True, 'longest', 'max_length'")
    if max_length is not None and (not isinstance(max_length, int) or isinstance(max_length, bool) or max_length < 0):
        raise ValueError(f"{name}.__call__: max_length must be a non-negative int or None, got {max_length!r}")
    if return_tensors not in (None, "lucid"):
        raise ValueError(f"{name}.__call__: return_tensors={return_tensors!r}; "
                         "only 'lucid' (or None for lists) is supported")

    rows = tokenizer.encode_batch(texts, add_special_tokens=add_special_tokens)
    if truncation:
        if max_length is None:
            raise ValueError(f"{name}.__call__: truncation=True needs max_length")
        rows = [ids[:max_length] for ids in rows]

    lengths = [len(ids) for ids in rows]
    if padding in (True, "longest"):
        target = max(lengths, default=0)
    elif padding == "max_length":
        if max_length is None:
            raise ValueError(f"{name}.__call__: padding='max_length' needs max_length")
        longest = max(lengths, default=0)
        if longest > max_length:
            raise ValueError(f"{name}.__call__: a sequence has {longest} ids, more than max_length={max_length}; "
                             "pass truncation=True to cut it")
        target = max_length
    else:
        target = None
    if target is not None and any(n < target for n in lengths):
        pad_id = tokenizer.pad_token_id
        if pad_id is None:
            raise ValueError(f"{name}.__call__: padding needs a pad token, and this tokenizer has none in its "
                             "vocabulary; set special_tokens=SpecialTokens(pad=...) with a token the vocab holds")
        rows = [ids + [pad_id] * (target - len(ids)) for ids in rows]

    specials = set(tokenizer.all_special_ids)
    out: dict[str, object] = {
        "input_ids": rows,
        "special_tokens_mask": [[int(i in specials) for i in ids] for ids in rows],
    }
    if return_attention_mask:
        out["attention_mask"] = [[1] * n + [0] * (len(ids) - n) for n, ids in zip(lengths, rows)]
    if not batched:
        out = {key: value[0] for key, value in out.items()}
    if return_tensors == "lucid":
        out = _as_tensors(out, batched, name)
    return out


def _as_tensors(out: dict[str, object], batched: bool, name: str) -> dict[str, object]:
    import lucid

    if batched:
        widths = {len(row) for row in out["input_ids"]}
        if len(widths) > 1:
            raise ValueError(f"{name}.__call__: return_tensors='lucid' needs equal lengths, got {sorted(widths)}; "
                             "pass padding=True")
    return {key: lucid.tensor(value, dtype=lucid.int32) for key, value in out.items()}
