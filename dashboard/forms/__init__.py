"""The inputs pages share: the scenario form built from the policy registry, its cloud-burst table,
the What-if runtime choices, and the Predictors page's queue-at-an-instant section."""
