"""Medical reference skills: ``department_recommend`` and ``appointment_book``.

``department_recommend`` routes symptom words to departments by a keyword table
(``data/departments.json``); it never names a disease, and its summary always defers to the
doctor (the medical pack blocks diagnoses). ``appointment_book`` books a session from the
capacity table of ``data/schedule.json``.

Booking numbers are ``<department code>-<yyyymmdd>-<AM|PM>-<nnn>``, ``nnn`` being the place in
the session's queue: the table's count already booked, plus the bookings this instance made.
So a fresh instance gives the same numbers for the same calls (tests pin them), and two
bookings of one session never share a number within a process. The ledger lives in memory:
a demo books nothing anywhere else.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from charter_skills._data import load

PERIOD_CODES = {"上午": "AM", "下午": "PM"}
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
    then)."""

    name = "appointment_book"
    description = "预约指定科室、日期和时段（上午/下午）的门诊号"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._booked: dict[tuple[str, str, str], int] = {}
        self._numbers: dict[str, tuple[str, str, str]] = {}  # booking no -> its session

    def fresh(self) -> AppointmentBook:
        """This skill in its first state (its ledger of bookings empty): each conversation test gets
        one, so the numbers it pins do not depend on what ran before."""
        return AppointmentBook()

    @staticmethod
    def slots(department: str, date: str, period: str) -> tuple[int, int]:
        """(capacity, booked) of a session in the table; a date the table does not list has
        no capacity."""
        table = load("schedule")
        closed = {(c["date"], c["period"]) for c in table["closed"]}
        if date not in table["dates"] or (date, period) in closed:
            return 0, 0
        for o in table["overrides"]:
            if (o["department"], o["date"], o["period"]) == (department, date, period):
                return int(o["slots"][0]), int(o["slots"][1])
        capacity, booked = table["default"][period]
        return int(capacity), int(booked)

    def __call__(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """``replaces``: a booking this one moves (改约): cancelled once the new one is made;
        when the new session is full, the old booking stands."""
        department, date, period = str(args["department"]), str(args["date"]), str(args["period"])
        old = str(args["replaces"]) if args.get("replaces") else None
        code = load("schedule")["departments"][department]
        capacity, booked = self.slots(department, date, period)
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
