"""The planner's vocabulary, as data in one place (English and Chinese).

* ``QUESTION_WORDS``: words that belong to the question, not to a name — what the fuzzy
  linker skips. Words that also occur in project names ("city", "garden", "one", "new")
  are left out on purpose: a leftover run containing them may still be a project name.
* entity levels: place-name suffixes a user may leave out ("Jiangning" for "Jiangning
  District"), their other spellings, and the words of a question about a place as a whole.
* ``MEASURES``: the words naming each measure (price, units sold).
* cue words of the question families (rise / fall, most, highest / lowest, mean, each
  month, percentage) as regular-expression sources, compiled where they are read.
* ``FILLER_EN`` / ``FILLER_ZH``: words with no meaning of their own; a word that no pass
  claimed and that is not filler is refused (``parse.leftover``).

The generic corpus schema (issue 15) is to feed measure names and entity-level words from
the store into this module; every reader takes them from here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from foretab.core.plan import Metric
from foretab.parse.phrases import PHRASES
from foretab.parse.text import CJK

_WORDS = """
a about above across after again against ahead all also am among amongst an and any are
around as ask asking at average averaged averages based be been before being below between
biggest bigger both but by can change changes cheaper cheapest climb climbs compare compared
comparing comparison could current currently decline declines decrease decreases
decreasing did do does down drop drops during each either estimate estimated
expect expected expensive fall falls faster fastest figure for forecast forecasted forecasts
from gain gains go goes going greater greatest grow growth had has have higher highest how
i if in increase increases increasing is it its itself larger largest least less level
likely lower lowest many max maximum may me mean median might min minimum more most much
my neighborhood neighborhoods neighbourhood neighbourhoods next no not now of on or our out
over per percent percentage please predict predicted prediction
property properties rate rather relative respectively rise rises rising
see shall should show sink so than that the their them then there these they this those
through to trend up value values versus vs was we were what when where whether which while
who whose will with within would year years you your month months monthly quarter quarters
half coming following upcoming past last previous first second third fourth final
end beginning start whole entire full period time january february march april june july
august september october november december jan feb mar apr jun jul aug sep sept oct nov dec
two three four five six seven eight nine ten eleven twelve
development developments residential complex complexes
per square meter metre sqm yuan rmb cost costs worth selling sale sales sold transaction
units unit flats sell sells best worst
transactions option options choose among between give tell list provide calculate compute
peak top bottom trough priciest dearest
appreciate appreciates depreciate depreciates fluctuate jump jumps surge surges
plunge plunges slump slumps dip dips gain growth grows grew rose fell dropped declined
increased decreased compared relative respect regard regarding towards toward
currently present presently today moment right latest recent recently
q1 q2 q3 q4 h1 h2 by until till thru through so far date
ones which one two both either neither among amongst expected anticipated projected
going think guess reckon know like would be likely probably typical typically
whats wont isnt pricier dearer costlier affordable cheap expensive pricey terms term
experience experiences experiencing stay stays remain remains unchanged same flat stable
become becomes get gets getting reach reaches hit hits sell sells sold go goes going
exceed exceeds exceeding above below under amount margin magnitude significant sharp
forecasted figures figure number numbers rough roughly approximately about around
help kindly could you tell let know looking look check find out answer question
anticipate anticipated projection projections outlook predict predicted likely
compare contrast difference differ between among versus goes_up goes_down zone area shi qu
yoy mom early late mid middle ie eg happen happens happening recorded observed known quoted
altogether combined together
"""

QUESTION_WORDS: frozenset[str] = frozenset(_WORDS.split()) | set(PHRASES.question_words_en)

# -- entity levels ------------------------------------------------------------------------

# Suffixes a user may leave out: "Jiangning" for "Jiangning District".
PLACE_SUFFIXES = PHRASES.place_suffixes
# Other official or common spellings of a place-name suffix ("East Lake High-tech Zone" is
# also "East Lake High-tech Development Zone"; "Jiangbei New Area" "Jiangbei New District").
SUFFIX_VARIANTS = dict(PHRASES.suffix_variants)
# Words of a question about a place as a whole that are not names ("name the five
# priciest communities", "the total number of homes sold").
_SCOPE = """
fewest fewer least name names total number list show tell give top
typical level levels across priciest costliest dearest best worst among had
have sold ranking rank ranked ranks bottom overall whole entire area
region new units volume sales amount figure
figures count many developments development complexes complex ones
one all every any each sell selling registered recorded market
"""
SCOPE_WORDS: frozenset[str] = frozenset(_SCOPE.split()) | set(PHRASES.scope_words_en)

ZH_PLACE_LEVELS = ("市", "区", "县", "新区")
"""Chinese level words of a place name ("江宁区", "南京市")."""

# -- measures ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MeasureWords:
    """The words naming one measure, as regular-expression sources (English, Chinese)."""

    metric: Metric
    en: str
    zh: str


MEASURES: tuple[MeasureWords, ...] = (
    MeasureWords(
        Metric.UNITS,
        en=PHRASES.units_en,
        zh=PHRASES.units_zh,
    ),
    MeasureWords(
        Metric.VALUE,
        en=r"\bpric\w*|\bcost\w*|\bexpensive\b|\bcheap\w*|\bpricier\b|\bcheaper\b"
        r"|\bvaluations?\b",
        zh=PHRASES.value_zh,
    ),
)


def measure_words(metric: Metric) -> MeasureWords:
    """The words naming ``metric``."""
    return next(m for m in MEASURES if m.metric is metric)


# -- family cue words (regular-expression sources) ----------------------------------------

RISE_EN = (
    r"\b(?:rise|rises|rising|rose|risen|increase|increases|increased|increasing|goes_up"
    r"|grow|grows|growing|grew|growth|gain|gains|climb|climbs|climbing|appreciate|appreciates"
    r"|appreciation|upward|upswing|surge|surges|jump|jumps|higher\s+than\s+before|uptick)\b"
)
FALL_EN = (
    r"\b(?:fall|falls|falling|fell|fallen|decrease|decreases|decreased|decreasing|goes_down"
    r"|drop|drops|dropping|dropped|decline|declines|declining|declined|dip|dips|depreciate"
    r"|depreciates|depreciation|downward|downturn|slump|slumps|plunge|plunges|sink|sinks"
    r"|shrink|shrinks|lose|loses|loss)\b"
)
MOST_EN = (
    r"\b(?:most|more|bigger|biggest|larger|largest|greater|greatest|faster|fastest|steeper"
    r"|steepest|sharper|sharpest|stronger|strongest|higher|highest|deeper|deepest|heavier"
    r"|heaviest|maximum|max|further|furthest|farther|farthest|quicker|quickest|more\s+sharply"
    r"|more\s+steeply|more\s+quickly)\b"
)
HIGH_EN = PHRASES.high_en
LOW_EN = (
    r"\b(?:lowest|lower|cheapest|cheaper|minimum|min|bottom|trough|least|smallest|smaller"
    r"|lows|low\s+point)\b"
)
# "average price" names the measure; any other "average" asks for the mean.
MEAN_EN = PHRASES.mean_en
EACH_EN = (
    r"\beach\s+month\b|\bevery\s+month\b|\bmonthly\b|\bmonth\s+by\s+month\b"
    r"|\bper\s+month\b|\bfor\s+each\b|\beach\s+of\s+the\s+months\b|\bmonth-by-month\b"
    r"|\bmonth\s+on\s+month\b|\bbreakdown\b"
)
RELATIVE_EN = (
    r"\bpercent(?:age)?s?\b|%|\brates?\b|\brelative\s+(?:change|increase|rise|growth|decrease"
    r"|decline|drop|fall|terms)\b|\brelatively\b|\bproportion(?:al|ally)?\b|\bratio\b"
)
RISE_ZH = r"上涨|涨价|上升|增长|升高|涨"
FALL_ZH = r"下跌|降价|下降|降低|回落|跌"
MOST_ZH = r"最多|最大|最快|最高|更多|更大|更快|较多|较大"
EACH_ZH = r"每个月|每月|各月|逐月|分别|各个月|信息|数据|情况|详情|具体|有何变化|变化情况|走势|明细"
MEAN_ZH = r"平均|均值|总体|整体|合计|总共|一共|总计"
RELATIVE_ZH = r"涨幅|跌幅|幅度|百分比|%"
MEDIAN_EN = r"\bmedian\b"
MEDIAN_ZH = r"中位数|中位值|中值"
NOW = (
    r"\b(?:now|currently|current|today|present|this\s+month|at\s+the\s+moment|latest)\b"
    r"|目前|现在|当前|本月|这个月|如今|眼下|最新"
)

# -- filler: words with no meaning of their own ----------------------------------------

# Question words that still change the meaning when no pass consumed them: the linker skips
# them, but an answer that ignored them would answer another question.
_MEANINGFUL_EN = frozenset({"median", "weighted"})
_FILLER_EN_EXTRA = """
evolve evolves command commands determine taking take tell view views opinion quick quickly
brief briefly trajectory path budgeting budget purposes purpose planning reference develop
develops fare fares basis speaking honestly generally general frankly currently wondering
ask asked asking question questions answer anyone someone somebody pls plz teh hte waht
whatll whatre itll thatll pull fetch grab back record records odds chance chances probability
likelihood need needed require s t d ll re ve m what's it's there's how's i'd i'm let's us our ours please thanks thank hi
hello hey kindly just really actually basically exactly currently then also too very quite
gonna wanna going got get getting given expect expecting expected think thinks thought
look looking see seeing say said tell told wondering wonder want wanted need needs like
curious interested idea sense ballpark approx approximate approximately roughly around
about estimate estimated guess figure data info information stats statistics number
square sq metre meter metres meters m2 sqm psm per yuan rmb cny unit
flat flats property properties real residential
market place places area areas located location situated based listed
happened happening happen going gone been being become became stand stands standing
look looks looked sit sits sitting be am is are was were will would shall should can
could may might must do does did done have has had having up down
"""
FILLER_EN: frozenset[str] = (
    QUESTION_WORDS | SCOPE_WORDS | frozenset(_FILLER_EN_EXTRA.split()) | set(PHRASES.filler_en)
) - _MEANINGFUL_EN

_FILLER_ZH = """
请问 请 问 一下 告诉 告诉我 我 我们 你 您 想 想要 知道 了解 查询 查 查一下 看看 帮 帮我 麻烦
是 是否 多少 多少钱 什么 怎么 怎样 如何 哪些 哪个 哪一个 哪家 哪 几 有 有没有 没有 吗 呢 吧 啊
的 了 在 于 和 与 及 以及 或 或者 还是 并且 并 而且 其中 以上 以下 之间 之中 当中 里 里面 中 内
位于 所在 地区 区域 地段 一带 附近 周边 范围 这 这个 那 那个 这些 那些 其 它 它们 该 此
项目 房产 房屋 房子 住房 住宅 商品房 新房 楼市 市场 物业 交易 销售 出售 记录 表现 情况
数据 信息 统计 水平 大概 大约 约 左右 预计 预测 估计 将 将会 会 能 可能 可以 应该 达到 达 为 到 至
每平米 平米 块 个 家 名 位 月份 年度 期间 时候 时 时期 阶段 目前
整个 全部 所有 各 各个 各自 分别 一共 总共 总 共 共计 相比 比 比较 对比 相对 较 问下 问一下 帮忙 帮我看看
告知 说明 提供 描述 阐述 给出 询问 找出 列出 列举 名称 名字 处于 居于 位居 位列 排在 排 占据 拥有
第一位 排第一 一些 几个 多 值 峰 价 榜 榜单 排行榜 第一 首位 居首 位置 全区 全市 时间段 段时间 这段 那段 怎么样 表现
"""
FILLER_ZH: frozenset[str] = frozenset(_FILLER_ZH.split()) | set(PHRASES.filler_zh)


_ALL_CJK = re.compile(f"[{CJK}]+")


def _literal_words(*sources: str) -> tuple[str, ...]:
    """The plain Chinese alternatives of regular-expression sources ("均价|房价" → both)."""
    words = (w for source in sources for w in source.split("|"))
    return tuple(w for w in words if len(w) >= 2 and _ALL_CJK.fullmatch(w))


ZH_WORDS: tuple[str, ...] = _literal_words(
    RISE_ZH,
    FALL_ZH,
    MOST_ZH,
    EACH_ZH,
    MEAN_ZH,
    RELATIVE_ZH,
    MEDIAN_ZH,
    NOW,
    *(m.zh for m in MEASURES),
)
"""Chinese cue and measure words, given to the segmenter so it keeps them whole."""
