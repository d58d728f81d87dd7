"""Time zones: demand and utilisation by UTC hour against each region's and team's working hours, holidays,
the follow-the-sun hand-off, and the residency audit, from the dataset's recorded history."""
import streamlit as st

from dashboard.charts.view import plot, say
from dashboard.data import zones
from engine.analysis.telemetry import scaling
from engine.analysis.telemetry.handoff import describe
from engine.core.escaping import markdown_text as md
from engine.core.vocabulary import FLEXIBLE_CLASSES

TOP_PAIRS = 5
WHOSE_HOURS = {"regions'": "region", "teams'": "team"}
METHODS = f"""
- **Busy GPUs** in an hour = the integral over that hour of the GPUs allocated to running jobs, divided by
  one hour; **capacity** = the region's GPUs in the fleet table (else the peak allocation), exactly as on
  the Overview. **Utilisation** = busy / capacity.
- **Queued GPUs**: a job waits with its GPUs from submit to start (one that never started: until it was
  cancelled, or the data's end if still pending). **Demand** = busy + queued, as a % of capacity: above
  100% means work was waiting for room.
- **By UTC hour of day / week**: the mean over every day (week) of the data's time range.
- **Working hours**: a region works 9:00-18:00 on its local clock on its country's working week (Sun-Thu in
  Saudi Arabia, Israel and most of the Gulf; Sat-Wed in Iran; Mon-Fri elsewhere, the UAE included since 2022),
  minus its country's public holidays; a team works its own hours, week and holidays (teams table). The bands are the shifts of the
  chosen week converted to UTC, so daylight saving time moves them; the *average day* chart shades that
  week's most common shift.
- **Off-hours** of a region: the middle of the UTC hour falls outside its working hours, or on a weekend or
  holiday. *Whose hours*: **regions'** uses each region's own calendar; **teams'** uses the calendars of the
  teams homed in the region (it is at work while any of them is; a region no team calls home keeps its own),
  the rule of a scenario's `calendar = "team"`. The shaded bands stay the regions' own hours.
- **Lendable GPU-hours** from region A to region B, per hour: if A is off-hours, the smaller of A's idle GPUs
  (capacity - busy) and the GPUs of flexible jobs ({", ".join(FLEXIBLE_CLASSES)}) waiting in B's queue whose
  residency tag allows A; summed over hours. Each pair is an upper bound *on its own* (two pairs may count
  the same idle GPUs or the same waiting jobs). The fleet figure is, per hour, the smallest of: all idle
  GPUs of off-hours regions, all waiting flexible GPUs that some other off-hours region may run, and the sum
  of the pairs; it never exceeds the off-hours idle GPU-hours. GPU types, job sizes, data transfer and
  start-up time are ignored, so real hand-offs would lend less.
- **Residency audit**: every job that started is checked against its residency tag (EU data only in EU
  jurisdictions, and so on) and the regions table's jurisdictions.
"""


def _whose_hours(tz) -> None:
    """Say whose calendars the off-hours and lendable figures below follow."""
    use = tz.calendar_use
    if tz.calendar == "region":
        st.caption("Off-hours and lendable GPU-hours below follow each **region's own calendar** (its country's "
                   "working week, 9-18 local, holidays).")
        return
    by_teams = use[use["working_hours_of"].str.startswith("teams: ")]
    own = use.loc[~use.index.isin(by_teams.index), "region"].tolist()
    lines = [f"{md(r)}: {md(w)}" for r, w in zip(by_teams["region"], by_teams["working_hours_of"])]
    st.caption("Off-hours and lendable GPU-hours below follow the **teams' calendars**: a region is at work while "
               "any team homed there is (" + ("; ".join(lines) or "no team is homed in any region") + ")"
               + (f"; {md(', '.join(own))} keep their own calendar (no team homed there)." if own else "."))


def _metrics(tz) -> None:
    cols = st.columns(4)
    cols[0].metric(say("Off-hours idle GPU-hours"), f"{tz.off_hours_idle_gpu_hours:,.0f}",
                   help=say("Idle GPU-hours of regions while outside their working hours (incl. weekends, holidays)"))
    cols[1].metric("Flexible work queued", say(f"{tz.flexible_queued_gpu_hours:,.0f} GPU-h"),
                   help=say(f"GPU-hours that {', '.join(FLEXIBLE_CLASSES)} jobs spent waiting in a queue"))
    cols[2].metric(say("Lendable GPU-hours (upper bound)"), f"{tz.lendable_gpu_hours:,.0f}",
                   help="What off-hours regions could at most have lent to flexible work waiting elsewhere")
    audit = tz.residency
    cols[3].metric("Residency violations", "n/a" if audit.violations is None else f"{audit.violations:,}",
                   help="Jobs that ran in a region their residency tag does not allow")
    share = 100 * tz.lendable_gpu_hours / tz.off_hours_idle_gpu_hours if tz.off_hours_idle_gpu_hours else 0.0
    st.caption(say(f"{tz.start_utc:%Y-%m-%d %H:%M} to {tz.end_utc:%Y-%m-%d %H:%M} UTC · "
                   f"{tz.hourly['region'].nunique()} regions · at most {share:.0f}% of the off-hours idle GPU-hours "
                   "could have served flexible work queued elsewhere at the same hour."))


def _profiles(dataset: str, figures) -> None:
    st.subheader("Demand and working hours")
    view = st.radio("Average over", ["UTC day", "UTC week"], horizontal=True, key=f"tz_view:{dataset}")
    plot(st, figures["profile_day" if view == "UTC day" else "profile_week"], theme=None)
    st.caption(say("Solid: busy GPUs / capacity. Dotted: running + queued GPUs / capacity (above 100% = jobs "
                   "waiting). Shaded: the region's local working hours (9-18 on its country's working week) in UTC in the chosen week."))
    plot(st, figures["gantt"], theme=None)
    st.caption("Each bar is one shift of the chosen week in UTC: regions' default hours and each team's own "
               "hours, week and holidays. A missing bar on a working day is a holiday.")



def _week_hours(tz, week) -> None:
    st.markdown("**Working hours in the chosen week**: each region, then the teams it is home to, on their own "
                "calendars")
    st.dataframe(tz.week_hours(week), hide_index=True, key="tz_week_hours", column_config={
        "working_days": "working days", "hours": "hours (local)", "shifts": "shifts",
        "hours_at_work": st.column_config.NumberColumn("hours at work", format="%.0f"),
        "holidays": "holidays that took a shift"})
    st.caption("A team's hours, week and holidays are its own (teams table); a region's are its country's. "
               "Scenarios with `calendar = \"team\"` route, hold and hand work over on the teams' hours.")


def _holidays(tz, figures) -> None:
    st.subheader("Holidays")
    plot(st, figures["daily"], theme=None)
    if tz.holidays.empty:
        st.info("No public holiday falls on a working day in this time range (or no country is recorded).")
        return
    st.caption(say("Stars: the region's public holidays on working days (holidays package, by the regions' "
                   "`country`); utilisation per UTC day = busy / capacity GPU-hours."))
    with st.expander(f"All {len(tz.holidays)} holidays of regions and teams in the time range"):
        st.dataframe(tz.holidays, hide_index=True, column_config={
            "date": st.column_config.DateColumn("date (local)", format="ddd D MMM YYYY")})


def _handoff(tz, figures) -> None:
    st.subheader("Follow-the-sun hand-off")
    if tz.pairs.empty:
        st.info(say("Nothing to hand off: no flexible work waited while another region was off-hours with idle GPUs."))
        return
    left, right = st.columns([3, 2])
    plot(left, figures["handoff_hours"], theme=None)
    plot(right, figures["handoff_matrix"], theme=None)
    st.caption(say("Left: mean idle GPUs of regions outside their working hours, per UTC hour; the line is the "
                   "fleet's upper bound of those GPUs that flexible work waiting in another region could have used. "
                   "Right: what each off-hours region (row) could at most have lent each other region (column) "
                   "over the whole time range, each pair counted on its own."))
    st.markdown("**Largest hand-offs** (each pair on its own; pairs overlap, so do not add them up)")
    st.markdown("\n".join(f"- {md(say(describe(row)))}" for _, row in tz.pairs.head(TOP_PAIRS).iterrows()))
    with st.expander(f"All {len(tz.pairs)} region pairs"):
        st.dataframe(tz.pairs, hide_index=True, column_config={
            "from_region": "from region", "to_region": "to region",
            "lendable_gpu_hours": st.column_config.NumberColumn(say("lendable GPU-h"), format="%.0f"),
            "after_hours_pct": st.column_config.NumberColumn("after hours %", format="%.0f"),
            "weekend_pct": st.column_config.NumberColumn("weekend %", format="%.0f"),
            "holiday_pct": st.column_config.NumberColumn("holiday %", format="%.0f"),
            "peak_utc_hour": st.column_config.NumberColumn("peak hour (UTC)", format="%d:00"),
            "from_local_hour": st.column_config.NumberColumn("then, lender's clock", format="%d:00"),
            "to_local_hour": st.column_config.NumberColumn("then, borrower's clock", format="%d:00")})


def _residency(tz) -> None:
    st.subheader("Data residency")
    audit = tz.residency
    if audit.violations:
        st.warning(md(audit.message))
        st.dataframe(audit.table.head(1000), hide_index=True)
    elif audit.violations == 0:
        st.success(md(audit.message))
    else:
        st.info(md(audit.message))


def _scaling(tz) -> None:
    st.subheader("Where predictive scaling would have helped")
    table = scaling.suggestions(tz.hourly)
    if table.empty:
        st.info(say("No local hour was short of GPUs on most days, or idle on almost all of them."))
        return
    st.markdown("\n".join(f"- {md(say(sentence))}" for sentence in table["sentence"]))
    st.dataframe(table.drop(columns="sentence"), hide_index=True, key="tz_scaling", column_config={
        "local_start_hour": st.column_config.NumberColumn("from (local)", format="%d:00"),
        "local_end_hour": st.column_config.NumberColumn("to (local)", format="%d:00"),
        "gpus": st.column_config.NumberColumn(say("GPUs"), format="%.0f"),
        "gpu_hours_per_day": st.column_config.NumberColumn(say("GPU-hours per day"), format="%.0f"),
        "days_share": st.column_config.NumberColumn("share of days", format="percent")})
    st.caption(say("Per region and local hour: GPUs queued at that hour on at least half of the days (add: the "
                   "median queued GPUs), or nothing queued on at least 90 % of days (release: the GPUs idle on "
                   "90 % of days). Consecutive hours are joined into one window."))


def _methods(tz) -> None:
    with st.expander("How these numbers are computed"):
        st.markdown(say(METHODS))
        st.markdown("**Notes for this dataset**\n" + "\n".join(f"- {md(n)}" for n in tz.notes))
        st.markdown("**Whose working hours each region's off-hours follow**")
        st.dataframe(tz.calendar_use, hide_index=True, column_config={"working_hours_of": "working hours of"})
        st.markdown("**Calendars**")
        st.dataframe(tz.calendar_table, hide_index=True, column_config={
            "working_days": "working days", "holiday_country": "holidays of", "home_region": "home region"})


dataset = st.session_state.get("dataset")
st.title("Time zones" + (f" · {md(dataset)}" if dataset else ""))
if dataset is None:
    st.info("No data yet. Import a file on the Data page.")
    st.stop()
whose = st.radio("Whose hours", list(WHOSE_HOURS), horizontal=True, key=f"tz_hours:{dataset}",
                 help="Whose working hours make a region off-hours (and its idle GPUs lendable): each region's "
                      "own calendar, or the calendars of the teams homed there (as `calendar = \"team\"` runs)")
with st.spinner(f"Analysing {md(dataset)}..."):
    tz = zones.timezones(dataset, WHOSE_HOURS[whose])
if tz.kind == "empty":
    st.info(md(f"Nothing to show for {dataset}: {tz.reason}"))
    st.stop()
weeks = tz.weeks()
week = st.selectbox("Reference week (working-hour bands)", weeks, index=weeks.index(tz.default_week()),
                    format_func=lambda w: f"week of Mon {w:%d %b %Y}", key=f"tz_week:{dataset}")
figures = zones.timezone_figures(dataset, week, tz.calendar)
if not (tz.calendar_table["kind"] == "team").any():
    st.info("This dataset has no teams table: only the regions' default working hours are drawn.")
for note in tz.notes:
    if note.startswith("No time zone recorded") or "no usable calendar" in note:
        st.warning(md(note))
_whose_hours(tz)
_metrics(tz)
_profiles(dataset, figures)
_week_hours(tz, week)
_holidays(tz, figures)
_handoff(tz, figures)
_scaling(tz)
_residency(tz)
_methods(tz)
