"""The FGD experiment with pods arriving in batches (engine.service.experiments.fgd_batches) on the
openb trace: under `greedy` it is best-fit pod by pod, batch after batch; hill climbing packs tighter."""
import numpy as np
from conftest import OPENB_INPUTS, TRACES, shared

from engine.service.experiments.fgd import level_values, run_seed
from engine.service.experiments.fgd_batches import run_seed_batched
from engine.service.experiments.openb_inputs import load_nodes, load_pods

OPENB = TRACES / "alibaba-openb"


@shared(*OPENB_INPUTS)
def test_the_batched_experiment_under_greedy_is_best_fit_pod_by_pod():
    nodes = load_nodes(OPENB / "openb_node_list_gpu_node.csv")
    pods = load_pods(OPENB / "openb_pod_list_default.csv")
    by_pod = run_seed(nodes, pods, "best-fit", 42)
    batched = run_seed_batched(nodes, pods, "greedy", 42, 64)
    ends = np.r_[np.arange(63, len(by_pod.placed), 64), len(by_pod.placed) - 1]
    assert np.array_equal(by_pod.placed, batched.placed) and batched.placed.sum() > 0.5 * len(batched.placed)
    assert np.array_equal(by_pod.used_milli[ends], batched.used_milli[ends])
    assert np.allclose(by_pod.frag_milli[ends], batched.frag_milli[ends])


@shared(*OPENB_INPUTS)
def test_hill_climbing_over_batches_packs_openb_tighter_than_best_fit():
    """Seed 42, batches of 64: hill climbing with FGD's measure in its cost allocates more GPU at 100 %
    arrived than best-fit (benchmarks/RESULTS.md: 94.98 against 92.83 % over seeds 42-44). A search
    that drifts over equally costed plans spreads pods and falls back to best-fit's level."""
    nodes = load_nodes(OPENB / "openb_node_list_gpu_node.csv")
    pods = load_pods(OPENB / "openb_pod_list_default.csv")
    gpus = int(nodes["gpu"].sum())
    best_fit = level_values(run_seed(nodes, pods, "best-fit", 42), gpus)["gpu_alloc_ratio_pct"][100]
    hill = level_values(run_seed_batched(nodes, pods, "hill-climbing", 42, 64), gpus)["gpu_alloc_ratio_pct"][100]
    assert hill >= best_fit + 1.5, (hill, best_fit)
