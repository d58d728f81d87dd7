"""Reading a TOML file a user wrote (a scenario, a plan, a service level, model settings), with one
line that names the file and the problem instead of a traceback.

    data = read_toml(path, "the plan file", PlanError)

raises `PlanError("<path>: cannot read the plan file: <reason>")` for a file that cannot be read
(missing, a folder, not UTF-8) and `PlanError("<path>: not valid TOML: <parser's message>")` for
one that is not TOML.
"""
from __future__ import annotations

import tomllib
from pathlib import Path


def read_toml(path: str | Path, what: str, error: type[Exception]) -> dict:
    """The parsed file at `path`; `what` names it in the message of `error`."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"{path}: cannot read {what}: {exc}") from None
    return parse_toml(text, str(path), error)


def parse_toml(text: str, source: str, error: type[Exception]) -> dict:
    """`text` parsed as TOML; `error("<source>: not valid TOML: ...")` when it is not."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{source}: not valid TOML: {exc}") from None
    except RecursionError:
        raise error(f"{source}: not valid TOML here: arrays or tables nested too deeply to read") from None
