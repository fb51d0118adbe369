"""Chinese cue words and patterns: what the question asks, once entities and time are masked.

The counterpart of ``lang.en``: the same functions and tables, in Chinese.
"""

from __future__ import annotations

import re

from foretab.core.plan import (
    Aggregate,
    Comparison,
    Extreme,
    TimeWindow,
    Wording,
)
from foretab.errors import UnknownEntityError
from foretab.parse import vocabulary as vocab
from foretab.parse.entities import EntityIndex, Mention, MentionKind
from foretab.parse.families import (
    CUE_PATTERNS_ZH,
    WEIGHTED_ZH,
    Cues,
    extreme_of,
)
from foretab.parse.passes import (
    Timed,
)
from foretab.parse.phrases import PHRASES
from foretab.parse.question import Question
from foretab.parse.text import CJK, mask

NOW = re.compile(vocab.NOW)

EACH = re.compile(vocab.EACH_ZH)


RISE = re.compile(vocab.RISE_ZH)


FALL = re.compile(vocab.FALL_ZH)


MOST = re.compile(vocab.MOST_ZH)


YES_NO = re.compile(r"会[^，。？]*吗|是否|能否|会不会|还是|吗[？?]?$")


WHICH = re.compile(r"哪|谁|还是")


def cue_text(question: str, spans: list[tuple[int, int]]) -> str:
    """The words left for cues, masked spans out."""
    # "最为便宜" / "最为突出": the same cue as "最便宜" / "最突出".
    return re.sub(r"#+", " ", mask(question, spans)).replace("最为", "最")


# What may follow a place name in a Chinese question about the place as a whole; anything
# else right after it ("南京市江宁区阳光天堂") is a project name the store does not know.
AFTER_PLACE = re.compile(PHRASES.zh_after_place)


PLACE_WORD = re.compile(f"[{CJK}]{{2,8}}(?:市|区|县)")


NOT_PLACE = frozenset(PHRASES.not_places_zh)


def check_place(read: Question, timed: Timed, index: EntityIndex) -> None:
    """Refuse a city or district the catalog does not hold ("成都市"), naming it.

    Only when the question names no known place: "X市" then is the place it asks about.
    """
    if any(m.kind is not MentionKind.ENTITY for m in timed.found.mentions):
        return
    for segment in read.segments:
        if (
            PLACE_WORD.fullmatch(segment.text)
            and segment.text not in NOT_PLACE
            and not timed.claims.overlaps(segment.start, segment.end)
        ):
            outers = "、".join(index.outer_zh.get(c) or c for c in sorted(index.outers))
            raise UnknownEntityError(
                f"unknown {' or '.join(reversed(index.wording.groups))} '{segment.text}': the "
                f"store holds {outers}; `foretab tables --db DB` lists its "
                f"{index.wording.groups_plural[0] if index.wording.groups else 'tables'}"
            )


def check_leftover(
    question: str,
    mentions: list[Mention],
    spans: list[tuple[int, int]],
    words: Wording,
    index: EntityIndex | None = None,
) -> None:
    """Refuse a place name followed by words that are not about the place as a whole."""
    masked = mask(question, spans)
    for mention in mentions:
        if mention.kind is MentionKind.ENTITY:
            continue
        rest = masked[mention.end :]
        if rest and not AFTER_PLACE.match(rest):
            name = re.match(f"[{CJK}A-Za-z0-9·]+", rest)
            word = name.group() if name else rest[:6]
            close = index.close_zh_names(word, mention) if index is not None else []
            hint = f"; did you mean {'、'.join(close)}?" if close else ""
            raise UnknownEntityError(
                f"unknown {words.entity} '{word}' in {mention.text}: no {words.entity} of that "
                f"name{hint} `foretab projects --db DB --search TEXT` finds {words.entities} by name",
                suggestions=tuple(close),
            )


def aggregate(text: str, cues: Cues, window: TimeWindow, which_month: Extreme | None) -> Aggregate:
    """The aggregate a Chinese question asks for over its window."""
    if len(window.months) == 1:
        return Aggregate.VALUE
    if which_month is not None or window.only:
        return Aggregate.EACH  # "2020年9月与2021年6月…各是多少": one value per month named
    if MEDIAN.search(text):
        return Aggregate.MEDIAN
    if EACH.search(text):
        return Aggregate.EACH
    if re.search(r"最高|最贵|峰值", text):
        return Aggregate.MAX
    if re.search(r"最低|最便宜", text):
        return Aggregate.MIN
    # "去年的均价": the window's mean (docs/design.md §4); units over a window are summed later.
    return Aggregate.MEAN


MEAN = re.compile(vocab.MEAN_ZH)


MEDIAN = re.compile(vocab.MEDIAN_ZH)


WEIGHTED = WEIGHTED_ZH


VS_NOW = re.compile(
    r"(?:比|较|相比|高于|低于)(?:起)?(?:现在|目前|当前|本月|如今|眼下)[^，。？]*?(?:高|低|贵|便宜|多|少)"
)


def comparison(text: str, several: bool, cues: Cues) -> tuple[Comparison, str]:
    """The comparison a Chinese question asks for, and the cue text left after it."""
    rise, fall = RISE.search(text), FALL.search(text)
    direction = None
    if rise and fall:
        direction = "rise" if rise.start() < fall.start() else "fall"
    elif rise or fall:
        direction = "rise" if rise else "fall"
    if not several:
        if VS_NOW.search(text) and YES_NO.search(text):
            return Comparison.VS_CURRENT, text  # "会比现在高吗": the target against now
        if direction and (YES_NO.search(text) or re.search(r"走势|趋势", text)):
            return Comparison.VS_CURRENT, text
        if re.search(
            r"走势|趋势|涨还是跌|上涨还是下跌|是涨是跌|会涨还是会跌|是升是降|涨了还是跌了", text
        ):
            return Comparison.VS_CURRENT, text
        return Comparison.NONE, text
    if not WHICH.search(text) and not YES_NO.search(text):
        return Comparison.NONE, text
    if direction:
        if MOST.search(text) or re.search(r"涨幅|跌幅", text):
            return (Comparison.RISES_MOST if direction == "rise" else Comparison.FALLS_MOST), text
        return (Comparison.WHICH_RISE if direction == "rise" else Comparison.WHICH_FALL), text
    extreme = extreme_of(text, True)
    if extreme is Extreme.HIGHEST:
        return Comparison.HIGHEST, text
    if extreme is Extreme.LOWEST:
        return Comparison.LOWEST, text
    return Comparison.NONE, text


# Compositional operations (docs/design.md §4.1): read by ``parse.places``.
YOY = re.compile(r"同比")
MOM = re.compile(r"环比")
INNER_WORD = re.compile(PHRASES.inner_word_zh or r"(?!)")
OUTER_RANK = re.compile(PHRASES.outer_rank_zh or r"(?!)")  # "which city", "哪个城市"
PERCENT = re.compile(r"百分之几|百分比|百分之多少")
SO_FAR = re.compile(r"以来")

CUES: tuple[tuple[re.Pattern[str], str], ...] = (
    *CUE_PATTERNS_ZH,
    (YOY, "yoy"),
    (MOM, "mom"),
    (INNER_WORD, "inner"),
    (OUTER_RANK, "outer"),
    (PERCENT, "relative"),
    (EACH, "each"),
    (RISE, "rise"),
    (FALL, "fall"),
    (MOST, "most"),
    (YES_NO, "yes/no"),
    (WHICH, "which"),
    (NOW, "now"),
    (MEAN, "mean"),
    (MEDIAN, "median"),
    (VS_NOW, "versus now"),
    (re.compile(vocab.RELATIVE_ZH), "relative"),
    (
        re.compile(
            r"走势|趋势|涨还是跌|上涨还是下跌|是涨是跌|是升是降|最高|最贵|峰值|最低|最便宜|最为|低廉|昂贵|最优|优秀|区间|介于"
        ),
        "extreme",
    ),
)
