"""Which groups prompt searches chose on, per template version: what every table that reads a
combination (agreement, comparison, leaderboard, ensembles, calibration, report) must not read
it on.

A search (`geval tune`, logged in the store's `search_log`) chooses its winner on its tune groups.
A template version that won a search is read, in every table, on the other groups only: on its
tune groups it was picked for agreeing with these very people. A version a search tried without
choosing it (the start it failed to beat, a rival wording) keeps every group, and its row says
how many of them were a search's tune groups. A search that finished no round chose on nothing.
Searches finished before searches were logged (schema 7) count by their kept result: the
winner's template text, on its tune groups.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from geval.data.items import Item
from geval.judging.templates import template_hash
from geval.store import Store


@dataclass(frozen=True)
class Searched:
    """What prompt searches did with one template version on a dataset: the tune groups of the
    searches it won (`chosen`, left out of every table) and of those that tried it without
    choosing it (`tried`, kept and said)."""

    chosen: frozenset[str] = field(default_factory=frozenset)
    tried: frozenset[str] = field(default_factory=frozenset)
    searches: int = 0


def searched_versions(store: Store, dataset: str) -> dict[str, Searched]:
    """Template version -> what searches on `dataset` did with it (only versions some search tried)."""
    chosen: dict[str, set[str]] = {}
    tried: dict[str, set[str]] = {}
    counted: dict[str, int] = {}
    logged = store.search_log(dataset)
    for entry in logged:
        if entry["rounds"] < 1:  # stopped or failed before a round ended: it compared nothing
            continue
        by_name = {c["name"]: c for c in entry["candidates"] or []}
        tune = set(entry["tune_groups"] or [])
        for candidate in by_name.values():
            if candidate["version"]:
                tried.setdefault(candidate["version"], set()).update(tune)
                counted[candidate["version"]] = counted.get(candidate["version"], 0) + 1
        for version in _versions(by_name, entry["winner"]):
            chosen.setdefault(version, set()).update(tune)
    seen = {(e["human"], e["judge"], tuple(e["tune_groups"] or [])) for e in logged}
    for kept in store.searches(dataset):  # finished before the log: its winner, by its text
        if (kept["human"], kept["judge"], tuple(kept["tune_groups"])) not in seen and kept.get("winner_text"):
            version = template_hash(kept["winner_text"])
            chosen.setdefault(version, set()).update(kept["tune_groups"])
            counted[version] = counted.get(version, 0) + 1
    return {version: Searched(frozenset(chosen.get(version, set())),
                              frozenset(tried.get(version, set()) - chosen.get(version, set())), counted[version])
            for version in counted}


def _versions(by_name: dict[str, dict], name: str) -> list[str]:
    """The template versions a candidate asks with (an ensemble's members')."""
    candidate = by_name.get(name)
    if candidate is None:
        return []
    if candidate["members"]:
        return [v for member in candidate["members"] for v in _versions(by_name, member)]
    return [candidate["version"]] if candidate["version"] else []


def held_out(items: list[Item], versions: list[str], searched: dict[str, Searched]) -> tuple[list[Item], str]:
    """The items a combination of template `versions` is read on (those outside the groups a
    search chose any of them on), and what its row says of searches ("" when none tried them)."""
    chosen = set().union(*(searched[v].chosen for v in versions if v in searched))
    tried = set().union(*(searched[v].tried for v in versions if v in searched)) - chosen
    kept = [item for item in items if (item.group or item.id) not in chosen]
    said = []
    if chosen:
        said.append(f"read without the {len(chosen)} tune groups of the prompt search(es) that chose it "
                    f"({len(items) - len(kept)} items left out)")
    if tried:
        said.append(f"includes the {len(tried)} tune groups of prompt search(es) that tried it without choosing it")
    return kept, "; ".join(said)
