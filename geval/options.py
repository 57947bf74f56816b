"""The choices the engine offers, by name: for menus and command-line flags (`geval.OPTIONS`)."""

from __future__ import annotations

from dataclasses import dataclass

from geval.analysis.baselines import FAST as FAST_BASELINES
from geval.analysis.baselines import METRICS as BASELINE_METRICS
from geval.analysis.correlation import LEVELS as AGREEMENT_LEVELS
from geval.analysis.correlation import METRICS
from geval.analysis.leaderboard import ONE_PROMPT_PER_ASPECT
from geval.analysis.protocols import GENERIC, PROTOCOLS
from geval.analysis.variants import VARIANTS, readable
from geval.data.items import LEVELS as ITEM_LEVELS
from geval.data.layouts import LAYOUTS
from geval.judging.backends import BACKENDS
from geval.judging.backends.openai import MODES, OPENAI_URL


@dataclass(frozen=True)
class Options:
    """Names the engine accepts: dataset layouts and item levels, judge backends and OpenAI
    modes (and `openai_url`, where the openai judge goes without a base URL), correlation metrics and
    levels, score variants (with what each means), protocols (the published ones, then `generic`),
    baseline metrics (`fast_baselines`: those that run no model, the leaderboard's and the report's
    until others are chosen), and the leaderboard's default row of reference for its paired
    comparisons."""

    layouts: tuple[str, ...]
    item_levels: tuple[str, ...]
    backends: tuple[str, ...]
    modes: tuple[str, ...]
    openai_url: str
    metrics: tuple[str, ...]
    levels: tuple[str, ...]
    variants: dict[str, str]
    protocols: tuple[str, ...]
    baselines: tuple[str, ...]
    fast_baselines: tuple[str, ...]
    reference_row: str

    @staticmethod
    def variants_of(signature_json: str) -> tuple[str, ...]:
        """The score variants a judge's stored judgments can be read in (`geval.analysis.variants.readable`)."""
        return readable(signature_json)


OPTIONS = Options(tuple(LAYOUTS), ITEM_LEVELS, tuple(BACKENDS), MODES, OPENAI_URL, METRICS, AGREEMENT_LEVELS,
                  dict(VARIANTS),
                  (*PROTOCOLS, GENERIC.name), tuple(BASELINE_METRICS), FAST_BASELINES,
                  ONE_PROMPT_PER_ASPECT)
