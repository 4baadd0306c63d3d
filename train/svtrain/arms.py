"""The matrix's arms: each one's reward source, advantage estimator and warm
start, in one table that the runner and the results both read."""

from __future__ import annotations

ARMS = {
    # name: (reward source, advantage estimator)
    "grpo": ("executable", "grpo"),
    "per_component": ("executable", "per_component"),
    "gdpo": ("executable", "gdpo"),
    "rm": ("learned_rm", "grpo"),
    "random": ("random", "grpo"),
    # GRPO from a warm start on the answer format only (the teacher's answers
    # with their labels shuffled across prompts): whatever it knows of the
    # labels after RL, the reward taught it.
    "format": ("executable", "grpo"),
    # The normalisation matrix from the same format-only warm start.
    "format_per_component": ("executable", "per_component"),
    "format_gdpo": ("executable", "gdpo"),
    # Attribution from the same format-only start: a learned reward model
    # (the judge's stand-in), a random reward (the control) and the
    # teacher's answers for the RL budget (distillation). Against these, a
    # format arm's gain is what the executable reward taught.
    "format_rm": ("learned_rm", "grpo"),
    "format_random": ("random", "grpo"),
    "format_distill": ("teacher", "none"),
    # No RL: the warm start distilled further from the teacher, for as many
    # answers as a GRPO arm samples (the seeds' "teacher-guided distillation").
    "distill": ("teacher", "none"),
}
DEFAULT_ARMS = ["grpo", "gdpo", "rm", "random"]


def from_format(arm: str) -> bool:
    """Whether the arm starts from the format-only warm start: `format` and
    every `format_*` arm."""
    return arm == "format" or arm.startswith("format_")


def start_of(arm: str) -> str:
    """The warm start's name: "format" or "teacher"."""
    return "format" if from_format(arm) else "teacher"


def sibling(arm: str, role: str) -> str:
    """The arm of role (random, rm, distill) from arm's warm start."""
    return "format_" + role if from_format(arm) else role

