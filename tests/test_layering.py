"""Data flows one way: the engine never imports the UI layer, and only the store talks to DuckDB."""
import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
UI_MODULES = {"streamlit", "plotly", "dashboard"}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def _engine_files():
    return sorted((ROOT / "engine").rglob("*.py"))


def test_engine_never_imports_the_ui_layer():
    offenders = {str(p.relative_to(ROOT)): _imports(p) & UI_MODULES for p in _engine_files()}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_only_the_telemetry_package_talks_to_duckdb():
    users = [str(p.relative_to(ROOT)) for p in _engine_files() if "duckdb" in _imports(p)]
    assert users and all(u.startswith("engine/telemetry/") for u in users), users


def test_only_engine_predict_imports_scikit_learn():
    users = [str(p.relative_to(ROOT)) for p in _engine_files() if "sklearn" in _imports(p)]
    assert all(u.startswith("engine/predict/") for u in users), users


def test_chart_builders_do_not_import_streamlit():
    for path in sorted((ROOT / "dashboard").glob("charts*.py")) + [ROOT / "dashboard" / "report.py"]:
        if path.exists():
            assert "streamlit" not in _imports(path), path.name


def test_importing_the_whole_engine_loads_no_ui_module():
    modules = [".".join(p.relative_to(ROOT).with_suffix("").parts) for p in _engine_files()]
    modules = [m.removesuffix(".__init__") for m in modules]
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in {'streamlit', 'plotly', 'dashboard'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_pages_draw_charts_only_through_chart_view():
    """dashboard/chart_view.plot escapes a figure's data strings; a direct st.plotly_chart would skip it."""
    direct = [str(p.relative_to(ROOT)) for p in sorted((ROOT / "dashboard").rglob("*.py"))
              if ".plotly_chart(" in p.read_text(encoding="utf-8") and p.name != "chart_view.py"]
    assert direct == []
