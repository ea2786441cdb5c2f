"""``charter demo``: the three first-party domains checking realistic model outputs.

Until the agent runtime exists this shows the checker engine alone: for each domain a handful
of outputs a small model might produce, the verdict, what failed and the repaired text.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table

from charter.cli.common import (
    EXIT_OK,
    EXIT_USER,
    DiagFormat,
    emit_diagnostics,
    resolve_domain,
    runtime_registry,
)
from charter.compile.api import compile_path
from charter.reflect.engine import Engine

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

COLORS = {
    "pass": "green",
    "fixed": "cyan",
    "retry": "yellow",
    "escalate": "magenta",
    "block": "red",
}


def run() -> int:
    console = Console(highlight=False)
    reg, diags = runtime_registry()
    if reg is None:
        emit_diagnostics(diags, DiagFormat.text)
        return EXIT_USER
    status = EXIT_OK
    for domain, samples in SAMPLES.items():
        root = resolve_domain(domain, reg.packs)
        pack, more = compile_path(root or Path("domains") / domain, reg)
        if pack is None:
            emit_diagnostics(diags + more, DiagFormat.text)
            status = EXIT_USER
            continue
        engine = Engine(pack, reg)
        table = Table(
            title=f"domain: {domain} ({len(pack.rules)} rules)", show_lines=True, expand=True
        )
        table.add_column("model output", ratio=3, overflow="fold")
        table.add_column("verdict", no_wrap=True)
        table.add_column("failed rules", ratio=2, overflow="fold")
        table.add_column("sent to the user", ratio=3, overflow="fold")
        for text, ctx in samples:
            r = engine.check(text, "", ctx)
            failed = "\n".join(
                f"{f.rule_id} ({f.action}{', fixed' if f.fixed else ''})" for f in r.findings
            )
            sent = (
                r.final_text
                if r.verdict in ("pass", "fixed", "block")
                else (f"[dim]draft kept for {r.verdict}:[/dim] {r.final_text}")
            )
            table.add_row(text, f"[{COLORS[r.verdict]}]{r.verdict}[/]", failed or "-", sent)
        console.print(table)
    return status
