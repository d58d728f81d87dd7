"""Load headroom and fleet compaction (engine.service.headroom.measure) and their searches."""

DEFAULT_SEEDS = 3  # demand resamplings per scenario; here, so that a command's options name it without the searches
