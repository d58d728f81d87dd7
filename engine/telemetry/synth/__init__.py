"""Deterministic generator of the sample telemetry: a global AI company's GPU fleet and jobs."""
from engine.telemetry.synth.generate import BUNDLE_FILES, DEFAULT_SEED, generate_sample, simulate

__all__ = ["BUNDLE_FILES", "DEFAULT_SEED", "generate_sample", "simulate"]
