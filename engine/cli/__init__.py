"""`meridian`, the command line: `main` parses and dispatches; one module per command family
(simulate and compare, headroom, plan, sweep, report, predict and its queue commands);
`common` holds what they share: the data source, errors and exit codes, and JSON output.
"""
