"""svbench: client and trainer adapters for the svbench reward and environment server.

Standard library only. ``Client`` wraps the HTTP API (server/README.md);
the adapters follow each trainer's own calling convention:

* TRL: ``trl_reward_funcs(env)`` (async, one per component, None on failed
  items) with ``trl_reward_weights(env)``; ``trl_reward(env)`` (sync total);
* verl: ``svbench.verl.compute_score`` / ``compute_score_async``;
* OpenRLHF: the file ``svbench/openrlhf_reward.py`` (``reward_func``);
* verifiers (v0 Rubric, deprecated upstream): ``verifiers_reward(env)``;
  verifiers v1: ``svbench.verifiers_env`` (taskset id ``svbench-verifiers``,
  not imported here: it imports ``verifiers.v1`` when installed).

Session-backed (tool-using and multi-turn episodes the trainer generates):

* OpenRLHF: the file ``svbench/openrlhf_agent.py`` (``AgentExecutor``);
* TRL: ``trl_environment(env)`` (``environment_factory``) with
  ``trl_env_reward_funcs(env)``;
* verl: ``svbench.verl_tools`` (``SvbenchTool``, ``SvbenchInteraction``,
  ``compute_score``).

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

__version__ = "0.2.0"

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
