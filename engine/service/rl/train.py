"""Training the kernel policy with PPO on RLScheduler windows of a log, seeded, resumable.

1. Each epoch draws `trajectories` training windows (seeded by (seed, epoch)) from the 256-job
   windows that share no job with the ten test sequences, and plays them with the current policy
   on the workers (engine/service/rl/rollout.py).
2. Each episode's reward is measured against the better of SJF and F1 on the same window
   (`relative`: the log of the ratio of bounded slowdowns), so a window that every order finds easy
   and one that every order finds hard weigh alike, and then against the mean of the `group`
   episodes played on the same window (a baseline that depends only on the window leaves the
   policy gradient unbiased, and takes out most of the window's luck).
3. The critic values every decision; GAE (gamma, lambda) gives the advantages, normalised over the
   batch; decisions with a single waiting job teach nothing and are left out of the update.
4. PPO's passes update the policy and the critic (engine/predict/rl/ppo.py).
5. The new weights play `validation` windows set aside from the training windows, greedily; the
   weights with the best mean reward there are the ones the run keeps (epoch 0's included).
6. The epoch's figures join the learning curve, and `checkpoint(state)` may store the state.
Before the first epoch (step 0, the curve's epoch 0), unless `imitate` is "none", the policy learns
to copy a heuristic's picks on some training windows (engine/predict/rl/imitation.py): PPO from
random weights improves very slowly here, since one reward at a window's end has to teach some 200
decisions, and from a policy that schedules like F1 it starts where the heuristics are.
The same log, settings and seed give the same weights and curve (the workers' count does not
matter), and a run resumed from the checkpoint of epoch k continues exactly as an uninterrupted one.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np

from engine.policies.kernel_net import KernelNet, critic_forward, initial
from engine.policies.rl_features import FEATURE_SETS
from engine.predict.rl.adam import Adam
from engine.predict.rl.imitation import imitate
from engine.predict.rl.ppo import Batch, PPOSettings, gae, update
from engine.predict.threads import blas_threads
from engine.service.rl.env import TRAIN_LENGTH
from engine.service.rl.reward import Reward

IMITABLE = ("none", "f1", "sjf", "fcfs")


@dataclass(frozen=True)
class TrainSettings:
    """backfill: "none" or "compat"; reward: what an episode is worth; features: "rlscheduler" or
    "predicted"; epochs: epochs in all (a resumed run goes on to this many); trajectories: windows
    per epoch; group: episodes played on each window (trajectories / group windows per epoch);
    length: jobs per training window; seed; imitate: the heuristic (order key) whose picks the policy
    first learns to copy on `imitation_windows` training windows in `imitation_steps` Adam steps, each
    on `imitation_minibatch` decisions (0: all of them) ("none": PPO from random weights); validation: training windows set aside, played greedily after
    every epoch to choose the weights the run keeps (0: the last); ppo: the optimiser's settings."""

    backfill: str = "none"
    reward: Reward = Reward()
    features: str = "rlscheduler"
    epochs: int = 50
    trajectories: int = 100
    group: int = 4
    length: int = TRAIN_LENGTH
    seed: int = 0
    imitate: str = "f1"
    imitation_windows: int = 40
    imitation_steps: int = 200
    imitation_minibatch: int = 0
    validation: int = 16
    ppo: PPOSettings = PPOSettings()

    def __post_init__(self) -> None:
        if self.backfill not in ("none", "compat"):
            raise ValueError(f"backfill must be none or compat, got {self.backfill!r}")
        if self.features not in FEATURE_SETS:
            raise ValueError(f"features must be one of {', '.join(FEATURE_SETS)}, got {self.features!r}")
        if self.imitate not in IMITABLE:
            raise ValueError(f"imitate must be one of {', '.join(IMITABLE)}, got {self.imitate!r}")
        if self.validation < 0 or self.imitation_minibatch < 0 or min(self.epochs, self.trajectories, self.group, self.length) < 1 \
                or self.trajectories % self.group:
            raise ValueError(f"epochs, trajectories, group and length must be at least 1 and trajectories a multiple "
                             f"of group; got {self.epochs}, {self.trajectories}, {self.group}, {self.length}")

    def as_dict(self) -> dict:
        return {**asdict(self), "reward": self.reward.as_dict(), "ppo": self.ppo.as_dict()}

    @classmethod
    def from_dict(cls, data: dict) -> TrainSettings:
        return cls(**{**data, "reward": Reward(**data["reward"]), "ppo": PPOSettings(**data["ppo"])})


@dataclass
class TrainingState:
    """Where a run is: the weights, both optimisers, epochs done, the learning curve (one dict per
    epoch), decisions played and seconds spent in all, and the weights that scored best on the
    validation windows so far (best_net, from epoch best_epoch, mean reward best_score)."""

    net: KernelNet
    pi_opt: Adam
    v_opt: Adam
    epoch: int = 0
    curve: list[dict] = field(default_factory=list)
    decisions: int = 0
    seconds: float = 0.0
    best_net: KernelNet | None = None
    best_epoch: int = -1
    best_score: float = -np.inf

    @property
    def kept(self) -> KernelNet:
        """The weights the run keeps: the best on the validation windows, else the last."""
        return self.best_net if self.best_net is not None else self.net

    @classmethod
    def fresh(cls, settings: TrainSettings) -> TrainingState:
        net = initial(len(FEATURE_SETS[settings.features]), np.random.default_rng([settings.seed, 0xC0FFEE]))
        return cls(net, Adam(settings.ppo.pi_lr), Adam(settings.ppo.vf_lr))


def relative(reward: float, reference: float, kind: str) -> float:
    """Step 2: ln(reference bounded slowdown / the agent's) for the "bsld" reward (symmetric: half and
    twice the reference's slowdown weigh alike), else (reward - reference) / |reference| (the plain
    difference when the reference is 0)."""
    if kind == "bsld":
        return float(np.log(reference / reward))
    return (reward - reference) / abs(reference) if reference else reward - reference


def batch_of(episodes: list, net: KernelNet, settings: TrainSettings) -> tuple[Batch, np.ndarray]:
    """The PPO batch of an epoch's episodes (steps 2-3) and every episode's relative reward."""
    rows = net.inputs(np.vstack([e.rows for e in episodes]))
    counts = np.concatenate([e.counts for e in episodes])
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    values = critic_forward(net.critic, rows, starts)[0]
    scaled = np.array([relative(e.reward, max(settings.reward.of(s) for s in e.references.values()),
                                settings.reward.kind)
                       for e in episodes])
    centred = scaled - np.repeat(scaled.reshape(-1, settings.group).mean(axis=1), settings.group)
    advantages, returns, k = [], [], 0
    for episode, reward in zip(episodes, centred):
        n = len(episode.counts)
        adv, ret = gae(values[k:k + n], reward, settings.ppo.gamma, settings.ppo.lam)
        advantages.append(adv)
        returns.append(ret)
        k += n
    advantages, returns = np.concatenate(advantages), np.concatenate(returns)
    actions = starts + np.concatenate([e.actions for e in episodes])
    logp = np.concatenate([e.logp for e in episodes])
    batch = Batch(rows, starts, actions, logp, advantages, returns)
    choice = np.flatnonzero(counts > 1)
    batch = batch.take(choice)
    batch.advantages = (batch.advantages - batch.advantages.mean()) / (batch.advantages.std() + 1e-8)
    return batch, scaled


def epoch_starts(pool: np.ndarray, settings: TrainSettings, epoch: int) -> list[int]:
    """The training windows of `epoch`, each `group` times in a row (step 1)."""
    rng = np.random.default_rng([settings.seed, epoch, 1])
    windows = rng.choice(pool, size=max(1, settings.trajectories // settings.group))
    return [int(s) for s in np.repeat(windows, settings.group)]


def train(collector, pool: np.ndarray, settings: TrainSettings, state: TrainingState | None = None,
          progress: Callable[[dict], None] | None = None,
          checkpoint: Callable[[TrainingState], None] | None = None) -> TrainingState:
    """Run epochs until `settings.epochs` (steps 1-6) from `state` (default a fresh start).
    `collector`: an engine.service.rl.rollout.Collector; `pool`: the training window starts."""
    state = state or TrainingState.fresh(settings)
    validation, pool = split(pool, settings)
    with blas_threads(1):
        if not state.curve and settings.imitate != "none":
            _imitation(collector, pool, validation, settings, state, progress, checkpoint)
        while state.epoch < settings.epochs:
            _epoch(collector, pool, validation, settings, state, progress, checkpoint)
    return state


def split(pool: np.ndarray, settings: TrainSettings) -> tuple[np.ndarray, np.ndarray]:
    """(the validation windows, the training windows): `validation` starts drawn (seeded) from the
    pool and taken out of it."""
    rng = np.random.default_rng([settings.seed, 0, 4])
    held = np.sort(rng.choice(pool, size=min(settings.validation, len(pool) - 1), replace=False))
    return held, np.setdiff1d(pool, held)


def _validate(collector, validation: np.ndarray, settings: TrainSettings, state: TrainingState, point: dict) -> None:
    """Play the validation windows greedily; keep the weights when they score best so far."""
    if not len(validation):
        return
    episodes = collector.collect(state.net, [int(s) for s in validation], [None] * len(validation))
    score = float(np.mean([e.reward for e in episodes]))
    point["validation_reward"] = score
    point["validation_bsld"] = float(np.mean([e.scores["avg_bounded_slowdown"] for e in episodes]))
    if score > state.best_score:
        state.best_net, state.best_epoch, state.best_score = state.net, point["epoch"], score


def _imitation(collector, pool, validation, settings, state, progress, checkpoint) -> None:
    """Step 0: copy the heuristic's picks on training windows; the curve's epoch 0."""
    began = time.perf_counter()
    rng = np.random.default_rng([settings.seed, 0, 3])
    starts = [int(s) for s in rng.choice(pool, size=settings.imitation_windows)]
    episodes = collector.teach(starts, settings.imitate)
    counts = np.concatenate([e.counts for e in episodes])
    first = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    rows = state.net.inputs(np.vstack([e.rows for e in episodes]))
    actions = first + np.concatenate([e.actions for e in episodes])
    batch = Batch(rows, first, actions, np.zeros(len(first)), np.zeros(len(first)), np.zeros(len(first)))
    state.net, history = imitate(state.net, batch.take(np.flatnonzero(counts > 1)), settings.imitation_steps,
                                 minibatch=settings.imitation_minibatch, rng=np.random.default_rng([settings.seed, 0, 5]))
    spent = time.perf_counter() - began
    point = {"epoch": 0, "imitated": settings.imitate, "decisions": len(counts), "seconds": spent,
             "imitation_loss": history[-1]["loss"], "agreement": history[-1]["agreement"],
             "bsld_teacher": float(np.mean([e.scores["avg_bounded_slowdown"] for e in episodes]))}
    _validate(collector, validation, settings, state, point)
    state.curve.append(point)
    state.decisions += point["decisions"]
    state.seconds += spent
    if progress is not None:
        progress(point)
    if checkpoint is not None:
        checkpoint(state)


def _epoch(collector, pool, validation, settings, state, progress, checkpoint) -> None:
    """One epoch, steps 1-6."""
    began = time.perf_counter()
    e = state.epoch
    starts = epoch_starts(pool, settings, e)
    episodes = collector.collect(state.net, starts, [(settings.seed, e, k) for k in range(len(starts))])
    batch, scaled = batch_of(episodes, state.net, settings)
    net, stats = update(state.net, batch, settings.ppo, state.pi_opt, state.v_opt,
                        np.random.default_rng([settings.seed, e, 2]))
    decisions = int(sum(len(x.counts) for x in episodes))
    spent = time.perf_counter() - began
    point = {"epoch": e + 1, "reward": float(np.mean([x.reward for x in episodes])),
             "relative": float(np.mean(scaled)), "decisions": decisions, "choices": len(batch),
             "seconds": spent, **_means(episodes), **stats}
    state.net, state.epoch = net, e + 1
    _validate(collector, validation, settings, state, point)
    state.curve.append(point)
    state.decisions += decisions
    state.seconds += spent
    if progress is not None:
        progress(point)
    if checkpoint is not None:
        checkpoint(state)


def _means(episodes: list) -> dict:
    """The agent's and the references' mean bounded slowdown and utilization over the episodes."""
    out = {"bsld": float(np.mean([e.scores["avg_bounded_slowdown"] for e in episodes])),
           "utilization": float(np.mean([e.scores["utilization"] for e in episodes]))}
    for name in episodes[0].references:
        out[f"bsld_{name}"] = float(np.mean([e.references[name]["avg_bounded_slowdown"] for e in episodes]))
    return out
