"""numba's `njit` for the engine's compiled kernels (engine/*/*_kernels.py, each imported at its first use).

numba's first compile or cache load imports numba.np.arraymath, which looks for a BLAS by importing
scipy.linalg: about 0.1 s of CPU per process (numpy.f2py comes with it), for np.correlate and np.convolve
only. No kernel here uses linear algebra, so while numba's array functions load, that import is answered
"no such module"; numba then keeps its plain loops for those two, and scipy.linalg imports as usual
afterwards. In a process that has scipy.linalg already, nothing changes.

The compiled kernels are cached on disk, in a folder named after a digest of every kernel file's text
(`kernel_cache_dir`). numba keys a cached kernel on its own file's time stamp and size only, so a kernel
that calls one from another file (the fit rule in `fit_kernels.py`, called by the placement and cluster
kernels) would keep its old compiled copy after that other file changed; a new digest is a new, empty cache.
The folder is under `$NUMBA_CACHE_DIR` when set, else the user's cache folder (`$XDG_CACHE_HOME` or
~/.cache) in `meridian/numba`.
"""
from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

BLAS_PROBE = "scipy.linalg.cython_blas"  # the module numba.np.arraymath imports to find a BLAS
ENGINE = Path(__file__).resolve().parents[1]


def kernel_files(root: Path = ENGINE) -> list[Path]:
    """Every file whose text a compiled kernel may be made of: the kernel files and this one."""
    return sorted(root.rglob("*_kernels.py")) + [root / "core" / "jit.py"]


def kernel_digest(root: Path = ENGINE) -> str:
    """A digest of the kernel files' names and texts (16 hex digits)."""
    digest = hashlib.blake2b(digest_size=8)
    for path in kernel_files(root):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def kernel_cache_dir(root: Path = ENGINE, environ=os.environ) -> Path:
    """The folder numba caches this engine's kernels in (see the module's docstring)."""
    base = environ.get("NUMBA_CACHE_DIR") or Path(environ.get("XDG_CACHE_HOME") or Path.home() / ".cache",
                                                  "meridian", "numba")
    return Path(base, kernel_digest(root))


if "numba.np.arraymath" not in sys.modules and BLAS_PROBE not in sys.modules:
    sys.modules[BLAS_PROBE] = None  # an import of it raises ImportError, without importing scipy.linalg
    try:
        import numba.np.arraymath  # noqa: F401
    finally:
        del sys.modules[BLAS_PROBE]

from numba import config, njit  # noqa: E402

config.CACHE_DIR = str(kernel_cache_dir())  # read by each kernel's `cache=True` as it is decorated

__all__ = ["kernel_cache_dir", "kernel_digest", "njit"]
