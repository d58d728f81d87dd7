"""`meridian report` end to end, through a subprocess: it writes the file and prints the headline;
bad input exits with code 2 and one line, never a traceback."""
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIFO = REPO / "sample_data" / "scenarios" / "fifo.toml"
SUN = REPO / "sample_data" / "scenarios" / "follow-the-sun.toml"


def meridian(*args):
    return subprocess.run([sys.executable, "-m", "engine.cli", "report", *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, timeout=300)


def test_report_writes_html_and_prints_the_headline(tmp_path):
    out = tmp_path / "r.html"
    done = meridian("--dataset", "sample", "--db", tmp_path / "m.duckdb", "--baseline", FIFO, "--candidate", SUN,
                    "--out", out, "--days", 1, "--seeds", 1, "--gpu-capex-usd", 40000)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"wrote {out} (follow-the-sun vs fifo on sample, ")
    assert "GPU utilisation" in done.stdout and "at $40K per GPU" in done.stdout
    html = out.read_text(encoding="utf-8")
    assert "Plotly.newPlot" in html and "$40,000" in html


@pytest.mark.parametrize(("args", "message"), [
    (["--out", "r.docx"], "--out must end in .pdf or .html"),
    (["--out", "r.pdf", "--candidate", "missing.toml"], "cannot read scenario"),
    (["--out", "r.pdf", "--amortisation-years", "0"], "amortisation_years must be positive"),
])
def test_bad_input_exits_2_with_one_line(tmp_path, args, message):
    base = ["--dataset", "sample", "--db", tmp_path / "m.duckdb", "--baseline", FIFO, "--candidate", SUN]
    args = [str(tmp_path / a) if a.endswith((".docx", ".pdf")) else a for a in args]
    done = meridian(*base, *args)
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_unknown_dataset_exits_2(tmp_path):
    done = meridian("--dataset", "nope", "--db", tmp_path / "m.duckdb", "--baseline", FIFO, "--candidate", SUN,
                    "--out", tmp_path / "r.html")
    assert done.returncode == 2 and "unknown dataset 'nope'" in done.stderr
