"""What a `meridian` process imports before its command runs: its own command family's parsers only, and no
module a trace simulation does not use (DuckDB, SciPy, scikit-learn, holidays, compare's headroom searches)."""
import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _commands(parser: argparse.ArgumentParser) -> list[str]:
    return list(next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices)


def test_a_command_line_builds_the_parsers_of_its_command_family_only():
    from engine.cli.main import FAMILIES, build_parser

    every = _commands(build_parser())
    builtin = _commands(build_parser(["ingest"]))
    assert every == builtin + [name for _, _, names in FAMILIES for name in names]
    for _, _, names in FAMILIES:
        for name in names:
            assert _commands(build_parser([name, "--json"])) == builtin + list(names)
    assert _commands(build_parser(["--help"])) == _commands(build_parser(["nope"])) == every


def test_a_simulate_command_line_imports_no_other_family_nor_what_only_others_use():
    """Not DuckDB, SciPy, scikit-learn or the holidays package, nor compare's headroom searches and their process
    pools, nor the cost and carbon modules (a priced run's, loaded by its first `with_world`)."""
    code = ("import sys\n"
            "from engine.cli.main import build_parser\n"
            "build_parser(['simulate', '--trace', 'x.swf', '--scenario', 'fifo.toml'])\n"
            "print(sorted({m.split('.')[0] for m in sys.modules}\n"
            "             & {'duckdb', 'scipy', 'sklearn', 'multiprocessing', 'holidays'}))\n"
            "print(sorted(m for m in sys.modules if m.startswith(('engine.service.headroom.', 'engine.service.sweep',\n"
            "                                                     'engine.analysis.runs.cost', 'engine.analysis.runs.world_kpis'))))\n"
            "print(sorted(m for m in sys.modules if m.startswith('engine.cli.')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["[]", "[]", "['engine.cli.common', 'engine.cli.main', 'engine.cli.simulate']"]
