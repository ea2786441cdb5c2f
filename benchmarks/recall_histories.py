"""Synthetic Chinese long histories for ``bench_recall.py``: a year of sessions per user, with
the facts they told, restated and corrected, distractors that share their words, filler, and
questions asked months later with the ids of the summaries that answer them.

Deterministic: everything comes from ``random.Random(seed)`` per user. Each user has 12 facts
(a pet, an allergy, an address, a car, a child's school, a job, a monthly fund plan, a card's
repayment day, a sport, a food they avoid, a birthday, a holiday plan). A fact is stated once
in the first eight months and restated once or twice (other wording); four kinds can be
*corrected* (the address, the job, the fund amount, the holiday): the new value is then the
answer and the old statements are distractors as close as they come. Each fact also has
distractors — summaries on the same topic or sharing its words (一只 / 宠物医院, 地址 / 邮箱地址,
同事买了一辆别的车) — and filler sessions (orders, weather, returns, books) fill the rest.
Questions are asked the day after the year ends (so 3 to 12 months after the answer was said),
worded the way a user asks (我家宠物叫什么名字来着？), some sharing the answer's words, some not;
and three questions per user about what they never told (我的血型是什么？), whose right answer
is no memory.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

YEAR = 365


@dataclass(frozen=True)
class Slot:
    """One kind of fact: values, how it is said, corrected, asked, and what looks like it."""

    name: str
    values: tuple[str, ...]
    says: tuple[str, ...]  # {v}: the value
    asks: tuple[str, ...]
    near: tuple[str, ...]  # distractors; {o}: another value
    corrects: tuple[str, ...] = ()  # a correction; empty: the fact never changes


SLOTS = (
    Slot(
        "pet",
        (
            "叫豆豆的柯基",
            "叫旺财的金毛",
            "叫可乐的柴犬",
            "叫团子的布偶猫",
            "叫年糕的英短猫",
            "叫球球的泰迪",
        ),
        ("用户家里养了一只{v}", "用户说每天下班都要陪{v}玩一会儿", "用户提到自己养的{v}今年三岁了"),
        ("我家宠物叫什么名字来着？", "你还记得我养的是什么吗？", "我家里养的那一只叫什么？"),
        ("用户问宠物医院周末开不开门", "用户说朋友养了一只{o}", "用户问狗粮和猫粮哪个牌子好"),
    ),
    Slot(
        "allergy",
        ("青霉素", "头孢", "花生", "海鲜", "芒果", "尘螨"),
        (
            "用户提到自己对{v}过敏",
            "用户说上次接触{v}起了一身疹子，一直对它过敏",
            "用户就诊前说明有{v}过敏史",
        ),
        (
            "我对什么东西过敏来着？",
            "医生问我有没有过敏史，我跟你说过什么？",
            "我哪样东西不能碰？",
            "我提到过自己对哪种东西过敏？",
        ),
        (
            "用户问春天花粉多的时候要注意什么",
            "用户问{o}的保质期有多久",
            "用户咨询过敏性鼻炎挂哪个科",
        ),
    ),
    Slot(
        "address",
        (
            "杭州市西湖区文三路",
            "上海市浦东新区张江路",
            "北京市海淀区中关村大街",
            "成都市武侯区天府大道",
            "深圳市南山区科技园",
            "广州市天河区体育西路",
        ),
        ("用户说收货地址是{v}", "用户确认快递都寄到{v}"),
        (
            "我现在的收货地址是哪里？",
            "快递应该寄到我哪儿？",
            "我住在哪个区来着？",
            "我的收货地址后来改了吗？",
        ),
        (
            "用户问怎么修改账户绑定的邮箱地址",
            "用户抱怨快递员把包裹放在了小区门口",
            "用户说公司在{o}附近",
        ),
        ("用户说搬家了，收货地址改成{v}", "用户更新了收货地址，以后都寄到{v}"),
    ),
    Slot(
        "car",
        ("白色的比亚迪汉", "黑色的特斯拉", "灰色的大众帕萨特", "红色的丰田卡罗拉", "蓝色的理想L7"),
        ("用户开的是一辆{v}", "用户说周末要把自己那辆{v}开去保养"),
        (
            "我开的是什么车？",
            "我的车是哪个牌子的来着？",
            "我那辆车是什么颜色的？",
            "我开的那一辆车要去保养了，是什么车？",
        ),
        ("用户问新能源车的充电桩怎么申请", "用户说同事刚买了一辆{o}", "用户问车险续保有没有优惠"),
    ),
    Slot(
        "school",
        ("实验小学", "育才小学", "外国语学校", "第一中学", "师范附小"),
        ("用户的女儿在{v}读三年级", "用户每天早上送女儿去{v}上学"),
        (
            "我孩子在哪个学校上学？",
            "我女儿读的是哪所学校？",
            "我每天早上送孩子去哪？",
            "我女儿读三年级的学校叫什么？",
        ),
        ("用户问附近有没有好的钢琴培训班", "用户说邻居家孩子考上了{o}", "用户问小学暑假几号放假"),
    ),
    Slot(
        "job",
        ("物流公司做会计", "医院当护士", "互联网公司写代码", "中学当语文老师", "银行做柜员"),
        ("用户在一家{v}", "用户说自己在{v}，经常加班"),
        (
            "我现在做什么工作？",
            "我在哪里上班来着？",
            "我的职业是什么？",
            "我换工作以后现在在哪一家？",
        ),
        ("用户问个人所得税怎么申报", "用户说表哥在{o}", "用户问怎么写辞职信"),
        ("用户说已经换工作了，现在在{v}", "用户跳槽了，如今在{v}"),
    ),
    Slot(
        "fund",
        ("1000元", "2000元", "1500元", "3000元", "500元", "800元"),
        ("用户每月定投沪深300指数基金{v}", "用户说自己每个月给指数基金定投{v}"),
        (
            "我每个月定投多少钱？",
            "我的基金定投金额是多少？",
            "我每月往基金里放多少？",
            "我每月定投沪深300指数基金多少？",
        ),
        (
            "用户问基金赎回一般几天到账",
            "用户问朋友定投{o}收益怎么样",
            "用户咨询货币基金和定期存款哪个好",
        ),
        ("用户把基金定投金额调整为每月{v}", "用户说定投改了，以后每月投{v}"),
    ),
    Slot(
        "repay",
        ("8号", "15号", "20号", "25号", "3号"),
        ("用户的信用卡每月{v}还款", "用户说信用卡账单日之后的{v}是最后还款日"),
        (
            "我信用卡哪天还款？",
            "我的还款日是每月几号？",
            "信用卡最晚哪天要还？",
            "我的信用卡每月几号还款？",
        ),
        ("用户问信用卡积分怎么兑换里程", "用户问信用卡年费能不能免", "用户说房贷每月{o}扣款"),
    ),
    Slot(
        "sport",
        ("游泳", "打羽毛球", "跑步", "练瑜伽", "打篮球"),
        ("用户每周二和周四去{v}", "用户说坚持{v}两年了，瘦了十斤"),
        (
            "我平时做什么运动？",
            "我的健身习惯是什么？",
            "我每周二一般去干嘛？",
            "我每周二和周四坚持去做什么？",
        ),
        ("用户问健身房的会员卡能不能转让", "用户说同事喜欢{o}", "用户问运动后膝盖疼怎么办"),
    ),
    Slot(
        "diet",
        ("香菜", "葱花", "辣椒", "牛肉", "羊肉"),
        ("用户不吃{v}", "用户点外卖总是备注不要放{v}"),
        (
            "我有什么忌口吗？",
            "我吃饭有什么不吃的？",
            "帮我点菜要注意什么？",
            "我点外卖总备注不要放什么？",
        ),
        ("用户问{o}炒饭怎么做", "用户让推荐公司附近的川菜馆", "用户问外卖红包怎么用"),
    ),
    Slot(
        "birthday",
        ("三月八日", "五月二十日", "七月十五日", "十月十二日", "十二月一日"),
        ("用户的生日是{v}", "用户说自己{v}过生日，想订个蛋糕"),
        ("我生日是哪天？", "你记得我的生日吗？", "我哪天过生日？", "我说过自己的生日是几月几日？"),
        ("用户问给妈妈过生日送什么礼物好", "用户说朋友{o}结婚", "用户问蛋糕店能不能送货上门"),
    ),
    Slot(
        "trip",
        ("云南大理", "海南三亚", "日本京都", "新疆喀什", "四川九寨沟"),
        ("用户计划国庆去{v}旅游", "用户说国庆假期要带家人去{v}"),
        (
            "我国庆打算去哪里玩？",
            "我假期的旅行计划是去哪？",
            "国庆我要去的地方是哪儿？",
            "我国庆假期带家人去哪里旅游？",
        ),
        ("用户问高铁票改签要不要手续费", "用户说同事去年去了{o}", "用户问旅游保险怎么买"),
        ("用户说国庆行程改了，改去{v}", "用户把国庆的目的地换成了{v}"),
    ),
)

FILLER = (
    "用户查询订单{n}的物流进度",
    "用户问今天{c}会不会下雨",
    "用户咨询退货运费由谁承担",
    "用户说最近工作很忙，睡得不好",
    "用户问手机流量套餐怎么变更",
    "用户让推荐几本{g}小说",
    "用户问周末电影院有什么新片",
    "用户咨询会员积分什么时候过期",
    "用户反馈App登录时一直转圈",
    "用户问{c}到{c2}的高铁要多久",
    "用户想找一家{c}的火锅店",
    "用户问发票抬头怎么修改",
    "用户咨询宽带续费的优惠",
    "用户问电费怎么在手机上交",
    "用户说想学做{g}风格的菜",
    "用户问快递柜的取件码丢了怎么办",
    "用户问怎么给手机换个新壁纸",
    "用户咨询家电以旧换新的补贴",
    "用户问社保卡丢了怎么补办",
    "用户让帮忙写一段生日祝福",
)
# questions about what nobody told: the right answer is no memory
UNTOLD = (
    "我家冰箱是什么牌子的？",
    "我的血型是什么？",
    "我老家在哪个省？",
    "我上次预约的牙医是几点？",
    "我的护照什么时候过期？",
    "我喜欢哪个球队？",
)
CITIES = ("北京", "上海", "杭州", "成都", "武汉", "西安", "南京", "重庆")
GENRES = ("悬疑", "科幻", "历史", "武侠", "日式", "泰式")


@dataclass(frozen=True)
class Said:
    text: str
    day: float  # days after the history starts


@dataclass(frozen=True)
class Question:
    text: str
    slot: str
    evidence: frozenset[int]  # indexes into the user's summaries


@dataclass
class History:
    user: str
    summaries: list[Said] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)
    untold: list[str] = field(default_factory=list)  # questions no summary answers


def _filler(rng: random.Random) -> str:
    c, c2 = rng.sample(CITIES, 2)
    return rng.choice(FILLER).format(n=rng.randint(1000, 9999), c=c, c2=c2, g=rng.choice(GENRES))


def history(user: str, seed: int, size: int) -> History:
    """One user's year: ``size`` summaries (facts, distractors, filler; a session or two a
    day on most days), and 12 questions."""
    rng = random.Random(f"{seed}:{user}")
    h = History(user)
    said: list[Said] = []
    answers: dict[str, list[int]] = {}
    for slot in SLOTS:
        value, *others = rng.sample(slot.values, len(slot.values))
        first = rng.uniform(0, 240)
        says = rng.sample(slot.says, len(slot.says))
        mentions = [Said(says[0].format(v=value), first)]
        for extra in says[1 : 1 + rng.randint(1, 2)]:
            mentions.append(Said(extra.format(v=value), rng.uniform(first, 270)))
        answer = list(range(len(said), len(said) + len(mentions)))
        said += mentions
        if slot.corrects and rng.random() < 0.6:  # said again later, another value
            day = min(max(m.day for m in mentions) + rng.uniform(10, 40), 300.0)
            said.append(Said(rng.choice(slot.corrects).format(v=others.pop(0)), day))
            answer = [len(said) - 1]
        for near in slot.near:
            said.append(Said(near.format(o=rng.choice(others)), rng.uniform(0, YEAR)))
        answers[slot.name] = answer
        h.questions.append(Question(rng.choice(slot.asks), slot.name, frozenset(answer)))
    facts = len(said)
    for _ in range(max(0, size - facts)):
        said.append(Said(_filler(rng), rng.uniform(0, YEAR)))
    h.summaries = said
    h.untold = rng.sample(UNTOLD, 3)
    return h


def histories(users: int, seed: int, size: int) -> list[History]:
    return [history(f"u{i:04d}", seed, size) for i in range(users)]
