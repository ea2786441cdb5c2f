"""The small pack ``reports`` the learning tests generalise on: a quarterly report with year,
quarter and company slots, a monthly statement, a stock metric and its concepts."""

from __future__ import annotations

from pathlib import Path

PACK = {
    "pack.yaml": "name: reports\nversion: 0.1.0\n",
    "goals.yaml": """\
intents:
  - id: quarterly-report
    describe: 季度财报
    trigger: input contains any ["财报", "季报"]
    slots:
      - name: year
        regex: (?P<value>20[0-9]{2})年
        type: number
      - name: quarter
        regex: (?P<value>[1-4])季度
        type: number
      - name: company
        regex: (?P<value>茅台|五粮液)
    skill: {name: quarterly_report, args: {year: "{year}", quarter: "{quarter}"}}
  - id: monthly-statement
    describe: 月度账单
    trigger: input contains "账单"
    slots:
      - name: statement_year
        regex: (?P<value>20[0-9]{2})年
        type: number
      - name: bill_month
        regex: (?P<value>1[0-2]|[1-9])月
        type: number
  - id: transfer
    describe: 转账
    trigger: input contains "转"
    slots:
      - name: amount
        extractor: money
  - id: stock-metric
    describe: 股票指标
    trigger: input contains any ["市盈率", "市净率"]
""",
    "skills/quarterly_report.yaml": """\
name: quarterly_report
description: 查询某年某季度的财报
input_schema:
  type: object
  required: [year, quarter]
  additionalProperties: false
  properties:
    year: {type: integer}
    quarter: {type: integer, minimum: 1, maximum: 4}
output_schema:
  type: object
  required: [results, summary]
  properties:
    results: {type: array}
    summary: {type: string}
""",
    "learning.yaml": """\
concepts:
  市盈率: 股价 ÷ 每股收益（净利润）
  市净率: 股价 ÷ 每股净资产
""",
}


def write_pack(root: Path, files: dict[str, str] | None = None) -> Path:
    """The test pack ``reports`` in ``root`` (``files`` replace or add files)."""
    for name, text in {**PACK, **(files or {})}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root
