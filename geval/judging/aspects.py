"""What a template asks the judge for: its aspects (a score on a scale, or categories), how few-shot
examples are chosen, and the placeholders a template body may name. The stages below templates
(answers, judges, examples, the calls' layouts) read these without the template itself."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from geval.data.items import PLACEHOLDERS
from geval.errors import TemplateError, shown
from geval.judging.encoder import NAME as ENCODER

PLACEHOLDER = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")
STEPS = "steps"
ASPECT = "aspect"
QUESTION = "question"
RESPONSES = "responses"
EXAMPLES = "examples"
KNOWN = {
    **PLACEHOLDERS,
    STEPS: "the evaluation steps: written in the header, or generated (steps = \"auto\")",
    ASPECT: "the name of the aspect asked: the prompt is then sent once per aspect",
    QUESTION: "a checklist question (kind = \"checklist\"): the prompt is sent once per question, answered Yes or No",
    RESPONSES: "every response of the group, numbered, in the order asked (kind = \"batch\")",
    EXAMPLES: "scored examples from other groups, with their human scores (an [examples] table in the header)",
}
OPTIONAL = {"context", "dialogue", STEPS}  # may render empty (a first turn has no context)
#: A checklist question's answers, lowest first: "No" reads as 0, "Yes" as 1.
ANSWERS = ("No", "Yes")
#: Marks a part of an aspect in storage keys: a checklist question ("naturalness#q2"), an order ("naturalness#order1").
PART = "#"
#: Marks a template made from another by a prompt search (`geval.tuning.variants`): "<name>~<what changed>".
VARIANT = "~"


@dataclass(frozen=True)
class Aspect:
    """One score the judge fills in, on an integer scale min..max.

    `labels` are words the judge answers with instead of numbers, lowest first (a checklist
    question: ("No", "Yes") on 0-1). `questions` are a checklist aspect's yes/no questions.
    `categories` make the aspect categorical (a judge's scores imported from elsewhere, e.g.
    MT-Bench's model_a / model_b / tie): its scores are their indexes, min 0 and max the last.
    `asked` is False for an aspect no judge is asked (a judge's scores imported from a file, on its
    own scale: 1-10, 0-100): its scale may be any whole numbers.
    """

    name: str
    min: int
    max: int
    human: str = ""
    labels: tuple[str, ...] = ()
    questions: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    asked: bool = True

    def __post_init__(self):
        """Refuse what a judge cannot read: each score must be one digit (0 <= min < max <= 9),
        or one of `labels`, whether the aspect comes from a template file or is built in code
        (categories: their indexes 0 .. n - 1; an aspect never asked: any whole numbers)."""
        if self.categories:
            if (self.min, self.max) != (0, len(self.categories) - 1) or len(set(self.categories)) < 2 \
                    or len(set(self.categories)) != len(self.categories):
                raise TemplateError(f"aspect '{shown(self.name)}' categories should be 2 or more different names, "
                                    "scored 0 (the first) to the number of them less one")
            return
        if not one_line(self.name):
            raise TemplateError(f"aspect name {shown(repr(self.name))} should be one line of text")
        if PART in self.name:
            raise TemplateError(f"aspect name {shown(repr(self.name))} cannot hold '{PART}': it marks a checklist "
                                "question's or an order's part of an aspect in the store")
        if not isinstance(self.human, str):
            raise TemplateError(f"aspect '{shown(self.name)}' human should be text")
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (self.min, self.max)) \
                or not (0 <= self.min < self.max <= 9 if self.asked else self.min < self.max):
            raise TemplateError(
                f"aspect '{shown(self.name)}' scale {shown(self.min, 20)}-{shown(self.max, 20)} "
                + ("must be whole numbers with 0 <= min < max <= 9" if self.asked else "must be whole numbers, min < max")
            )
        if self.labels and (len(self.labels) != len(self.scale) or not all(map(_one_word, self.labels))
                            or len({label.lower() for label in self.labels}) != len(self.labels)):
            raise TemplateError(f"aspect '{shown(self.name)}' labels should be {len(self.scale)} different words, "
                                f"one per score {self.min}-{self.max}")
        if not all(map(one_line, self.questions)):
            raise TemplateError(f"aspect '{shown(self.name)}': each question should be one line of text")

    @property
    def scale(self) -> list[int]:
        """Every allowed score, lowest first."""
        return list(range(self.min, self.max + 1))

    @property
    def key(self) -> str:
        """Lower-case name used in storage and on the command line."""
        return self.name.lower()

    def answer(self, score: int) -> str:
        """How the judge writes `score`: its label, or the number."""
        return self.labels[score - self.min] if self.labels else str(score)


@dataclass(frozen=True)
class Examples:
    """Few-shot settings: `k` scored examples of other groups, chosen by `select` ("random",
    "stratified" across the human scale, or "nearest" to the judged text by sentence embedding)
    with `seed`; `text` writes one example (item placeholders plus {{n}} and {{scores}}; "" for
    the default)."""

    k: int
    select: str = "stratified"
    seed: int = 0
    text: str = ""

    CHOICES: ClassVar[tuple[str, ...]] = ("random", "stratified", "nearest")

    @property
    def signature(self) -> str:
        """How the examples were chosen, as the signature writes it: "k4,stratified,seed0", or
        with the encoder that measures nearness: "k4,nearest:all-MiniLM-L6-v2@53aa51172d14,seed0"."""
        select = f"nearest:{ENCODER}" if self.select == "nearest" else self.select
        return f"k{self.k},{select},seed{self.seed}"


def one_line(name: object) -> bool:
    """Whether `name` is one printable line of text."""
    return isinstance(name, str) and bool(name.strip()) and name.isprintable()


def _one_word(label: object) -> bool:
    return isinstance(label, str) and bool(re.fullmatch(r"[^\W\d_]+", label))


def part_key(aspect: Aspect, part: str) -> str:
    """The storage key of a part of an aspect: "naturalness#q2", "naturalness#order1"."""
    return f"{aspect.key}{PART}{part}"
