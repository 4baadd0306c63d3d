"""`verifiers` (v0 Rubric) reward functions.

``verifiers_reward(env)`` -> ``f(completion, answer, **kwargs) -> float``, kept
for users of verifiers' v0 Rubric API (``vf.Rubric(funcs=[...])``), which
verifiers now ships as ``verifiers.legacy`` and documents as deprecated. New
code: the v1 taskset and env in ``svbench.verifiers_env`` (taskset id
``svbench-verifiers``).
"""

from typing import Any, Callable, Dict, List, Optional, Union

from svbench.client import Client, _value, make_item

__all__ = ["verifiers_reward"]


def verifiers_reward(env: str, client: Optional[Client] = None, rubric: Optional[str] = None,
                     component: Optional[str] = None, strict: bool = False) -> Callable[..., Optional[float]]:
    """A `verifiers` reward function: f(completion, answer, **kwargs) -> float.

    completion is the text or message list verifiers passes; answer is the
    dataset's answer column. An example id in kwargs["info"]["example_id"]
    (or kwargs["example_id"]) is used instead of the answer when present.
    component returns one unweighted component instead of the total. A failed
    item scores 0.0 with a warning (raises when strict).
    """
    cl = client or Client()

    def reward(completion: Union[str, List[Dict[str, Any]]], answer: Any = None, **kwargs: Any) -> Optional[float]:
        info = kwargs.get("info") or {}
        example_id = info.get("example_id") if isinstance(info, dict) else None
        example_id = example_id or kwargs.get("example_id")
        item = make_item(env, completion, answer=answer, example_id=example_id, rubric=rubric)
        return _value(cl.score([item])[0], component, strict)

    reward.__name__ = "svbench_%s_%s" % (env.replace("-", "_"), component or "reward")
    return reward
