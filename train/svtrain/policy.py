"""Policy backends: the one GRPO loop drives either.

``TinyPolicy``: the from-scratch TinyLM with the environment-fitted tokenizer
(CPU by default, any torch device with ``device``). ``HFPolicy``: any Hugging Face causal LM (``--hf-model NAME``), with
LoRA adapters through peft when it is installed; transformers is imported only
when that backend is chosen.

Both expose the same methods: ``prompt_ids`` (the example's prompt messages →
token ids), ``answer_ids`` (a target answer → ids ending with EOS),
``decode``, ``sample`` (G completions per prompt, with their sampling
log-probabilities) and ``logprobs`` (per-token log-probabilities of given
completions, with gradients), plus ``parameters``, ``train``, ``eval``,
``save`` and ``describe``.
"""

from __future__ import annotations

import json
import os
from typing import Any

import torch
import torch.nn.functional as F

from svtrain.model import LMConfig, TinyLM, completion_logprobs, sample
from svtrain.tokenizer import Tokenizer

Messages = list[dict[str, Any]]


def last_user_text(messages: Messages) -> str:
    for m in reversed(messages):
        if m.get("role") == "user":
            c = m.get("content")
            return c if isinstance(c, str) else json.dumps(c)
    return ""


class TinyPolicy:
    """TinyLM + word tokenizer. The system prompt is the same for every E1
    row, so the tiny model's context is the user turn: ``<bos> user <answer>``."""

    kind = "tiny"

    def __init__(self, tok: Tokenizer, model: TinyLM, device: str | None = None):
        self.tok = tok
        # Initialised on the CPU whatever the device, so a seed gives the
        # same starting weights on a GPU as on a laptop.
        self.model = model.to(device) if device else model

    @classmethod
    def new(cls, tok: Tokenizer, size: str = "small", seed: int = 0, device: str | None = None, **overrides) -> "TinyPolicy":
        torch.manual_seed(seed)
        dims = {**SIZES[size], **overrides}
        return cls(tok, TinyLM(LMConfig(vocab=len(tok), **dims)), device)

    @classmethod
    def load(cls, path: str, device: str | None = None) -> "TinyPolicy":
        ck = torch.load(path, map_location="cpu")
        tok = Tokenizer(ck["vocab"], ck.get("constant_lines"), ck.get("prompt_mode", "text"))
        model = TinyLM(LMConfig(**ck["config"]))
        model.load_state_dict(ck["state"])
        return cls(tok, model, device)

    def save(self, path: str) -> None:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        # Weights saved from the CPU: a checkpoint written on a GPU loads anywhere.
        state = {k: v.cpu() for k, v in self.model.state_dict().items()}
        torch.save({"vocab": self.tok.vocab, "constant_lines": sorted(self.tok.constant_lines), "prompt_mode": self.tok.prompt_mode, "config": self.model.c.to_dict(), "state": state}, path)

    def describe(self) -> str:
        c = self.model.c
        return "svtrain-tiny-%dL-d%d (%.2fM params, vocab %d)" % (c.n_layers, c.d_model, self.model.n_params() / 1e6, c.vocab)

    def prompt_ids(self, messages: Messages) -> list[int]:
        ids = [self.tok.bos_id] + self.tok.encode_prompt(last_user_text(messages)) + [self.tok.ans_id]
        limit = self.model.c.max_len - 24  # room for the answer
        return ids[-limit:]

    def answer_ids(self, text: str) -> list[int]:
        return self.tok.encode(text) + [self.tok.eos_id]

    def decode(self, ids: list[int]) -> str:
        return self.tok.decode(ids)

    def sample(self, prompts, group, max_new, temperature=1.0, greedy=False, generator=None):
        return sample(self.model, prompts, group, max_new, self.tok.eos_id, self.tok.pad_id,
                      temperature=temperature, greedy=greedy, generator=generator)

    def logprobs(self, prompts, completions, group, temperature=1.0):
        return completion_logprobs(self.model, prompts, completions, group, self.tok.pad_id, temperature)

    def parameters(self):
        return self.model.parameters()

    def train(self):
        self.model.train()

    def eval(self):
        self.model.eval()


# Model sizes: "small" is the demo's (~0.9M parameters with E1's vocabulary).
SIZES = {
    "test": dict(d_model=32, n_layers=1, n_heads=2, d_ff=64, max_len=256),
    "small": dict(d_model=128, n_layers=4, n_heads=4, d_ff=512, max_len=256),
    "medium": dict(d_model=192, n_layers=6, n_heads=6, d_ff=768, max_len=256),
}


class HFPolicy:
    """A Hugging Face causal LM, optionally with LoRA (peft). The prompt is
    the example's whole chat (system prompt included) through the model's
    chat template. ``name`` is a hub id or a local directory (``svtrain
    hf-init`` writes a from-scratch one)."""

    kind = "hf"

    def __init__(self, name: str, lora_r: int = 16, device: str | None = None, dtype: str = "auto"):
        try:
            import transformers
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError as e:  # pragma: no cover - not installed here
            raise SystemExit("--hf-model needs transformers (pip install transformers; peft for LoRA): %s" % e)
        self.name = name
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.tok = AutoTokenizer.from_pretrained(name)
        if self.tok.pad_token_id is None:
            self.tok.pad_token = self.tok.eos_token
        torch_dtype = {"auto": "auto", "bf16": torch.bfloat16, "fp32": torch.float32}[dtype]
        model = AutoModelForCausalLM.from_pretrained(name, **_dtype_kw(transformers.__version__, torch_dtype)).to(self.device)
        self.lora = False
        if lora_r > 0:
            try:
                from peft import LoraConfig, get_peft_model
            except ImportError:
                print("svtrain: peft is not installed; training every weight of %s" % name)
            else:
                model = get_peft_model(model, LoraConfig(r=lora_r, lora_alpha=2 * lora_r, target_modules="all-linear", task_type="CAUSAL_LM"))
                self.lora = True
        self.model = model
        self.eos_id = self.tok.eos_token_id

    @classmethod
    def load(cls, base: str, path: str, device: str | None = None) -> "HFPolicy":
        """A checkpoint ``save`` wrote: LoRA adapters over ``base``, or the
        whole model."""
        if os.path.exists(os.path.join(path, "adapter_config.json")):
            from peft import PeftModel

            p = cls(base, lora_r=0, device=device)
            p.model = PeftModel.from_pretrained(p.model, path, is_trainable=True)
            p.lora = True
            return p
        p = cls(path, lora_r=0, device=device)
        p.name = base
        return p

    def describe(self) -> str:
        n = sum(p.numel() for p in self.model.parameters())
        t = sum(p.numel() for p in self.model.parameters() if p.requires_grad)
        return "%s%s (%.2fM params, %.2fM trained)" % (os.path.basename(self.name.rstrip("/")) or self.name, " + LoRA" if self.lora else "", n / 1e6, t / 1e6)

    def save(self, path: str) -> None:
        self.model.save_pretrained(path)
        self.tok.save_pretrained(path)

    def prompt_ids(self, messages: Messages) -> list[int]:
        msgs = [{"role": m["role"], "content": m.get("content") or ""} for m in messages]
        ids = self.tok.apply_chat_template(msgs, add_generation_prompt=True, tokenize=True, return_dict=False)
        if hasattr(ids, "keys"):  # a BatchEncoding, whatever return_dict said
            ids = ids["input_ids"]
        if ids and isinstance(ids[0], list):
            ids = ids[0]
        return [int(i) for i in ids]

    def answer_ids(self, text: str) -> list[int]:
        return self.tok.encode(text, add_special_tokens=False) + [self.eos_id]

    def decode(self, ids: list[int]) -> str:
        if self.eos_id in ids:
            ids = ids[: ids.index(self.eos_id)]
        return self.tok.decode(ids, skip_special_tokens=True)

    def _left_pad(self, seqs):
        T = max(len(s) for s in seqs)
        ids = torch.full((len(seqs), T), self.tok.pad_token_id, dtype=torch.long)
        att = torch.zeros((len(seqs), T), dtype=torch.long)
        for i, s in enumerate(seqs):
            ids[i, T - len(s):] = torch.tensor(s)
            att[i, T - len(s):] = 1
        return ids.to(self.device), att.to(self.device)

    @torch.no_grad()
    def sample(self, prompts, group, max_new, temperature=1.0, greedy=False, generator=None):
        """Sampling with the model's KV cache, by this loop rather than
        ``generate``: the tokens are drawn from softmax(logits / temperature)
        exactly, the distribution the update scores, with nothing from the
        model's generation config (top-k, top-p, penalties; ``generate``
        merges those into any config it is given) and the same positions as
        the update's forward pass. Each prompt is repeated ``group`` times."""
        rows = [p for p in prompts for _ in range(group)]
        ids, att = self._left_pad(rows)
        pos = (att.cumsum(-1) - 1).clamp(min=0)
        out = self.model(input_ids=ids, attention_mask=att, position_ids=pos, use_cache=True)
        past, last = out.past_key_values, out.logits[:, -1, :]
        nxt_pos = att.sum(-1, keepdim=True)
        N = len(rows)
        done = torch.zeros(N, dtype=torch.bool, device=self.device)
        toks: list[list[int]] = [[] for _ in range(N)]
        lps: list[list[float]] = [[] for _ in range(N)]
        gen = generator if (generator is not None and generator.device.type == torch.device(self.device).type) else None
        for _ in range(max_new):
            logp = F.log_softmax(last.float() / (1.0 if greedy else max(temperature, 1e-6)), dim=-1)
            nxt = logp.argmax(-1) if greedy else torch.multinomial(logp.exp(), 1, generator=gen).squeeze(1)
            chosen = logp.gather(1, nxt.view(-1, 1)).squeeze(1)
            live, nl, cl = (~done).tolist(), nxt.tolist(), chosen.tolist()
            for i in range(N):
                if live[i]:
                    toks[i].append(nl[i])
                    lps[i].append(cl[i])
            done |= nxt == self.eos_id
            if bool(done.all()):
                break
            att = torch.cat([att, torch.ones((N, 1), dtype=att.dtype, device=self.device)], dim=1)
            out = self.model(input_ids=nxt.view(-1, 1), attention_mask=att, position_ids=nxt_pos, past_key_values=past, use_cache=True)
            past, last = out.past_key_values, out.logits[:, -1, :]
            nxt_pos = nxt_pos + 1
        return toks, lps

    def logprobs(self, prompts, completions, group, temperature=1.0):
        seqs, plens = [], []
        for i, c in enumerate(completions):
            p = prompts[i // group]
            seqs.append(p + c)
            plens.append(len(p))
        T = max(len(s) for s in seqs)
        ids = torch.full((len(seqs), T), self.tok.pad_token_id, dtype=torch.long)
        att = torch.zeros((len(seqs), T), dtype=torch.long)
        for i, s in enumerate(seqs):
            ids[i, : len(s)] = torch.tensor(s)
            att[i, : len(s)] = 1
        ids, att = ids.to(self.device), att.to(self.device)
        logits = self.model(input_ids=ids, attention_mask=att).logits.float() / temperature
        logp = F.log_softmax(logits[:, :-1], dim=-1).gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1)
        L = max(len(c) for c in completions)
        out = torch.zeros((len(seqs), L), device=self.device)
        mask = torch.zeros((len(seqs), L), dtype=torch.bool, device=self.device)
        for i, c in enumerate(completions):
            s = plens[i] - 1
            out[i, : len(c)] = logp[i, s: s + len(c)]
            mask[i, : len(c)] = True
        return out, mask

    def parameters(self):
        return [p for p in self.model.parameters() if p.requires_grad]

    def train(self):
        self.model.train()

    def eval(self):
        self.model.eval()


def _dtype_kw(version: str, dtype) -> dict:
    """transformers 4.56 renamed from_pretrained's torch_dtype to dtype."""
    try:
        major, minor = (int(x) for x in version.split(".")[:2])
    except ValueError:
        return {"dtype": dtype}
    return {"dtype": dtype} if (major, minor) >= (4, 56) else {"torch_dtype": dtype}
