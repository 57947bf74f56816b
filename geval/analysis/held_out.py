"""Which groups prompt searches chose on, per template version: what every table that reads a
combination (agreement, comparison, leaderboard, ensembles, calibration, the labels' learning
curve and progress line, report) must not read it on.

A search (`geval tune`, logged in the store's `search_log`) chooses its winner on its tune groups.
A template version that won a search is read, in every table, on the other groups only: on its
tune groups it was picked for agreeing with these very people. A version a search tried without
choosing it (the start it failed to beat, a rival wording) keeps every group, and its row says
how many of them were a search's tune groups. A search that finished no round chose on nothing.
Searches finished before searches were logged (schema 7) count by their kept result: the
winner's template text, on its tune groups.

Held out means held out whatever it is called:

- every search of the store counts, on any dataset: its tune groups are matched to this
  dataset's items by content (the conversation, response, grounding and system; not the
  dataset's name or the group's), so a sample's search reaches its full file and back, or by
  what the judge was asked (an item here whose judgment is the same call as one of a tune
  group's: the same dialogues loaded from a file without a system column);
- a template version whose calls are a searched candidate's calls (the judgment cache's keys:
  the same rendered prompts to the same judge, as a renamed copy or one with a comment line
  has) is that candidate;
- a version saved as an edit of a searched one (`Store.template_parents`: the Prompts page's
  editor records the version an edit started from), directly or through other edits, is that
  version too: a winner edited by one sentence was still picked on those groups;
- searches are counted per dataset and template over every split (`searches`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pandas as pd

from geval.data.items import Item, content_id
from geval.judging.templates import template_hash
from geval.store import Store


@dataclass(frozen=True)
class Searched:
    """What prompt searches did with one template version on a dataset: the tune groups of the
    searches it won (`chosen`, left out of every table) and of those that tried it without
    choosing it (`tried`, kept and said), how many searches tried it (over every split), and
    `same_as`: the other searched versions whose prompts it shares, `edited_from` the searched versions
    it was saved as an edit of, directly or through other edits (their groups are its groups)."""

    chosen: frozenset[str] = field(default_factory=frozenset)
    tried: frozenset[str] = field(default_factory=frozenset)
    searches: int = 0
    same_as: frozenset[str] = field(default_factory=frozenset)
    edited_from: frozenset[str] = field(default_factory=frozenset)


def content_key(item: Item) -> str:
    """What an item is, whatever dataset it was loaded as: its level, conversation, response,
    grounding and system (a sample and its full file give the same keys)."""
    return content_id(item.level, [[t.speaker, t.text] for t in item.context], item.response, item.grounding,
                      item.system)


def searched_versions(store: Store, dataset: str) -> dict[str, Searched]:
    """Template version -> what searches did with it on `dataset`'s items (only versions some
    search tried, or whose prompts are those of a version one tried), over every search in the
    store whose tune groups share items with `dataset`."""
    sources = [name for name in store.dataset_names() if store.search_log(name) or store.searches(name)]
    if not sources:
        return {}
    chosen: dict[str, set[str]] = {}
    tried: dict[str, set[str]] = {}
    counted: dict[str, int] = {}
    mine = store.items(dataset)
    here = {content_key(item): item.group or item.id for item in mine}
    for source in sources:
        groups = _groups_here(store, source, dataset, here, {item.id: item.group or item.id for item in mine})
        logged = store.search_log(source)
        for entry in logged:
            tune = {g for group in entry["tune_groups"] or [] for g in groups.get(group, ())}
            if entry["rounds"] < 1 or not tune:  # it compared nothing, or on none of these items
                continue
            by_name = {c["name"]: c for c in entry["candidates"] or []}
            for candidate in by_name.values():
                if candidate["version"]:
                    tried.setdefault(candidate["version"], set()).update(tune)
                    counted[candidate["version"]] = counted.get(candidate["version"], 0) + 1
            for version in _versions(by_name, entry["winner"]):
                chosen.setdefault(version, set()).update(tune)
        seen = {(e["human"], e["judge"], tuple(e["tune_groups"] or [])) for e in logged}
        for kept in store.searches(source):  # finished before the log: its winner, by its text
            tune = {g for group in kept["tune_groups"] for g in groups.get(group, ())}
            if (kept["human"], kept["judge"], tuple(kept["tune_groups"])) not in seen and kept.get("winner_text") \
                    and tune:
                version = template_hash(kept["winner_text"])
                chosen.setdefault(version, set()).update(tune)
                counted[version] = counted.get(version, 0) + 1
    found = {version: Searched(frozenset(chosen.get(version, set())),
                               frozenset(tried.get(version, set()) - chosen.get(version, set())), counted[version])
             for version in counted}
    for version, same in _same_prompts(store, dataset, sources, set(found)).items():
        found[version] = _inherit(found.get(version, Searched()), [found[v] for v in same], same_as=frozenset(same))
    for version, ancestors in _edited_from(store.template_parents(), set(found)).items():
        found[version] = _inherit(found.get(version, Searched()), [found[v] for v in ancestors],
                                  edited_from=frozenset(ancestors))
    return found


def _inherit(own: Searched, others: list[Searched], **how: frozenset[str]) -> Searched:
    """`own` with the groups of the searched versions `others` it is read as (`how`: same_as or edited_from)."""
    chosen = own.chosen.union(*(o.chosen for o in others))
    return replace(own, chosen=chosen, tried=own.tried.union(*(o.tried for o in others)) - chosen,
                   searches=max([own.searches, *(o.searches for o in others)]), **how)


def _edited_from(parents: dict[str, str], searched: set[str]) -> dict[str, set[str]]:
    """Each version saved as an edit (`Store.template_parents`) -> the searched versions among the
    ones it was edited from, directly or through other edits (a winner edited by a sentence, then again)."""
    found: dict[str, set[str]] = {}
    for version in parents:
        seen, step = {version}, parents[version]
        while step and step not in seen:
            if step in searched:
                found.setdefault(version, set()).add(step)
            seen.add(step)
            step = parents.get(step, "")
    return found


def _groups_here(store: Store, source: str, dataset: str, here: dict[str, str],
                 group_of: dict[str, str]) -> dict[str, set[str]]:
    """Each group of `source` -> the groups of `dataset` that hold its items: by `content_key`, or
    by what the judge was asked (`_same_calls`: the same dialogues loaded without a column the
    prompt does not show, such as the system, have other content keys but the same calls).
    `here`: this dataset's content keys, `group_of` its item ids, each with its group."""
    if source == dataset:
        return {group: {group} for group in set(here.values())}
    groups: dict[str, set[str]] = {}
    items = store.items(source)
    theirs = {item.id: item.group or item.id for item in items}
    for item in items:
        mine = here.get(content_key(item))
        if mine is not None:
            groups.setdefault(theirs[item.id], set()).add(mine)
    for source_item, item in _same_calls(store, source, dataset):
        if source_item in theirs and item in group_of:
            groups.setdefault(theirs[source_item], set()).add(group_of[item])
    return groups


def _same_calls(store: Store, source: str, dataset: str) -> list[tuple[str, str]]:
    """(item of `source`, item of `dataset`) pairs that some judgment of each answered with the
    same call (the judgment cache's key: the same prompt to the same judge)."""
    columns = ["item_id", "call_key"]
    theirs, ours = (store.judgments(name, columns=columns).dropna().drop_duplicates() for name in (source, dataset))
    pairs = theirs.merge(ours, on="call_key", suffixes=("_source", "_here"))
    return list(pairs[["item_id_source", "item_id_here"]].drop_duplicates().itertuples(index=False, name=None))


def _same_prompts(store: Store, dataset: str, sources: list[str], searched: set[str]) -> dict[str, set[str]]:
    """Each template version scored on `dataset` -> the other searched versions some of whose calls it
    shares (the same cache key: the same prompt to the same judge)."""
    columns = ["template_version", "call_key"]
    owners = pd.concat([store.judgments(source, columns=columns) for source in dict.fromkeys([*sources, dataset])])
    owners = owners[owners["template_version"].isin(searched)].dropna().drop_duplicates()
    calls = store.judgments(dataset, columns=columns).dropna().drop_duplicates()
    shared = calls.merge(owners.rename(columns={"template_version": "searched"}), on="call_key")
    shared = shared[shared["template_version"] != shared["searched"]]
    return {version: set(part["searched"]) for version, part in shared.groupby("template_version")}


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
    same = set().union(*(searched[v].same_as for v in versions if v in searched))
    edited = set().union(*(searched[v].edited_from for v in versions if v in searched))
    kept = [item for item in items if (item.group or item.id) not in chosen] if chosen else items
    said = []
    if same:
        said.append(f"its prompts are those of {len(same)} searched template version(s) ({', '.join(sorted(same))}): "
                    "read as that version")
    if edited:
        said.append(f"saved as an edit of {len(edited)} searched template version(s) ({', '.join(sorted(edited))}): "
                    "read as that version")
    if chosen:
        said.append(f"read without the {len(chosen)} tune groups of the prompt search(es) that chose it "
                    f"({len(items) - len(kept)} items left out)")
    if tried:
        said.append(f"includes the {len(tried)} tune groups of prompt search(es) that tried it without choosing it")
    return kept, "; ".join(said)
