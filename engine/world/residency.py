"""Data residency: which regions may run a job, given its ``residency`` tag and the regions table.

Tag syntax (the jobs table's ``residency`` column; surrounding spaces ignored):

- empty / NULL: no restriction, every region is allowed.
- ``CODE``, e.g. ``EU``, ``CN``, ``US`` or ``IE``: the regions whose ``jurisdiction`` or ``country``
  equals CODE (any case). CODE is two letters (ISO 3166 alpha-2; ``EU`` is reserved there) or any
  jurisdiction the regions table uses. A code no region carries allows no region.
- ``regions:NAME,NAME,...``: exactly the listed regions, e.g. ``regions:eu-west,eu-north``.
- ``CODE:NAME,NAME,...``: the listed regions, each of which must lie in CODE, e.g. ``EU:eu-west``.

Region names are matched exactly; a name missing from the regions table, an empty list, a listed
region outside the tag's jurisdiction or a malformed code is a ValueError naming the tag.
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

REGIONS_KEYWORD = "regions"
_CODE = re.compile(r"^[A-Za-z]{2}$")
VALID_FORMS = ("empty (no restriction); a jurisdiction or country code such as 'EU', 'CN' or 'IE'; "
               "'regions:eu-west,eu-north'; or a code with a region list such as 'EU:eu-west'")


def allowed_regions(tag: object, regions_table: pd.DataFrame) -> frozenset[str]:
    """Regions of ``regions_table`` where data carrying ``tag`` may be processed."""
    names = _names(regions_table)
    if _blank(tag):
        return frozenset(names)
    text = str(tag).strip()
    head, sep, tail = text.partition(":")
    head = head.strip()
    if sep and head.lower() == REGIONS_KEYWORD:
        return frozenset(_region_list(text, tail, names))
    code = head.upper()
    jurisdictions, countries = _column(regions_table, "jurisdiction"), _column(regions_table, "country")
    if not (_CODE.match(head) or code in set(jurisdictions)):
        raise ValueError(f"unknown residency tag {text!r}; valid forms: {VALID_FORMS}")
    in_code = {n for n, j, c in zip(names, jurisdictions, countries) if code in (j, c)}
    if not sep:
        return frozenset(in_code)
    listed = _region_list(text, tail, names)
    outside = sorted(set(listed) - in_code)
    if outside:
        raise ValueError(f"residency tag {text!r}: region(s) {', '.join(outside)} are not in {code}")
    return frozenset(listed)


def allowed_mask(jobs: pd.DataFrame, regions_table: pd.DataFrame) -> np.ndarray:
    """Bool array (jobs x regions): may job i run in region j. Columns follow the row order of
    ``regions_table``; jobs without a ``residency`` column are unrestricted."""
    codes, matrix = _tag_matrix(jobs, regions_table)
    return matrix[codes]


def violations(jobs: pd.DataFrame, regions_table: pd.DataFrame) -> pd.DataFrame:
    """Jobs whose ``region`` is not allowed by their ``residency`` tag, sorted by job_id.

    Columns: job_id, region, tag, allowed (the allowed regions, sorted and comma-joined; empty when
    none is). Every row passed in is audited: pass only the jobs that ran to count executed work.
    A job in a region missing from the table violates any non-empty tag."""
    columns = ["job_id", "region", "tag", "allowed"]
    if "residency" not in jobs or jobs.empty:
        return pd.DataFrame(columns=columns)
    codes, matrix = _tag_matrix(jobs, regions_table)
    index = {name: i for i, name in enumerate(_names(regions_table))}
    region_pos = jobs["region"].map(index).fillna(-1).to_numpy(dtype=np.int64)
    known = region_pos >= 0
    ok = np.zeros(len(jobs), dtype=bool)
    ok[known] = matrix[codes[known], region_pos[known]]
    ok |= codes == 0
    bad = jobs.loc[~ok, ["job_id", "region", "residency"]].rename(columns={"residency": "tag"})
    names = np.array(_names(regions_table), dtype=object)
    allowed_text = [",".join(sorted(names[row])) for row in matrix]
    bad = bad.assign(tag=bad["tag"].astype(str).str.strip(), allowed=[allowed_text[c] for c in codes[~ok]])
    return bad.sort_values("job_id", kind="stable").reset_index(drop=True)[columns]


def _tag_matrix(jobs: pd.DataFrame, regions_table: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Per job a code into the distinct tags, and a (distinct tags x regions) allowed matrix; the
    unrestricted tag is code 0. Raises ValueError naming a bad tag and the first job carrying it."""
    names = _names(regions_table)
    if "residency" not in jobs:
        return np.zeros(len(jobs), dtype=np.int64), np.ones((1, len(names)), dtype=bool)
    tags = jobs["residency"].astype("string").str.strip().fillna("")
    codes, uniques = pd.factorize(pd.concat([pd.Series([""], dtype="string"), tags], ignore_index=True))
    matrix = np.empty((len(uniques), len(names)), dtype=bool)
    for i, tag in enumerate(uniques):
        try:
            allowed = allowed_regions(tag, regions_table)
        except ValueError as exc:
            first = jobs["job_id"].iloc[int(np.argmax(codes[1:] == i))] if "job_id" in jobs else "?"
            raise ValueError(f"job {first}: {exc}") from exc
        matrix[i] = [name in allowed for name in names]
    return codes[1:].astype(np.int64), matrix


def _region_list(text: str, tail: str, names: list[str]) -> list[str]:
    listed = [part.strip() for part in tail.split(",") if part.strip()]
    if not listed:
        raise ValueError(f"residency tag {text!r}: empty region list; valid forms: {VALID_FORMS}")
    unknown = sorted(set(listed) - set(names))
    if unknown:
        raise ValueError(f"residency tag {text!r}: unknown region(s) {', '.join(unknown)}; "
                         f"regions are {', '.join(names)}")
    return listed


def _names(regions_table: pd.DataFrame) -> list[str]:
    return [str(name) for name in regions_table["region"]]


def _column(regions_table: pd.DataFrame, column: str) -> list[str]:
    if column not in regions_table:
        return [""] * len(regions_table)
    return ["" if _blank(v) else str(v).strip().upper() for v in regions_table[column]]


def _blank(value: object) -> bool:
    return value is None or (not isinstance(value, str) and bool(pd.isna(value))) or not str(value).strip()
