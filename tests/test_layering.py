"""Data flows one way: each layer imports only the layers below it (LAYERS, low to high), no two
modules import each other even through others, the engine never imports the UI layer, only the
store talks to DuckDB, only engine.predict imports scikit-learn, pages draw through charts/view and
never import plotly, and only dashboard/data/ caches."""
import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
UI_MODULES = {"streamlit", "plotly", "dashboard"}
# The engine's rooms, low to high; the dashboard sits on top of them all.
LAYERS = ("core", "world", "policies", "telemetry", "predict", "scenario", "sim", "analysis", "service", "cli")


def _imports(path: Path) -> set[str]:
    return {name.split(".")[0] for name in _modules_imported(path)}


def _modules_imported(path: Path) -> set[str]:
    """Every module an import in `path` names, at any depth (function-level imports count too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _module(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def _room(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "engine" and len(parts) > 1 else None


def test_every_engine_module_lives_in_a_layer():
    loose = [_module(p) for p in _engine_files() if _room(_module(p)) not in LAYERS and _module(p) != "engine"]
    assert loose == []


def test_no_import_points_up_a_layer():
    upward = []
    for path in _engine_files():
        mine = LAYERS.index(_room(_module(path))) if _room(_module(path)) in LAYERS else None
        for name in _modules_imported(path):
            room = _room(name)
            if mine is not None and room in LAYERS and LAYERS.index(room) > mine:
                upward.append(f"{_module(path)} -> {name}")
    assert upward == []


def _graph() -> dict[str, set[str]]:
    files = _engine_files() + sorted((ROOT / "dashboard").rglob("*.py"))
    known = {_module(p) for p in files}
    return {_module(p): {n for n in _modules_imported(p) if n in known and n != _module(p)} for p in files}


def test_no_two_modules_import_each_other_even_through_others():
    graph, cycles, done, stack = _graph(), [], set(), []
    on_stack: set[str] = set()

    def visit(node: str) -> None:  # depth-first search; a back edge closes a cycle
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt in on_stack:
                cycles.append(" -> ".join(stack[stack.index(nxt):] + [nxt]))
            elif nxt not in done:
                visit(nxt)
        stack.pop()
        on_stack.discard(node)
        done.add(node)

    for node in sorted(graph):
        if node not in done:
            visit(node)
    assert cycles == []


def test_pages_never_import_plotly():
    users = [p.name for p in sorted((ROOT / "dashboard" / "app_pages").glob("*.py")) if "plotly" in _imports(p)]
    assert users == []


def test_only_dashboard_data_caches():
    users = [str(p.relative_to(ROOT)) for p in sorted((ROOT / "dashboard").rglob("*.py"))
             if "st.cache_" in p.read_text(encoding="utf-8") and p.parent.name != "data"]
    assert users == []
    assert (ROOT / "dashboard" / "data" / "__init__.py").exists()


def test_installed_code_never_edits_sys_path():
    edits = [str(p.relative_to(ROOT)) for p in _engine_files() + sorted((ROOT / "dashboard").rglob("*.py"))
             if "sys.path" in p.read_text(encoding="utf-8")]
    assert edits == []


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
    builders = [p for p in sorted((ROOT / "dashboard" / "charts").glob("*.py")) if p.name != "view.py"]
    assert len(builders) >= 9
    for path in builders:
        assert "streamlit" not in _imports(path), path.name


def test_importing_the_whole_engine_loads_no_ui_module():
    modules = [_module(p) for p in _engine_files() if p.name != "__main__.py"]  # a __main__ is a program
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in {'streamlit', 'plotly', 'dashboard'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_pages_draw_charts_only_through_the_chart_view():
    """dashboard/charts/view.plot escapes a figure's data strings; a direct st.plotly_chart would skip it."""
    direct = [str(p.relative_to(ROOT)) for p in sorted((ROOT / "dashboard").rglob("*.py"))
              if ".plotly_chart(" in p.read_text(encoding="utf-8") and p != ROOT / "dashboard" / "charts" / "view.py"]
    assert direct == []
