"""Chinese follow-up words (那明年呢？, 换成销量, 和X比呢？, 第一个, 两个都要)."""

from __future__ import annotations

import re

from foretab.converse.words import FollowUpWords

WORDS = FollowUpWords(
    follow_up=re.compile(
        r"^\s*(?:那|那么|换成|改成|换为|和|跟|与|同|第[一二三四五六1-6]个|[1-6]\s*$|两个都|都要|全部)"
        r"|呢\s*[？?]?\s*$"
    ),
    last_year=re.compile(r"(?:和|跟|与|同)去年(?:同期|同月)?(?:相?比|对比)|同比"),
    add_subject=re.compile(r"^\s*(?:和|跟|与|同)(?=.+(?:相?比|对比))"),
    both=re.compile(r"^\s*(?:两个都要?|都要|两个|全部|都)\s*[。！？?]?\s*$"),
    choice=re.compile(r"^\s*(?:第(?P<n>[一二三四五六1-6])个|(?P<d>[1-6]))\s*[。？?]?\s*$"),
    the_two=re.compile(r"这两个|两个|它们|二者|两者"),
    lowest=re.compile(r"最低|最便宜|最少|最小"),
    highest=re.compile(r"最高|最贵|最多|最大"),
    percent=re.compile(r"百分比|百分之|变化率|涨幅率|%"),
    mean=re.compile(r"平均|均值"),
    each=re.compile(r"每个?月|逐月|分别"),
    filler=re.compile(
        r"那么|那|呢|吗|吧|的|了|换成|改成|换为|是|多少|和|跟|与|同|相?比|对比|要|呀|啊|它|其|[？?。！!，,\s]+"
    ),
    # a Chinese question of its own names its subject; follow-ups open with 那 / 换成 / 和…
    full_question=re.compile(r"^(?!\s*(?:那|换成|改成|换为|和|跟|与|同|第|两个|都|全部))"),
    pronoun=re.compile(r"它|其"),
)
