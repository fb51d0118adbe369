"""English cue words and patterns: what the question asks, once entities and time are masked.

One module per language where the words differ (``zh`` beside this one); the planner
(``parse.parser``) calls the same functions of whichever language the question is in.
"""

from __future__ import annotations

import re

from foretab.core.plan import (
    Aggregate,
    Comparison,
    default_wording,
)
from foretab.errors import QuestionError
from foretab.parse import vocabulary as vocab
from foretab.parse.families import (
    CUE_PATTERNS_EN,
    WEIGHTED_EN,
)
from foretab.parse.phrases import PHRASES
from foretab.parse.text import mask

NOW = re.compile(vocab.NOW)

CURRENT = (
    r"(?:(?:at|as\s+of|what\s+(?:it|they)\s+(?:is|are|costs?)|(?:it|they)\s+(?:is|are|costs?|does|do))\s+)?"
    r"(?:(?:its|their|the|today's|todays|present|current|now)\s+)*"
    r"(?:current|present|presently|now|today|the\s+moment|this\s+month)"
)


# Rewrites before cue reading: fixed phrases whose words would read as other cues.
REWRITES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), replacement)
    for pattern, replacement in (
        (r"\b(?:more|most)\s+expensive\b", " pricier "),
        (r"\b(?:less|least)\s+expensive\b", " cheaper "),
        (r"\bmore\s+affordable\b", " cheaper "),
        # "cost the most", "sell for the least", "be worth more": price levels.
        (r"\b(?:cost|costs|costing|sell\s+for|sells\s+for|selling\s+for|go\s+for|goes\s+for"
         r"|worth|valued)\s+(?:the\s+)?most\b|\bmost\s+valuable\b", " priciest "),
        (r"\b(?:cost|costs|costing|sell\s+for|sells\s+for|selling\s+for|go\s+for|goes\s+for"
         r"|worth|valued)\s+(?:the\s+)?least\b|\bleast\s+valuable\b", " cheapest "),
        (r"\b(?:cost|costs|worth|valued)\s+more\b|\bmore\s+valuable\b", " pricier "),
        (r"\b(?:cost|costs|worth|valued)\s+less\b|\bless\s+valuable\b", " cheaper "),
        # "how high will it go", "how low could it fall": the extreme of the window, not a
        # direction ("rise"/"fall" there name the movement whose extreme is asked for).
        (r"\bhow\s+high\b(?:[\s,;()-]+[\w']+){0,10}?[\s,;()-]+(?:go|goes|get|gets|rise|rises|climb|climbs"
         r"|reach|peak)\b", " highest "),
        (r"\bhow\s+low\b(?:[\s,;()-]+[\w']+){0,10}?[\s,;()-]+(?:go|goes|get|gets|fall|falls|drop|drops"
         r"|sink|sinks|dip|dips|reach)\b", " lowest "),
        (r"\bat\s+(?:the\s+)?most\b", " maximum "),
        (r"\bmost\s+affordable\b", " cheapest "),
        # "become cheaper", "get pricier": a change, like "fall" / "rise"
        (r"\b(?:become|becomes|becoming|get|gets|getting|grow|grows|turn|turns)\s+"
         r"(?:any\s+|even\s+|much\s+|a\s+lot\s+|a\s+bit\s+)?(?:cheaper|lower|less\s+expensive)\b",
         " goes_down "),
        (r"\b(?:become|becomes|becoming|get|gets|getting|grow|grows|turn|turns)\s+"
         r"(?:any\s+|even\s+|much\s+|a\s+lot\s+|a\s+bit\s+)?(?:pricier|higher|dearer|costlier)\b",
         " goes_up "),
        (rf"\b(?:higher|above|pricier|dearer|costlier|greater|bigger|larger)\s+(?:[\w']+\s+){{0,3}}than\s+"
         rf"(?:(?:it|they)\s+(?:is|are)\s+)?{CURRENT}\b", " goes_up "),
        (rf"\b(?:lower|below|under|cheaper|smaller)\s+(?:[\w']+\s+){{0,3}}than\s+"
         rf"(?:(?:it|they)\s+(?:is|are)\s+)?{CURRENT}\b", " goes_down "),
        (rf"\b(?:exceed|exceeds|above|over)\s+{CURRENT}\b", " goes_up "),
        (rf"\bmore\s+(?:[\w']+\s+){{0,3}}than\s+(?:(?:it|they)\s+(?:is|are)\s+)?{CURRENT}\b",
         " goes_up "),
        (rf"\bless\s+(?:[\w']+\s+){{0,3}}than\s+(?:(?:it|they)\s+(?:is|are)\s+)?{CURRENT}\b",
         " goes_down "),
        (rf"\b(?:below|under|beneath)\s+{CURRENT}\b", " goes_down "),
        (r"\b(?:go|goes|going|went|gone|move|moves|moved)\s+up\b", " goes_up "),
        (r"\b(?:go|goes|going|went|gone|move|moves|moved)\s+down\b", " goes_down "),
        # "what will the price rise to" asks for a price, not a direction
        (r"\b(?:rise|rises|climb|climbs|increase|increases|grow|grows|fall|falls|drop|drops"
         r"|decline|declines)\s+to\b", " reach "),
        (r"\b(?:be|is|are)\s+up\b(?!\s+(?:to|for)\b)", " goes_up "),
        (r"\b(?:be|is|are)\s+down\b(?!\s+(?:to|for)\b)", " goes_down "),
        (r"\brelative\s+to\b|\bcompared?\s+(?:to|with|against)\b|\bcompares\s+(?:to|with)\b"
         r"|\bin\s+comparison\s+(?:to|with)\b|\bmeasured\s+against\b",
         " versus "),
    )
)  # fmt: skip


RISE = re.compile(vocab.RISE_EN)


FALL = re.compile(vocab.FALL_EN)


MOST = re.compile(vocab.MOST_EN)


HIGH = re.compile(vocab.HIGH_EN)


LOW = re.compile(vocab.LOW_EN)


# Comparatives that, for one project, compare with its current price.
UP_COMPARATIVE = re.compile(r"\b(?:higher|pricier|dearer|costlier|greater)\b")


DOWN_COMPARATIVE = re.compile(r"\b(?:lower|cheaper|smaller)\b")


MEAN = re.compile(vocab.MEAN_EN)


MEDIAN = re.compile(vocab.MEDIAN_EN)


WEIGHTED = WEIGHTED_EN


EACH = re.compile(vocab.EACH_EN)


WEAK_EACH = re.compile(r"\bmonthly\b")


ANY_MONTH = re.compile(
    r"\b(?:in|during|for)\s+any\s+(?:single\s+)?month\b|\bat\s+any\s+(?:point|time)\b"
)


UNITS_MORE = re.compile(r"\b(?:more|most)\b")


UNITS_FEWER = re.compile(r"\b(?:fewer|fewest|less)\b")


RELATIVE = re.compile(vocab.RELATIVE_EN)


# Words allowed between "bigger" and "increase" / between "rise" and "the most".
FORECAST_WORDS = r"expected|projected|forecast|predicted|anticipated|likely|estimated|potential"


GAP_BEFORE = re.compile(
    r"\s*(?:(?:the|a|an|percentage|percent|relative|significant|sharp|overall|monthly|rate"
    rf"|rates|pace|speed|of|{FORECAST_WORDS})\s+)*"
)


# "bigger price increase", "larger average price rise": the price words may sit between a
# size word and the change, but not after "highest"/"higher", which name a price level
# ("their highest price exceeds ...").
GAP_BEFORE_VALUE = re.compile(
    r"\s*(?:(?:the|a|an|percentage|percent|relative|significant|sharp|overall|monthly|rate"
    r"|rates|pace|speed|of|average|value|unit|in"
    rf"|{PHRASES.gap_words_en}|{FORECAST_WORDS})\s+)*"
)


LEVEL_WORDS = frozenset({"higher", "highest", "maximum", "max", "deeper", "deepest"})


GAP_AFTER = re.compile(PHRASES.gap_after_en)


WHICH = re.compile(PHRASES.which_named_en)


# A yes/no question, at the start of any clause ("Compared with now, will X ...?"), or an
# embedded one ("tell me whether X will ..."). Polite requests ("could you tell me ...")
# are rewritten away first, so they do not read as yes/no questions.
YES_NO = re.compile(
    r"(?:^|[,;:.?!]\s*)(?:will|would|is|are|does|do|can|could|shall|might|may)\b|\bwhether\b"
)


WH = re.compile(r"\b(?:what|whats|which|how|when|who|whose|where)\b")


POLITE = re.compile(PHRASES.polite_en)


# "compared with now": the single project's target is weighed against its current price.
VERSUS_NOW = re.compile(rf"\bversus\s+(?:what\s+it\s+(?:is|costs)\s+)?{CURRENT}\b")


TREND = re.compile(
    r"\btrend\b|\bdirection\b|\bup\s+or\s+down\b|\bhold\s+(?:its|their|on\s+to\s+its)\s+value\b"
    r"|\b(?:stay|stays|remain|remains)\s+(?:the\s+same|flat|stable|unchanged|steady)\b"
)


def cue_text(question: str, spans: list[tuple[int, int]]) -> str:
    """The words left for cues: masked spans out, polite openings dropped, phrases rewritten."""
    text = mask(question, spans).lower().replace("’", "'")
    text = re.sub(r"#+", " ", text)
    text = re.sub(r"\s+", " ", text)
    text = POLITE.sub(" ", text)
    for pattern, replacement in REWRITES:
        text = pattern.sub(replacement, text)
    return text


def is_yes_no(text: str) -> bool:
    """A yes/no question: a clause opening with an auxiliary, not inside a wh-question.

    "In Q3 2022, will X rise?" is one; "What price will A in Gusu, Suzhou, see?" is not.
    """
    for match in YES_NO.finditer(text):
        if match.group().endswith("whether"):
            return True
        sentence = re.split(r"[.?!]", text[: match.start()])[-1]
        if not WH.search(sentence):
            return True
    return False


def _first(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    return pattern.search(text)


def aggregate(text: str) -> Aggregate | None:
    """The aggregate named in ``text`` (comparison words already removed)."""
    hits: list[tuple[int, Aggregate]] = []
    for pattern, aggregate in (
        (MEAN, Aggregate.MEAN),
        (MEDIAN, Aggregate.MEDIAN),
        (HIGH, Aggregate.MAX),
        (LOW, Aggregate.MIN),
    ):
        match = pattern.search(text)
        if match:
            hits.append((match.start(), aggregate))
    if hits:
        return min(hits)[1]
    if EACH.search(text):
        return Aggregate.EACH
    return None


def _remove(text: str, match: re.Match[str] | None) -> str:
    if match is None:
        return text
    return text[: match.start()] + " " + text[match.end() :]


def _near_most(text: str, cue: re.Match[str]) -> re.Match[str] | None:
    """A "most/bigger/faster" word close to the rise/fall word.

    "bigger increase", "rise the most", "larger percentage rise"; a distant one belongs to
    something else ("the maximum price ... will rise").
    """
    for most in MOST.finditer(text):
        if most.end() <= cue.start():
            gap = text[most.end() : cue.start()]
            gap_rule = GAP_BEFORE if most.group() in LEVEL_WORDS else GAP_BEFORE_VALUE
            if gap_rule.fullmatch(gap):
                return most
        elif GAP_AFTER.fullmatch(text[cue.end() : most.start()]):
            return most
    return None


def comparison(
    text: str, several: bool, units: bool = False, value: str = ""
) -> tuple[Comparison, str]:
    """The comparison a question asks for and its text with the consumed cue removed.

    ``units``: a units question, where "more" / "fewer" name the highest / lowest.
    """
    rise, fall = _first(RISE, text), _first(FALL, text)
    direction = None
    if rise and fall:
        direction = "rise" if rise.start() < fall.start() else "fall"
    elif rise or fall:
        direction = "rise" if rise else "fall"
    if not several:
        # "cheaper or pricier": every comparative is the direction, none an aggregate.
        comparatives = [*UP_COMPARATIVE.finditer(text), *DOWN_COMPARATIVE.finditer(text)]
        explicit = direction or TREND.search(text) or VERSUS_NOW.search(text)
        # "Will X get cheaper next month?": a comparative with one project compares with now.
        implied = comparatives and (
            is_yes_no(text) or re.search(r"\bor\b|\bversus\b|\bthan\b", text)
        )
        if explicit or implied:
            rest = text
            for comparative in sorted(comparatives, key=lambda m: m.start(), reverse=True):
                rest = _remove(rest, comparative)
            return Comparison.VS_CURRENT, rest
        return Comparison.NONE, text
    categorical = bool(WHICH.search(text) or is_yes_no(text))
    if direction:
        cue = rise if direction == "rise" else fall
        assert cue is not None
        most = _near_most(text, cue)
        if most is not None:
            kind = Comparison.RISES_MOST if direction == "rise" else Comparison.FALLS_MOST
            return kind, _remove(text, most)
        # "Will A or B rise?" and "which of A, B will rise" both list the risers.
        kind = Comparison.WHICH_RISE if direction == "rise" else Comparison.WHICH_FALL
        return kind, text
    if not categorical:
        return Comparison.NONE, text
    if VERSUS_NOW.search(text):
        # "which will be cheaper in May compared with today": each against its own price now.
        up, down = UP_COMPARATIVE.search(text), DOWN_COMPARATIVE.search(text)
        if up and (not down or up.start() < down.start()):
            return Comparison.WHICH_RISE, _remove(text, up)
        if down:
            return Comparison.WHICH_FALL, _remove(text, down)
    high, low = _first(HIGH, text), _first(LOW, text)
    if units:  # "who sold more units", "which sold fewer homes"
        high = high or _first(UNITS_MORE, text)
        low = low or _first(UNITS_FEWER, text)
    if high and (not low or high.start() < low.start()):
        return Comparison.HIGHEST, _remove(text, high)
    if low:
        return Comparison.LOWEST, _remove(text, low)
    raise QuestionError(
        f"the question asks 'which' but says neither what to compare (highest / lowest "
        f"{value or default_wording().value}) nor a direction (rise / fall)",
        suggestions=(
            f"Which of A or B will have the highest {value or default_wording().value} next month?",
            "Which of A or B will rise the most next year?",
        ),
    )


LISTING = re.compile(r"\bforecasts?\b|\bprices\b|\bvalues\b|\bfigures\b|\blist\b")


MEAN_WORD = re.compile(r"\baverage\b|\bmean\b|\bavg\b|\boverall\b")


# What the cue pass claims: the expressions the family readers above consume.
# Compositional operations (docs/design.md §4.1): read by ``parse.places``.
YOY = re.compile(r"\b(?:yoy|y-o-y|year[\s-](?:over|on)[\s-]year|annual\s+change)\b")
MOM = re.compile(r"\b(?:mom|m-o-m|month[\s-](?:over|on)[\s-]month)\b")
INNER_WORD = re.compile(PHRASES.inner_word_en or r"(?!)")
OUTER_RANK = re.compile(PHRASES.outer_rank_en or r"(?!)")  # "which city", "哪个城市"

CUES: tuple[tuple[re.Pattern[str], str], ...] = (
    *CUE_PATTERNS_EN,
    (YOY, "yoy"),
    (MOM, "mom"),
    (INNER_WORD, "inner"),
    (OUTER_RANK, "outer"),
    *((pattern, "phrase") for pattern, _ in REWRITES),
    (POLITE, "polite"),
    (re.compile(rf"\b{CURRENT}\b"), "now"),
    (RISE, "rise"),
    (FALL, "fall"),
    (MOST, "most"),
    (HIGH, "highest"),
    (LOW, "lowest"),
    (UP_COMPARATIVE, "higher"),
    (DOWN_COMPARATIVE, "lower"),
    (MEAN, "mean"),
    (MEDIAN, "median"),
    (EACH, "each"),
    (RELATIVE, "relative"),
    (WHICH, "which"),
    (YES_NO, "yes/no"),
    (WH, "wh"),
    (VERSUS_NOW, "versus now"),
    (TREND, "trend"),
    (NOW, "now"),
    (LISTING, "listing"),
    (MEAN_WORD, "mean"),
    (re.compile(r"\bhow\s+(?:high|low)\b|\babsolute\b"), "how high"),
    (ANY_MONTH, "any month"),
)
