"""A dataset whose every name is an attack: script and HTML injection, Markdown links and images
that would make a request leave the page, plotly's HTML subset, LaTeX and Streamlit directives, and
spreadsheet formulas. Requests it could trigger go to 203.0.113.7 (TEST-NET-3, never a real host)."""
import numpy as np
import pandas as pd

from engine.telemetry.batch import ImportBatch

EVIL_HOST = "203.0.113.7"
REGIONS = {"</script><script>alert('region')</script>": "Europe/Berlin",
           "<img src=x onerror=alert('img')>": "America/New_York"}
TEAMS = ("[team](javascript:alert('link'))", f"![t](http://{EVIL_HOST}/track.png)",
         '=HYPERLINK("http://203.0.113.7","x")')
GPU_TYPE = "<b onmouseover=alert('gpu')>H100</b>"
USER = "@SUM(1+1)*cmd|' /C calc'!A0"
PROJECT = f'<span style="background:url(http://{EVIL_HOST}/bg.png)">p</span>'
QUEUE = f":red[queue] $x^2$ **bold** <a href='http://{EVIL_HOST}/a'>a</a> www.evil.example"
JOB_PREFIXES = ("+cmd|' /C calc'!A0 ", f"<a href=http://{EVIL_HOST}>", "-2+3 ", "\tcmd ")
DATASET = "<b>hostile</b> :red[data] $1$ [d](javascript:alert('dataset'))"
CLASSES = ("training", "inference", "batch", "development")
TEXT_VALUES = (*REGIONS, *TEAMS, GPU_TYPE, USER, PROJECT, QUEUE, DATASET)


def hostile_batch(jobs: int = 400, days: float = 6.0, seed: int = 7) -> ImportBatch:
    """Two regions of two 8-GPU nodes and `jobs` jobs over `days` days (enough to train the predictors),
    with waits; every name hostile."""
    rng = np.random.default_rng(seed)
    t0 = pd.Timestamp("2024-06-03 00:00")
    submit = t0 + pd.to_timedelta(np.sort(rng.uniform(0, days * 86_400, jobs)), unit="s")
    wait = pd.to_timedelta(rng.exponential(1_800, jobs).round(), unit="s")
    run = pd.to_timedelta(rng.uniform(600, 4 * 3600, jobs).round(), unit="s")
    regions = list(REGIONS)
    frame = pd.DataFrame({
        "job_id": [f"{JOB_PREFIXES[i % len(JOB_PREFIXES)]}{i}" for i in range(jobs)],
        "user_name": USER, "team": [TEAMS[i % len(TEAMS)] for i in range(jobs)], "project": PROJECT,
        "workload_class": [CLASSES[i % len(CLASSES)] for i in range(jobs)], "queue": QUEUE,
        "submit_utc": submit, "start_utc": submit + wait, "end_utc": submit + wait + run,
        "gpus": rng.choice([1.0, 2.0, 4.0, 8.0], jobs), "gpu_type": GPU_TYPE,
        "region": [regions[i % 2] for i in range(jobs)], "status": "completed",
        "requested_runtime_s": (run.total_seconds() * 1.5).round(),
    })
    fleet = pd.DataFrame({"region": [r for r in regions for _ in range(2)],
                          "node": [f"{r}-node-{i}" for r in regions for i in range(2)], "gpu_type": GPU_TYPE,
                          "gpus": 8, "tier": "reserved", "rack": f"<i>rack</i> [r](http://{EVIL_HOST}/r)"})
    zones = pd.DataFrame({"region": regions, "timezone": [REGIONS[r] for r in regions]})
    prices = pd.DataFrame({"region": regions, "gpu_type": GPU_TYPE, "tier": "reserved", "usd_per_gpu_hour": 3.0,
                           "assumed": False})
    return ImportBatch("csv", {"jobs": frame, "fleet": fleet, "regions": zones, "prices": prices})
