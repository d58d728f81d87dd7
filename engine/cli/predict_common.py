"""What every `meridian predict` command shares: exit codes, the user-error exception and the guard
that turns it into one line on stderr, the model registry beside the database, a dataset's tables,
and the predictor settings file ([runtime] and [failure] tables, each field checked).
"""
from __future__ import annotations

from dataclasses import fields, replace

from engine.cli.common import BadInput
from engine.cli.common import guarded as common_guarded
from engine.core.toml_file import read_toml
from engine.predict.features import CATEGORICAL
from engine.telemetry.store import DEFAULT_DB_PATH, Store


def guarded(command):
    """engine.cli.common.guarded, a model registry's errors counted as user errors too (imported
    only then: scikit-learn stays unloaded for the other commands)."""
    return common_guarded(command, _model_errors)


def _model_errors() -> tuple:
    from engine.predict.registry import ModelError

    return (ModelError,)


def model_registry(args):
    from engine.predict.registry import ModelRegistry

    return ModelRegistry.beside(args.db or DEFAULT_DB_PATH)


def dataset_tables(args):
    """(jobs, regions) of --dataset; BadInput when the database has no such dataset or it has no jobs."""
    from engine.telemetry.sample import ensure_sample

    store = Store.open(args.db)
    try:
        ensure_sample(store)
        names = list(store.datasets()["name"])
        if args.dataset not in names:
            raise BadInput(f"unknown dataset {args.dataset!r}; choose from {', '.join(names) or 'none'}")
        jobs, regions = store.jobs(args.dataset), store.regions(args.dataset)
    finally:
        store.close()
    if jobs.empty:
        raise BadInput(f"dataset {args.dataset!r} has no jobs to train on or predict")
    return jobs, regions


def read_settings(path: str | None):
    """(RuntimeSettings, FailureSettings) from the [runtime] and [failure] tables of a TOML file."""
    from engine.predict.failure import FailureSettings
    from engine.predict.runtime import RuntimeSettings

    defaults = {"runtime": RuntimeSettings(), "failure": FailureSettings()}
    if path is None:
        return defaults["runtime"], defaults["failure"]
    data = read_toml(path, "the settings file", BadInput)
    extra = sorted(set(data) - set(defaults))
    if extra:
        raise BadInput(f"{path}: unknown table {', '.join(extra)}; valid: [runtime], [failure]")
    return tuple(_override(defaults[name], data.get(name, {}), f"{path}: [{name}]") for name in defaults)


def _override(settings, table, where: str):
    """`settings` with the fields in `table` replaced, each checked against the default's type and `_RULES`."""
    if not isinstance(table, dict):
        raise BadInput(f"{where} must be a table")
    known = {f.name: f for f in fields(settings)}
    extra = sorted(set(table) - set(known))
    if extra:
        raise BadInput(f"{where}: unknown setting {', '.join(extra)}; valid: {', '.join(known)}")
    for key, value in table.items():
        check, expected = _RULES.get(key) or _RULES[type(getattr(settings, key))]
        if not check(value):
            raise BadInput(f"{where} {key} must be {expected} ({known[key].metadata.get('help', '')}), got {value!r}")
    return replace(settings, **{k: tuple(v) if isinstance(v, list) else v for k, v in table.items()})


def _is_int(value, low: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= low


# Per field name, else per type of the default: (check, what it expects).
_RULES = {
    "seed": (lambda v: _is_int(v, 0), "a whole number >= 0"),
    "max_leaf_nodes": (lambda v: _is_int(v, 2), "a whole number >= 2"),
    "method": (lambda v: v in ("sigmoid", "isotonic"), "'sigmoid' or 'isotonic'"),
    "categorical": (lambda v: isinstance(v, list) and set(v) <= set(CATEGORICAL) and len(set(v)) == len(v),
                    f"a list of distinct names from {', '.join(CATEGORICAL)}"),
    bool: (lambda v: isinstance(v, bool), "true or false"),
    int: (lambda v: _is_int(v, 1), "a whole number >= 1"),
    float: (lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v < 1, "a number in (0, 1)"),
}
