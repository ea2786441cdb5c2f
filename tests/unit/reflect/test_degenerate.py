"""``degenerate``: echoes of the prompt, repetition, another language, no content."""

from __future__ import annotations

import pytest

from charter.reflect.degenerate import degenerate, language_of, off_language, texts_of

SYSTEM = "你是finance的客服助手。只根据下面给出的信息，用简洁的中文回答用户；不知道的就说不知道。"
SKILL = "尾号1234的活期储蓄账户余额为¥12,345.60（壹万贰仟叁佰肆拾伍元陆角），数据截至2024-05-01。"
QUERY = "我的余额是多少？"
BODY = f"【当前任务】查询账户余额\n【技能结果】{SKILL}\n请基于以上信息回答：{QUERY}"
PROMPT = (SYSTEM, BODY)
GROUNDS = (SKILL, QUERY)
PRODUCTS = (
    "推荐以下三款产品：\n1. 稳健理财A，年化3.5%\n2. 大额存单B，年化2.9%\n3. 货币基金C，年化1.8%"
)
SAME_LINES = (
    "1. 产品A\n   起存金额：1000元\n2. 产品B\n   起存金额：1000元\n3. 产品C\n   起存金额：1000元"
)

Found = list[tuple[str, str, tuple[int, int], str, int]]

CASES: list[tuple[str, Found]] = [
    # the system prompt echoed back
    (SYSTEM, [("echo", SYSTEM, (0, 47), "", 0)]),
    # a prompt label with the skill result: only what the grounds do not hold
    ("【技能结果】" + SKILL, [("echo", "【技能结果】尾号1234的活期储蓄", (0, 17), "", 0)]),
    (
        "请基于以上信息回答：我的余额是多少？",
        [("echo", "请基于以上信息回答：我的余额是多少？", (0, 18), "", 0)],
    ),
    # repetition: a unit in a row, a sentence in a row
    ("1.5.0-" * 10 + "1.5.0", [("repetition", "1.5.0-" * 10, (0, 60), "1.5.0-", 10)]),
    ("为什么是正品？" * 5, [("repetition", "为什么是正品？" * 5, (0, 35), "为什么是正品？", 5)]),
    ("好的好的好的好的", [("repetition", "好的好的好的好的", (0, 8), "好的", 4)]),
    ("好的。\n好的。\n好的。", [("repetition", "好的。\n好的。\n好的", (0, 10), "好的", 3)]),
    (
        "您好，关于您的问题：" + "1.5.0-" * 15,
        [("repetition", "1.5.0-" * 15, (10, 100), "1.5.0-", 15)],
    ),
    (
        "A。B说明。A。B说明。A。B说明。",
        [("repetition", "A。B说明。A。B说明。A。B说明。", (0, 18), "A。B说明。", 3)],
    ),
    # three sentences in a row over a small part of a longer answer
    (
        PRODUCTS + "\n如有疑问请联系我们。如有疑问请联系我们。如有疑问请联系我们。",
        [
            (
                "repetition",
                "如有疑问请联系我们。如有疑问请联系我们。如有疑问请联系我们",
                (58, 87),
                "如有疑问请联系我们",
                3,
            )
        ],
    ),
    # another language; codes, amounts, URLs and e-mail addresses are no letters
    (
        "Your balance is 12345.60 yuan as of May 1.",
        [
            ("language", "Your balance is 12345.60 yuan as of May 1.", (0, 42), "", 0),
        ],
    ),
    (
        "こんにちは、ご注文は発送済みです",
        [("language", "こんにちは、ご注文は発送済みです", (0, 16), "", 0)],
    ),
    ("OK", [("language", "OK", (0, 2), "", 0)]),
    # nothing at all
    ("。。。", [("empty", "。。。", (0, 3), "", 0)]),
    ("  \n", [("empty", "  \n", (0, 3), "", 0)]),
    ("", [("empty", "", (0, 0), "", 0)]),
    # legit answers
    (SKILL, []),
    ("您好，" + SKILL + "如需帮助请联系我们。", []),
    (PRODUCTS, []),
    (SAME_LINES, []),
    ("您好，订单DD202405010001已发货，详情见https://shop.example.com/orders/DD202405010001", []),
    ("请发送邮件至service@bank.example.com，或访问www.bank.example.com/help", []),
    ("您好，VIP会员的积分可以在App里兑换礼品。", []),
    ("¥1,000,000,000", []),
    ("哈哈哈哈哈哈，好的", []),
    ("好的好的好的，请稍等一下，我来帮您查询订单的物流信息", []),
    ("您好！", []),
    ("123", []),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_degenerate(text: str, expected: Found) -> None:
    found = degenerate(text, prompt=PROMPT, grounds=GROUNDS)
    assert [(d.kind, d.text, d.span, d.unit, d.count) for d in found] == expected
    assert all(text[d.span[0] : d.span[1]] == d.text for d in found)


def test_quoting_the_skill_result_is_an_echo_only_without_grounds() -> None:
    assert [d.kind for d in degenerate(SKILL, prompt=PROMPT)] == ["echo"]
    assert degenerate(SKILL, prompt=PROMPT, grounds=GROUNDS) == ()


def test_full_width_echo_is_an_echo() -> None:
    prompt = ("请在订单ABCD1234发货后通知用户查收",)
    assert [d.span for d in degenerate("请在订单ＡＢＣＤ１２３４发货后通知", prompt=prompt)] == [
        (0, 17)
    ]


@pytest.mark.parametrize(
    ("text", "locale", "off"),
    [
        ("您好，您的订单已发货。", "zh-CN", False),
        ("您好，您的订单已发货。", "zh_TW", False),
        ("Your order has shipped.", "zh-CN", True),
        ("Your order has shipped.", "en-US", False),
        ("您好，您的订单已发货。", "en", True),
        ("Ihre Bestellung wurde versandt.", "de-DE", False),
        ("ご注文は発送済みです", "ja-JP", False),
        ("주문이 발송되었습니다", "ko-KR", False),
        ("주문이 발송되었습니다", "zh-CN", True),
        ("Ваш заказ отправлен", "ru", False),
        ("Ваш заказ отправлен", "fr", True),
        ("Your order has shipped.", "xx-YY", False),  # a script we do not know: not judged
        ("a", "zh-CN", False),  # fewer than MIN_LETTERS letters
        ("ＯＫ", "zh-CN", True),
        # kana or Hangul in a Chinese answer, however few: the model drifted (seen from Gemma)
        ("ろしく\n下一阶段，完成任务", "zh-CN", True),
        ("您好，您的订单已发货。한", "zh-CN", True),
        ("您好，iPhone 15的当前售价为5999.00元，欢迎选购。", "zh-CN", False),
    ],
)
def test_off_language(text: str, locale: str, off: bool) -> None:
    assert off_language(text, locale) is off


def test_language_of() -> None:
    assert [language_of(x) for x in ("zh-CN", "zh_Hans", "ZH", "en")] == ["zh", "zh", "zh", "en"]


def test_texts_of() -> None:
    assert texts_of(None) == ()
    assert texts_of("系统") == ("系统",)
    assert texts_of({"role": "system", "content": "系统"}) == ("系统",)
    assert texts_of(["甲", {"text": "乙"}, {"summary": "丙", "value": "丁"}, 3]) == (
        "甲",
        "乙",
        "丁",
        "丙",
    )


def test_a_single_string_is_one_prompt_not_its_characters() -> None:
    assert [d.kind for d in degenerate(SYSTEM, prompt=SYSTEM)] == ["echo"]
    assert degenerate(SKILL, prompt=BODY, grounds=SKILL) == ()
