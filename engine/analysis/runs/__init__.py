"""Analysis of a simulation's result: its KPIs and the KPI catalogue, fairness and service levels,
stranded capacity, cost and carbon, cloud burst, and why a job waited."""
