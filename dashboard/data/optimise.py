"""The Optimise page's data: the bundled study files, and a study run on a dataset's tables
(engine.service.optimise). A study is not cached here: it runs minutes, reports each generation
through `progress`, and the page keeps its result in the session."""
from __future__ import annotations

import tomllib
from pathlib import Path

from dashboard.data import store
from engine.service.compare import WORLD_TABLES
from engine.service.optimise.space import Study, StudyError, parse_study
from engine.service.optimise.study import StudyResult, run_study

STUDY_DIR = Path(__file__).resolve().parents[2] / "sample_data" / "studies"
WORKERS = 2


def bundled_studies() -> dict[str, Path]:
    """The study files shipped in sample_data/studies/, by file stem."""
    return {path.stem: path for path in sorted(STUDY_DIR.glob("*.toml"))}


def parse(text: str, where: Path) -> Study:
    """The study in `text`, read as if it were the file `where` (a relative base resolves from there).
    Raises StudyError, with the file named, for text that is not TOML or not a study."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise StudyError(f"{where}: not valid TOML: {exc}") from None
    return parse_study(data, where)


def run(dataset: str, study: Study, trials: int, population: int, seed: int, progress=None) -> StudyResult:
    """`study` on `dataset` for `trials` trials on two local processes."""
    s = store()
    tables = s.jobs(dataset), s.fleet(dataset), {name: s.table(name, dataset) for name in WORLD_TABLES}
    return run_study(study, tables, trials=trials, population=population, seed=seed, workers=WORKERS,
                     progress=progress)
