"""E2 through sessions: a tiny policy that calls the scanners, reads their
findings and answers with violations and a JSON Patch (issue #42 item 3).

Every episode is a `/v1/sessions` episode, the route a trainer drives: the
policy's first turn names the tools it calls, svbench runs them (kube-linter,
OPA, trivy) and returns their findings, the policy's second turn is the
answer, and the session's end scores it with the executable rubric. Nothing
here judges an answer.

What a policy of a million parameters can read and write is chosen here, as a
tokenizer is (the E1 policy reads ``key=value`` fields as tokens):

- the file is read as its YAML leaves, each a JSON Pointer token (with the
  document index first in a multi-document file, as E2's JSON Patch addresses
  it) and a value token; a rare pointer or value is ``<unk>``;
- a tool result is read as its findings' ``tool/rule_id`` and severity tokens
  (the message and line numbers are dropped; a result that is not a findings
  list is one ``<tool-error>`` token);
- the first turn's tokens are tool names: the harness sends each as a call
  with the one argument E2's tools take, the path the prompt gives;
- the answer's tokens are pieces of its JSON text (``{"id": "kube-linter/
  privileged", "severity": "``, ``high"}``, a pointer, ``, "value": false}``):
  the text they concatenate to is what the session scores, so an answer out
  of order is invalid JSON and scores as such.

Kubernetes rows only: the teacher's Terraform fixes are HCL edits that a JSON
Patch cannot express, and a policy of this size does not write HCL.
"""

from __future__ import annotations

import collections
import concurrent.futures
import json
import re
from typing import Any

import yaml

from svbench._session import Episode

TOOLS = ("run_kubelinter", "run_opa", "run_trivy")
PAD, BOS, EOS, UNK, CALL, OBS, ANS, TOOLERR = "<pad>", "<bos>", "<eos>", "<unk>", "<call>", "<obs>", "<answer>", "<tool-error>"
SPECIALS = [PAD, BOS, EOS, UNK, CALL, OBS, ANS, TOOLERR]
A_OPEN = '{"violations": ['
A_SEP = ", "
A_PATCH = '], "patch": ['
A_CLOSE = '], "confidence": 0.9}'
A_NOPATCH = '], "patch": "", "confidence": 0.9}'
RETAG = ', "value": <retag:%s>}'
_RETAG = re.compile(r', "value": <retag:([^>]*)>\}')
MAX_LEAVES = 160


def file_of(example: dict) -> tuple[str, str]:
    """The fixture's path and text, from the served example's answer (the
    prompt says the same: ``File path: P`` then the file)."""
    a = example.get("answer") or {}
    text = example["prompt"][-1]["content"]
    head, _, body = text.partition("\n\n")
    path = a.get("fixture_path") or head.removeprefix("File path: ").strip()
    return path, body


def docs_of(text: str) -> tuple[list[Any], bool]:
    docs = [d for d in yaml.safe_load_all(text) if d is not None]
    return docs, len(docs) > 1


def _esc(k: Any) -> str:
    return str(k).replace("~", "~0").replace("/", "~1")


def leaves(node: Any, prefix: str = "") -> list[tuple[str, Any]]:
    if isinstance(node, dict):
        out = []
        for k, v in node.items():
            out.extend(leaves(v, prefix + "/" + _esc(k)))
        return out or [(prefix, {})]
    if isinstance(node, list):
        out = []
        for i, v in enumerate(node):
            out.extend(leaves(v, "%s/%d" % (prefix, i)))
        return out or [(prefix, [])]
    return [(prefix, node)]


def root_of(docs: list[Any], multi: bool) -> Any:
    return docs if multi else docs[0]


# --- the teacher's fix as a JSON Patch -----------------------------------

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def apply_unified(orig: str, diff: str) -> str:
    """Apply an exact unified diff (what builtin:tool-autofix writes)."""
    src = orig.split("\n")
    out: list[str] = []
    pos = 0
    lines = diff.split("\n")
    i = 0
    while i < len(lines):
        m = _HUNK.match(lines[i])
        if not m:
            i += 1
            continue
        start = int(m.group(1)) - 1 if (m.group(2) or "1") != "0" else int(m.group(1))
        out.extend(src[pos:start])
        pos = start
        i += 1
        while i < len(lines) and not lines[i].startswith("@@"):
            ln = lines[i]
            if ln.startswith("+"):
                out.append(ln[1:])
            elif ln.startswith("-"):
                if src[pos] != ln[1:]:
                    raise ValueError("diff does not apply at line %d" % (pos + 1))
                pos += 1
            elif ln.startswith(" ") or (ln == "" and i + 1 < len(lines)):
                if pos < len(src):
                    out.append(src[pos])
                pos += 1
            i += 1
    out.extend(src[pos:])
    return "\n".join(out)


def tree_patch(a: Any, b: Any, path: str = "") -> list[dict]:
    """RFC 6902 operations turning a into b: objects member by member, lists
    of equal length item by item, anything else replaced whole."""
    if isinstance(a, dict) and isinstance(b, dict):
        ops = []
        for k in a:
            if k not in b:
                ops.append({"op": "remove", "path": path + "/" + _esc(k)})
        for k, v in b.items():
            if k not in a:
                ops.append({"op": "add", "path": path + "/" + _esc(k), "value": v})
            else:
                ops.extend(tree_patch(a[k], v, path + "/" + _esc(k)))
        return ops
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        ops = []
        for i, (x, y) in enumerate(zip(a, b)):
            ops.extend(tree_patch(x, y, "%s/%d" % (path, i)))
        return ops
    if a == b:
        return []
    return [{"op": "replace", "path": path, "value": b}]


def untagged(image: str) -> str:
    name, sep, tag = image.rpartition(":")
    return name if sep and "/" not in tag else image


def mark_retags(ops: list[dict], leafmap: dict[str, Any]) -> list[dict]:
    """A replaced image that keeps its repository and changes its tag is
    written as the tag alone (the value token ``<retag:TAG>``): the image
    names are the file's, different in every row, and a policy that had to
    spell them would change the repository, which the rubric calls
    destructive."""
    out = []
    for op in ops:
        old, new = leafmap.get(op["path"]), op.get("value")
        if op["op"] == "replace" and isinstance(old, str) and isinstance(new, str) and ":" in new \
                and untagged(new) == untagged(old) and new != old:
            op = {"op": "replace", "path": op["path"], "retag": new.rpartition(":")[2]}
        out.append(op)
    return out


def leafmap_of(example: dict) -> dict[str, Any]:
    _, text = file_of(example)
    try:
        docs, multi = docs_of(text)
    except yaml.YAMLError:
        return {}
    return dict(leaves(root_of(docs, multi))) if docs else {}


def teacher_answer(example: dict, final_text: str) -> dict | None:
    """The teacher's final answer with its unified diff rewritten as the JSON
    Patch between the file and the teacher's fixed file (None when the diff
    does not apply or the file does not parse)."""
    try:
        ans = json.loads(final_text)
    except ValueError:
        return None
    _, text = file_of(example)
    patch = ans.get("patch") or ""
    ops: list[dict] = []
    if patch:
        try:
            fixed = apply_unified(text, patch)
            a, multi = docs_of(text)
            b, multi_b = docs_of(fixed)
        except (ValueError, IndexError, yaml.YAMLError):
            return None
        if multi != multi_b or not a:
            return None
        ops = mark_retags(tree_patch(root_of(a, multi), root_of(b, multi)), dict(leaves(root_of(a, multi))))
    return {"violations": ans.get("violations") or [], "patch": ops, "confidence": 0.9}


# --- the policy's view -----------------------------------------------------

def _val(v: Any) -> str:
    return json.dumps(v, sort_keys=True, separators=(", ", ": "))


def prompt_pieces(example: dict) -> list[str]:
    _, text = file_of(example)
    try:
        docs, multi = docs_of(text)
    except yaml.YAMLError:
        return [UNK]
    out = []
    for p, v in leaves(root_of(docs, multi))[:MAX_LEAVES]:
        out += [json.dumps(p), "=" + _val(v)]
    return out


def obs_pieces(observations: list[dict]) -> list[str]:
    out = []
    for o in observations:
        if o.get("role") != "tool":
            continue
        try:
            findings = json.loads(o.get("content") or "")
            assert isinstance(findings, list)
            for f in findings:
                out += ["%s/%s" % (f["tool"], f["rule_id"]), "sev:" + str(f.get("severity"))]
        except (ValueError, AssertionError, KeyError, TypeError):
            out.append(TOOLERR)
    return out


def answer_pieces(ans: dict) -> list[str]:
    out = [A_OPEN]
    for i, v in enumerate(ans.get("violations") or []):
        if i:
            out.append(A_SEP)
        out += ['{"id": "%s", "severity": "' % v["id"], '%s"}' % v.get("severity", "med")]
    ops = ans.get("patch") or []
    if not ops:
        return out + [A_NOPATCH]
    out.append(A_PATCH)
    for i, op in enumerate(ops):
        if i:
            out.append(A_SEP)
        out += ['{"op": "%s", "path": ' % op["op"], json.dumps(op["path"])]
        if "retag" in op:
            out.append(RETAG % op["retag"])
        else:
            out.append("}" if op["op"] == "remove" else ', "value": %s}' % _val(op.get("value")))
    out.append(A_CLOSE)
    return out


def answer_text(vocab: "Vocab", ids: list[int], leafmap: dict[str, Any]) -> str:
    """The answer's text: its pieces concatenated, a ``<retag:TAG>`` value
    filled from the file (the image at the pointer just written, tag
    replaced; null when there is none, which the rubric scores as it is)."""
    out, path = [], None
    for i in ids:
        p = vocab.itos[i]
        if p in SPECIALS:
            continue
        m = _RETAG.fullmatch(p)
        if m:
            old = leafmap.get(path or "")
            val = untagged(old) + ":" + m.group(1) if isinstance(old, str) else None
            out.append(', "value": %s}' % json.dumps(val))
            continue
        if p.startswith('"/') or p == '""':
            path = json.loads(p)
        out.append(p)
    return "".join(out)


class Vocab:
    """Closed vocabulary over the view's pieces. Pieces the policy writes
    (tool names, answer pieces) are all kept; prompt and observation pieces
    seen fewer than min_count times read as <unk>."""

    def __init__(self, pieces: list[str]):
        self.itos = list(pieces)
        self.stoi = {p: i for i, p in enumerate(self.itos)}

    @classmethod
    def fit(cls, read: list[list[str]], written: list[list[str]], min_count: int = 2) -> "Vocab":
        c = collections.Counter(p for seq in read for p in seq)
        keep = set(p for seq in written for p in seq) | set(TOOLS)
        keep |= {p for p, n in c.items() if n >= min_count}
        return cls(SPECIALS + sorted(keep - set(SPECIALS)))

    def ids(self, pieces: list[str]) -> list[int]:
        u = self.stoi[UNK]
        return [self.stoi.get(p, u) for p in pieces]

    def text(self, ids: list[int]) -> str:
        return "".join(self.itos[i] for i in ids if self.itos[i] not in SPECIALS)

    def to_dict(self) -> dict:
        return {"itos": self.itos}

    def __getitem__(self, p: str) -> int:
        return self.stoi[p]

    def __len__(self) -> int:
        return len(self.itos)


def tool_calls(vocab: Vocab, ids: list[int], path: str) -> list[dict]:
    """The first turn's tool-name tokens as calls (repeats are sent too:
    the episode's tool budget is the environment's to enforce)."""
    calls = []
    for i in ids:
        name = vocab.itos[i]
        if name in TOOLS:
            calls.append({"id": "call_%d" % (len(calls) + 1), "name": name, "arguments": json.dumps({"path": path})})
    return calls


class Sessions:
    """Episodes against `svbench serve`, a bounded pool of them at once."""

    def __init__(self, client, workers: int = 8):
        self.client = client
        self.pool = concurrent.futures.ThreadPoolExecutor(workers)

    def open(self, example_ids: list[str]) -> list[Episode]:
        def one(eid):
            return Episode(self.client, {"env": "e2", "example_id": eid}, idle_timeout_s=300).open()
        return list(self.pool.map(one, example_ids))

    def step(self, eps: list[Episode], messages: list[dict | None]) -> list[list[dict]]:
        def one(pair):
            ep, msg = pair
            if msg is None or ep.done:
                return []
            return ep.step(msg)
        return list(self.pool.map(one, zip(eps, messages)))

    def close(self, eps: list[Episode]) -> None:
        list(self.pool.map(lambda e: e.close(), eps))


def episode_stats(ep: Episode, n_calls: int) -> dict:
    s = ep.score or {}
    p = s.get("parsed") or {}
    return {
        "example_id": ep.task.get("example_id"),
        "reward": float(s.get("reward") or 0.0),
        "components": s.get("components") or {},
        "f1": float(p.get("f1") or 0.0),
        "fix": float(p.get("fix_score") or 0.0),
        "patch_applied": bool(p.get("patch_applied")),
        "patch_provided": bool(p.get("patch_provided")),
        "format": bool(p.get("format_valid")),
        "solved": bool(s.get("solved")),
        "tool_calls": n_calls,
        "reason": ep.reason,
        "error": ep.error,
    }
