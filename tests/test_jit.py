"""engine.core.jit: numba's array functions load without scipy.linalg, which still imports (and serves
numba's linear algebra) afterwards."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_numba_loads_without_scipy_linalg_and_linear_algebra_still_compiles_afterwards():
    code = ("import sys\n"
            "import numpy as np\n"
            "from engine.core.jit import njit\n"
            "from engine.core.fit_kernels import MILLI\n"
            "print('numba.np.arraymath' in sys.modules, 'scipy.linalg' in sys.modules)\n"
            "import scipy.linalg\n"
            "dot = njit(lambda a, b: np.dot(a, b))\n"
            "print(dot(np.arange(3.0), np.arange(3.0)), scipy.linalg.cython_blas.__name__)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["True False", "5.0 scipy.linalg.cython_blas"]
