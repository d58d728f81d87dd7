"""A scenario's [data] table: how jobs' input data moves between regions (engine.sim.cycle.data_moves).

    [data]
    transfer_gbps = 10              # bandwidth between regions, Gbit/s (0, the default: instant)
    replicate_after = 3             # copy a dataset to a region once this many jobs there needed it
                                    # (0, the default: never); a replica is stored from then on
    storage_usd_per_gb_month = 0.023  # what a replica's storage costs (default: object storage's $0.023)
    prefetch = true                 # the transfer starts when the job is queued and overlaps its wait
                                    # (false, the default: the job queues once its data is there)
    compression_ratio = 2.0         # data moves at size / ratio (1, the default: uncompressed)
    compress_s_per_gb = 2.0         # CPU seconds to compress and decompress a GB, added to the transfer
    incremental = true              # a repeat job on a dataset already moved to a region moves only
    changed_fraction = 0.1          # this share of its data (default 0.1)

Every number has a unit and a range (engine.core.bounds: the field's metadata); a value outside,
a bool where a number belongs or an unknown key is a ScenarioError naming the key.
"""
from __future__ import annotations

from engine.scenario.checks import declared
from engine.world.data_model import DataModel


def parse_data(table: object, source: str) -> DataModel:
    """The [data] table as a DataModel (defaults for missing keys)."""
    return DataModel(**declared(table, DataModel, source, "[data]"))
