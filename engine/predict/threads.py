"""How many OpenMP threads gradient boosting may use while fitting and predicting.

scikit-learn's HistGradientBoosting parallelises with OpenMP over all cores by default. On a
shared 2-core machine that is a trap: when another process holds one core, every parallel region
waits at its barrier for a descheduled thread, and with other work keeping the machine busy
(load average 4-5) fitting HPC2N's 202,871 jobs took 33 s on one thread and had not finished
after 9 minutes on two (benchmarks/RESULTS.md). The predictors therefore run on
`threads` OpenMP threads (1 by default); the results do not depend on it (histograms are built per
feature, so the sums are the same for any number of threads).
"""
from __future__ import annotations

from contextlib import AbstractContextManager

from threadpoolctl import threadpool_limits


def openmp_threads(threads: int) -> AbstractContextManager:
    """Context manager capping OpenMP threads (scikit-learn's gradient boosting) to `threads`."""
    return threadpool_limits(limits=threads, user_api="openmp")


def blas_threads(threads: int) -> AbstractContextManager:
    """Context manager capping BLAS threads (numpy's matrix products) to `threads`: the kernel
    policy's products are small, and on a shared machine BLAS threads waiting for each other made
    one training epoch several times slower than a single thread (engine/service/rl)."""
    return threadpool_limits(limits=threads, user_api="blas")
