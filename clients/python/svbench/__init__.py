"""svbench: client and trainer adapters for the svbench reward and environment server.

Standard library only. ``Client`` wraps the HTTP API (server/README.md);
the adapters follow each trainer's own calling convention:

* TRL (GRPOTrainer, AsyncGRPOTrainer): ``trl_reward_funcs(env)`` (one per
  component, None on failed items; picklable callables) with
  ``trl_reward_weights(env)``; ``trl_reward(env)`` (the total);
* verl: ``svbench.verl.compute_score`` / ``compute_score_async`` (every
  reward manager, prime's process pool included);
* OpenRLHF: the file ``svbench/openrlhf_reward.py`` (``reward_func``);
* NeMo Gym rows (NeMo Gym, verifiers' NeMo Gym taskset):
  ``python3 -m svbench.nemo_gym e2``;
* verifiers (v0 Rubric, deprecated upstream): ``verifiers_reward(env)``;
  verifiers v1: ``svbench.verifiers_env`` (taskset id ``svbench-verifiers``,
  not imported here: it imports ``verifiers.v1`` when installed).

Session-backed (tool-using and multi-turn episodes the trainer generates):

* OpenRLHF: the file ``svbench/openrlhf_agent.py`` (``AgentExecutor``);
* TRL: ``trl_environment(env)`` (``environment_factory``) with
  ``trl_env_reward_funcs(env)``;
* verl: ``svbench.verl_tools`` (``SvbenchTool``, ``SvbenchInteraction``,
  the agent loop ``svbench_tool_agent``, ``compute_score``).

The server is found through SVBENCH_URL (default http://127.0.0.1:8080),
authenticated with SVBENCH_TOKEN when set.
"""

from svbench.client import (
    DEFAULT_URL,
    Client,
    SvbenchError,
    all_components,
    default_client,
    make_item,
    rubric_info,
)
from svbench.trl import trl_reward, trl_reward_funcs, trl_reward_weights
from svbench.trl_env import trl_env_dataset, trl_env_reward_funcs, trl_environment
from svbench.verifiers import verifiers_reward
from svbench.verl import compute_score, compute_score_async

__version__ = "0.3.0"

__all__ = [
    "DEFAULT_URL",
    "Client",
    "SvbenchError",
    "all_components",
    "compute_score",
    "compute_score_async",
    "default_client",
    "make_item",
    "rubric_info",
    "trl_reward",
    "trl_reward_funcs",
    "trl_reward_weights",
    "trl_env_dataset",
    "trl_env_reward_funcs",
    "trl_environment",
    "verifiers_reward",
]
