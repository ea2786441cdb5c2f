"""The medical reference skills called directly: the keyword table (never a diagnosis) and
booking numbers from the capacity table, pinned for a fresh instance; the table moves with the
turn's clock when it was set, and what that day refuses (``refuses``)."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

import pytest

from charter.contracts.skills import SkillContext
from charter_skills.medical import AppointmentBook, DepartmentRecommend

DIAGNOSIS = re.compile("确诊为|诊断为|你得了|您得了|你患有|您患有|可以确定是")


@pytest.mark.parametrize(
    ("symptoms", "age", "departments"),
    [
        ("咳嗽三天，有点发烧", None, ["呼吸内科"]),
        ("拉肚子还恶心", None, ["消化内科"]),
        ("最近胃痛，晚上失眠", None, ["消化内科", "神经内科"]),
        ("孩子咳嗽两天", 5, ["儿科", "呼吸内科"]),
        ("孩子咳嗽两天", 14, ["呼吸内科"]),
        ("最近总觉得很累", None, ["全科医学科"]),
        ("头晕而且呼吸困难", None, ["急诊科"]),
        ("牙疼得睡不着", 8, ["儿科", "口腔科"]),
    ],
)
def test_department_recommend(symptoms: str, age: int | None, departments: list[str]) -> None:
    args: dict[str, object] = {"symptoms": symptoms}
    if age is not None:
        args["age"] = age
    result = DepartmentRecommend()(args)
    assert [d["department"] for d in result["departments"]] == departments
    assert all(d["reason"] for d in result["departments"])
    assert DIAGNOSIS.search(result["summary"]) is None
    assert result["summary"].endswith("以上仅为分诊建议，不是诊断，具体请以医生面诊为准。")


def test_an_emergency_word_wins_over_the_table() -> None:
    result = DepartmentRecommend()({"symptoms": "咳嗽后胸痛"})
    assert result["departments"] == [
        {"department": "急诊科", "reason": "描述中有需要立即处理的症状，请尽快前往急诊或拨打120"}
    ]
    assert result["summary"].startswith(
        "您描述的“胸痛”需要尽快处理，请立即前往急诊科就诊或拨打120。"
    )


def test_booking_numbers_count_on_from_the_table() -> None:
    book = AppointmentBook()
    args = {"department": "骨科", "date": "2025-07-02", "period": "下午"}
    numbers = [book(args)["results"][0]["booking_no"] for _ in range(3)]
    assert numbers == ["GK-20250702-PM-006", "GK-20250702-PM-007", "GK-20250702-PM-008"]
    other = book({"department": "骨科", "date": "2025-07-02", "period": "上午"})
    assert other["results"][0]["booking_no"] == "GK-20250702-AM-013"


def test_a_session_fills_up() -> None:
    book = AppointmentBook()
    args = {"department": "眼科", "date": "2025-07-03", "period": "下午"}
    statuses = [book(args)["status"] for _ in range(16)]
    assert statuses == ["booked"] * 15 + ["full"]
    assert book(args)["summary"] == "眼科2025-07-03下午的号源已满，请选择其他日期或时段。"


def test_two_instances_keep_their_own_ledgers() -> None:
    args = {"department": "儿科", "date": "2025-07-01", "period": "上午"}
    assert AppointmentBook()(args)["results"][0]["queue_no"] == 40
    assert AppointmentBook()(args)["results"][0]["queue_no"] == 40


@pytest.mark.parametrize(
    ("date", "period", "slots"),
    [
        ("2025-07-01", "上午", (30, 12)),
        ("2025-07-05", "下午", (0, 0)),  # Saturday afternoon: closed
        ("2025-07-09", "上午", (0, 0)),  # not in the table
    ],
)
def test_capacity_table(date: str, period: str, slots: tuple[int, int]) -> None:
    assert AppointmentBook.slots("皮肤科", date, period) == slots


def test_a_closed_session_is_full_when_called_directly() -> None:
    result = AppointmentBook()({"department": "皮肤科", "date": "2025-07-05", "period": "下午"})
    assert (result["status"], result["results"]) == ("full", [])


CST = timezone(timedelta(hours=8))
# the turn's clock on another day than the table's as_of (2025-06-30): 2027-03-02 is a Tuesday
MOVED = SkillContext(datetime(2027, 3, 2, 9, 0, tzinfo=CST), clock_set=True)
WALL = SkillContext(datetime(2027, 3, 2, 9, 0, tzinfo=CST), clock_set=False)


@pytest.mark.parametrize(
    ("context", "department", "date", "period", "number"),
    [
        (None, "皮肤科", "2025-07-01", "上午", "PF-20250701-AM-013"),
        (WALL, "皮肤科", "2025-07-01", "上午", "PF-20250701-AM-013"),  # the wall clock: as_of
        # the table moves with the clock: tomorrow is its 07-01, 儿科's morning its 39th place
        (MOVED, "皮肤科", "2027-03-03", "上午", "PF-20270303-AM-013"),
        (MOVED, "儿科", "2027-03-03", "上午", "EK-20270303-AM-040"),
        (MOVED, "骨科", "2027-03-06", "上午", "GK-20270306-AM-013"),
    ],
)
def test_booking_numbers_follow_the_turns_day(
    context: SkillContext | None, department: str, date: str, period: str, number: str
) -> None:
    args = {"department": department, "date": date, "period": period}
    done = AppointmentBook()(args) if context is None else AppointmentBook()(args, context=context)
    assert done["results"][0]["booking_no"] == number


def test_tomorrows_full_session_moves_with_the_clock() -> None:
    args = {"department": "呼吸内科", "date": "2027-03-03", "period": "上午"}
    assert AppointmentBook()(args, context=MOVED)["status"] == "full"
    assert AppointmentBook()({**args, "date": "2027-03-04"}, context=MOVED)["status"] == "booked"


@pytest.mark.parametrize(
    ("context", "date", "period", "refused"),
    [
        (WALL, "2025-07-02", "上午", None),
        (
            WALL,
            "2025-06-29",
            "上午",
            (
                "就诊日期2025-06-29早于今天（2025-06-30），只能预约"
                "2025-07-01至2025-07-05的号源，请重新选择日期。",
                ("date",),
            ),
        ),
        (
            WALL,
            "2025-06-30",
            "上午",
            ("目前只开放2025-07-01至2025-07-05的号源，请重新选择日期。", ("date",)),
        ),
        (
            WALL,
            "2025-07-08",
            "上午",
            ("目前只开放2025-07-01至2025-07-05的号源，请重新选择日期。", ("date",)),
        ),
        (
            WALL,
            "2025-07-05",
            "下午",
            ("2025-07-05（周六）下午不开诊，请选择上午或其他日期。", ("period",)),
        ),
        (MOVED, "2027-03-03", "上午", None),
        (
            MOVED,
            "2025-07-02",
            "上午",
            (
                "就诊日期2025-07-02早于今天（2027-03-02），只能预约"
                "2027-03-03至2027-03-07的号源，请重新选择日期。",
                ("date",),
            ),
        ),
        (
            MOVED,
            "2027-03-08",
            "上午",
            ("目前只开放2027-03-03至2027-03-07的号源，请重新选择日期。", ("date",)),
        ),
        (
            MOVED,
            "2027-03-06",
            "下午",
            ("2027-03-06（周六）下午不开诊，请选择上午或其他日期。", ("period",)),
        ),
        (MOVED, "2027-03-07", "上午", ("2027-03-07（周日）不开诊，请选择其他日期。", ("date",))),
    ],
)
def test_what_the_day_refuses(
    context: SkillContext, date: str, period: str, refused: tuple[str, tuple[str, ...]] | None
) -> None:
    args = {"department": "骨科", "date": date, "period": period}
    told = AppointmentBook().refuses(args, context=context)
    assert (None if told is None else (told.message, told.asks)) == refused
