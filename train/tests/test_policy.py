"""The policy contract both backends keep, and the advantage estimators.

What the loop relies on and a wrong implementation breaks silently: the
log-probabilities recorded while sampling are the ones the update recomputes
(else the PPO ratio is off before the first step: padding, positions or a
sampling filter that differs), checkpoints reload to the same policy, and
LoRA trains only its adapters. The Hugging Face cases run where transformers and
tokenizers are installed (a GPU machine) and skip elsewhere.

    /usr/bin/python3 -m unittest discover -s train/tests -v
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
import unittest

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from svtrain import loop  # noqa: E402
from svtrain.policy import HFPolicy, TinyPolicy, last_user_text  # noqa: E402
from svtrain.tokenizer import Tokenizer  # noqa: E402

SYSTEM = "You label network flows. Answer JSON: label, confidence."
FLOWS = [
    "proto=tcp src_port=51234 dst_port=443 bytes=1200 packets=9 duration=0.4 flags=SA",
    "proto=udp src_port=53 dst_port=40000 bytes=90 packets=1",
    "proto=tcp src_port=4444 dst_port=22 bytes=88000 packets=400 duration=61.0 flags=S service=ssh conn_state=REJ",
    "proto=icmp bytes=64 packets=1",
]
ANSWERS = ['{"label": "Benign", "confidence": 0.9}', '{"label": "Malicious", "confidence": 0.7}', '{"label": "Abstain", "confidence": 0.5}']
CHATS = [[{"role": "system", "content": SYSTEM}, {"role": "user", "content": f}] for f in FLOWS]

HF_READY = all(importlib.util.find_spec(m) for m in ("transformers", "tokenizers"))
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


class ScratchHF:
    """Mixed into the Hugging Face test cases: one from-scratch model fitted
    to the test chats per class, and fresh policies over it."""

    @classmethod
    def setUpClass(cls):
        from svtrain import hfinit

        cls.scratch_tmp = tempfile.TemporaryDirectory()
        cls.base = os.path.join(cls.scratch_tmp.name, "scratch")
        texts = [m["content"] for c in CHATS for m in c] * 5 + ANSWERS * 5
        hfinit.build(cls.base, texts, vocab=400, size="test", max_len=512)

    @classmethod
    def tearDownClass(cls):
        cls.scratch_tmp.cleanup()

    def hf_policy(self, lora_r=0):
        torch.manual_seed(0)
        return HFPolicy(self.base, lora_r=lora_r, device=DEVICE, dtype="fp32")


class Contract:
    """Mixed into one TestCase per backend; make() returns a fresh policy."""

    temperature = 0.8

    def make(self):
        raise NotImplementedError

    def reload(self, policy, path):
        raise NotImplementedError

    def close(self, a, b, msg=""):
        self.assertEqual(len(a), len(b), msg)
        for x, y in zip(a, b):
            self.assertAlmostEqual(x, y, delta=2e-3, msg=msg)

    def test_sampled_logprobs_are_the_updates(self):
        p = self.make()
        p.eval()
        prompts = [p.prompt_ids(c) for c in CHATS]  # different lengths: padding in both passes
        self.assertGreater(len(set(map(len, prompts))), 1)
        torch.manual_seed(3)
        toks, lps = p.sample(prompts, 3, 10, temperature=self.temperature)
        self.assertEqual(len(toks), len(prompts) * 3)
        self.assertTrue(any(len(t) > 1 for t in toks), toks)
        with torch.no_grad():
            lp, mask = p.logprobs(prompts, toks, 3, self.temperature)
        for i, t in enumerate(toks):
            self.assertEqual(int(mask[i].sum()), len(t))
            self.close(lp[i, : len(t)].tolist(), lps[i], "completion %d" % i)

    def test_greedy_is_deterministic(self):
        p = self.make()
        p.eval()
        prompts = [p.prompt_ids(c) for c in CHATS[:2]]
        a, _ = p.sample(prompts, 1, 8, greedy=True)
        torch.manual_seed(99)
        b, _ = p.sample(prompts, 1, 8, greedy=True)
        self.assertEqual(a, b)

    def test_answers_round_trip(self):
        p = self.make()
        for text in ANSWERS:
            ids = p.answer_ids(text)
            self.assertEqual(p.decode(ids), text)

    def test_checkpoint_reloads_the_same_policy(self):
        p = self.make()
        p.eval()
        prompts = [p.prompt_ids(c) for c in CHATS[:2]]
        comps = [p.answer_ids(a) for a in ANSWERS[:2]]
        with torch.no_grad():
            before, _ = p.logprobs(prompts, comps, 1)
        with tempfile.TemporaryDirectory() as d:
            q = self.reload(p, os.path.join(d, "ck"))
            q.eval()
            with torch.no_grad():
                after, _ = q.logprobs(prompts, comps, 1)
        self.close(before.flatten().tolist(), after.flatten().tolist())

    def test_warm_start_raises_the_answers_probability(self):
        p = self.make()
        pairs = loop.sft_pairs(p, [{"messages": c + [{"role": "assistant", "content": a}]} for c, a in zip(CHATS, ANSWERS * 2)])
        prompts, comps = [x[0] for x in pairs], [x[1] for x in pairs]

        def mean_lp():
            p.eval()
            with torch.no_grad():
                lp, m = p.logprobs(prompts, comps, 1)
            return float((lp * m).sum() / m.sum())

        before = mean_lp()
        loop.sft(p, pairs, steps=8, batch=4, lr=3e-3, seed=1, log=lambda *_: None)
        self.assertGreater(mean_lp(), before)


class TinyPolicyTest(Contract, unittest.TestCase):
    def make(self):
        texts = [c[-1]["content"] for c in CHATS]
        tok = Tokenizer.fit(texts + ANSWERS, min_count=1, prompts=texts)
        return TinyPolicy.new(tok, "test", seed=0)

    def reload(self, policy, path):
        policy.save(path)
        return TinyPolicy.load(path)


class TinyPolicyPooledTest(TinyPolicyTest):
    """The pooled prompt summary (LMConfig.pool) is computed where the
    prompt is encoded, once, for sampling and for the update alike."""

    def make(self):
        texts = [c[-1]["content"] for c in CHATS]
        tok = Tokenizer.fit(texts + ANSWERS, min_count=1, prompts=texts, prompt_mode="fields")
        return TinyPolicy.new(tok, "test", seed=0, pool=True)


class TinyPolicyBagTest(TinyPolicyTest):
    """The bag encoder (LMConfig.encoder "bag"): the prompt is read once, as
    a sum of its tokens, and the transformer's sequence starts at the answer
    marker; the policy contract holds as it does for attention."""

    def make(self):
        texts = [c[-1]["content"] for c in CHATS]
        tok = Tokenizer.fit(texts + ANSWERS, min_count=1, prompts=texts, prompt_mode="fields")
        return TinyPolicy.new(tok, "test", seed=0, encoder="bag")

    def test_the_answer_reads_the_prompt_as_a_set(self):
        p = self.make()
        p.eval()
        a, b = (p.prompt_ids(c) for c in CHATS[:2])
        self.assertNotEqual(a, b)
        swapped = [a[0]] + list(reversed(a[1:-1])) + [a[-1]]
        with torch.no_grad():
            first = {name: p.model.prompt_pass([ids], p.tok.pad_id)[0] for name, ids in (("a", a), ("b", b), ("swapped", swapped))}
        # the fields are a set: their order carries nothing
        self.assertTrue(torch.allclose(first["a"], first["swapped"], atol=1e-5))
        # and what they are does
        self.assertFalse(torch.allclose(first["a"], first["b"], atol=1e-4))

    def test_an_unknown_encoder_is_refused(self):
        texts = [c[-1]["content"] for c in CHATS]
        tok = Tokenizer.fit(texts, min_count=1, prompts=texts)
        with self.assertRaisesRegex(ValueError, "encoder 'conv' is not one of attention, bag"):
            TinyPolicy.new(tok, "test", seed=0, encoder="conv")


class TinyPolicyConditionedBagTest(TinyPolicyTest):
    """LMConfig.condition: the bag's hidden layer reaches every answer
    position's logits through a head of its own, in sampling and in the
    update alike (the contract above), and only with the bag encoder."""

    def make(self):
        texts = [c[-1]["content"] for c in CHATS]
        tok = Tokenizer.fit(texts + ANSWERS, min_count=1, prompts=texts, prompt_mode="fields")
        return TinyPolicy.new(tok, "test", seed=0, encoder="bag", condition=True)

    def test_the_prompt_reaches_later_answer_tokens_directly(self):
        p = self.make()
        p.eval()
        a, b = (p.prompt_ids(c) for c in CHATS[:2])
        comp = p.answer_ids(ANSWERS[0])
        self.assertGreater(len(comp), 2)
        with torch.no_grad():
            lp = {k: p.logprobs([ids], [comp], 1)[0][0] for k, ids in (("a", a), ("b", b))}
            p.model.cond_head.weight.zero_()
            lp0 = {k: p.logprobs([ids], [comp], 1)[0][0] for k, ids in (("a", a), ("b", b))}
        # the head is on the path of the tokens after the first ...
        self.assertFalse(torch.allclose(lp["a"][1:], lp0["a"][1:], atol=1e-6))
        # ... and what it adds depends on the prompt
        self.assertFalse(torch.allclose(lp["a"][1:] - lp0["a"][1:], lp["b"][1:] - lp0["b"][1:], atol=1e-6))

    def test_condition_needs_the_bag(self):
        texts = [c[-1]["content"] for c in CHATS]
        tok = Tokenizer.fit(texts, min_count=1, prompts=texts)
        with self.assertRaisesRegex(ValueError, "condition needs the bag encoder"):
            TinyPolicy.new(tok, "test", seed=0, condition=True)

    def test_a_checkpoint_from_before_condition_loads(self):
        p = TinyPolicyBagTest.make(self)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "ck")
            p.save(path)
            ck = torch.load(path)
            del ck["config"]["condition"]
            torch.save(ck, path)
            q = TinyPolicy.load(path)
        self.assertFalse(q.model.c.condition)
        self.assertIsNone(q.model.cond_head)


@unittest.skipUnless(HF_READY, "transformers and tokenizers are not installed (the --hf-model path; a GPU machine has them)")
class HFPolicyTest(ScratchHF, Contract, unittest.TestCase):
    def make(self, lora_r=0):
        return self.hf_policy(lora_r)

    def reload(self, policy, path):
        policy.save(path)
        return HFPolicy.load(self.base, path, device=DEVICE)

    def test_chat_template_renders_the_whole_chat(self):
        p = self.make()
        text = p.tok.decode(p.prompt_ids(CHATS[0]))
        self.assertIn(SYSTEM, text)
        self.assertIn(FLOWS[0], text)
        self.assertTrue(text.endswith("<|assistant|>"), text)

    @unittest.skipUnless(importlib.util.find_spec("peft"), "peft is not installed")
    def test_lora_trains_only_adapters_and_reloads(self):
        p = self.make(lora_r=4)
        self.assertTrue(p.lora)
        trained = sum(x.numel() for x in p.parameters())
        total = sum(x.numel() for x in p.model.parameters())
        self.assertLess(trained, total / 2)
        pairs = loop.sft_pairs(p, [{"messages": c + [{"role": "assistant", "content": a}]} for c, a in zip(CHATS, ANSWERS * 2)])
        loop.sft(p, pairs, steps=3, batch=2, lr=1e-2, seed=1, log=lambda *_: None)
        with tempfile.TemporaryDirectory() as d:
            q = self.reload(p, os.path.join(d, "ck"))
            self.assertTrue(q.lora)
            self.assertTrue(os.path.exists(os.path.join(d, "ck", "adapter_config.json")))
            p.eval()
            q.eval()
            prompts = [p.prompt_ids(CHATS[0])]
            comps = [p.answer_ids(ANSWERS[0])]
            with torch.no_grad():
                a, _ = p.logprobs(prompts, comps, 1)
                b, _ = q.logprobs(prompts, comps, 1)
            self.close(a.flatten().tolist(), b.flatten().tolist())
            self.assertGreater(sum(x.numel() for x in q.parameters()), 0, "reloaded adapters are frozen")


class AdvantagesTest(unittest.TestCase):
    def test_constant_groups_get_no_advantage(self):
        r = torch.tensor([[1.0, 1.0, 1.0], [0.0, 1.0, 2.0]])
        a = loop.advantages("grpo", r, None, None)
        self.assertTrue(torch.equal(a[0], torch.zeros(3)))
        self.assertAlmostEqual(float(a[1].mean()), 0.0, places=6)
        self.assertGreater(float(a[1, 2]), 0)

    def test_gdpo_normalises_each_component_before_weighting(self):
        # accuracy separates the group, format does not: GDPO's advantage
        # follows accuracy alone, whatever the weights' scale. TRL's
        # convention: sample std (n − 1), ε = 1e-4, at both steps.
        comps = {"accuracy": torch.tensor([[0.0, 1.0, 0.0, 1.0]]), "format": torch.tensor([[1.0, 1.0, 1.0, 1.0]])}
        z = (3 / 4) ** 0.5  # ±0.5 / sample std of ±0.5 over four values
        for w in ({"accuracy": 1.0, "format": 0.1}, {"accuracy": 5.0, "format": 3.0}):
            a = loop.advantages("gdpo", comps["accuracy"] * w["accuracy"] + w["format"], comps, w)
            self.assertTrue(torch.allclose(a, torch.tensor([[-z, z, -z, z]]), atol=1e-3), a)

    def test_grpo_is_trls_group_scaling(self):
        r = torch.tensor([[0.2, 1.3, 0.7, 0.7, 1.9]])
        xs = r[0].tolist()
        m = sum(xs) / len(xs)
        sd = (sum((x - m) ** 2 for x in xs) / (len(xs) - 1)) ** 0.5
        want = torch.tensor([[(x - m) / (sd + 1e-4) for x in xs]])
        self.assertTrue(torch.allclose(loop.advantages("grpo", r, None, None), want, atol=1e-6))

    def test_group_std_reduces_a_lone_outcome_to_its_sign(self):
        # E1's abstention case: seven abstentions at 1.3 and one guess. With
        # the group's std the guess gets ±7/√8 whether it wins 0.5 or loses
        # 1.23; scaled by nothing or by the step's std, its advantage keeps
        # the stakes, so the expected update follows the expected reward.
        right = torch.tensor([[1.3] * 7 + [1.8]])
        wrong = torch.tensor([[1.3] * 7 + [0.07]])
        r = torch.cat([right, wrong])
        g = loop.advantages("grpo", r, None, None, "group")
        self.assertAlmostEqual(float(g[0, 7]), 7 / 8 ** 0.5, places=2)
        self.assertAlmostEqual(float(g[1, 7]), -7 / 8 ** 0.5, places=2)
        for scale in ("none", "batch"):
            a = loop.advantages("grpo", r, None, None, scale)
            self.assertAlmostEqual(float(a[0].sum()), 0.0, places=5)
            self.assertAlmostEqual(float(a[0, 7] / -a[1, 7]), 0.5 / 1.23, places=4, msg=scale)
        none = loop.advantages("grpo", r, None, None, "none")
        self.assertAlmostEqual(float(none[0, 7]), 0.5 * 7 / 8, places=5)
        xs = r.flatten().tolist()
        m = sum(xs) / len(xs)
        sd = (sum((x - m) ** 2 for x in xs) / (len(xs) - 1)) ** 0.5  # TRL "batch": std of every reward in the step
        self.assertTrue(torch.allclose(loop.advantages("grpo", r, None, None, "batch"), none / (sd + 1e-4), atol=1e-6))
        with self.assertRaises(ValueError):
            loop.advantages("grpo", r, None, None, "std")

    def test_per_component_keeps_the_weights_scale(self):
        # per_component is GDPO before its batch step: the weighted sum of
        # each component's group z-scores, so the weights scale it.
        comps = {"accuracy": torch.tensor([[0.0, 1.0, 0.0, 1.0]]), "calibration": torch.tensor([[0.1, 0.1, 0.3, 0.5]])}
        w = {"accuracy": 2.0, "calibration": 0.5}
        want = w["accuracy"] * loop._group_norm(comps["accuracy"]) + w["calibration"] * loop._group_norm(comps["calibration"])
        got = loop.advantages("per_component", comps["accuracy"], comps, w)
        self.assertTrue(torch.allclose(got, want.float(), atol=1e-6), got)
        self.assertFalse(torch.allclose(got, loop.advantages("gdpo", comps["accuracy"], comps, w), atol=1e-3))


class FormatOnlyWarmStartTest(unittest.TestCase):
    def test_labels_are_shuffled_and_nothing_else(self):
        from svtrain.cli import shuffled_labels

        rows = [{"messages": [{"role": "user", "content": "flow %d" % i},
                              {"role": "assistant", "content": '{"label": "%s", "confidence": 0.%d}' % (("Benign", "Malicious", "Abstain")[i % 3], i % 10)}],
                 "provenance": {"example_id": "e%d" % i}} for i in range(60)]
        out = shuffled_labels(rows, seed=1)
        self.assertEqual(shuffled_labels(rows, seed=1), out)
        import json as _json
        before = [_json.loads(r["messages"][-1]["content"]) for r in rows]
        after = [_json.loads(r["messages"][-1]["content"]) for r in out]
        self.assertEqual(sorted(b["label"] for b in before), sorted(a["label"] for a in after))  # the same label frequencies
        self.assertEqual([b["confidence"] for b in before], [a["confidence"] for a in after])
        self.assertEqual([r["messages"][0] for r in rows], [r["messages"][0] for r in out])  # prompts untouched
        moved = sum(b["label"] != a["label"] for b, a in zip(before, after))
        self.assertGreater(moved, 30)  # not the teacher's labels
        self.assertEqual(rows[0]["messages"][-1]["content"], '{"label": "Benign", "confidence": 0.0}')  # input not mutated


class MatrixFlagsTest(unittest.TestCase):
    """Shape and budget flags refuse what would build a broken model or run."""

    def test_layers_must_be_a_positive_block_count(self):
        import argparse

        from svtrain.cli import block_count

        self.assertEqual(block_count("1"), 1)
        for bad in ("0", "-1", "x", ""):
            with self.subTest(bad=bad), self.assertRaisesRegex(argparse.ArgumentTypeError, "at least 1"):
                block_count(bad)

    def test_kl_must_be_a_finite_non_negative_number(self):
        import argparse

        from svtrain.cli import kl_coefficient

        self.assertEqual(kl_coefficient("0"), 0.0)
        self.assertEqual(kl_coefficient("0.05"), 0.05)
        for bad in ("-0.1", "x", "", "nan", "inf"):
            with self.subTest(bad=bad), self.assertRaisesRegex(argparse.ArgumentTypeError, "at least 0"):
                kl_coefficient(bad)

    def test_oversample_must_be_at_least_one(self):
        import argparse

        from svtrain.cli import oversample_factor

        self.assertEqual(oversample_factor("4"), 4)
        for bad in ("0", "-2", "1.5", ""):
            with self.subTest(bad=bad), self.assertRaisesRegex(argparse.ArgumentTypeError, "oversampling factor"):
                oversample_factor(bad)


if __name__ == "__main__":
    unittest.main()

