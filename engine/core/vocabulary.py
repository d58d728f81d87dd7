"""Vocabulary shared by every layer: workload classes, job states, pricing tiers.

Values are the canonical lower-case spellings stored in the database; importers map
their source formats onto them.
"""

WORKLOAD_CLASSES = ("training", "inference", "development", "batch", "hpo", "unknown")
FLEXIBLE_CLASSES = ("training", "batch", "hpo")  # work that can wait and move to another region
JOB_STATUSES = ("completed", "failed", "cancelled", "preempted", "running", "pending")
TIERS = ("reserved", "on-demand", "spot")

DEFAULT_REGION = "default"
