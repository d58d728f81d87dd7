"""The FGD experiment with pods arriving in batches (engine.service.experiments.fgd_batches) on the
openb trace: under `greedy` it is best-fit pod by pod, batch after batch."""
import numpy as np
from conftest import OPENB_INPUTS, TRACES, shared

from engine.service.experiments.fgd import run_seed
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
