"""Questions the engine must refuse rather than answer as a different question (DESIGN §2).

Read on the question with its entities and time expression masked out, so a place called
"Pudong New Area" or a project called "Rent Garden" is not a refused word. Each refusal
names the part that cannot be answered and what can be asked instead.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from foretab.errors import QuestionError

if TYPE_CHECKING:
    from foretab.parse.lexicon import Lexicon


# (pattern, the name of what was asked) — measures and facts the store does not hold.
_MEASURES_EN: tuple[tuple[str, str], ...] = (
    (r"\bdevelop(?:er|ers|ed\s+by)\b|\bwho\s+(?:built|builds|is\s+building|developed)\b"
     r"|\bbuilder\b|\bbuilt\s+(?:it|by)\b|\bwho\s+built\b", "developer"),
    (r"\bfloor\s+(?:area|space)s?\b|\bgross\s+area\b|\bsquare\s+footage\b|\bhow\s+(?:big|large)\b"
     r"|\bsize\s+of\s+the\s+(?:flats|apartments|units|homes)\b"
     r"|\bhow\s+many\s+square\s+(?:metres|meters|feet)\b|\bsquare\s+(?:metres|meters)\s+(?:do|does|are|is)\b",
     "floor area"),
    (r"\brent(?:s|al|als|ed|ing)?\b|\blease\b|\byield\b", "rent"),
    (r"\bbed\s*rooms?\b|\bbath\s*rooms?\b|\blayouts?\b|\bfloor\s*plans?\b", "bedrooms / layout"),
    (r"\b(?:mortgage|interest\s+rates?|down\s+payment|property\s+tax|tax(?:es)?)\b",
     "mortgage / tax"),
    (r"\b(?:buyers?|owners?|residents?|tenants?|investors?|demand|occupants?|agents?)\b",
     "buyers / owners"),
    (r"\b(?:per\s+)?square\s+(?:foot|feet)\b|\bsq\.?\s*f(?:oo)?t\b|\bper\s+(?:acre|ping)\b"
     r"|\b(?:in\s+)?(?:us\s+|american\s+|hong\s+kong\s+|hk\s+)?dollars?\b|\busd\b|\bhkd\b"
     r"|\beuros?\b|\bpounds?\b", "price in other units"),
    (r"\bhow\s+many\s+(?:people|residents|inhabitants|households)\b|\bgdp\b|\bincomes?\b"
     r"|\bsalar(?:y|ies)\b|\bwages?\b|\bunemployment\b|\beconomy\b", "population / economy"),
    (r"\b(?:schools?|metro|subway|parking|amenities|address|location|population"
     r"|vacancy|occupancy|completion\s+date|handover|inventory|listings?|supply)\b",
     "other facts"),
)  # fmt: skip
_MEASURES_ZH: tuple[tuple[str, str], ...] = (
    (r"开发商|开发企业|谁开发|哪家公司开发|建造商|谁建", "developer（开发商）"),
    (r"建筑面积|占地面积|面积多大|户型|几室|套内面积", "floor area（面积/户型）"),
    (r"租金|租赁|出租|月租|租售比", "rent（租金）"),
    (r"美元|美金|港币|港元|欧元|英镑|平方英尺|英亩", "price in other units（其他货币或面积单位）"),
    (r"人口|常住人口|GDP|gdp|人均收入|工资|收入水平|经济", "population / economy（人口/经济）"),
    (r"物业费|学区|地铁|车位|容积率|绿化率|交房|库存|贷款|利率|税", "other facts（其他信息）"),
)
_WHY_EN = re.compile(
    r"\bwhy\b|\bexplain\w*\b|\breasons?\b|\bcauses?\b|\bcaused\b|\bwhat\s+drove\b"
    r"|\bwhat\s+(?:is|was)\s+behind\b|\bhow\s+come\b|\bdescribe\b|\banaly[sz]e\b|\bthoughts\b"
)
_WHY_ZH = re.compile(r"为什么|为何|原因|怎么会|解释|分析一下|分析下|导致")
# A second question after the first: "…, and who built it?", "… and what will it be …?"
_SECOND_EN = re.compile(
    r"\band\s+(?:also\s+)?(?:who|what|how|which|when|where|why)\b"
    r"|,\s*(?:and|also|plus)\s+(?:is|are|will|does|did|was|were|can|could)\b"
)
# The first part is a question itself ("On average, what did ..." has none before ", what").
_ASKS = re.compile(
    r"\b(?:what|which|how|who|when|where|will|is|are|does|did|was|were|can|could|tell|give"
    r"|list|show)\b"
)


def check_refusals(text: str, *, zh: bool, lexicon: Lexicon | None = None) -> None:
    """Refuse what cannot be answered, naming the cause (``text``: entities/time masked)."""
    from foretab.parse.lexicon import default_lexicon

    lexicon = lexicon or default_lexicon()
    can_answer, can_answer_zh = lexicon.can_answer, lexicon.can_answer_zh
    lowered = text.lower()
    second = None if zh else _SECOND_EN.search(lowered)
    if second and not (
        _ASKS.search(lowered[: second.start()]) and _clause_asks(lowered, second.end())
    ):
        second = None
    if second:
        raise QuestionError(
            "the question holds two questions"
            + (f" (the second starts at '{second.group().strip()}')" if second else "")
            + "; ask them one at a time"
        )
    for pattern, what in _MEASURES_ZH if zh else _MEASURES_EN:
        match = re.search(pattern, lowered)
        if match:
            raise QuestionError(
                (
                    f"这个问题问的是{what}（“{match.group()}”），数据中没有这一项；{can_answer_zh}"
                    if zh
                    else f"the question asks for the {what} ('{match.group()}'), which the "
                    f"store does not hold; {can_answer}"
                ),
                suggestions=("What will the price of P in District, City be next month?",),
            )
    why = (_WHY_ZH if zh else _WHY_EN).search(lowered)
    if why:
        word = why.group()
        raise QuestionError(
            f"这个问题要求解释原因（“{word}”）；foretab 只报告数值，不解释原因；{can_answer_zh}"
            if zh
            else f"the question asks to explain or give reasons ('{word}'); foretab "
            f"reports values, not causes — ask for the values instead ({can_answer})"
        )


def _clause_asks(text: str, at: int) -> bool:
    """True when the words after a conjunction form a question of their own."""
    rest = text[at:].strip()
    return bool(rest) and len(rest.split()) >= 2
