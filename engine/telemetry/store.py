"""The telemetry store: one DuckDB file, schema migrated on open.

This is the only module that talks to DuckDB. Values always travel as bound
parameters; identifiers come from the fixed schema in `batch.TABLE_COLUMNS`.
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from engine.telemetry.batch import IMPORTED_TABLES, TABLE_COLUMNS, ImportBatch
from engine.telemetry.names import check_name
from engine.telemetry.orphans import interrupt_orphans

if TYPE_CHECKING:
    import duckdb

DEFAULT_DB_PATH = Path.home() / ".meridian" / "meridian.duckdb"
DATASET_TABLES = ("jobs", "fleet", "utilization", "regions", "prices", "carbon", "teams", "imports", "rejects")
_ORDER = {
    "jobs": "submit_utc, job_id, source_line",
    "fleet": "region, cluster, node",
    "utilization": "ts_utc, region, cluster, node",
    "regions": "region",
    "prices": "region, gpu_type, tier",
    "carbon": "region, local_hour",
    "teams": "team",
    "imports": "import_id",
    "rejects": "import_id, line, problem",
}


class StoreLocked(RuntimeError):
    """Another process holds the database file."""


def _migrations() -> list[tuple[int, str]]:
    folder = resources.files("engine.telemetry") / "migrations"
    found = []
    for entry in folder.iterdir():
        if entry.name.endswith(".sql"):
            found.append((int(entry.name.split("_", 1)[0]), entry.read_text(encoding="utf-8")))
    return sorted(found)


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class Store:
    """A DuckDB-backed telemetry store. Build with `Store.open(path)` or `Store(connection)`."""

    def __init__(self, con: duckdb.DuckDBPyConnection, path: Path | None = None):
        self.con = con
        self.path = path

    @classmethod
    def open(cls, path: str | Path | None = None, read_only: bool = False) -> "Store":
        target = Path(path) if path else DEFAULT_DB_PATH
        target.parent.mkdir(parents=True, exist_ok=True)
        import duckdb  # about 0.1 s to import: a command on a trace file never opens the store

        try:
            con = duckdb.connect(str(target), read_only=read_only)
        except duckdb.IOException as exc:
            if "lock" in str(exc).lower():
                raise StoreLocked(
                    f"database {target} is in use by another Meridian process "
                    "(a running dashboard?); stop it or pass another --db"
                ) from exc
            raise
        store = cls(con, target)
        if not read_only:
            store.migrate()
            interrupt_orphans(con)
        return store

    def cursor(self) -> "Store":
        """A store on a new cursor of the same connection, for use from another thread."""
        return Store(self.con.cursor(), self.path)

    def close(self) -> None:
        self.con.close()

    # -- schema ---------------------------------------------------------------------------
    def schema_version(self) -> int:
        self.con.execute(
            "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL, applied_utc TIMESTAMP NOT NULL)"
        )
        row = self.con.execute("SELECT max(version) FROM schema_version").fetchall()[0]
        return int(row[0] or 0)

    def migrate(self) -> int:
        current = self.schema_version()
        for version, sql in _migrations():
            if version <= current:
                continue
            self.con.execute("BEGIN TRANSACTION")
            try:
                self.con.execute(sql)
                self.con.execute("INSERT INTO schema_version VALUES (?, ?)", [version, _utcnow()])
                self.con.execute("COMMIT")
            except Exception:
                self.con.execute("ROLLBACK")
                raise
            current = version
        return current

    def get_meta(self, key: str) -> str | None:
        rows = self.con.execute("SELECT value FROM meta WHERE key = ?", [key]).fetchall()
        return rows[0][0] if rows else None

    def set_meta(self, key: str, value: str) -> None:
        self.con.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", [key, value])

    # -- writing ----------------------------------------------------------------------------
    def find_import(self, content_sha256: str) -> tuple[str, str] | None:
        """(dataset, source_file) of an earlier import with the same content, if any."""
        row = self.con.execute(
            "SELECT dataset, source_file FROM imports WHERE content_sha256 = ? ORDER BY import_id LIMIT 1",
            [content_sha256],
        ).fetchall()
        return (row[0][0], row[0][1]) if row else None

    def dataset_exists(self, name: str) -> bool:
        return self.con.execute("SELECT count(*) FROM datasets WHERE name = ?", [name]).fetchall()[0][0] > 0

    def add_import(self, dataset: str, batch: ImportBatch, source_file: str, content_sha256: str) -> int:
        """Insert every table of `batch`, and the rows it set aside (`batch.rejects`: RowErrors, one per
        problem) into `rejects`, in one transaction; returns the new import id.

        On any failure the transaction is rolled back and the database is unchanged. A name the
        dataset name policy refuses (engine.telemetry.names) is a BadName before anything is written.
        """
        with self.importing(dataset, batch.scheduler) as writer:
            for table, frame in batch.tables.items():
                writer.append(table, frame)
            writer.finish(batch.format, source_file, content_sha256, batch.primary_table, batch.rejects)
        return writer.import_id

    @contextmanager
    def importing(self, dataset: str, scheduler: str | None = None) -> Iterator[ImportWriter]:
        """One import as a transaction: the writer appends tables (as often as it likes, e.g. chunk by chunk)
        and must `finish`; any exception rolls everything back and leaves the database unchanged. A name the
        dataset name policy refuses is a BadName before anything is written."""
        dataset = check_name(dataset)
        con = self.con
        con.execute("BEGIN TRANSACTION")
        try:
            if not self.dataset_exists(dataset):
                con.execute("INSERT INTO datasets (name, created_utc) VALUES (?, ?)", [dataset, _utcnow()])
            if scheduler is not None:
                con.execute("UPDATE datasets SET recorded_scheduler = ? WHERE name = ? AND recorded_scheduler "
                            "IS NULL", [scheduler, dataset])
            writer = ImportWriter(self, dataset, con.execute("SELECT nextval('import_ids')").fetchall()[0][0])
            yield writer
            if not writer.finished:
                raise RuntimeError("an import's writer must finish before its transaction commits")
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise

    def _insert_rejects(self, dataset: str, import_id: int, rejects: list) -> None:
        """The import's rejects (RowErrors), and how many rows they are on the import's row."""
        self.con.execute("UPDATE imports SET rejected_rows = ? WHERE import_id = ?",
                         [len({problem.line for problem in rejects}), import_id])
        frame = pd.DataFrame({"source_file": [p.file for p in rejects], "line": [p.line for p in rejects],
                              "problem": [p.reason for p in rejects]})
        self.con.register("_meridian_rejects", frame)
        try:
            self.con.execute("INSERT INTO rejects SELECT $dataset, $import_id, source_file, line, problem "
                             "FROM _meridian_rejects", {"dataset": dataset, "import_id": import_id})
        finally:
            self.con.unregister("_meridian_rejects")

    @staticmethod
    def _check_columns(table: str, frame: pd.DataFrame) -> None:
        if table not in TABLE_COLUMNS:
            raise ValueError(f"unknown table {table!r}")
        unknown = [c for c in frame.columns if c not in TABLE_COLUMNS[table]]
        if unknown:
            raise ValueError(f"table {table} has no columns {unknown}")

    def _insert(self, table: str, frame: pd.DataFrame, dataset: str, import_id: int) -> None:
        """Insert `frame` into `table`. DuckDB reads the frame from the local variable `_meridian_rows` (a
        replacement scan): a view registered for it would, once dropped, live on in the transaction until it
        ends, holding every chunk of an import in chunks in memory."""
        _meridian_rows = frame  # noqa: F841 (read by DuckDB by name)
        columns = list(frame.columns)
        tagged = table in IMPORTED_TABLES
        head = ["dataset"] + (["import_id"] if tagged else [])
        target = ", ".join(_quote(c) for c in head + columns)
        select = ", ".join(["$dataset"] + (["$import_id"] if tagged else []) + [_quote(c) for c in columns])
        verb = "INSERT" if tagged else "INSERT OR REPLACE"
        params = {"dataset": dataset, **({"import_id": import_id} if tagged else {})}
        self.con.execute(f"{verb} INTO {_quote(table)} ({target}) SELECT {select} FROM _meridian_rows", params)

    def recorded_scheduler(self, dataset: str) -> str | None:
        """How the dataset's telemetry was scheduled, when its first source said so (else None)."""
        rows = self.con.execute("SELECT recorded_scheduler FROM datasets WHERE name = ?", [dataset]).fetchall()
        return rows[0][0] if rows else None

    def delete_dataset(self, name: str) -> bool:
        """Remove a dataset and everything imported into it. Returns False if it did not exist."""
        if not self.dataset_exists(name):
            return False
        self.con.execute("BEGIN TRANSACTION")
        try:
            for table in DATASET_TABLES:
                self.con.execute(f"DELETE FROM {_quote(table)} WHERE dataset = ?", [name])
            self.con.execute("DELETE FROM datasets WHERE name = ?", [name])
            self.con.execute("COMMIT")
        except Exception:
            self.con.execute("ROLLBACK")
            raise
        return True

    # -- reading ----------------------------------------------------------------------------
    def datasets(self) -> pd.DataFrame:
        """One row per dataset: name, format, rows, start, end, files, rejected (rows its imports set aside),
        created_utc, scheduler (how its telemetry was scheduled, when its source said so: see
        recorded_scheduler; else None)."""
        return self.con.execute(
            """
            WITH imp AS (
                SELECT dataset, string_agg(DISTINCT format, ',' ORDER BY format) AS format,
                       count(*) AS files, sum(coalesce(rejected_rows, 0)) AS rejected
                FROM imports GROUP BY dataset),
            j AS (
                SELECT dataset, count(*) AS n, min(submit_utc) AS start_utc,
                       max(coalesce(end_utc, start_utc, submit_utc)) AS end_utc
                FROM jobs GROUP BY dataset),
            u AS (
                SELECT dataset, count(*) AS n, min(ts_utc) AS start_utc, max(ts_utc) AS end_utc
                FROM utilization GROUP BY dataset),
            f AS (SELECT dataset, count(*) AS n FROM fleet GROUP BY dataset)
            SELECT d.name, coalesce(imp.format, '') AS format,
                   coalesce(j.n, u.n, f.n, 0) AS rows,
                   coalesce(j.start_utc, u.start_utc) AS start,
                   coalesce(j.end_utc, u.end_utc) AS "end",
                   coalesce(imp.files, 0) AS files, coalesce(imp.rejected, 0) AS rejected, d.created_utc,
                   d.recorded_scheduler AS scheduler
            FROM datasets d
            LEFT JOIN imp ON imp.dataset = d.name
            LEFT JOIN j ON j.dataset = d.name
            LEFT JOIN u ON u.dataset = d.name
            LEFT JOIN f ON f.dataset = d.name
            ORDER BY d.name
            """
        ).df()

    def table(self, table: str, dataset: str) -> pd.DataFrame:
        """All rows of one dataset's table, in a stable order, without the dataset column."""
        if table not in _ORDER:
            raise ValueError(f"unknown table {table!r}; choose from {sorted(_ORDER)}")
        return self.con.execute(
            f"SELECT * EXCLUDE (dataset) FROM {_quote(table)} WHERE dataset = ? ORDER BY {_ORDER[table]}",
            [dataset],
        ).df()

    def jobs(self, dataset: str) -> pd.DataFrame:
        return self.table("jobs", dataset)

    def fleet(self, dataset: str) -> pd.DataFrame:
        return self.table("fleet", dataset)

    def regions(self, dataset: str) -> pd.DataFrame:
        return self.table("regions", dataset)

    def prices(self, dataset: str) -> pd.DataFrame:
        return self.table("prices", dataset)

    def utilization(self, dataset: str) -> pd.DataFrame:
        return self.table("utilization", dataset)

    def rejects(self, dataset: str) -> pd.DataFrame:
        """The rows the dataset's imports set aside: file, line, problem (one row per problem), in import
        and line order."""
        return self.con.execute(
            "SELECT source_file AS file, line, problem FROM rejects WHERE dataset = ? ORDER BY import_id, line, "
            "problem", [dataset]).df()

    def fingerprint(self) -> str:
        """Changes whenever any import is added or removed; used as a cache key by the UI."""
        row = self.con.execute(
            "SELECT count(*), coalesce(max(import_id), 0), coalesce(sum(row_count), 0) FROM imports"
        ).fetchall()[0]
        return f"{row[0]}-{row[1]}-{row[2]}"

    def content_digest(self) -> list[tuple]:
        """Row counts of every table the schema has, for tests that check nothing changed."""
        have = {row[0] for row in self.con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        return [
            (t, self.con.execute(f"SELECT count(*) FROM {_quote(t)}").fetchall()[0][0])
            for t in ("datasets",) + DATASET_TABLES if t in have
        ]


class ImportWriter:
    """Appends one import's tables inside Store.importing's transaction."""

    def __init__(self, store: Store, dataset: str, import_id: int):
        self.store, self.dataset, self.import_id = store, dataset, int(import_id)
        self.rows: dict[str, int] = {}
        self.finished = False

    def append(self, table: str, frame: pd.DataFrame) -> None:
        """Insert the rows of `frame` into `table` (its columns a subset of the schema's)."""
        self.store._check_columns(table, frame)
        self.store._insert(table, frame, self.dataset, self.import_id)
        self.rows[table] = self.rows.get(table, 0) + len(frame)

    def finish(self, fmt: str, source_file: str, content_sha256: str, primary: str, rejects: list) -> None:
        """The import's own row (format, source, content hash, and the rows appended to its `primary` table)
        and its `rejects` (RowErrors of the rows set aside)."""
        self.store.con.execute(
            "INSERT INTO imports (import_id, dataset, source_file, format, content_sha256, imported_utc, "
            "row_count, table_name) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [self.import_id, self.dataset, source_file, fmt, content_sha256, _utcnow(),
             self.rows.get(primary, 0), primary],
        )
        if rejects:
            self.store._insert_rejects(self.dataset, self.import_id, rejects)
        self.finished = True


def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)
