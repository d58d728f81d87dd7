"""Vocabulary shared by every layer: workload classes, job states, pricing tiers.

Values are the canonical lower-case spellings stored in the database; importers map
their source formats onto them.
"""

WORKLOAD_CLASSES = ("training", "inference", "development", "batch", "hpo", "unknown")
FLEXIBLE_CLASSES = ("training", "batch", "hpo")  # work that can wait and move to another region
JOB_STATUSES = ("completed", "failed", "cancelled", "preempted", "running", "pending")
TIERS = ("reserved", "on-demand", "spot")

DEFAULT_REGION = "default"


def class_label(workload_class: str) -> str:
    """A workload class at the start of a label: capitalised, HPO in capitals."""
    return "HPO" if workload_class == "hpo" else workload_class.capitalize()
