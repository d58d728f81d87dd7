"""Working weeks by country: the default calendar of a region or team from its ISO 3166 country.

A region (its ``country`` column) or a team (its ``holiday_country``, else its home region's
country) works the week its country keeps, unless the row or the scenario gives its own
``working_days``; its public holidays are that country's (the ``holidays`` package,
engine.world.calendar). Countries not listed keep Monday to Friday. The week is the one of most
offices, government and private sector alike; where they differ (a half day, a sector on another
week) the table takes the whole working days of the private sector.

Sources (consulted December 2026):
- SA, Saudi Arabia: Sun-Thu since 29 June 2013 (Royal Decree A/119, the weekend moved from
  Thursday-Friday to Friday-Saturday).
- AE, United Arab Emirates: Mon-Fri since 1 January 2022 (federal government announcement of
  7 December 2021; Friday a half day in government, the private sector followed).
- IL, Israel: Sun-Thu (Hours of Work and Rest Law 5711-1951: the weekly rest is Shabbat; Friday
  a short day in many offices).
- IR, Iran: Sat-Wed (Thursday a half day or off in government offices; Friday the weekly rest).
- AF, Afghanistan: Sat-Wed (Thursday a half day; Friday the weekly rest).
- BH, Bahrain: Sun-Thu since 1 September 2006. KW, Kuwait: Sun-Thu since 1 September 2007.
  QA, Qatar: Sun-Thu since 2003. OM, Oman: Sun-Thu since 1 May 2013. JO, Jordan: Sun-Thu since
  2000. EG, Egypt: Sun-Thu. IQ, Iraq: Sun-Thu. DZ, Algeria: Sun-Thu since 14 August 2009.
  LY, Libya: Sun-Thu. YE, Yemen: Sun-Thu since 2013.
- The summary table of Wikipedia's "Workweek and weekend" article
  (https://en.wikipedia.org/wiki/Workweek_and_weekend) for all of the above.
"""
from __future__ import annotations

DEFAULT_WORKING_DAYS = "Mon-Fri"

WORKING_WEEKS: dict[str, str] = {
    "AE": "Mon-Fri",
    "AF": "Sat-Wed",
    "BH": "Sun-Thu",
    "DZ": "Sun-Thu",
    "EG": "Sun-Thu",
    "IL": "Sun-Thu",
    "IQ": "Sun-Thu",
    "IR": "Sat-Wed",
    "JO": "Sun-Thu",
    "KW": "Sun-Thu",
    "LY": "Sun-Thu",
    "OM": "Sun-Thu",
    "QA": "Sun-Thu",
    "SA": "Sun-Thu",
    "YE": "Sun-Thu",
}


def working_days_of(country: object) -> str:
    """The working week (text such as "Sun-Thu") of an ISO 3166 alpha-2 country code, optionally
    followed by a subdivision ("SA", "US-CA"); Mon-Fri for a country not in the table or none."""
    if country is None or not isinstance(country, str) or not country.strip():
        return DEFAULT_WORKING_DAYS
    return WORKING_WEEKS.get(country.strip().partition("-")[0].upper(), DEFAULT_WORKING_DAYS)
