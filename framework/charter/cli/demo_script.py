"""What ``charter demo`` says to each pack (how a turn is read back: ``demo_notes``).

The conversations are fixed; the model is not.

The shipped packs are ``strict``: their replies are composed from templates and the model
never speaks in them. So what must not depend on the model is built into the script: journeys
that finish — a transfer corrected, confirmed and executed exactly once (a second 是 replays
it), another declined, one refused by its regulatory check (a stage, non_compliant); a
consultation through its stages (症状采集 → 初步分诊 → 转专科), the appointment booked from the
triage with its department carried over, its time changed before the yes and moved after it
(改约: the booking replaced, not doubled); a price looked up and a coupon checked against it,
an exchange inheriting its order's coupon (not redeemed twice);
follow-ups without identifiers (那尾号9009呢, 快递到哪了) and a card remembered into a new
session; FAQ questions answered directly; a simulated skill outage and its fallback; the
hand-off (转人工). The summary table says, per conversation, which goals completed. The last
conversation runs in
``assisted`` mode (``AgentOptions(mode="assisted")``): an input no intent claims and no FAQ
entry answers is given to the model, and its drafts are checked by the model-text checks and the
pack's rules — the note shows each draft and whether it was accepted or refused, and why.
"""

from __future__ import annotations

from dataclasses import dataclass

FEATURES = (
    "several",
    "confirm",
    "once",
    "correct",
    "cancel",
    "carry",
    "faq",
    "handoff",
    "fallback",
    "memory",
    "model",
    "stage",
    "move",
    "done",
)


@dataclass(frozen=True)
class Step:
    text: str
    session: str = "s1"
    outage: str | None = None  # a skill that raises during this turn only (simulated)


@dataclass(frozen=True)
class Conversation:
    domain: str
    user: str
    steps: tuple[Step, ...]
    mode: str | None = None  # AgentOptions.mode: None keeps the pack's own (strict)
    title: str = ""  # what the journey shows, in the header and the summary
    # the conversation's clock (ISO, local time): the demo data's calendar (the medical
    # schedule opens 2025-07-01..05); None: the clock the demo was given
    now: str | None = None

    @property
    def name(self) -> str:
        base = f"{self.domain} {self.title}" if self.title else self.domain
        return f"{base} ({self.mode})" if self.mode else base


CONVERSATIONS: tuple[Conversation, ...] = (
    Conversation(
        "finance",
        "alice",
        (
            # two intents in one sentence, one reply: the balance, then the transfer to confirm
            Step("查一下尾号1234的余额，然后给张三转账5000元"),
            Step("不对，金额改成3000元"),
            Step("是的"),  # executed: transfer (effect: execute), keyed by the goal's id
            Step("是的"),  # replayed: 已经办理过了, the same transaction number
            Step("再给王五转账800元"),
            Step("否"),
            # the regulatory check, a stage before the confirmation: non_compliant, never asked
            Step("给钱多多转账1000元"),
        ),
        title="transfer",
    ),
    Conversation(
        "finance",
        "erin",
        (
            Step("查一下尾号1234的余额"),
            Step("那尾号9009呢"),  # no intent: the last request again with the other card
            Step("上次查的那张卡现在余额多少", session="s2"),  # the card from memory
            Step("帮我转人工", session="s2"),
        ),
        title="follow-ups",
    ),
    Conversation(
        "ecommerce",
        "bob",
        (
            Step("帮我查一下订单DD202405010001"),
            Step("快递到哪了", outage="logistics_track"),  # the order carried; the fallback
            Step("无线蓝牙耳机现在多少钱"),
            Step("SAVE20这张优惠券还能用吗"),  # checked against the price just told
            Step("帮我查一下订单DD202405070007"),  # paid with a coupon: kept in the goal
            Step("我要换货，换成XL码"),  # the order and its coupon carried into the exchange
            Step("是"),  # the exchange inherits the coupon: not redeemed a second time
            Step("订单怎么取消？"),  # the FAQ, directly
            Step("我那个订单现在什么状态", session="s2"),  # the order from memory
        ),
        title="order, coupon & exchange",
        # the orders' demo day: the exchange's 7-day window and request number count from it
        now="2024-05-08T10:00:00+08:00",
    ),
    Conversation(
        "medical",
        "carol",
        (
            Step("头疼三天了"),  # triage: its department kept in the goal
            Step("帮我挂这个科明天上午的号"),  # the department carried into the booking
            Step("不对，时间改到后天下午"),
            Step("是"),  # booked: appointment_book runs once; the referral stage completes
            Step("改到周四上午"),  # a done booking corrected: a move, confirmed first
            Step("是"),  # moved: the new booking replaces the old one, not a second one
            Step("预约后怎么取消？"),  # the FAQ, directly
        ),
        title="triage → booking → move",
        now="2025-06-30T10:00:00+08:00",
    ),
    Conversation(
        "finance",
        "dave",
        (
            # no intent claims it and no FAQ entry answers it: open, so the model is asked
            Step("你们周末营业吗"),
            # a template covers this one: the model is not asked, assisted or not
            Step("尾号1234的余额还有多少"),
        ),
        mode="assisted",
    ),
)

# outputs a small model might produce, for ``--rules-only``: the rules without a model
SAMPLES: dict[str, list[tuple[str, dict[str, object]]]] = {
    "finance": [
        ("合同金额为¥12,345.60（壹万贰仟叁佰肆拾伍元陆角），请于2024-05-01前支付。", {}),
        ("合同金额为¥12,345.60（壹万贰仟元整），请在2025年3月8日前完成转账。", {}),
        ("该基金近一年收益率为5.2%，业绩稳健。", {}),
        ("这款产品保证年化收益8%，绝对安全。", {}),
        ("目前小微企业的增值税征收率为1%，依据财税〔2023〕1号。", {}),
        ("将使用您上次留下的对公账户办理。", {"memory": {"min_confidence": 0.6}}),
    ],
    "ecommerce": [
        ("这款耳机是全网最低价，现价199元。", {}),
        ("现在下单可领满300减50优惠券。", {}),
        ("满300减50优惠券，有效期至2024-06-18，详情见https://shop.example.com/coupon", {}),
        ("这件外套售价299.00元，七天无理由退换。", {}),
    ],
    "medical": [
        ("根据您的描述，你得了急性胃炎。", {}),
        ("发热时可以服用布洛芬缓解症状。", {}),
        ("您的症状可能与多种原因有关，建议尽快到医院就诊。", {}),
        ("可以考虑服用对乙酰氨基酚退烧，请遵医嘱。我们不能保证一定见效。", {}),
    ],
}
