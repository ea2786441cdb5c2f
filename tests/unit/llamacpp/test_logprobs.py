"""Per-token logprob statistics from raw logits, and the top-k entropy helper."""

from __future__ import annotations

import math

import numpy as np
import pytest

from charter_llamacpp.logprobs import TokenStats, mean_entropy, token_stats


def test_token_stats_two_tokens() -> None:
    # probabilities 1/4 and 3/4
    got = token_stats(np.array([0.0, math.log(3.0)], dtype=np.float32), token=0, k=1)
    assert got.logprob == pytest.approx(math.log(0.25), abs=1e-7)
    assert got.top == pytest.approx((math.log(0.75),), abs=1e-7)
    assert got.entropy == pytest.approx(0.5623351446188083, abs=1e-7)


def test_token_stats_uniform_and_shift_invariant() -> None:
    got = token_stats(np.full(8, 1000.0, dtype=np.float32), token=3, k=3)
    assert got.logprob == pytest.approx(-math.log(8), abs=1e-7)
    assert got.top == pytest.approx((-math.log(8),) * 3, abs=1e-7)
    assert got.entropy == pytest.approx(math.log(8), abs=1e-7)


def test_token_stats_top_k_is_sorted_and_clipped() -> None:
    logits = np.array([1.0, 3.0, 2.0], dtype=np.float32)
    z = math.log(math.e + math.e**3 + math.e**2)
    assert token_stats(logits, 2, k=2).top == pytest.approx((3 - z, 2 - z), abs=1e-6)
    assert token_stats(logits, 2, k=5).top == pytest.approx((3 - z, 2 - z, 1 - z), abs=1e-6)
    assert token_stats(logits, 2, k=0).top == ()


def test_token_stats_certain() -> None:
    got = token_stats(np.array([0.0, -200.0], dtype=np.float32), 0, 1)
    assert isinstance(got, TokenStats)
    assert got.logprob == pytest.approx(0.0, abs=1e-80)
    assert got.top == pytest.approx((0.0,), abs=1e-80)
    assert got.entropy == pytest.approx(0.0, abs=1e-80)


def test_mean_entropy() -> None:
    assert mean_entropy([]) is None
    assert mean_entropy([[math.log(0.5), math.log(0.5)]]) == pytest.approx(math.log(2))
    # the second token was certain; a token without logprobs counts as 0
    assert mean_entropy([[math.log(0.5), math.log(0.5)], [0.0], []]) == pytest.approx(
        math.log(2) / 3
    )
    # truncated, not renormalised: top-1 of 0.5 gives 0.5 * ln 2
    assert mean_entropy([[math.log(0.5)]]) == pytest.approx(0.5 * math.log(2))
    assert mean_entropy([[-math.inf, 0.0]]) == 0.0
