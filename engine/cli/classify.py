"""`meridian classify`: the workload classes of a dataset or a trace file.

    meridian classify --dataset NAME | --trace FILE [--split users|time] [--json] [--db FILE]

A log whose jobs carry class labels (the sample) is scored: the classifier's held-out accuracy, the
majority-class baseline, per-class precision and recall and the confusion matrix, on user-grouped folds
(`--split users`, the default: every job predicted by a model that never saw its user) or trained on
the first 70 % of submits and tested on the rest (`--split time`). A log without labels (an SWF log)
is classified by a model trained on the bundled sample, and the shares of jobs and GPU-hours per
predicted class are printed (engine.service.classes). With --json, stdout is one JSON document:
{"source", "labelled", "trained_on", "evaluation" (null for an unlabelled log), "shares": [{workload_class,
jobs, job_share, gpu_hours, gpu_hour_share}]}. Exit codes: 0 success; 2 bad input (an unknown dataset,
an unreadable trace), one line on stderr. scikit-learn is imported only when the command runs.
"""
from __future__ import annotations

import json

from engine.cli.common import EXIT_OK, BadInput, add_source, guarded, source


@guarded
def cmd_classify(args) -> int:
    from engine.predict.classify import CLASSES
    from engine.service.classes import class_report

    data = source(args)
    try:
        report = class_report(data.jobs, data.world.get("regions"), args.split)
    except ValueError as exc:
        raise BadInput(f"{data.name}: {exc}") from None
    if args.json:
        print(json.dumps({"source": data.name, **report.to_json()}))
        return EXIT_OK
    print(f"{data.name}: {len(data.jobs):,} jobs, classes {'from its labels' if report.labelled else 'inferred'}; "
          f"model trained on {report.trained_on}")
    if report.evaluation is not None:
        _print_evaluation(report.evaluation, CLASSES)
    print(f"{'class':<12}{'jobs':>10}{'share':>8}{'GPU-hours':>14}{'share':>8}")
    for row in report.shares.itertuples(index=False):
        print(f"{row.workload_class:<12}{row.jobs:>10,}{row.job_share:>8.1%}{row.gpu_hours:>14,.0f}"
              f"{row.gpu_hour_share:>8.1%}")
    return EXIT_OK


def _print_evaluation(report: dict, classes: tuple[str, ...]) -> None:
    how = ("user-grouped folds (each job predicted by a model that never saw its user)" if report["split"] == "users"
           else "trained on the first 70 % of submits, tested on the rest")
    print(f"held out: {report['jobs_test']:,} jobs of {report['users']:,} users, {how}")
    print(f"  accuracy {report['accuracy']:.4f} (always '{report['majority_class']}': "
          f"{report['majority_accuracy']:.4f})")
    print(f"  {'class':<12}{'jobs':>8}{'precision':>11}{'recall':>8}{'F1':>7}")
    for row in report["per_class"]:
        print(f"  {row['class']:<12}{row['support']:>8,}{row['precision']:>11.3f}{row['recall']:>8.3f}{row['f1']:>7.3f}")
    width = max(len(c) for c in classes) + 2
    print("  confusion (rows: true class, columns: predicted)")
    print("  " + " " * width + "".join(f"{c:>{width}}" for c in classes))
    for name, counts in zip(classes, report["confusion"]):
        print(f"  {name:<{width}}" + "".join(f"{n:>{width},}" for n in counts))


def add_parser(sub, db_help: str) -> None:
    p = sub.add_parser("classify", help="the workload classes of a dataset or trace: scored on its labels, or "
                                        "inferred by a model trained on the sample")
    add_source(p)
    p.add_argument("--split", default="users", choices=("users", "time"),
                   help="held-out split for a labelled log: user-grouped folds (default) or time-ordered")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--db", help=db_help)
    p.set_defaults(func=cmd_classify)
