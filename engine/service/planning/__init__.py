"""Capacity planning: the hour-of-week demand profile of a jobs table (`demand`) and the cheapest
reserved / on-demand / spot fleet that serves it, sized by an integer program (`fleet_milp`)."""
