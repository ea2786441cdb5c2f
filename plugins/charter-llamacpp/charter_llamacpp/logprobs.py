"""Token logprobs and entropy, from the raw logits the sampler saw.

``token_stats`` reads one row of logits (the model's distribution over the whole vocabulary,
before temperature, top-k/p or a grammar narrow it) and returns the chosen token's logprob, the
``k`` largest logprobs and the exact entropy. The logprobs therefore measure the *model's*
confidence, which is what entropy-based reflection triggers want, even when a grammar forced
the token.

``mean_entropy`` is for when only top-k logprobs are at hand (this backend's
``LlamaCompletion.top_logprobs``, or an OpenAI-compatible server's ``top_logprobs``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt


@dataclass(frozen=True, slots=True)
class TokenStats:
    logprob: float  # natural log of the chosen token's probability
    top: tuple[float, ...]  # the k largest logprobs, descending
    entropy: float  # of the whole distribution, in nats


def token_stats(logits: npt.NDArray[Any], token: int, k: int) -> TokenStats:
    # float32 throughout (the logits' own precision; float64 makes this ~20x slower over
    # 262,144 entries); only the normaliser is summed in float64
    row = np.asarray(logits, dtype=np.float32)
    shifted = row - row.max()
    weights = np.exp(shifted)
    total = float(weights.sum(dtype=np.float64))
    log_total = math.log(total)
    # H = log Z - E[x] with x the shifted logits: one pass, no log of tiny probabilities
    entropy = log_total - float(np.dot(weights, shifted)) / total
    if 0 < k < row.shape[0]:
        top_vals = np.sort(shifted[np.argpartition(shifted, -k)[-k:]])[::-1]
    else:
        top_vals = np.sort(shifted)[::-1][: max(k, 0)]
    top = tuple(float(v) - log_total for v in top_vals)
    return TokenStats(float(shifted[token]) - log_total, top, max(entropy, 0.0))


def mean_entropy(top_logprobs: Sequence[Sequence[float]]) -> float | None:
    """Mean over tokens of the *truncated* entropy ``-Σ p·ln p`` (nats) over each token's top-k
    logprobs, with ``p = exp(logprob)`` as given (not renormalised over the k).

    It is a lower bound of the full-distribution entropy, tight when the top-k carry nearly all
    the probability (small models on easy tokens); 0 means the model was certain every time.
    None when there are no tokens. Tokens with an empty list count as 0.
    """
    if not top_logprobs:
        return None
    total = 0.0
    for top in top_logprobs:
        total -= sum(math.exp(lp) * lp for lp in top if lp > -math.inf)
    return total / len(top_logprobs)
