"""The tiny model off the CPU (issue #42 item 4: the GPU script trains it
with --device cuda).

Every tensor the model builds must be made where its weights are: one made
on the CPU beside CUDA weights fails only on a GPU machine, whose time is
lent by the minute. The "meta" device (shapes, no data) catches that here:
a forward pass of weights on meta that meets a CPU tensor raises "Expected
all tensors to be on the same device". The CUDA cases run where a GPU is
(train/gpu.sh runs this file first) and skip elsewhere.

    /usr/bin/python3 -m unittest discover -s train/tests -p test_device.py -v
"""

from __future__ import annotations

import os
import sys
import tempfile
import unittest

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "clients", "python"))

from svtrain import e2  # noqa: E402
from svtrain.model import LMConfig, TinyLM, completion_logprobs, repeat_rows, sample  # noqa: E402
from svtrain.policy import TinyPolicy  # noqa: E402
from svtrain.tokenizer import Tokenizer  # noqa: E402

PROMPTS = [[1, 5, 6, 7, 2], [1, 8, 2], [1, 9, 9, 9, 9, 9, 2]]
COMPLETIONS = [[3, 4, 0], [5, 0], [6], [7, 8, 9, 0], [3, 0], [4, 4, 4, 0]]  # two per prompt
ENCODERS = (("attention", False), ("bag", False), ("bag", True))


def tiny(encoder: str, condition: bool, seed: int = 3) -> TinyLM:
    torch.manual_seed(seed)
    return TinyLM(LMConfig(vocab=50, d_model=16, n_layers=2, n_heads=2, d_ff=32, max_len=64, encoder=encoder, condition=condition))


class TestNoTensorLeftOnTheCPU(unittest.TestCase):
    def test_forward_builds_every_tensor_beside_the_weights(self):
        for enc, cond in ENCODERS:
            with self.subTest(encoder=enc, condition=cond):
                m = tiny(enc, cond).to("meta")
                lp, mask = completion_logprobs(m, PROMPTS, COMPLETIONS, 2, 0)
                self.assertEqual((lp.device.type, mask.device.type), ("meta", "meta"))
                self.assertEqual(tuple(lp.shape), (6, 4))

    def test_backward_of_the_attention_model(self):
        # (meta has no EmbeddingBag backward, so the bag's is checked on a GPU)
        m = tiny("attention", False).to("meta")
        lp, mask = completion_logprobs(m, PROMPTS, COMPLETIONS, 2, 0)
        (-(lp * mask).sum() / mask.sum()).backward()
        self.assertTrue(all(p.grad is not None and p.grad.device.type == "meta" for p in m.parameters() if p.requires_grad))

    def test_repeat_rows_is_repeat_interleave(self):
        x = torch.arange(12.0).view(3, 4)
        self.assertTrue(torch.equal(repeat_rows(x, 3), x.repeat_interleave(3, 0)))


class TestCheckpointsAreDeviceFree(unittest.TestCase):
    def test_saved_weights_are_cpu_tensors_and_load_where_asked(self):
        texts = ["proto=tcp dst_port=443 bytes=10", "proto=udp dst_port=53 bytes=90"]
        tok = Tokenizer.fit(texts + ['{"label": "Benign", "confidence": 0.9}'], min_count=1, prompts=texts)
        p = TinyPolicy.new(tok, "test", seed=0, device="cpu")
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "p.pt")
            p.save(path)
            state = torch.load(path, map_location="cpu")["state"]
            self.assertTrue(all(t.device.type == "cpu" for t in state.values()))
            q = TinyPolicy.load(path, device="cpu")
        for a, b in zip(p.model.parameters(), q.model.parameters()):
            self.assertTrue(torch.equal(a, b))


@unittest.skipUnless(torch.cuda.is_available(), "no CUDA device (train/gpu.sh runs these on the GPU machine)")
class TestOnCUDA(unittest.TestCase):
    def test_logprobs_match_the_cpu(self):
        for enc, cond in ENCODERS:
            with self.subTest(encoder=enc, condition=cond):
                cpu = tiny(enc, cond)
                gpu = tiny(enc, cond).to("cuda")
                a, ma = completion_logprobs(cpu, PROMPTS, COMPLETIONS, 2, 0)
                b, mb = completion_logprobs(gpu, PROMPTS, COMPLETIONS, 2, 0)
                self.assertTrue(torch.equal(ma, mb.cpu()))
                self.assertTrue(torch.allclose(a, b.cpu(), atol=1e-4))
                (-(b * mb).sum() / mb.sum()).backward()
                self.assertTrue(all(p.grad is not None and torch.isfinite(p.grad).all() for p in gpu.parameters() if p.requires_grad))

    def test_sampling_draws_from_the_runs_cpu_generator(self):
        gpu = tiny("bag", True).to("cuda")
        g1, g2 = torch.Generator().manual_seed(7), torch.Generator().manual_seed(7)
        t1, l1 = sample(gpu, PROMPTS, 4, 6, 0, 0, generator=g1)
        t2, l2 = sample(gpu, PROMPTS, 4, 6, 0, 0, generator=g2)
        self.assertEqual(t1, t2)
        self.assertEqual(len(t1), 12)
        # the CPU stream advanced: a resumed run continues from its state
        self.assertFalse(torch.equal(g1.get_state(), torch.Generator().manual_seed(7).get_state()))

    def test_greedy_answers_match_the_cpu(self):
        cpu, gpu = tiny("bag", True), tiny("bag", True).to("cuda")
        self.assertEqual(sample(cpu, PROMPTS, 1, 6, 0, 0, greedy=True)[0], sample(gpu, PROMPTS, 1, 6, 0, 0, greedy=True)[0])

    def test_e2_update_runs_on_the_gpu(self):
        from svtrain import e2train
        vocab = e2.Vocab(e2.SPECIALS + ["a", "b", "c", "d"])
        policy = e2train.E2Policy.new(vocab, seed=3, d_model=32, layers=1, device="cuda")
        ref = e2train.E2Policy.new(vocab, seed=3, d_model=32, layers=1, device="cuda")
        base = len(e2.SPECIALS)
        gen = torch.Generator().manual_seed(1)
        ctx1 = [[base, base + 1], [base + 2, base + 3]]
        t1, o1 = policy.sample(ctx1, 4, 3, generator=gen)
        ctx2 = [ctx1[i // 4] + t for i, t in enumerate(t1)]
        t2, o2 = policy.sample(ctx2, 1, 3, generator=gen)
        recs = [{"ctx1": ctx1[i // 4], "turn1": t1[i], "ctx2": ctx2[i], "answer_ids": t2[i], "old1": o1[i], "old2": o2[i],
                 "reward": float(i % 3)} for i in range(len(t1))]
        before = [p.detach().clone() for p in policy.parameters()]
        out = e2train.grpo_step(policy, torch.optim.SGD(policy.parameters(), lr=0.1), recs, 4, kl=0.1, ref=ref)
        self.assertAlmostEqual(out["kl"], 0.0, places=5)
        self.assertTrue(any(not torch.equal(a, b.detach()) for a, b in zip(before, policy.parameters())))


if __name__ == "__main__":
    unittest.main()
