"""Compatibility module: the client is now the ``svbench`` package
(``pip install ./clients/python``). Old imports keep working:
``import svbench_client as sv``; ``sv.Client``, ``sv.trl_reward``,
``sv.verifiers_reward``, ``sv.compute_score`` (verl; called by keyword it
returns ``{"score", ...components}``, positionally as verl's prime manager
calls it the total, and it no longer raises on a failed item).

This file may also be loaded by path (verl's custom_reward_function.path):
it then finds the package next to it.
"""

import os
import sys

try:
    import svbench  # noqa: F401
except ImportError:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from svbench import *  # noqa: E402,F401,F403
from svbench import __all__  # noqa: E402,F401
from svbench.client import _answer_value, _column, _value  # noqa: E402,F401
