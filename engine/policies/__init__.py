"""Scheduling policies, one family per module, registered by name (see `registry`)."""
