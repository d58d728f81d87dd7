"""Checks of a scenario section that depend on other sections or on the chosen policies: a section valid
alone may not be with the routing, the order, the [[burst]] pools or the load scale the scenario chose.
"""
from __future__ import annotations

from engine.core.errors import ScenarioError
from engine.policies import registry
from engine.scenario.handoff import Handoff, parse_handoff
from engine.scenario.predictive import PredictiveScaling, parse_predictive
from engine.scenario.runtime import RuntimeChoice


def predictive_section(table: object, bursts: tuple, load_scale: float, source: str) -> PredictiveScaling:
    """The [predictive_scaling] table; when on it needs [[burst]] pools to act on and arrivals as
    recorded (the forecast is in the recorded hours)."""
    settings = parse_predictive(table, source)
    if settings.enabled:
        if not bursts:
            raise ScenarioError(f"{source}: [predictive_scaling] rents the [[burst]] pools' nodes; add a [[burst]] "
                                "pool (region, gpu_type, max_nodes, ...)")
        if load_scale != 1.0:
            raise ScenarioError(f"{source}: [predictive_scaling] forecasts the recorded hours; it cannot run with "
                                f"[workload] load_scale {load_scale:g} (use growth to add demand)")
    return settings


def handoff_section(table: object, routing: str, source: str) -> Handoff:
    """The [handoff] table; when on it needs a router to have sent work away from home."""
    settings = parse_handoff(table, source)
    if settings.enabled and registry.policy_class("routing", routing).traits.inert:
        raise ScenarioError(f"{source}: [handoff] hands back work a routing policy sent away from home; routing "
                            f"{routing!r} keeps every job home (choose follow-the-sun, overflow, cheapest, ...)")
    return settings


def runtime_fields(choice: RuntimeChoice, order: str, source: str) -> dict:
    """The Scenario fields of a [runtime] choice; an order that reads failure probabilities needs them."""
    if registry.policy_class("order", order).traits.needs_failure and not choice.failure:
        raise ScenarioError(f"{source}: order {order!r} reads predicted failure probabilities; "
                            "set [runtime] failure = true")
    return {"runtime_source": choice.source, "runtime_quantile": choice.quantile, "predict_failure": choice.failure}
