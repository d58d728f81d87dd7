"""Agents by name, for scenarios: `order = { key = "rl", model = "NAME" }`.

A name is looked up in the model registry beside the database first (agents trained with
`meridian rl train`), then among the packaged agents (engine/policies/agents/). `bind` puts the
agent into a scenario's order parameters, so the scenario carries its weights wherever it runs
(worker processes of the headroom search included) and no run reads the registry again.
"""
from __future__ import annotations

from dataclasses import replace

from engine.core.errors import ScenarioError
from engine.policies.rl_agent import Agent, AgentError, packaged, packaged_names
from engine.predict.registry import ModelError
from engine.predict.rl.agent_registry import AgentRegistry
from engine.scenario.spec import Scenario


def resolve(name: str, registry: AgentRegistry | None) -> Agent:
    """The agent called `name`: the registry's latest version, else the packaged one."""
    if registry is not None and registry.versions(name):
        return registry.load(name)
    if name in packaged_names():
        return packaged(name)
    trained = registry.agents() if registry is not None else []
    raise AgentError(f"no agent {name!r}: trained here: {', '.join(trained) or 'none'}; "
                     f"packaged: {', '.join(packaged_names()) or 'none'}")


def available(registry: AgentRegistry | None) -> list[str]:
    """Every agent name a scenario may use: the registry's and the packaged ones, sorted."""
    return sorted(set(packaged_names()) | set(registry.agents() if registry is not None else []))


def bind(scenario: Scenario, registry: AgentRegistry | None) -> Scenario:
    """`scenario` with its learned order's agent loaded (unchanged when its order is not "rl");
    a ScenarioError naming the scenario when the agent cannot be found or read."""
    key, params = scenario.policies["order"]
    if key != "rl" or params.get("agent") is not None:
        return scenario
    name = params.get("model", "lublin-1")
    try:
        agent = resolve(name, registry)
    except (AgentError, ModelError) as exc:
        raise ScenarioError(f"{scenario.name}: order policy 'rl': {exc}") from None
    if agent.features != "rlscheduler":
        raise ScenarioError(f"{scenario.name}: order policy 'rl': agent {name!r} reads the runtime predictors' "
                            "quantiles, which a scenario's queue does not carry")
    return replace(scenario, policies={**scenario.policies, "order": (key, {**params, "agent": agent})})
