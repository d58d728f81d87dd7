"""engine.core.jit: numba's array functions load without scipy.linalg, which still imports (and serves
numba's linear algebra) afterwards."""
import os
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


def test_every_module_that_compiles_is_a_kernel_file_the_cache_digest_reads():
    from engine.core.jit import ENGINE, kernel_files
    compiling = {p for p in ENGINE.rglob("*.py") if "engine.core.jit import" in p.read_text()}
    assert compiling and compiling <= set(kernel_files())


def _tree(root: Path, fit: str) -> Path:
    (root / "core").mkdir(parents=True, exist_ok=True)
    (root / "policies").mkdir(exist_ok=True)
    (root / "core" / "jit.py").write_text("njit = None\n")
    (root / "core" / "fit_kernels.py").write_text(fit)
    (root / "policies" / "leftover_kernels.py").write_text("from engine.core.fit_kernels import fits\n")
    (root / "policies" / "placement.py").write_text("x = 1\n")
    return root


def test_the_cache_folder_changes_with_any_kernel_file_and_only_with_them(tmp_path):
    from engine.core.jit import kernel_cache_dir
    env = {"XDG_CACHE_HOME": str(tmp_path / "xdg")}
    before = kernel_cache_dir(_tree(tmp_path / "a", "def fits(): return 1\n"), env)
    assert before.parent == tmp_path / "xdg" / "meridian" / "numba"
    assert kernel_cache_dir(_tree(tmp_path / "b", "def fits(): return 1\n"), env).name == before.name
    (tmp_path / "b" / "policies" / "placement.py").write_text("x = 2\n")  # not a kernel file
    assert kernel_cache_dir(tmp_path / "b", env) == before.parent / before.name
    changed = kernel_cache_dir(_tree(tmp_path / "c", "def fits(): return 2\n"), env)  # a callee's text
    assert changed.parent == before.parent and changed.name != before.name
    assert kernel_cache_dir(tmp_path / "c", {"NUMBA_CACHE_DIR": str(tmp_path / "n")}) == tmp_path / "n" / changed.name


def test_a_kernel_is_cached_in_the_digest_folder_and_loaded_from_it_by_the_next_process(tmp_path):
    code = ("import numpy as np\n"
            "from numba import config\n"
            "from engine.core.order_kernels import below\n"
            "from engine.core.jit import kernel_cache_dir\n"
            "assert below(1.0, np.nan) and not below(np.nan, 1.0)\n"
            "print(config.CACHE_DIR == str(kernel_cache_dir()), below.stats.cache_hits.get(below.signatures[0], 0))")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    runs = [subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                           check=True).stdout.split() for _ in range(2)]
    assert runs == [["True", "0"], ["True", "1"]]
    (folder,) = tmp_path.iterdir()
    assert len(folder.name) == 16 and any(p.name.startswith("order_kernels.below") for p in folder.rglob("*.nbi"))
