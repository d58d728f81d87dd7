"""`python -m engine.cli ...` runs `meridian ...` (engine.cli.main.console). The collector is off while the
modules load (hundreds of thousands of objects, none of them garbage: some 25 ms of collections otherwise), and
what they made is then frozen, out of the collections of the command's own objects."""
import gc
import sys

gc.disable()
from engine.cli.main import console  # noqa: E402

gc.enable()
gc.freeze()
sys.exit(console())
