"""The dialogue act of an answer to a pending confirmation or slot question (issue 31 item 5):
each table mixes lexicon words with held-out wordings (marked ``# held out``: combinations,
particles, typos, full-width punctuation, spaces) that no lexicon lists verbatim, so that a
pass shows the reader generalises rather than looks answers up."""

from __future__ import annotations

import time

import pytest

from charter.goals.acts import BUILTIN, Act, Lexicon, act_of, is_question, leading

AFFIRM = [
    "好的",
    "是的",
    "可以",
    "嗯嗯",
    "可以可以",
    "好的呀",
    "行吧",
    "可以的",
    "办吧",
    "转吧",
    "就这么办",
    "确认办理",
    "没问题",
    "对的",
    "没错",
    "麻烦了",
    "OK的",
    "ok",
    "好滴",
    "中",
    "妥",
    "不错",
    # held out
    "好d",
    "恩恩",
    "ＯＫ！",
    "Yes!",
    "ok, go ahead",
    "好的！！",
    "好的~",
    "嗯嗯，好的",
    "是的是的",
    "对对对",
    "行行行",
    "好呀好呀",
    "好 的",
    "嗯 可以",
    "行，办吧",
    "好的，转吧",
    "行啊，办吧！",
    "OK，转吧",
    "好的，帮我转过去吧",
    "行，那就这么办吧",
    "没问题的，谢谢",
    "可以呀，麻烦您了",
    "好嘞，谢谢",
    "好的，麻烦尽快",
    "那就办吧",
    "没问题，转吧",
    "确认转账",
    "当然可以",
    "对，就是这个",
    "嗯，继续",
    "马上转",
    "太好了，谢谢",
    "ok了",
]

DENY = [
    "不",
    "不对",
    "不行",
    "不是",
    "不好",
    "不可以",
    "no",
    "nope",
    "错了",
    # held out
    "不不不",
    "不行不行",
    "不对不对",
    "不是的",
    "不可以的",
    "不太好",
    "不太对",
    "NO",
    "Nope!",
    "no thanks",
    "no, thanks",
    "不，谢谢",
    "这个不行",
]

CANCEL = [
    "不用",
    "不要",
    "先不",
    "别办了",
    "算了",
    "等等",
    "先不弄了",
    "我再想想",
    "暂时不需要",
    "不了谢谢",
    "取消吧",
    "停",
    "别转了",
    "cancel",
    # held out
    "不用了，谢谢",
    "不要了，谢谢",
    "先不用了，谢谢",
    "不好意思，不用了",
    "不好意思，先不办了",
    "算了算了",
    "算啦算啦",
    "还是算了吧",
    "还是不要了",
    "我不想转了",
    "不想弄了",
    "不要了不要了",
    "不了不了",
    "不办了",
    "停一下",
    "等一下，先别转",
    "取消，不要了",
    "算了，不弄了",
    "哦，不用了",
    "再说吧",
    "改天吧",
    # a stop beats a yes, and a plain no, in the same input
    "好的，先别办了",
    "行吧，算了",
    "等等，先不弄了",
    "不是，不用了",
    "嗯，不用了",
]

CORRECT = [
    "不对，是3000",
    "是的，不过金额改成3000",
    "改成李四",
    # held out
    "不对，是３０００",
    "金额改成3000",
    "换成明天",
    "改成明天吧",
    "换成李四的卡",
    "不是张三，是李四",
    "不是3000是2000",
    "不是这个，是另一张卡",
    "不对，应该是王芳",
    "不对啊，是5000",
    "不对不对，三千",
    "错了，是两千块",
    "错了错了，是三千块",
    "收款人不对，是李四",
    "数额不对，是两千五",
    "名字写错了，叫李四",
    "金额错了，应该是1500",
    "不对，转给李四",
    "应该转给王芳",
    "可以改成5000吗",
    "好的，但是金额要2000",
    "可以，但是金额改为800",
    "嗯，不过收款人要换成王芳",
]

OTHER = [
    # questions are no answers
    "可以吗？",
    "可以吗",
    "是不是要手续费",
    "好不好用",
    "确定吗",
    "是吗？",
    "真的吗",
    "行不行",
    "好不好",
    "可以不可以",
    "对吧？",
    "好？",
    "要不要手续费",
    "是否需要手续费",
    "好的，手续费多少",
    "好的，请问几点能到账",
    # sentences that merely contain 好 / 是 / 不
    "是我妈妈的卡",
    "好像不太对",
    "我想查余额",
    "是的，我的卡丢了",
    "对了，我还想查余额",
    "好的，我想查余额",
    "不对，我想查余额",
    "不是我的卡",
    "没收到",
    "我不知道",
    # a request or a value is the planner's (intent, answer), not an act
    "转账",
    "办",
    "我要转账",
    "3000",
    "李四",
    "谢谢",
    "",
    "，。！",
    "应该是吧",
    "好" * 60,
]


@pytest.mark.parametrize("text", AFFIRM)
def test_a_yes_is_affirm(text: str) -> None:
    assert act_of(text) is Act.AFFIRM


@pytest.mark.parametrize("text", DENY)
def test_a_plain_no_is_deny(text: str) -> None:
    assert act_of(text) is Act.DENY


@pytest.mark.parametrize("text", CANCEL)
def test_a_stop_is_cancel(text: str) -> None:
    assert act_of(text) is Act.CANCEL


@pytest.mark.parametrize("text", CORRECT)
def test_a_no_or_change_with_new_content_is_correct(text: str) -> None:
    assert act_of(text) is Act.CORRECT


@pytest.mark.parametrize("text", OTHER)
def test_questions_sentences_and_values_are_other(text: str) -> None:
    assert act_of(text) is Act.OTHER


def test_the_builtin_lexicon_is_broad() -> None:
    assert len(BUILTIN.affirm) >= 30
    assert len(BUILTIN.deny) + len(BUILTIN.cancel) >= 30


def test_a_pack_word_extends_the_lexicon_without_touching_builtin() -> None:
    before = (BUILTIN.affirm, BUILTIN.deny, BUILTIN.cancel)
    pack = BUILTIN.extended(affirm=("冲",), cancel=("不寄了啦啦",), deny=("非也",))
    assert act_of("冲") is Act.OTHER
    assert act_of("冲！", pack) is Act.AFFIRM
    assert act_of("好的，冲吧", pack) is Act.AFFIRM
    assert act_of("非也", pack) is Act.DENY
    assert act_of("冲，不寄了啦啦", pack) is Act.CANCEL
    assert before == (BUILTIN.affirm, BUILTIN.deny, BUILTIN.cancel)
    assert "冲" not in BUILTIN.affirm and "冲" in pack.affirm
    assert act_of("冲") is Act.OTHER


def test_the_lexicon_given_is_the_one_read() -> None:
    tiny = Lexicon(affirm=("好",), deny=(), cancel=())
    assert act_of("好的呀", tiny) is Act.AFFIRM
    assert act_of("不", tiny) is Act.OTHER


def test_a_pack_word_in_two_lists_takes_the_stronger_act() -> None:
    pack = BUILTIN.extended(affirm=("收到",), cancel=("收到",))
    assert act_of("收到", pack) is Act.CANCEL


def test_the_act_is_a_string() -> None:
    assert act_of("好的") == "affirm"


def test_reading_is_fast() -> None:
    texts = AFFIRM + DENY + CANCEL + CORRECT + OTHER
    start = time.perf_counter()
    for _ in range(10):
        for text in texts:
            act_of(text)
    assert time.perf_counter() - start < 0.5


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("对，就挂这个", (Act.AFFIRM, "就挂这个")),
        ("没问题就这个时间", (Act.AFFIRM, "时间")),
        ("好的，我要挂皮肤科", (Act.AFFIRM, "我要挂皮肤科")),  # the planner judges the rest
        ("不是这个医生", (Act.DENY, "医生")),
        ("不是心内科", (Act.DENY, "心内科")),
    ],
)
def test_a_yes_or_no_followed_by_more_leads(text: str, expected: tuple[Act, str]) -> None:
    assert act_of(text) is Act.OTHER
    assert leading(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "是我妈妈的卡",  # a one-character cue glued to content is a word (是 the copula)
        "对我来说太贵了",
        "好的，不过先别办",  # the rest turns the yes around
        "好的，但是要改时间",
        "等下，我先去看看包裹",  # a pause with a plan of one's own
        "好的，能改到下午吗",  # a question
        "好的谢谢",  # nothing follows: act_of reads it whole
        "今天下午可以吗",
    ],
)
def test_no_leading_act(text: str) -> None:
    assert leading(text) is None


@pytest.mark.parametrize(
    ("text", "act"),
    [("并不是", Act.DENY), ("确实是这样", Act.AFFIRM), ("是皮肤科不是口腔科", Act.CORRECT)],
)
def test_adverbs_and_is_not_forms(text: str, act: Act) -> None:
    assert act_of(text) is act


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("报告多久能出来", True),
        ("跨行转账多长时间到账", True),
        ("退货运费谁出", True),
        ("这个咋弄", True),
        ("如何开发票", True),
        ("我要转账", False),
        ("帮我挂明天的号", False),
    ],
)
def test_questions(text: str, asks: bool) -> None:
    assert is_question(text) is asks
