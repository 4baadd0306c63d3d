"""A small word-level tokenizer fitted to an environment's text.

E1's prompts are Zeek conn records: ``key=value`` fields, addresses, numbers.
Pieces are cut by regular expressions (the JSON scaffolding of an answer,
``key=value`` fields, ``key=`` names, words, numbers, single characters); a
piece in the vocabulary is one token, anything else is spelled character by
character, so every printable-ASCII text round-trips (``decode(encode(s)) ==
s``). Frequent words and numbers of the training prompts become tokens, and
every confidence value ``0.00`` … ``1.00`` is one token, so an answer is
about six tokens: ``{"label": "`` ``Malicious`` ``", "confidence": ``
``0.9`` ``}`` ``<eos>``.

Two choices make a record readable by a model of a million parameters
(issue #42: with ``key=`` and value as separate tokens and byte counts
spelled digit by digit, the warm start ended at the label prior on dev):

- A whole ``key=value`` field that is frequent in the training prompts is
  one token (`` direction=internal``, `` failed_auth=2``,
  `` interval_cv=0.12``), as a byte-pair merge fitted to this text would make
  it; a rare one falls back to its ``key=`` and value pieces.
- A number too rare to be a token is spelled digit by digit after a
  magnitude token that says how many digits its integer part has, bound to
  its key when it has one (`` orig_bytes=<n11>``, which decodes to
  `` orig_bytes=``; a bare ``<n11>`` decodes to nothing). What the site
  baseline asks of a byte count is its size (10 MB or more): spelled alone, a
  small model must count digits across positions to see it.
"""

from __future__ import annotations

import collections
import json
import re
from typing import Iterable

PAD, BOS, EOS, ANS, UNK = "<pad>", "<bos>", "<eos>", "<answer>", "<unk>"
SPECIALS = [PAD, BOS, EOS, ANS, UNK]

# Magnitude tokens of spelled numbers: <n1> … <n20>, by the number of digits
# of the integer part (more than 20 share <n20>).
MAX_DIGITS = 20
MAGNITUDES = ["<n%d>" % i for i in range(1, MAX_DIGITS + 1)]
_MAGNITUDE = re.compile(r"(.*)<n(\d+)>$", re.S)
_NUMBER = re.compile(r" ?(\d+)(?:\.\d+)?")
_FIELD = re.compile(r"( ?[A-Za-z_][A-Za-z_0-9]*=)(\S+)")

# The answer's JSON scaffolding, longest first so the regex prefers them.
ATOMS = [
    '{"label": "',
    '", "confidence": ',
    ', "rationale": "',
    '"}',
]

_SUB = (
    r"| ?[A-Za-z_][A-Za-z_0-9]*=?"  # words and key= names, with their leading space
    + r"| ?\d+(?:\.\d+)?"  # numbers, with their leading space
    + r"|\s+"  # whitespace runs
    + r"|."  # anything else, one character
)
_ATOMS = "|".join(re.escape(a) for a in ATOMS)
_PIECE = re.compile(_ATOMS + r"| ?[A-Za-z_][A-Za-z_0-9]*=\S+" + _SUB, re.S)
_SUBPIECE = re.compile(_ATOMS + _SUB, re.S)


def pieces(text: str) -> list[str]:
    return _PIECE.findall(text)


def _magnitude(num: str) -> int:
    m = _NUMBER.fullmatch(num)
    return min(len(m.group(1)), MAX_DIGITS) if m else 0


def _confidences() -> list[str]:
    out = {"0", "1", "0.0", "1.0", "0.5", "1.00"}
    for i in range(101):
        out.add("%.2f" % (i / 100))
        out.add(repr(i / 100) if i % 10 else "%.1f" % (i / 100))
    return sorted(out)


# How a prompt is encoded: "text" keeps every character (lossless); "fields"
# keeps the record's fields and nothing else: each frequent key=value as its
# token, a rare numeric field as its key's magnitude token, a rare textual
# one as its key and the words in it (a timestamp's hour token, T03); the
# digits and punctuation of addresses, ports, timestamps and rare numbers,
# and text outside fields, are dropped. Answers are always encoded
# losslessly.
PROMPT_MODES = ("text", "fields")


class Tokenizer:
    def __init__(self, vocab: list[str], constant_lines: list[str] | None = None, prompt_mode: str = "text"):
        if prompt_mode not in PROMPT_MODES:
            raise ValueError("prompt mode %r is not one of %s" % (prompt_mode, ", ".join(PROMPT_MODES)))
        self.prompt_mode = prompt_mode
        self.vocab = list(vocab)
        # Lines every training prompt shares (the record's header, the
        # question): they carry nothing, so prompts are encoded without them.
        self.constant_lines = set(constant_lines or [])
        self.index = {t: i for i, t in enumerate(self.vocab)}
        self.pad_id = self.index[PAD]
        self.bos_id = self.index[BOS]
        self.eos_id = self.index[EOS]
        self.ans_id = self.index[ANS]
        self.unk_id = self.index[UNK]
        # What each token decodes to: a magnitude token to its key (or
        # nothing), a special to nothing. A vocabulary saved before magnitude
        # tokens existed has none, and encodes as it did.
        self.text = []
        for t in self.vocab:
            m = _MAGNITUDE.fullmatch(t)
            self.text.append("" if t in SPECIALS else (m.group(1) if m else t))
        self.magnitudes = all(t in self.index for t in MAGNITUDES)

    def __len__(self) -> int:
        return len(self.vocab)

    @classmethod
    def fit(cls, texts: Iterable[str], max_words: int = 3000, min_count: int = 3, prompts: Iterable[str] = (),
            prompt_mode: str = "text") -> "Tokenizer":
        counts: collections.Counter[str] = collections.Counter()
        for t in texts:
            for p in pieces(t):
                if len(p) <= 1:
                    continue
                counts[p] += 1
                f = _FIELD.fullmatch(p)
                if f:
                    # A rare field falls back to its parts: they count too,
                    # and so does the key's magnitude token of a number.
                    for q in _SUBPIECE.findall(f.group(1)) + _SUBPIECE.findall(f.group(2)):
                        if len(q) > 1:
                            counts[q] += 1
                    if _NUMBER.fullmatch(f.group(2)):
                        counts["%s<n%d>" % (f.group(1), _magnitude(f.group(2)))] += 1
        prompts = list(prompts)
        lines: collections.Counter[str] = collections.Counter()
        for t in prompts:
            lines.update(set(t.split("\n")))
        constant = sorted(l for l, n in lines.items() if prompts and n == len(prompts) and l.strip())
        chars = [chr(c) for c in range(32, 127)] + ["\n", "\t"]
        vocab = SPECIALS + ATOMS + chars + ["Malicious", "Benign", "Abstain"] + _confidences() + MAGNITUDES
        seen = set(vocab)
        base = len(vocab)
        for p, n in counts.most_common():
            if len(vocab) >= base + max_words or n < min_count:
                break
            if p not in seen:
                vocab.append(p)
                seen.add(p)
        return cls(vocab, constant, prompt_mode)

    def encode_prompt(self, text: str) -> list[int]:
        if self.constant_lines:
            text = "\n".join(l for l in text.split("\n") if l not in self.constant_lines)
        if self.prompt_mode == "fields":
            return self._encode_fields(text)
        return self.encode(text)

    def _encode_fields(self, text: str) -> list[int]:
        out: list[int] = []

        def word(p: str) -> None:
            i = self.index.get(p)
            if i is not None and p.strip()[:1].isalpha():
                out.append(i)

        for p in pieces(text):
            f = _FIELD.fullmatch(p)
            if not f:
                continue
            i = self.index.get(p)
            if i is not None:
                out.append(i)
                continue
            if _NUMBER.fullmatch(f.group(2)) and self.magnitudes:
                hint = self.index.get("%s<n%d>" % (f.group(1), _magnitude(f.group(2))))
                if hint is not None:
                    out.append(hint)
                    continue
            key = self.index.get(f.group(1))
            if key is not None:
                out.append(key)
            for q in _SUBPIECE.findall(f.group(2)):
                word(q)
        return out

    def encode(self, text: str) -> list[int]:
        out: list[int] = []
        for p in pieces(text):
            i = self.index.get(p)
            if i is not None:
                out.append(i)
                continue
            f = _FIELD.fullmatch(p)
            if f and self.magnitudes and _NUMBER.fullmatch(f.group(2)):
                hint = self.index.get("%s<n%d>" % (f.group(1), _magnitude(f.group(2))))
                if hint is not None:
                    out.append(hint)
                    self._spell(f.group(2), out, magnitude=False)
                    continue
            if f:
                for q in _SUBPIECE.findall(p):
                    self._spell(q, out)
                continue
            self._spell(p, out)
        return out

    def _spell(self, p: str, out: list[int], magnitude: bool = True) -> None:
        """One piece: its token, or its characters (a number's after its
        magnitude token)."""
        i = self.index.get(p)
        if i is not None:
            out.append(i)
            return
        if magnitude and self.magnitudes and _NUMBER.fullmatch(p):
            out.append(self.index[MAGNITUDES[_magnitude(p) - 1]])
        for ch in p:
            out.append(self.index.get(ch, self.unk_id))

    def decode(self, ids: Iterable[int]) -> str:
        out = []
        for i in ids:
            if i == self.eos_id:
                break
            out.append(self.text[i])
        return "".join(out)

    def save(self, path: str) -> None:
        with open(path, "w") as f:
            json.dump({"kind": "svtrain-word", "vocab": self.vocab, "constant_lines": sorted(self.constant_lines),
                       "prompt_mode": self.prompt_mode}, f)

    @classmethod
    def load(cls, path: str) -> "Tokenizer":
        with open(path) as f:
            d = json.load(f)
            return cls(d["vocab"], d.get("constant_lines"), d.get("prompt_mode", "text"))
