"""What people were asked, as declared where the data comes in: the scale of each aspect
("coherence=1-5": a dataset file's load, a labels file's import, the Data page's mapping, the Label
page's aspects), and the two-category words a label may be (pass/fail, yes/no, true/false).

A declared scale is the scale the aspect was asked on, not the range of scores people happened to
give: people asked 1-5 who never gave a 1 declared 1-5 are read on 1-5 (`geval.analysis.scales`).
Two-category words are read as the categories of a categorical aspect, the negative one first
(fail, no, false: index 0), so that a rate is the mean of their indexes."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence

from geval.errors import DatasetError, GevalError, shown

Scale = tuple[float, float]
#: The two-category words, each pair negative first (its index 0): the categories an aspect gets.
PAIRS = (("fail", "pass"), ("no", "yes"), ("false", "true"))
#: Each word, in lower case, with its pair.
WORDS = {word: pair for pair in PAIRS for word in pair}
#: What a score may be, said beside one that is none of it.
NOT_A_SCORE = ("a score is a number, or for every label of an aspect one of two words (pass/fail, yes/no, "
               "true/false); other categories are read from a folder of annotations (human_annotations.json, "
               "{annotator: {item: label}}: python -m geval datasets load FOLDER)")


def parse_scale(text: str) -> Scale:
    """A scale from "LOW-HIGH" ("1-5", "0-100", "0-1"); GevalError when it is not one."""
    low, sep, high = str(text).strip().partition("-")
    try:
        scale = (float(low), float(high))
    except ValueError:
        scale = None
    if not sep or scale is None or not all(map(math.isfinite, scale)) or not scale[0] < scale[1]:
        raise GevalError(f"scale {shown(text)!r}: give the lowest and highest score, e.g. 1-5")
    return scale


def parse_scales(texts: Iterable[str], aspects: Iterable[str] = ()) -> dict[str, Scale]:
    """Declared scales from "ASPECT=LOW-HIGH" texts ({aspect: (low, high)}); a bare "LOW-HIGH" is
    every one of `aspects` (the dataset's). GevalError naming the text it cannot read."""
    found: dict[str, Scale] = {}
    for text in texts:
        aspect, sep, scale = str(text).rpartition("=")
        if sep and not aspect.strip():
            raise GevalError(f"scale {shown(text)!r}: name the aspect, e.g. coherence=1-5")
        read = parse_scale(scale)  # first: "1-1" is no scale, whatever it names
        names = [aspect.strip()] if sep else list(aspects)
        if not names:
            raise GevalError(f"scale {shown(text)!r}: name the aspect it is of, e.g. coherence=1-5 (the data has "
                             "no aspect scored with numbers)")
        found.update(dict.fromkeys(names, read))
    return found


def scale_text(scale: Scale) -> str:
    """"1-5", "0-1"."""
    return f"{scale[0]:g}-{scale[1]:g}"


def check_scales(scales: Mapping[str, Scale], seen: Mapping[str, Scale], where: str,
                 categorical: Iterable[str] = (), located: Callable[[str, Scale], str] | None = None
                 ) -> dict[str, Scale]:
    """`scales` with each aspect spelled as in `seen` ({aspect: (lowest, highest) score people gave},
    matched in any case); DatasetError, naming `where` (and the scores outside, `located(aspect, scale)`:
    "line 22 has 7, line 30 has 0"), when people's scores fall outside one, or one is declared for a categorical
    aspect."""
    spelled = {aspect.lower(): aspect for aspect in seen}
    categories = {aspect.lower() for aspect in categorical}
    checked = {}
    for aspect, scale in scales.items():
        name = spelled.get(aspect.lower(), aspect)
        if aspect.lower() in categories:
            raise DatasetError(f"{where}: {shown(name)} is categorical: its labels are categories, not scores on a "
                               "scale; declare no scale for it")
        given = seen.get(name)
        if given is not None and not scale[0] <= given[0] <= given[1] <= scale[1]:
            first = f" ({located(name, scale)})" if located is not None else ""
            raise DatasetError(f"{where}: people's scores of {shown(name)} run from {given[0]:g} to {given[1]:g}, "
                               f"outside the {scale_text(scale)} declared for it{first}; correct those scores, or "
                               "declare the scale people were asked on")
        checked[name] = (float(scale[0]), float(scale[1]))
    return checked


def two_categories(values: Iterable[object]) -> tuple[str, str] | None:
    """The pair of two-category words (PAIRS) that every one of `values` given is (any case; a JSON
    true or false too), None when one is not, or none is given."""
    words = [word(value) for value in values if value is not None and not (isinstance(value, str) and not value.strip())]
    pairs = {WORDS.get(w) for w in words}
    return pairs.pop() if words and len(pairs) == 1 and None not in pairs else None


def word(value: object) -> str:
    """A value as a two-category word would read: JSON's true and false as "true" and "false", text
    stripped and in lower case (anything else: its text)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value).strip().lower()


def category_index(value: object, categories: tuple[str, ...]) -> float | None:
    """The index of `value` among `categories`, matched in any case (a two-category word as its word),
    None when it is none of them."""
    lowered = [category.lower() for category in categories]
    found = word(value)
    return float(lowered.index(found)) if found in lowered else None


def aspect_words(categories: Mapping[str, Sequence[str]], aspect: str) -> tuple[str, ...]:
    """The categories of `aspect` among a dataset's (`Store.categories`), its name matched in any case;
    () for an aspect scored with numbers."""
    return next((tuple(words) for name, words in categories.items() if name.lower() == aspect.lower()), ())


def category_word(score: float, categories: Sequence[str]) -> str:
    """A label stored as its category's index, as its word ("pass", not 1); a score that is no index, as a number."""
    return categories[int(score)] if float(score).is_integer() and 0 <= score < len(categories) else f"{score:g}"


def labels_in_words(scores: Iterable[float], categories: Sequence[str]) -> str:
    """Several people's labels of one item in words: the word when they agree ("pass"), else each word with its
    count, the most given first, a tie in the categories' order ("pass 2, fail 1"; "fail 1, pass 1" whoever gave
    which: one split, one name); "" for none."""
    counted = Counter(category_word(score, categories) for score in scores)
    if len(counted) <= 1:
        return next(iter(counted), "")
    place = {word: k for k, word in enumerate(categories)}
    ordered = sorted(counted.items(), key=lambda pair: (-pair[1], place.get(pair[0], len(place)), pair[0]))
    return ", ".join(f"{label} {count}" for label, count in ordered)


def positive(categories: tuple[str, ...]) -> str | None:
    """The category a rate counts ("pass", "yes", "true", any case) when `categories` are one of the
    two-category pairs, else None (more categories, or two that are not such words)."""
    lowered = tuple(sorted(category.lower() for category in categories))
    return next((c for c in categories if c.lower() == lowered[1]), None) if lowered in PAIRS else None
