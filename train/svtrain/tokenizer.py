"""A small word-level tokenizer fitted to an environment's text.

E1's prompts are Zeek conn records: ``key=value`` fields, addresses, numbers.
Pieces are cut by one regular expression (the JSON scaffolding of an answer,
``key=`` names, words, numbers, single characters); a piece in the vocabulary
is one token, anything else is spelled character by character, so every
printable-ASCII text round-trips (``decode(encode(s)) == s``). Frequent words
and numbers of the training prompts become tokens, and every confidence value
``0.00`` … ``1.00`` is one token, so an answer is about six tokens:
``{"label": "`` ``Malicious`` ``", "confidence": `` ``0.9`` ``}`` ``<eos>``.
"""

from __future__ import annotations

import collections
import json
import re
from typing import Iterable

PAD, BOS, EOS, ANS, UNK = "<pad>", "<bos>", "<eos>", "<answer>", "<unk>"
SPECIALS = [PAD, BOS, EOS, ANS, UNK]

# The answer's JSON scaffolding, longest first so the regex prefers them.
ATOMS = [
    '{"label": "',
    '", "confidence": ',
    ', "rationale": "',
    '"}',
]

_PIECE = re.compile(
    "|".join(re.escape(a) for a in ATOMS)
    + r"| ?[A-Za-z_][A-Za-z_0-9]*=?"  # words and key= names, with their leading space
    + r"| ?\d+(?:\.\d+)?"  # numbers, with their leading space
    + r"|\s+"  # whitespace runs
    + r"|."  # anything else, one character
    ,
    re.S,
)


def pieces(text: str) -> list[str]:
    return _PIECE.findall(text)


def _confidences() -> list[str]:
    out = {"0", "1", "0.0", "1.0", "0.5", "1.00"}
    for i in range(101):
        out.add("%.2f" % (i / 100))
        out.add(repr(i / 100) if i % 10 else "%.1f" % (i / 100))
    return sorted(out)


class Tokenizer:
    def __init__(self, vocab: list[str], constant_lines: list[str] | None = None):
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

    def __len__(self) -> int:
        return len(self.vocab)

    @classmethod
    def fit(cls, texts: Iterable[str], max_words: int = 1500, min_count: int = 3, prompts: Iterable[str] = ()) -> "Tokenizer":
        counts: collections.Counter[str] = collections.Counter()
        for t in texts:
            for p in pieces(t):
                if len(p) > 1:
                    counts[p] += 1
        prompts = list(prompts)
        lines: collections.Counter[str] = collections.Counter()
        for t in prompts:
            lines.update(set(t.split("\n")))
        constant = sorted(l for l, n in lines.items() if prompts and n == len(prompts) and l.strip())
        chars = [chr(c) for c in range(32, 127)] + ["\n", "\t"]
        vocab = SPECIALS + ATOMS + chars + ["Malicious", "Benign", "Abstain"] + _confidences()
        seen = set(vocab)
        for p, n in counts.most_common():
            if len(vocab) >= len(SPECIALS) + max_words + 300 or n < min_count:
                break
            if p not in seen:
                vocab.append(p)
                seen.add(p)
        return cls(vocab, constant)

    def encode_prompt(self, text: str) -> list[int]:
        if self.constant_lines:
            text = "\n".join(l for l in text.split("\n") if l not in self.constant_lines)
        return self.encode(text)

    def encode(self, text: str) -> list[int]:
        out: list[int] = []
        for p in pieces(text):
            i = self.index.get(p)
            if i is not None:
                out.append(i)
                continue
            for ch in p:
                out.append(self.index.get(ch, self.unk_id))
        return out

    def decode(self, ids: Iterable[int]) -> str:
        out = []
        for i in ids:
            t = self.vocab[i]
            if t == EOS:
                break
            if t in SPECIALS:
                continue
            out.append(t)
        return "".join(out)

    def save(self, path: str) -> None:
        with open(path, "w") as f:
            json.dump({"kind": "svtrain-word", "vocab": self.vocab, "constant_lines": sorted(self.constant_lines)}, f)

    @classmethod
    def load(cls, path: str) -> "Tokenizer":
        with open(path) as f:
            d = json.load(f)
            return cls(d["vocab"], d.get("constant_lines"))
