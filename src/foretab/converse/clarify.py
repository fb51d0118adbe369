"""``Clarify``: a name that is several entities, offered back as full questions (docs/design.md §4.3).

Each choice carries the plan it stands for, so picking it ("1", "the first one", 第一个, or
the choice's own text) answers that plan without reading anything again; "both" / 都 takes
every candidate at once. Choices are ordered by their place (city, then district).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from foretab.core.canonical import canonical
from foretab.core.plan import EntityRef, Language, Plan
from foretab.errors import AmbiguousEntityError, QuestionError
from foretab.parse.entities import EntityIndex


@dataclass(frozen=True, slots=True)
class Choice:
    """One candidate: the full question shown, and the plan it answers."""

    question: str
    plan: Plan


@dataclass(frozen=True, slots=True)
class Clarify:
    """The answer to a question whose name (or follow-up) leaves several candidates."""

    message: str
    choices: tuple[Choice, ...]

    @property
    def questions(self) -> list[str]:
        return [c.question for c in self.choices]

    def to_dict(self) -> dict[str, object]:
        """``{"message", "choices"}``: the API's and ``--json``'s ``clarify`` object."""
        return {"message": self.message, "choices": self.questions}

    def pick(self, number: int) -> Plan:
        """The plan of choice ``number`` (1-based), or a refusal naming the choices there are."""
        if not 1 <= number <= len(self.choices):
            raise QuestionError(
                f"there are {len(self.choices)} choices; pick one of 1–{len(self.choices)}"
            )
        return self.choices[number - 1].plan

    def every(self) -> Plan:
        """One plan over every candidate ("both"): the choices' subjects, in order."""
        first = self.choices[0].plan
        refs: list[EntityRef] = []
        for choice in self.choices:
            refs.extend(r for r in choice.plan.entities if r not in refs)
        return replace(first, entities=tuple(refs), question=self.choices[0].question)

    def matching(self, text: str) -> Plan | None:
        """The plan of the choice whose question is ``text`` (a button sends it back)."""
        wanted = " ".join(text.split()).casefold()
        for choice in self.choices:
            if " ".join(choice.question.split()).casefold() == wanted:
                return choice.plan
        return None


def place_label(index: EntityIndex, ref: EntityRef, language: Language) -> str:
    """Where ``ref`` is: ``Jiangning District, Nanjing`` / ``南京市江宁区``."""
    if language is Language.ZH:
        outer = index.outer_zh.get(ref.outer, ref.outer)
        inner = index.inner_zh.get((ref.outer, ref.inner), ref.inner)
        return f"{outer}{inner}"
    return ", ".join(part for part in (ref.inner, ref.outer) if part)


def qualified(index: EntityIndex, ref: EntityRef, language: Language) -> str:
    """The name with its place, as a question writes it: ``X in Jiangning District, Nanjing``."""
    if language is Language.ZH:
        return f"{place_label(index, ref, language)}{ref.display_name(language)}"
    return f"{ref.name} in {place_label(index, ref, language)}"


def full_question(plan: Plan, index: EntityIndex) -> str:
    """The plan's canonical question with each named entity's place, capitalised."""
    text = canonical(plan)
    if not plan.scopes:
        for ref in plan.entities:
            if ref.name in text:
                text = text.replace(
                    ref.name, f"{ref.name} ({place_label(index, ref, Language.EN)})", 1
                )
    return text[:1].upper() + text[1:] + ("" if text.endswith("?") else "?")


def _message(
    error: AmbiguousEntityError, count: int, language: Language, index: EntityIndex
) -> str:
    if language is Language.ZH:
        return f"“{error.mention}”有{count}个{index.wording.entity_zh}，请选择一个："
    return f"'{error.mention}' is {count} {index.wording.entities}: which one do you mean?"


def clarify_question(
    question: str,
    error: AmbiguousEntityError,
    language: Language,
    index: EntityIndex,
    plan_of: Callable[[str], Plan],
) -> Clarify:
    """The ambiguous ``question`` asked once per candidate, its name qualified by its place.

    A choice whose question does not plan (``plan_of`` refuses it) is left out; with none
    left, the original error stands.
    """
    choices: list[Choice] = []
    for ref in _ordered(error.candidates):
        text = question[: error.start] + qualified(index, ref, language) + question[error.end :]
        try:
            choices.append(Choice(text, plan_of(text)))
        except QuestionError:
            continue
    if len(choices) < 2:
        raise error
    return Clarify(_message(error, len(choices), language, index), tuple(choices))


def clarify_plans(
    error: AmbiguousEntityError,
    plans: Sequence[tuple[EntityRef, Plan]],
    language: Language,
    index: EntityIndex,
) -> Clarify:
    """A follow-up's ambiguous name: one choice per candidate plan, shown as full questions."""
    ordered = sorted(plans, key=lambda item: (item[0].outer, item[0].inner))
    choices = tuple(Choice(full_question(plan, index), plan) for _, plan in ordered)
    if len(choices) < 2:
        raise error
    return Clarify(_message(error, len(choices), language, index), choices)


def _ordered(refs: Sequence[EntityRef]) -> list[EntityRef]:
    return sorted(refs, key=lambda ref: (ref.outer, ref.inner))
