"""`python -m engine.cli ...` runs `meridian ...` (engine.cli.main.console)."""
import sys

from engine.cli.main import console

sys.exit(console())
