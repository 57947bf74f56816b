"""The scored combinations (template version and judge) of the session's dataset, as the Inspect
and Agreement pages offer them: a combination with nothing scored (every judgment failed) is
listed, says so, and is never the one a page opens on."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import streamlit as st

import geval
from studio import context


def require_scored(store: geval.Store, dataset: geval.Dataset) -> pd.DataFrame:
    """The combinations scored on `dataset` (`Store.combos`, newest first), or stop the page with
    a pointer to Score. A link's combinations are opened here, once known."""
    try:
        combos = store.combos(dataset.name)
    except geval.GevalError as exc:
        st.error(str(exc))
        st.stop()
    if combos.empty:
        st.info(f"Nothing is scored on {dataset.name} yet: score some items on the Score page first.")
        st.page_link("views/3_score.py", label="Go to Score", icon=":material/play_circle:")
        st.stop()
    context.remember_combos(dataset.name, combos)
    open_newest(store, dataset.name, combos)
    return combos


#: The session keys of the menus that open on the newest combination.
OPENED = {"inspect_combo": str, "agree_combos": list}


def open_newest(store: geval.Store, dataset: str, combos: pd.DataFrame) -> None:
    """When a combination newer than the one last seen has scores (a run just ended, a judge was
    imported), Inspect opens on it and Agreement on it and every other compared with its human aspects
    (`default_chosen`; not on one compared with nobody: `opening`), not on the session's previous choice; a link's
    choice on a session's first run, and a choice made since, stay."""
    newest = combos.set_index("label").loc[default(combos), "id"]
    seen = st.session_state.get("combos_newest")
    st.session_state["combos_newest"] = (dataset, newest)
    if seen is None or seen == (dataset, newest):
        return
    st.session_state["agree_combos"] = default_chosen(store, combos, dataset)
    st.session_state["inspect_combo"] = st.session_state["agree_combos"][0]


def opening(store: geval.Store, combos: pd.DataFrame, dataset: str) -> str:
    """The combination Inspect and Agreement open on: the newest scored one, not a prompt search's, compared with an
    aspect people scored on `dataset` (a judge imported as naturalness where people scored Natural is not: it has
    nothing to agree with), else `default`."""
    unmatched = set(compared_with_nobody(store, combos, dataset))
    return next((label for label in scored(combos[~combos["searched"].astype(bool)]) if label not in unmatched),
                default(combos))


def default_chosen(store: geval.Store, combos: pd.DataFrame, dataset: str) -> list[str]:
    """The combinations Agreement compares until others are chosen: the one it opens on (`opening`) and every other
    scored with a human aspect in common (a judge imported beside a scored one: both), then the newest compared with
    each other aspect people scored (a judge per aspect: each of them), a prompt search's variants left out."""
    label = opening(store, combos, dataset)
    searched = combos.set_index("label")["searched"].astype(bool)
    chosen = [label, *(other for other in comparable(store, combos, label) if not searched[other])]
    versions = combos.set_index("label")["template_version"]
    humans = {one: _humans(store, versions[one]) for one in scored(combos[~searched.to_numpy()])}
    covered = {aspect for one in chosen for aspect in humans.get(one, ())}
    others = [one for one in humans if humans[one] - covered]
    nobody = set(compared_with_nobody(store, combos, dataset)) if others else set()
    for other in others:
        if humans[other] - covered and other not in nobody:
            chosen.append(other)
            covered |= humans[other]
    return chosen


def compared_with_nobody(store: geval.Store, combos: pd.DataFrame, dataset: str) -> list[str]:
    """The scored combinations, not a prompt search's, whose aspects match none that people scored on `dataset` (as
    the human side it is compared with has them): what Agreement does not open on."""
    versions = combos.set_index("label")["template_version"]
    people = {aspect.lower() for aspect in geval.Dataset(dataset, "", "", store.items(dataset)).aspects}
    return [label for label in scored(combos[~combos["searched"].astype(bool)])
            if not _humans(store, versions[label]) & people]


def hidden(store: geval.Store, combos: pd.DataFrame, chosen: list[str]) -> list[str]:
    """The scored combinations, not a prompt search's variants, compared with a human aspect that one of
    `chosen` is compared with, left out of `chosen` (what a page says it does not show)."""
    searched = combos.set_index("label")["searched"].astype(bool)
    partners = (other for label in chosen for other in comparable(store, combos, label))
    return [other for other in dict.fromkeys(partners) if other not in chosen and not searched[other]]


def menu(combos: pd.DataFrame, held: str | list[str] | None) -> list[str]:
    """The labels a menu offers, newest first: the user's own combinations, and a prompt search's
    variants only when the variants toggle is on (or the menu holds one: opened from a link or Tune)."""
    held = [held] if isinstance(held, str) else list(held or [])
    searched = combos["searched"].astype(bool)
    shown = st.session_state.get("combos_variants", False)
    return [label for label, variant in zip(combos["label"], searched) if shown or not variant or label in held]


def variants_toggle(combos: pd.DataFrame) -> None:
    """A toggle that lists a prompt search's variants in the menus (drawn only when there are some)."""
    n = int(combos["searched"].astype(bool).sum())
    if n:
        st.toggle(f"List the {geval.reporting.counted(n, 'variant')} of prompt searches too", key="combos_variants",
                  persist_state="session",
                  help="Each variant of a search is scored on a few groups only; they are left out of the menus "
                       "unless listed here.")


def scored(combos: pd.DataFrame) -> list[str]:
    """Labels of the combinations with at least one score, newest first."""
    return list(combos.loc[combos["ok"] > 0, "label"])


def default(combos: pd.DataFrame) -> str:
    """The combination a page opens on: the newest with a score that a prompt search did not make
    (its variants are scored on a few groups), else the newest with a score, else the newest."""
    own = scored(combos[~combos["searched"].astype(bool)])
    return next(iter(own), next(iter(scored(combos)), combos["label"].iloc[0]))


def covering(combos: pd.DataFrame) -> str:
    """The combination that scored the most items (its scores per aspect), the newest of those, a prompt search's
    variants left out; `default` when none scored. What orders items to label: a trial run on a few items (the
    newest) would leave the rest in no order."""
    own = combos[~combos["searched"].astype(bool) & (combos["ok"] > 0)]
    if own.empty:
        return default(combos)
    per_aspect = own["ok"].to_numpy() / own["aspects"].map(len).clip(lower=1).to_numpy()
    return own["label"].iloc[int(per_aspect.argmax())]  # the first of the most: the newest


def comparable(store: geval.Store, combos: pd.DataFrame, label: str) -> list[str]:
    """The other scored combinations whose template compares an aspect with a human aspect that
    `label`'s template compares with too, newest first, a prompt search's variants last (what
    Compare can pair it with)."""
    versions = combos.set_index("label")["template_version"]
    own = _humans(store, versions[label])
    searched = combos.set_index("label")["searched"].astype(bool)
    found = [other for other in scored(combos) if other != label and own & _humans(store, versions[other])]
    return sorted(found, key=lambda other: bool(searched[other]))  # a prompt search's variants last


def any_comparable(store: geval.Store, combos: pd.DataFrame, labels: list[str]) -> bool:
    """Whether two of the combinations `labels` compare an aspect with the same human aspect (what Compare needs)."""
    versions = combos.set_index("label")["template_version"]
    of_version = {version: _humans(store, version) for version in {versions[label] for label in labels}}
    humans = [aspect for label in set(labels) for aspect in of_version[versions[label]]]
    return len(humans) > len(set(humans))


def comparing(store: geval.Store, combos: pd.DataFrame, aspects: list[str]) -> pd.DataFrame:
    """The combinations whose template compares an aspect with one of the human `aspects`, or names one so (any
    case: labels named by the template's aspect are compared with it too)."""
    wanted = {aspect.lower() for aspect in aspects}
    return combos[[bool(wanted & {name.lower() for a in _aspects(store, v) for name in (a.human, a.name) if name})
                   for v in combos["template_version"]]]


def _humans(store: geval.Store, version: str) -> set[str]:
    """The human aspects a template version compares its aspects with, in lower case."""
    return {(a.human or a.name).lower() for a in _aspects(store, version)}


def _aspects(store: geval.Store, version: str) -> list:
    """A template version's aspects; none for a version the store no longer holds (nothing known to compare)."""
    try:
        return list(store.template(version).aspects)
    except geval.GevalError:
        return []


def compare_defaults(store: geval.Store, combos: pd.DataFrame, chosen: list[str],
                     offered: list[str]) -> tuple[str, str] | None:
    """Compare's A and B, of the labels `offered`, for the combinations `chosen` above it: two of them that
    share a human aspect (else the first chosen that shares one with another offered, and its newest such
    partner; else the first two offered that share one; else the first two), the original as A and its edit as B
    (`Store.combos`' origin: a prompts/ file's version before a saved one, saved versions as they were saved); None
    when fewer than two are offered."""
    picked = [label for label in chosen if label in offered]
    partners = {label: [other for other in comparable(store, combos, label) if other in offered] for label in picked}
    pair = next(((label, other) for label in picked for other in partners[label] if other in picked), None) or \
        next(((label, found[0]) for label, found in partners.items() if found), None) or \
        next(((label, other) for label in offered if label not in picked
              for other in comparable(store, combos, label) if other in offered), None)
    if pair is None:
        rest = [label for label in [*picked, *offered] if label]
        if len(set(rest)) < 2:
            return None
        first = rest[0]
        pair = (first, next(label for label in rest if label != first))
    origin = combos.set_index("label")["origin"]
    a, b = sorted(pair, key=lambda label: origin[label])
    return a, b


def follow_chosen(store: geval.Store, combos: pd.DataFrame, chosen: list[str], offered: list[str]) -> None:
    """Compare's menus (agree_a, agree_b) follow the combinations chosen above them: set to
    `compare_defaults` whenever that choice changes, or when a menu holds nothing `offered`; a pair
    picked by hand (or brought by a link) stays until then."""
    held = [st.session_state.get(key) for key in ("agree_a", "agree_b")]
    valid = all(label in offered for label in held)
    following = st.session_state.get("agree_cmp_for")
    st.session_state["agree_cmp_for"] = sorted(chosen)
    if valid and (following == sorted(chosen) or following is None):  # unchanged, or a link's pair on the first run
        return
    pair = compare_defaults(store, combos, chosen, offered)
    if pair is not None:
        st.session_state["agree_a"], st.session_state["agree_b"] = pair


def describe(combos: pd.DataFrame) -> Callable[[str], str]:
    """A menu's text for each label: a combination with nothing scored says so."""
    failed = combos.set_index("label")

    def text(label: str) -> str:
        row = failed.loc[label]
        return label if row["ok"] > 0 else f"{label} — nothing scored ({row['failed']} failed, {row['unscored']} unscored)"

    return text


def readable(combos: pd.DataFrame) -> dict[str, str]:
    """Each combination's label as a table row names it: the template, its version's comment and the
    judge, without the version's hash (a column of its own beside it)."""
    return {label: label.replace(f"@{version}", "", 1)
            for label, version in zip(combos["label"], combos["template_version"])}


def choose(key: str, combos: pd.DataFrame, pick: Callable[[pd.DataFrame], str] = default) -> None:
    """Open the menu `key` on the combination `pick` chooses (`default`, `covering`) when it holds none (or one no
    longer offered)."""
    if st.session_state.get(key) not in set(combos["label"]):
        st.session_state[key] = pick(combos)


def nothing_scored(store: geval.Store, dataset: str, combo: pd.Series) -> str:
    """Why a combination (a row of `Store.combos` indexed by label) has no score: its judgments'
    most common reason, in one line."""
    reasons = store.failure_reasons(dataset, combo["template_version"], combo["signature"])
    reason = next(iter(reasons), "no reason recorded")
    failed, unscored = int(combo["failed"]), int(combo["unscored"])
    again = [("scoring again on the Score page retries the failed judgments" if failed else ""),
             ("the answers that could not be read are cached: a new version of the template (its form or scale) "
              "or another judge asks again" if unscored else "")]
    advice = "; ".join(part for part in again if part)
    return (f"Nothing is scored with {combo.name}: {geval.reporting.counted(failed, 'judgment')} failed and "
            f"{unscored} could not be read "
            f"({reason}). {advice[:1].upper()}{advice[1:]}. Or choose another combination.")
