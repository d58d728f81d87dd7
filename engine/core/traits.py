"""Policy traits: what a policy tells the simulator about itself, declared once at registration.

A trait is a promise the simulator relies on to take a shorter path; the contract suite
(tests/test_policy_contract.py) checks every declared one. The defaults are the assumptions that
are always safe: an order's keys may change with time, a policy does something.

- `time_dependent` (order): its keys may change as `now_s` advances (WFP3, fair share, aging). False
  promises the same keys at every instant, so the simulator keys the whole workload once and keeps
  the queue sorted (the static path) instead of keying the waiting jobs at each pass.
- `needs_failure` (order): it reads each job's predicted failure probability (`fail_prob`), so a
  scenario using it needs a failure predictor.
- `reads_members` (order): it reads the per-user and per-project decayed usage, so the simulator's
  ledger keeps those as well as the per-team usage.
- `inert`: the policy changes nothing, so the simulator skips its family: no backfilling, every job
  admitted as asked, every job stays home, no delays, no quota gate, no preemption.
"""
from __future__ import annotations

from dataclasses import dataclass, fields

FAMILY_TRAITS: dict[str, frozenset[str]] = {
    "order": frozenset({"time_dependent", "needs_failure", "reads_members"}),
    "backfill": frozenset({"inert"}),
    "admission": frozenset({"inert"}),
    "routing": frozenset({"inert"}),
    "timing": frozenset({"inert"}),
    "quota": frozenset({"inert"}),
    "preemption": frozenset({"inert"}),
}


@dataclass(frozen=True)
class Traits:
    """A policy's declared traits (see the module docstring); every field has its safe default."""

    time_dependent: bool = True
    needs_failure: bool = False
    reads_members: bool = False
    inert: bool = False


NAMES = frozenset(f.name for f in fields(Traits))
DEFAULT = Traits()


def declare(family: str, key: str, declared: dict[str, bool]) -> Traits:
    """The Traits of policy `family`/`key` from its registration's keyword arguments; a name that is
    not a trait, or not one of this family's, or a value that is not a bool, is a ValueError."""
    allowed = FAMILY_TRAITS.get(family, frozenset())
    for name, value in declared.items():
        if name not in NAMES:
            raise ValueError(f"policy {family}/{key}: {name!r} is not a policy trait; traits: {', '.join(sorted(NAMES))}")
        if name not in allowed:
            raise ValueError(f"policy {family}/{key}: the {family} family has no trait {name!r}; its traits: "
                             f"{', '.join(sorted(allowed)) or 'none'}")
        if not isinstance(value, bool):
            raise ValueError(f"policy {family}/{key}: trait {name} must be True or False, got {value!r}")
    return Traits(**declared)


def traits_of(policy) -> Traits:
    """The traits a policy declared at registration; a missing policy (None) is inert."""
    return INERT if policy is None else type(policy).traits


INERT = Traits(inert=True)
