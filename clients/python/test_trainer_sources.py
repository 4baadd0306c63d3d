"""The adapters under the trainers' own code, taken from their repositories at
the pinned commits (trainer_sources.PINS), heavy imports stood in for.

    SVBENCH_SRC_VERL=… SVBENCH_SRC_TRL=… SVBENCH_SRC_OPENRLHF=… SVBENCH_SRC_VERIFIERS=… \\
        python3 -m unittest -v test_trainer_sources

Each test names the trainer files it runs. Tests that need a live server
(sessions) also need SVBENCH_SESSIONS_URL (and SVBENCH_TOKEN), as
`go test ./server -run TestPythonSessionAdapters` sets them; the others use
test_adapters' stub server. A test whose trainer source is not there is
skipped with the variable to set.
"""

from __future__ import annotations

import json
import os
import unittest

import trainer_sources as ts
from test_adapters import StubCase

HERE = os.path.dirname(os.path.abspath(__file__))


def verl_prime_tree(src: ts.Source, dest: str) -> None:
    """verl's prime reward manager and the loader of custom reward functions,
    with ray, torch, psutil and transformers stood in for."""
    src.extract(dest,
                "verl/workers/reward_manager/prime.py",
                "verl/trainer/ppo/reward.py",
                "verl/utils/import_utils.py",
                "verl/utils/ray_utils.py")
    for mod in ("torch", "psutil", "transformers", "ray"):
        ts.write(dest, mod + ".py", ts.ANY_MODULE)
    ts.write(dest, "verl/__init__.py", "DataProto = object\n")
    ts.write(dest, "verl/utils/reward_score/__init__.py",
             "def default_compute_score(*a, **k):\n    raise AssertionError('the custom function was not used')\n")
    ts.write(dest, "verl/utils/transferqueue_utils.py", "def tqbridge(*a, **k):\n    return lambda f: f\n")
    ts.write(dest, "verl/workers/reward_manager/__init__.py", "def register(name):\n    return lambda cls: cls\n")
    ts.write(dest, "verl/workers/reward_manager/abstract.py",
             "class AbstractRewardManager:\n    pass\n\nRawRewardFn = object\n")
    ts.packages(dest, "verl/utils", "verl/trainer", "verl/trainer/ppo", "verl/workers")


PRIME_SCENARIO = """
    import json, multiprocessing, sys
    multiprocessing.set_start_method(sys.argv[1] if len(sys.argv) > 1 else %(method)r, force=True)
    from verl.trainer.ppo.reward import get_custom_reward_fn
    from verl.workers.reward_manager.prime import run_reward_scoring

    # load_reward_manager's path: get_custom_reward_fn(config) hands prime
    # partial(_call_with_kwargs, <function loaded by path>, reward_kwargs).
    fn = get_custom_reward_fn({"custom_reward_function": {"path": %(path)r, "name": %(name)r,
                                                          "reward_kwargs": {"rubric": "default"}}})
    # PrimeRewardManager.verify calls run_reward_scoring(..., num_processes=64).
    scores = run_reward_scoring(fn, completions=["yes", "no", "yes", "yes"], references=["yes", "yes", "yes", "yes"],
                                tasks=["toy", "toy", "toy", "sv-env-toy"],
                                extra_info=[{"index": 0}, {}, {"example_id": "bad"}, None], num_processes=64)
    print("SCORES " + json.dumps(scores))
"""


class VerlPrimeTest(StubCase):
    """verl/workers/reward_manager/prime.py (run_reward_scoring: a
    ProcessPoolExecutor, the function called positionally, float(result[0]))
    and verl/trainer/ppo/reward.py get_custom_reward_fn + verl/utils/
    import_utils.py load_extern_object (the file loaded by path as
    custom_module_<hash>), volcengine/verl b178a3c."""

    def run_prime(self, path: str, name: str, method: str) -> list[float]:
        src = ts.Source("verl")
        src.require(self)
        dest = ts.tempdir(self)
        verl_prime_tree(src, dest)
        r = ts.run_script(dest, PRIME_SCENARIO % {"path": path, "name": name, "method": method},
                          env={"SVBENCH_URL": self.url, "SVBENCH_TOKEN": "tok"})
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        line = [ln for ln in r.stdout.splitlines() if ln.startswith("SCORES ")]
        self.assertTrue(line, r.stdout + r.stderr)
        return json.loads(line[-1][len("SCORES "):])

    def test_compute_score_by_path_in_the_process_pool(self):
        for method in ("fork", "spawn"):  # Linux's default before Python 3.14, and what macOS and 3.14+ use
            with self.subTest(start_method=method):
                scores = self.run_prime(os.path.join(HERE, "svbench", "verl.py"), "compute_score", method)
                # right, wrong, failed item (0.0, as prime gives any failure), an alias of the env
                self.assertEqual(scores, [1.5, 0.0, 0.0, 1.5])

    def test_old_module_by_path(self):
        scores = self.run_prime(os.path.join(HERE, "svbench_client.py"), "compute_score", "fork")
        self.assertEqual(scores, [1.5, 0.0, 0.0, 1.5])


if __name__ == "__main__":
    unittest.main()
