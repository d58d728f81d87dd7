"""The bottom layer: vocabulary and rules every other layer may use; imports nothing from the engine."""
