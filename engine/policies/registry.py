"""The policy registry: family -> registry key -> policy class.

A policy is a frozen dataclass whose fields are its parameters (keyword-only, with defaults),
so a Scenario can name it by key with keyword parameters, the UI can build widgets from the
fields, and one contract test can run over every registered policy. What a policy promises the
simulator (its keys do not change with time, it does nothing, ...) it declares as traits when it
registers (engine.core.traits); the simulator reads nothing else from it. Families in use:
"order" (queue order, including multifactor priority and the fairness orders), "backfill",
"placement", "admission", "gang", "cluster", "routing", "timing", "quota" and "preemption"; a new family needs
no change to the simulator's loop, only a hook where its one method is called.
"""
from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass
from importlib import import_module

from engine.core.bounds import Bound, bound_of
from engine.core.traits import declare

_REGISTRY: dict[str, dict[str, type]] = {}
# Modules that register policies when imported; import order does not matter.
_FAMILY_MODULES = (
    "engine.policies.ordering", "engine.policies.placement", "engine.policies.backfill", "engine.policies.backfill_order",
    "engine.policies.backfill_predicted", "engine.policies.backfill_selective", "engine.policies.backfill_list",
    "engine.policies.backfill_lookahead", "engine.policies.backfill_adaptive", "engine.policies.admission",
    "engine.policies.gang", "engine.policies.gang_contiguous", "engine.policies.routing", "engine.policies.timing", "engine.policies.priority",
    "engine.policies.fairness", "engine.policies.quota", "engine.policies.preemption",
    "engine.policies.failure_aware", "engine.policies.rl_order", "engine.policies.placement_search",
    "engine.policies.placement_milp", "engine.policies.constraints", "engine.policies.cluster",
)


class PolicyError(ValueError):
    """A scenario names an unknown policy or gives it a bad parameter."""


@dataclass(frozen=True)
class Parameter:
    """One introspected policy parameter: name, Python type, default, help text, and for a number its
    unit and range (engine.core.bounds; None for other kinds, or a number that declares neither)."""

    name: str
    type: type
    default: object
    help: str
    bound: Bound | None = None


def register(family: str, key: str, **traits: bool):
    """Class decorator: `@register("placement", "best-fit")`, `@register("order", "sjf", time_dependent=False)`.
    The keyword arguments are the policy's traits (engine.core.traits); an unknown one is an error."""
    declared = declare(family, key, traits)

    def wrap(cls):
        if not dataclasses.is_dataclass(cls):
            raise TypeError(f"{cls.__name__} must be a frozen dataclass")
        existing = _REGISTRY.setdefault(family, {})
        if key in existing and existing[key] is not cls:
            raise ValueError(f"policy {family}/{key} registered twice")
        existing[key] = cls
        cls.registry_key = key
        cls.family = family
        cls.traits = declared
        return cls

    return wrap


def _load() -> None:
    for module in _FAMILY_MODULES:
        try:
            import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise


def families() -> dict[str, list[str]]:
    """Family -> sorted registry keys."""
    _load()
    return {family: sorted(keys) for family, keys in sorted(_REGISTRY.items())}


def policy_class(family: str, key: str) -> type:
    _load()
    if family not in _REGISTRY:
        raise PolicyError(f"unknown policy family {family!r}; choose from {', '.join(sorted(_REGISTRY))}")
    keys = _REGISTRY[family]
    if key not in keys:
        raise PolicyError(f"unknown {family} policy {key!r}; choose from {', '.join(sorted(keys))}")
    return keys[key]


def parameters(family: str, key: str) -> list[Parameter]:
    """The policy's parameters, in declaration order, for validation and UI widgets. A field with
    metadata `injected` (a learned order's trained agent) is not a parameter: the service sets it."""
    cls = policy_class(family, key)
    hints = typing.get_type_hints(cls)
    return [
        Parameter(f.name, hints[f.name], f.default, f.metadata.get("help", ""),
                  bound_of(f.name, hints[f.name], f.metadata) if hints[f.name] in (int, float) else None)
        for f in dataclasses.fields(cls)
        if f.init and not f.metadata.get("injected")
    ]


def injected_fields(family: str, key: str) -> set[str]:
    """The policy's fields the service sets (metadata `injected`), which `make` accepts unchecked."""
    return {f.name for f in dataclasses.fields(policy_class(family, key)) if f.init and f.metadata.get("injected")}


def make(family: str, key: str, **params):
    """Build a policy from its key and keyword parameters, with clear errors."""
    cls = policy_class(family, key)
    known = {p.name: p for p in parameters(family, key)}
    unknown = sorted(set(params) - set(known) - injected_fields(family, key))
    if unknown:
        valid = ", ".join(known) or "none"
        raise PolicyError(f"{family} policy {key!r} has no parameter(s) {', '.join(unknown)}; valid: {valid}")
    for name, value in params.items():
        if name not in known:
            continue
        expected = known[name].type
        if expected is float and isinstance(value, int) and not isinstance(value, bool):
            params[name] = float(value)
        elif isinstance(expected, type) and not isinstance(params[name], expected):
            raise PolicyError(
                f"{family} policy {key!r}: parameter {name} must be {expected.__name__}, got {value!r}"
            )
        bound = known[name].bound
        refused = bound.check(name, params[name]) if bound is not None and expected in (int, float) else None
        if refused:
            raise PolicyError(f"{family} policy {key!r}: {refused}")
    return cls(**params)
