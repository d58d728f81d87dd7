"""The `meridian` console entry (engine.cli.main.console): main's exit code, and the collector frozen only after
a successful command (the interpreter's exit then leaves the objects still alive to the operating system)."""
import gc

import pytest

from engine.cli import main as cli


@pytest.mark.parametrize(("code", "frozen"), [(0, True), (2, False)])
def test_console_returns_mains_code_and_freezes_only_on_success(monkeypatch, code, frozen):
    monkeypatch.setattr(cli, "main", lambda: code)
    gc.unfreeze()
    try:
        assert cli.console() == code
        assert (gc.get_freeze_count() > 0) is frozen
    finally:
        gc.unfreeze()

