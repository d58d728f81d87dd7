"""What an importer hands to the store: normalised tables, ready to insert.

Each table is a pandas DataFrame whose columns are a subset of the schema's columns
(see `JOB_COLUMNS` and friends); missing optional columns are stored as NULL.
Timestamps are timezone-naive pandas datetimes holding UTC.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

JOB_COLUMNS = (
    "source_line", "job_id", "user_name", "team", "project", "workload_class", "priority",
    "qos", "queue", "submit_utc", "start_utc", "end_utc", "gpus", "gpu_milli", "gpu_type",
    "cpus", "memory_gib", "nodes", "region", "cluster", "status", "requested_runtime_s",
    "deadline_utc", "data_location", "data_size_gb", "residency", "gpu_util_pct", "gpus_used_max",
    "memory_used_gib_max", "depends_on", "checkpoint_gb",
)
FLEET_COLUMNS = ("region", "cluster", "node", "gpu_type", "gpus", "cpus", "memory_gib", "rack", "tier")
REGION_COLUMNS = ("region", "timezone", "country", "jurisdiction", "egress_usd_per_gb")
PRICE_COLUMNS = ("region", "gpu_type", "tier", "usd_per_gpu_hour", "assumed")
CARBON_COLUMNS = ("region", "local_hour", "g_co2e_per_kwh")
TEAM_COLUMNS = (
    "team", "timezone", "work_start_hour", "work_end_hour", "working_days",
    "holiday_country", "home_region", "share_weight",
)
UTILIZATION_COLUMNS = ("ts_utc", "region", "cluster", "node", "busy", "total", "util_pct", "unit")

TABLE_COLUMNS = {
    "jobs": JOB_COLUMNS,
    "fleet": FLEET_COLUMNS,
    "regions": REGION_COLUMNS,
    "prices": PRICE_COLUMNS,
    "carbon": CARBON_COLUMNS,
    "teams": TEAM_COLUMNS,
    "utilization": UTILIZATION_COLUMNS,
}
# Tables whose rows remember the import they came from (so a dataset can be rebuilt).
IMPORTED_TABLES = ("jobs", "fleet", "utilization")


@dataclass
class ImportBatch:
    """Normalised content of one source file."""

    format: str
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # assumptions made while importing
    scheduler: str | None = None  # how the source was scheduled (engine.scenario.recorded.RECORDED), if it says
    rejects: list = field(default_factory=list)  # RowErrors of the rows set aside (ImportOptions.keep_valid)

    @property
    def primary_table(self) -> str:
        for name in ("jobs", "utilization", "fleet"):
            if name in self.tables:
                return name
        return next(iter(self.tables), "jobs")

    @property
    def row_count(self) -> int:
        table = self.tables.get(self.primary_table)
        return 0 if table is None else len(table)
