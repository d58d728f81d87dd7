"""The simulator: fleet state and read-only views handed to policies (pure, deterministic, no I/O)."""
