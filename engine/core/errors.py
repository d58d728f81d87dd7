"""The engine's configuration error, raised from any layer that finds a scenario it cannot run.

The CLI prints it on stderr and exits with code 2; the dashboard shows it as an error message.
"""
from __future__ import annotations


class ScenarioError(ValueError):
    """A scenario that cannot run, with a message naming the file, the field and the valid choices."""
