"""`python -m engine.cli ...` runs `meridian ...`."""
import sys

from engine.cli.main import main

sys.exit(main())
