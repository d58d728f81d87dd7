"""Scenarios as files a user hands over or takes away: `scenario_toml` writes a scenario's dict (as
Scenario.from_dict reads it) as TOML that Scenario.load reads back, and `scenario_from_upload` reads an
uploaded file with the checks and messages of `meridian simulate --scenario FILE` (size, UTF-8, TOML,
then every rule of Scenario.from_dict), naming the file."""
from __future__ import annotations

from pathlib import PurePath

import tomli_w

from engine.core.errors import ScenarioError
from engine.core.toml_file import parse_toml
from engine.scenario import limits
from engine.scenario.spec import Scenario


def scenario_toml(data: dict, comment: tuple[str, ...] = ()) -> str:
    """`data` as TOML, after one `# ` comment line per entry of `comment` (control characters shown as ?)."""
    header = "".join(f"# {_comment(line)}\n" for line in comment)
    return header + tomli_w.dumps(_plain(data))


def scenario_from_upload(raw: bytes, filename: str) -> tuple[Scenario, dict]:
    """(the Scenario, its dict with its name set) of an uploaded file `raw` called `filename`; ScenarioError
    naming the file otherwise. The name defaults to the file's stem, as for a file on disk."""
    source = PurePath(str(filename)).name or "uploaded.toml"
    limits.check_file_bytes(len(raw), source)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ScenarioError(f"{source}: cannot read scenario: {exc}") from None
    data = parse_toml(text, source, ScenarioError)
    scenario = Scenario.from_dict(data, default_name=PurePath(source).stem, source=source)
    return scenario, {**data, "name": scenario.name}


def _comment(text: str) -> str:
    """`text` safe inside a TOML comment: no line break or other control character can end the comment."""
    return "".join(c if c.isprintable() else "?" for c in str(text))


def _plain(value):
    """TOML has no None and no tuples: drop the one, list the other."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value
