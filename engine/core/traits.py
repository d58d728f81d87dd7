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
- `batch` (placement): it also places a pass's batch of pods together, `plan(view, requests, rng,
  gang_waiting)` (engine.policies.placement_batch), and the simulator asks it once per pass.
- `inert`: the policy changes nothing, so the simulator skips its family: no backfilling, every job
  admitted as asked, every job stays home, no delays, no quota gate, no preemption.
- `relaxes` (routing): it has soft constraints it may relax, and a method `decide(job, regions, now_s)`
  returning its scores with, per region, the constraints that region fails and their costs
  (engine.policies.constraints.Routed), so the router records what it relaxed for each job.

Settings are the few parameters the simulator reads from the policies of a family that have them,
declared here with the value that stands for a policy without one (`setting`): an order's
`half_life_s` (of the decayed usage its ledger keeps) and `recalc_s` (how often its keys are
recomputed; 0: at every pass), a quota's holder `by` ("team" or "queue"), a preemption policy's
`time_key(now_s, starts)` (a method: what of the clock its choice depends on; None: nothing) and
`choose_running` (a method: its choice from the run's per-job figures; None: from a view), and a
routing policy's `keeps_inflexible_home`: True promises that an inflexible job (`flexible` False) whose
home is eligible (allowed and fits) scores so that the router keeps it home, so the router keeps it home
without building a view; `keeps_home_when_free` promises as much for any job whose home is eligible and
has the job's GPUs free (`free_gpus` at least its GPUs less engine.policies.routing.SLACK_GPUS), inference
excepted while some region is an edge one (`edge`) (both checked
by tests/test_policy_traits.py; False: the router always asks); and a cluster policy's `takes_sole_holder`:
True promises ANY for a job no cluster holds and, for a job exactly one cluster holds, that cluster when
the job fits there now, else WAIT, so the cluster step answers those without a view (checked there too),
and its `lowest_by`: the codes of the keys its choice is the lowest fitting cluster by (engine.core.cluster_view;
(): none), which the cluster step then applies itself.
"""
from __future__ import annotations

from dataclasses import dataclass, fields

FAMILY_TRAITS: dict[str, frozenset[str]] = {
    "order": frozenset({"time_dependent", "needs_failure", "reads_members"}),
    "placement": frozenset({"batch"}),
    "backfill": frozenset({"inert"}),
    "admission": frozenset({"inert"}),
    "routing": frozenset({"inert", "relaxes"}),
    "cluster": frozenset({"inert"}),
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
    batch: bool = False
    inert: bool = False
    relaxes: bool = False


DEFAULT_HALF_LIFE_S = 7 * 86_400.0
FAMILY_SETTINGS: dict[str, dict[str, object]] = {
    "order": {"half_life_s": DEFAULT_HALF_LIFE_S, "recalc_s": 0.0},
    "quota": {"by": "team"},
    "preemption": {"time_key": None, "choose_running": None, "suspects": None},
    "routing": {"keeps_inflexible_home": False, "keeps_home_when_free": False},
    "cluster": {"takes_sole_holder": False, "lowest_by": ()},
}

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


def setting(policy, family: str, name: str):
    """The declared setting `name` of a `family` policy: its own attribute when it has one, else the
    family's stand-in value; a name not declared for the family is a KeyError (a typo must not read
    the default silently)."""
    default = FAMILY_SETTINGS[family][name]
    return default if policy is None else getattr(policy, name, default)
