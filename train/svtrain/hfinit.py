"""A Hugging Face causal LM trained from nothing, for the ``--hf-model`` path
on a machine with no model weights (and for its tests): a byte-level BPE
tokenizer fitted to the environment's training prompts and answers, a chat
template, and a randomly initialised Llama-architecture model, written with
``save_pretrained`` so ``AutoTokenizer`` / ``AutoModelForCausalLM`` load it
like any hub checkpoint. Needs transformers and tokenizers."""

from __future__ import annotations

import os

import torch

# Role markers and the end-of-turn token the answer ends with (the eos the
# loop appends to every target answer and stops sampling at).
SPECIAL = ["<|pad|>", "<|bos|>", "<|end|>", "<|system|>", "<|user|>", "<|assistant|>", "<|tool|>"]
CHAT_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)

SIZES = {
    "test": dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2),
    "small": dict(hidden_size=256, intermediate_size=768, num_hidden_layers=4, num_attention_heads=4),
    "medium": dict(hidden_size=512, intermediate_size=1536, num_hidden_layers=8, num_attention_heads=8),
}


def fit_tokenizer(texts: list[str], vocab: int):
    """A byte-level BPE (every string round-trips) wrapped as a transformers
    fast tokenizer with the chat template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tk = Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab, special_tokens=SPECIAL, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  min_frequency=2, show_progress=False)
    tk.train_from_iterator(texts, trainer)
    try:
        from transformers import PreTrainedTokenizerFast as Fast
    except ImportError:  # transformers 5 names the tokenizers-backed class so
        from transformers import TokenizersBackend as Fast
    fast = Fast(tokenizer_object=tk, bos_token="<|bos|>", eos_token="<|end|>", pad_token="<|pad|>")
    fast.chat_template = CHAT_TEMPLATE
    return fast


def build(out: str, texts: list[str], vocab: int = 4096, size: str = "small", max_len: int = 2048, seed: int = 0) -> str:
    """Write tokenizer and model to ``out``; returns a one-line description."""
    try:
        from transformers import LlamaConfig, LlamaForCausalLM
        import tokenizers  # noqa: F401
    except ImportError as e:
        raise SystemExit("svtrain: --hf-model scratch needs transformers and tokenizers (pip install transformers): %s" % e)

    tok = fit_tokenizer(texts, vocab)
    torch.manual_seed(seed)
    dims = SIZES[size]
    cfg = LlamaConfig(vocab_size=len(tok), max_position_embeddings=max_len, num_key_value_heads=dims["num_attention_heads"],
                      bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id,
                      tie_word_embeddings=True, **dims)
    model = LlamaForCausalLM(cfg)
    os.makedirs(out, exist_ok=True)
    model.save_pretrained(out)
    tok.save_pretrained(out)
    n = sum(p.numel() for p in model.parameters())
    return "Llama %s (%d layers, width %d, %.2fM params), byte-level BPE vocab %d, at %s" % (
        size, dims["num_hidden_layers"], dims["hidden_size"], n / 1e6, len(tok), out)
