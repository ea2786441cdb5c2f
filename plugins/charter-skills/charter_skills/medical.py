"""Medical reference skills: ``department_recommend`` and ``appointment_book``.

``department_recommend`` routes symptom words to departments by a keyword table
(``data/departments.json``); it never names a disease, and its summary always defers to the
doctor (the medical pack blocks diagnoses). ``appointment_book`` books a session from the
capacity table of ``data/schedule.json``.

The table is written for its own day, ``as_of`` (2025-06-30): its dates (07-01 to 07-05) and
their overrides are days counted from it, and move with the turn's clock when it was set
(``day_of``): under ``now: 2027-03-02`` the table's 07-01 is 2027-03-03, tomorrow, with 07-01's
capacity. The closed sessions are weekdays (no Saturday afternoon clinic, none on Sunday),
true of whatever date. What the day decides is refused before the call and before the
confirmation (``refuses``, told as a contract constraint is): a date before today, a date the
table does not open, a closed session.

Booking numbers are ``<department code>-<yyyymmdd>-<AM|PM>-<nnn>``, ``nnn`` being the place in
the session's queue: the table's count already booked, plus the bookings this instance made.
So a fresh instance gives the same numbers for the same calls (tests pin them), and two
bookings of one session never share a number within a process. The ledger lives in memory:
a demo books nothing anywhere else.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from datetime import date as Date
from typing import Any

from charter.contracts.skills import Refused, SkillContext
from charter_skills._data import day_of, load

PERIOD_CODES = {"上午": "AM", "下午": "PM"}
OTHER_PERIOD = {"上午": "下午", "下午": "上午"}
WEEKDAYS = "一二三四五六日"
NOT_A_DIAGNOSIS = "以上仅为分诊建议，不是诊断，具体请以医生面诊为准。"


class DepartmentRecommend:
    """Departments for the symptoms described, in the table's order, each with the reason.
    Emergency words send to 急诊科 alone; a child (``age`` under 14) goes to 儿科 first; words
    the table does not know give 全科医学科."""

    name = "department_recommend"
    description = "根据症状描述推荐就诊科室（分诊建议，不做诊断）"

    def __call__(self, args: Mapping[str, Any]) -> dict[str, Any]:
        symptoms = str(args["symptoms"])
        age = args.get("age")
        table = load("departments")
        emergency = table["emergency"]
        hits = [w for w in emergency["keywords"] if w in symptoms]
        if hits:
            rec = [{"department": emergency["department"], "reason": emergency["reason"]}]
            return {
                "departments": rec,
                "summary": f"您描述的“{hits[0]}”需要尽快处理，请立即前往急诊科就诊或拨打120。"
                + NOT_A_DIAGNOSIS,
            }
        rec = []
        if isinstance(age, int) and age < int(table["children_under"]):
            rec.append(dict(table["children"]))
        for row in table["table"]:
            words = [w for w in row["keywords"] if w in symptoms]
            if words:
                rec.append({"department": row["department"], "reason": row["reason"]})
        if not rec:
            rec.append(dict(table["general"]))
        names = "、".join(r["department"] for r in rec)
        return {"departments": rec, "summary": f"建议您挂{names}。" + NOT_A_DIAGNOSIS}


class AppointmentBook:
    """Book ``period`` (上午/下午) of ``date`` in ``department``: a booking number, or
    ``full`` when the session has no place left (or the department does not see patients
    then). "Today" is the turn's day when its clock was set, else the table's ``as_of``."""

    name = "appointment_book"
    description = "预约指定科室、日期和时段（上午/下午）的门诊号"

    def __init__(self) -> None:
        self.as_of = str(load("schedule")["as_of"])
        self._lock = threading.Lock()
        self._booked: dict[tuple[str, str, str], int] = {}
        self._numbers: dict[str, tuple[str, str, str]] = {}  # booking no -> its session

    def fresh(self) -> AppointmentBook:
        """This skill in its first state (its ledger of bookings empty): each conversation test gets
        one, so the numbers it pins do not depend on what ran before."""
        return AppointmentBook()

    @staticmethod
    def slots(department: str, date: str, period: str, today: str | None = None) -> tuple[int, int]:
        """(capacity, booked) of a session on ``today`` (default the table's ``as_of``): the
        table's entry as many days after its ``as_of`` as ``date`` is after ``today``; a date
        the table does not list, or a closed session, has no capacity."""
        table = load("schedule")
        if _closed(date, period):
            return 0, 0
        listed = _listed(date, today or str(table["as_of"]))
        if listed not in table["dates"]:
            return 0, 0
        for o in table["overrides"]:
            if (o["department"], o["date"], o["period"]) == (department, listed, period):
                return int(o["slots"][0]), int(o["slots"][1])
        capacity, booked = table["default"][period]
        return int(capacity), int(booked)

    def refuses(self, args: Mapping[str, Any], *, context: SkillContext) -> Refused | None:
        """Why ``date`` and ``period`` cannot be booked on the turn's day: a date before today,
        a date the table does not open (today's included), a closed session (only the period
        is asked again when the other half-day is open)."""
        today = day_of(context, self.as_of)
        day, period = str(args["date"]), str(args["period"])
        dates = load("schedule")["dates"]
        first, last = _moved(dates[0], today), _moved(dates[-1], today)
        if day < today:
            return Refused(
                f"就诊日期{day}早于今天（{today}），只能预约{first}至{last}的号源，请重新选择日期。",
                ("date",),
            )
        if _listed(day, today) not in dates:
            return Refused(f"目前只开放{first}至{last}的号源，请重新选择日期。", ("date",))
        if not _closed(day, period):
            return None
        weekday = f"{day}（周{WEEKDAYS[Date.fromisoformat(day).weekday()]}）"
        other = OTHER_PERIOD[period]
        if _closed(day, other):
            return Refused(f"{weekday}不开诊，请选择其他日期。", ("date",))
        return Refused(f"{weekday}{period}不开诊，请选择{other}或其他日期。", ("period",))

    def __call__(
        self, args: Mapping[str, Any], *, context: SkillContext | None = None
    ) -> dict[str, Any]:
        """``replaces``: a booking this one moves (改约): cancelled once the new one is made;
        when the new session is full, the old booking stands."""
        department, date, period = str(args["department"]), str(args["date"]), str(args["period"])
        old = str(args["replaces"]) if args.get("replaces") else None
        code = load("schedule")["departments"][department]
        capacity, booked = self.slots(department, date, period, day_of(context, self.as_of))
        key = (department, date, period)
        with self._lock:
            taken = booked + self._booked.get(key, 0)
            if taken >= capacity:
                kept = f"原预约{old}保持不变，" if old else ""
                return {
                    "status": "full",
                    "results": [],
                    "summary": f"{department}{date}{period}的号源已满，{kept}"
                    "请选择其他日期或时段。",
                }
            self._booked[key] = self._booked.get(key, 0) + 1
            place = taken + 1
            number = f"{code}-{date.replace('-', '')}-{PERIOD_CODES[period]}-{place:03d}"
            self._numbers[number] = key
            freed = self._numbers.pop(old, None) if old else None
            if freed is not None:  # the moved booking's place is free again
                self._booked[freed] -= 1
        made: dict[str, Any] = {
            "status": "booked",
            "results": [
                {
                    "booking_no": number,
                    "department": department,
                    "date": date,
                    "period": period,
                    "queue_no": place,
                }
            ],
        }
        if old:
            return {
                **made,
                "replaced": old,
                "summary": f"已为您改约：{department}{date}{period}的门诊，新预约号{number}，"
                f"就诊序号第{place}号；原预约{old}已取消。请按时到院取号。",
            }
        return {
            **made,
            "summary": f"已为您预约{department}{date}{period}的门诊，预约号{number}，"
            f"就诊序号第{place}号，请按时到院取号。",
        }


def _listed(day: str, today: str) -> str:
    """The table's date for ``day`` seen from ``today``: as many days after its ``as_of``."""
    as_of = Date.fromisoformat(str(load("schedule")["as_of"]))
    return (as_of + (Date.fromisoformat(day) - Date.fromisoformat(today))).isoformat()


def _moved(listed: str, today: str) -> str:
    """The day the table's date ``listed`` is, seen from ``today``."""
    shift = Date.fromisoformat(today) - Date.fromisoformat(str(load("schedule")["as_of"]))
    return (Date.fromisoformat(listed) + shift).isoformat()


def _closed(day: str, period: str) -> bool:
    """Is there no clinic in ``period`` on ``day``'s weekday?"""
    weekday = Date.fromisoformat(day).isoweekday()
    return any((c["weekday"], c["period"]) == (weekday, period) for c in load("schedule")["closed"])
