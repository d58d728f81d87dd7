"""Whose working hours a run counts: a scenario's top-level `calendar` key.

- "region" (the default): a region is at work on its own calendar (engine.world.facts.region_calendar:
  its country's working week and holidays, 9-18 local, or its [[region]] overrides), and so is every job
  whose home it is.
- "team": the teams table's calendars (engine.world.calendar.Calendar.from_team: the team's time zone,
  hours, working week and holidays). A job of a team the table lists is at work on its team's calendar;
  a region is at work while any team whose `home_region` it is works, on its own calendar when the
  table homes no team there. The router's "at work / off hours" (the job's home on its team's calendar,
  every other region by its teams: engine.world.facts.RegionFacts), timing's holding of flexible work
  (engine.sim.processes.holder), live follow-the-sun's working-day starts and off-hours destinations
  (engine.sim.processes.handoff: a region's day starts once per team) and the home work waiting at a day
  start (engine.analysis.runs.handoff.day_start_wait) all read it. A job of a team the table does not
  list keeps its home region's calendar.

Reclaim by the clock uses the team's calendar whatever the key (engine.sim.processes.reclaim_clock).
"""
from __future__ import annotations

import pandas as pd

from engine.core.errors import ScenarioError
from engine.world.calendar import Calendar, team_calendars

REGION, TEAM = "region", "team"
CHOICES = (REGION, TEAM)


TEAM_FIELDS = {"timezone": "UTC", "work_start_hour": 9, "work_end_hour": 18, "working_days": "Mon-Fri",
               "holiday_country": None}   # a valid value of each field Calendar.from_team reads
HOURS = {"work_start_hour": "0..23", "work_end_hour": "0..24"}


def listed_teams(teams: pd.DataFrame | None) -> dict[str, Calendar]:
    """Team -> calendar of a teams table with time zones ({} without one). A row without a valid
    calendar raises a ScenarioError naming its row, team and field, and `calendar = "team"`."""
    if teams is None or not len(teams) or "timezone" not in teams.columns:
        return {}
    try:
        return team_calendars(teams)
    except (KeyError, TypeError, ValueError) as exc:
        raise ScenarioError(_bad_row(teams, exc)) from exc


def _bad_row(teams: pd.DataFrame, exc: Exception) -> str:
    """Which teams row and field `team_calendars` failed on: the first field that fails alone, the others
    valid (TEAM_FIELDS)."""
    for number, (_, row) in enumerate(teams.iterrows(), start=1):
        for name in TEAM_FIELDS:
            try:
                Calendar.from_team({**TEAM_FIELDS, name: row[name]})
            except (KeyError, TypeError, ValueError) as error:
                problem = ("missing" if isinstance(error, KeyError) else
                           f"{row[name]} is not a whole hour {HOURS[name]}" if name in HOURS else str(error))
                return (f"teams table, row {number} (team {row.get('team')!r}), field {name}: {problem}. "
                        f"The scenario's calendar = \"team\" reads the teams' calendars: fix the row, or use "
                        f"calendar = \"region\"")
    return f"teams table: {exc}. The scenario's calendar = \"team\" reads the teams' calendars"


def home_teams(teams: pd.DataFrame | None) -> dict[str, list[str]]:
    """Region -> the listed teams (a teams table with time zones) whose `home_region` it is, in the
    table's order."""
    if teams is None or not len(teams) or not {"timezone", "home_region"} <= set(teams.columns):
        return {}
    out: dict[str, list[str]] = {}
    for team, home in zip(teams["team"].astype(str), teams["home_region"]):
        if isinstance(home, str) and home.strip():
            out.setdefault(home.strip(), []).append(team)
    return out


def working_calendars(world, names: list[str]) -> list[list[Calendar]]:
    """Per region of `names` (an engine.world.facts.World's), the calendars whose working hours make it
    "at work": under "team" those of the teams homed there, else (and for a region no team calls home)
    its own (World.region_calendar_of)."""
    calendars = listed_teams(world.teams) if team_mode(world) else {}
    return homed_calendars(calendars, home_teams(world.teams) if calendars else {}, names, world.region_calendar_of)


def homed_calendars(calendars: dict[str, Calendar], homes: dict[str, list[str]], names: list[str],
                    own) -> list[list[Calendar]]:
    """Per region of `names`, the calendars (`calendars`: team -> Calendar) of the teams `homes` homes
    there, or [own(region)] for a region with none: the region is at work while any of them is."""
    return [[calendars[t] for t in homes.get(name, []) if t in calendars] or [own(name)] for name in names]


def job_calendars(world, teams, homes: list[int], names: list[str]) -> tuple[list[Calendar], list[int]]:
    """The distinct calendars jobs are at work on, and each job's index into them: under "team" its
    team's when the table lists the team, else its home region's (`homes`: indices into `names`)."""
    listed = listed_teams(world.teams) if team_mode(world) else {}
    keys: dict[tuple, int] = {}
    calendars: list[Calendar] = []
    index = []
    for team, home in zip(teams, homes):
        key = ("team", str(team)) if str(team) in listed else ("region", home)
        if key not in keys:
            keys[key] = len(calendars)
            calendars.append(listed[key[1]] if key[0] == "team" else world.region_calendar_of(names[home]))
        index.append(keys[key])
    return calendars, index


def team_mode(world) -> bool:
    return getattr(world, "calendar", REGION) == TEAM


def parse_calendar_choice(value: object, source: str, error: type[Exception]) -> str:
    """The scenario's `calendar` key: "region" (default) or "team"."""
    if value not in CHOICES:
        raise error(f"{source}: calendar must be \"region\" (each region's own calendar, the default) or "
                    f"\"team\" (the teams table's calendars), got {value!r}")
    return str(value)
