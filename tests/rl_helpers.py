"""Small SWF logs for the reinforcement-learning tests: hand-built ones and a seeded random one."""
import numpy as np

from engine.service.experiments.swf_jobs import parse_swf_jobs


def swf_text(rows, max_nodes: int) -> str:
    """An SWF log of `rows` (submit, run, procs[, requested[, user, group]]) on `max_nodes` 1-processor nodes;
    each job recorded as started when submitted (what a dataset imported from it keeps)."""
    lines = [f"; MaxNodes: {max_nodes}", f"; MaxProcs: {max_nodes}"]
    for k, row in enumerate(rows, start=1):
        submit, run, procs, *rest = row
        requested = rest[0] if rest else -1
        user, group = (rest[1], rest[2]) if len(rest) > 2 else (-1, -1)
        lines.append(f"{k} {submit} 0 {run} {procs} -1 -1 {procs} {requested} -1 1 {user} {group} -1 -1 -1 -1 -1")
    return "\n".join(lines) + "\n"


def random_rows(n: int, max_nodes: int, seed: int = 0) -> list[tuple]:
    """`n` jobs arriving about every 40 s, running 10 s to 2 h, 1 to max_nodes processors, 4 users in 2 groups."""
    rng = np.random.default_rng(seed)
    submit = np.cumsum(rng.exponential(40, n)).astype(int)
    run = np.exp(rng.uniform(np.log(10), np.log(7200), n)).astype(int)
    procs = rng.integers(1, max_nodes + 1, n)
    requested = (run * rng.uniform(1, 3, n)).astype(int)
    user = rng.integers(1, 5, n)
    return [(int(s), int(r), int(p), int(q), int(u), int((u + 1) // 2)) for s, r, p, q, u in
            zip(submit, run, procs, requested, user)]


def random_log(n: int = 300, max_nodes: int = 8, seed: int = 0):
    return parse_swf_jobs(swf_text(random_rows(n, max_nodes, seed), max_nodes).encode(), "random.swf")
