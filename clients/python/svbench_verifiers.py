"""The verifiers v1 taskset id ``svbench-verifiers``: verifiers imports a
taskset by id as a top-level module exporting exactly one ``Taskset``
subclass (and the ``Env`` that plays it) through ``__all__``. The code is
``svbench.verifiers_env``.

    uv run eval svbench-verifiers --env.taskset.env e2 --env.taskset.split test
"""

from svbench.verifiers_env import SvbenchEnv, SvbenchTaskset

__all__ = ["SvbenchTaskset", "SvbenchEnv"]
