"""What the E2 policy reads and writes (svtrain/e2.py): the teacher's diff
as a JSON Patch, the answer's pieces and the text they make."""

import json
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "clients", "python"))

from svtrain import e2  # noqa: E402

FILE = """apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  hostPID: true
  containers:
    - name: app
      image: registry.example.com/shop/web:latest
      securityContext:
        privileged: true
      ports:
        - containerPort: 22
"""

DIFF = """--- a/pod.yaml
+++ b/pod.yaml
@@ -5,9 +5,8 @@
 spec:
-  hostPID: true
   containers:
     - name: app
-      image: registry.example.com/shop/web:latest
+      image: registry.example.com/shop/web:stable
       securityContext:
-        privileged: true
+        privileged: false
       ports:
"""


def example(text=FILE, path="pod.yaml"):
    return {"example_id": "x", "prompt": [{"role": "system", "content": "s"}, {"role": "user", "content": "File path: %s\n\n%s" % (path, text)}],
            "answer": {"fixture_type": "k8s", "fixture_path": path}}


def apply_ops(doc, ops):
    """A minimal RFC 6902 applier for the operations tree_patch writes."""
    import copy
    doc = copy.deepcopy(doc)
    for op in ops:
        parts = [p.replace("~1", "/").replace("~0", "~") for p in op["path"].split("/")[1:]]
        parent = doc
        for p in parts[:-1]:
            parent = parent[int(p)] if isinstance(parent, list) else parent[p]
        last = int(parts[-1]) if isinstance(parent, list) else parts[-1]
        if op["op"] == "remove":
            del parent[last]
        else:
            parent[last] = op["value"]
    return doc


class TestTeacherPatch(unittest.TestCase):
    def test_unified_diff_applies(self):
        fixed = e2.apply_unified(FILE, DIFF)
        self.assertNotIn("hostPID", fixed)
        self.assertIn("web:stable", fixed)
        self.assertIn("privileged: false", fixed)
        self.assertIn("containerPort: 22", fixed)

    def test_diff_that_does_not_apply_raises(self):
        with self.assertRaises(ValueError):
            e2.apply_unified(FILE, DIFF.replace("-  hostPID: true", "-  hostNetwork: true"))

    def test_tree_patch_turns_a_into_b(self):
        a = {"spec": {"x": 1, "l": [1, 2], "m": [1], "gone": True, "a/b": 0}}
        b = {"spec": {"x": 2, "l": [1, 3], "m": [1, 2], "new": {"k": "v"}, "a/b": 1}}
        ops = e2.tree_patch(a, b)
        self.assertEqual(apply_ops(a, ops), b)
        self.assertIn({"op": "replace", "path": "/spec/a~1b", "value": 1}, ops)
        self.assertEqual(e2.tree_patch(a, a), [])

    def test_teacher_answer_is_the_json_patch_of_its_fix(self):
        final = json.dumps({"violations": [{"id": "kube-linter/privileged-container", "severity": "high"}], "patch": DIFF, "confidence": 0.8})
        ans = e2.teacher_answer(example(), final)
        self.assertEqual(ans["violations"], [{"id": "kube-linter/privileged-container", "severity": "high"}])
        self.assertIn({"op": "remove", "path": "/spec/hostPID"}, ans["patch"])
        self.assertIn({"op": "replace", "path": "/spec/containers/0/securityContext/privileged", "value": False}, ans["patch"])
        # The image keeps its repository: written as the tag alone.
        self.assertIn({"op": "replace", "path": "/spec/containers/0/image", "retag": "stable"}, ans["patch"])
        self.assertIsNone(e2.teacher_answer(example(), "not json"))
        broken = json.dumps({"violations": [], "patch": DIFF.replace("-  hostPID: true", "-  hostIPC: true")})
        self.assertIsNone(e2.teacher_answer(example(), broken))

    def test_multi_document_paths_start_with_the_index(self):
        text = "kind: Service\nmetadata: {name: s}\n---\nkind: Pod\nspec:\n  hostPID: true\n"
        diff = "--- a/f.yaml\n+++ b/f.yaml\n@@ -4,3 +4,2 @@\n kind: Pod\n spec:\n-  hostPID: true\n"
        ans = e2.teacher_answer(example(text, "f.yaml"), json.dumps({"violations": [], "patch": diff}))
        self.assertEqual(ans["patch"], [{"op": "replace", "path": "/1/spec", "value": None}])
        pieces = e2.prompt_pieces(example(text, "f.yaml"))
        self.assertIn('"/1/spec/hostPID"', pieces)


class TestAnswerPieces(unittest.TestCase):
    def vocab(self, written):
        return e2.Vocab.fit([], [written])

    def test_pieces_make_the_answer_text(self):
        ans = {"violations": [{"id": "kube-linter/host-pid", "severity": "high"}, {"id": "opa/K8S_X", "severity": "med"}],
               "patch": [{"op": "remove", "path": "/spec/hostPID"},
                         {"op": "replace", "path": "/spec/containers/0/image", "retag": "stable"},
                         {"op": "add", "path": "/spec/containers/0/resources", "value": {"limits": {"cpu": "1"}}}],
               "confidence": 0.9}
        pieces = e2.answer_pieces(ans)
        v = self.vocab(pieces)
        text = e2.answer_text(v, v.ids(pieces), e2.leafmap_of(example()))
        got = json.loads(text)
        self.assertEqual(got["violations"], ans["violations"])
        self.assertEqual(got["patch"][1], {"op": "replace", "path": "/spec/containers/0/image", "value": "registry.example.com/shop/web:stable"})
        self.assertEqual(got["patch"][2]["value"], {"limits": {"cpu": "1"}})
        self.assertEqual(got["confidence"], 0.9)

    def test_no_patch_is_an_empty_string(self):
        pieces = e2.answer_pieces({"violations": [], "patch": []})
        v = self.vocab(pieces)
        self.assertEqual(json.loads(e2.answer_text(v, v.ids(pieces), {})), {"violations": [], "patch": "", "confidence": 0.9})

    def test_retag_without_an_image_is_null(self):
        pieces = e2.answer_pieces({"violations": [], "patch": [{"op": "replace", "path": "/nope", "retag": "stable"}]})
        v = self.vocab(pieces)
        self.assertIsNone(json.loads(e2.answer_text(v, v.ids(pieces), {}))["patch"][0]["value"])

    def test_pieces_out_of_order_are_not_json(self):
        pieces = e2.answer_pieces({"violations": [{"id": "a/b", "severity": "low"}], "patch": []})
        v = self.vocab(pieces)
        with self.assertRaises(ValueError):
            json.loads(e2.answer_text(v, v.ids(list(reversed(pieces))), {}))


class TestReading(unittest.TestCase):
    def test_observations(self):
        obs = [{"role": "tool", "content": json.dumps([{"tool": "kube-linter", "rule_id": "host-pid", "severity": "med", "message": "m"}])},
               {"role": "tool", "content": "error: unknown path"},
               {"role": "user", "content": "ignored"}]
        self.assertEqual(e2.obs_pieces(obs), ["kube-linter/host-pid", "sev:med", e2.TOOLERR])

    def test_tool_calls_carry_the_prompt_path(self):
        v = e2.Vocab.fit([], [])
        calls = e2.tool_calls(v, v.ids(["run_kubelinter", "<eos>", "run_opa"]), "deploy/a.yaml")
        self.assertEqual([c["name"] for c in calls], ["run_kubelinter", "run_opa"])
        self.assertEqual(json.loads(calls[0]["arguments"]), {"path": "deploy/a.yaml"})

    def test_unparsable_file_reads_as_unknown(self):
        self.assertEqual(e2.prompt_pieces(example("a: [unclosed")), [e2.UNK])

    def test_untagged(self):
        self.assertEqual(e2.untagged("reg:5000/a/b:1.2"), "reg:5000/a/b")
        self.assertEqual(e2.untagged("reg:5000/a/b"), "reg:5000/a/b")
        self.assertEqual(e2.untagged("nginx"), "nginx")


if __name__ == "__main__":
    unittest.main()


class TestGRPOStep(unittest.TestCase):
    """The E2 update: the E1 loop's advantage estimator, and a KL anchor to
    the warm start that is 0 before the first update and positive after."""

    def setUp(self):
        import torch
        from svtrain import e2train
        self.torch, self.e2train = torch, e2train
        vocab = e2.Vocab(e2.SPECIALS + ["a", "b", "c", "d"])
        self.policy = e2train.E2Policy.new(vocab, seed=3, d_model=32, layers=1)
        self.ref = e2train.E2Policy.new(vocab, seed=3, d_model=32, layers=1)
        self.ref.eval()
        base = len(e2.SPECIALS)
        g = 4
        self.recs = []
        for p in range(2):
            for j in range(g):
                self.recs.append({"ctx1": [base + p, base + 1], "turn1": [base + j % 3, self.policy.eos],
                                  "ctx2": [base + p, base + 2, base + j % 3], "answer_ids": [base + (j + p) % 4, self.policy.eos],
                                  "reward": float(j == p)})
        self.group = g

    def opt(self):
        return self.torch.optim.SGD(self.policy.parameters(), lr=0.5)

    def test_kl_is_zero_at_the_warm_start_then_positive(self):
        opt = self.opt()
        first = self.e2train.grpo_step(self.policy, opt, self.recs, self.group, kl=0.1, ref=self.ref)
        self.assertAlmostEqual(first["kl"], 0.0, places=6)
        second = self.e2train.grpo_step(self.policy, opt, self.recs, self.group, kl=0.1, ref=self.ref)
        self.assertGreater(second["kl"], 0.0)

    def test_kl_without_a_reference_is_refused(self):
        with self.assertRaises(ValueError):
            self.e2train.grpo_step(self.policy, self.opt(), self.recs, self.group, kl=0.1)

    def test_a_constant_group_is_counted_and_moves_nothing_alone(self):
        recs = [dict(r, reward=1.0) for r in self.recs]
        before = [p.detach().clone() for p in self.policy.parameters()]
        out = self.e2train.grpo_step(self.policy, self.opt(), recs, self.group)
        self.assertEqual(out["constant_groups"], 1.0)
        for a, b in zip(before, self.policy.parameters()):
            self.assertTrue(self.torch.equal(a, b.detach()))


class TestGRPOStepRatio(unittest.TestCase):
    """The update's log-probabilities are the sampler's: at the sampling
    temperature, the first epoch's PPO ratio is 1 on every token."""

    def test_first_epoch_ratio_is_one_at_the_sampling_temperature(self):
        import torch
        from svtrain import e2train
        vocab = e2.Vocab(e2.SPECIALS + ["a", "b", "c", "d", "e"])
        base = len(e2.SPECIALS)
        g = 4
        clips = {}
        for t_update in (0.5, 1.0):
            policy = e2train.E2Policy.new(vocab, seed=5, d_model=32, layers=1)
            gen = torch.Generator().manual_seed(1)
            ctx1 = [[base, base + 1], [base + 2, base + 3]]
            t1, o1 = policy.sample(ctx1, g, 3, temperature=0.5, generator=gen)
            ctx2 = [ctx1[i // g] + t for i, t in enumerate(t1)]
            t2, o2 = policy.sample(ctx2, 1, 3, temperature=0.5, generator=gen)
            recs = [{"ctx1": ctx1[i // g], "turn1": t1[i], "ctx2": ctx2[i], "answer_ids": t2[i], "old1": o1[i], "old2": o2[i],
                     "reward": float(i % 3)} for i in range(len(t1))]
            opt = torch.optim.SGD(policy.parameters(), lr=0.0)
            clips[t_update] = e2train.grpo_step(policy, opt, recs, g, temperature=t_update, clip=0.01)["clip_frac"]
        self.assertEqual(clips[0.5], 0.0)
        self.assertGreater(clips[1.0], 0.0)
