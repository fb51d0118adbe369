"""Words that belong to the question, not to a name: what the fuzzy linker skips.

Words that also occur in project names ("city", "garden", "one", "new") are left out on
purpose: a leftover run containing them may still be a project name.
"""

from __future__ import annotations

_WORDS = """
a about above across after again against ahead all also am among amongst an and any are
around as ask asking at average averaged averages based be been before being below between
biggest bigger both but by can change changes cheaper cheapest climb climbs compare compared
comparing comparison could current currently decline declines decrease decreases
decreasing did do does down drop drops during each either estate estimate estimated
expect expected expensive fall falls faster fastest figure for forecast forecasted forecasts
from gain gains go goes going greater greatest grow growth had has have higher highest how
i if in increase increases increasing is it its itself larger largest least less level
likely lower lowest many max maximum may me mean median might min minimum more most much
my neighborhood neighborhoods neighbourhood neighbourhoods next no not now of on or our out
over per percent percentage please predict predicted prediction price prices pricing
project projects property properties rate rather relative respectively rise rises rising
see shall should show sink so than that the their them then there these they this those
through to trend up value values versus vs was we were what when where whether which while
who whose will with within would year years you your month months monthly quarter quarters
half coming following upcoming past last previous first second third fourth final
end beginning start whole entire full period time january february march april june july
august september october november december jan feb mar apr jun jul aug sep sept oct nov dec
two three four five six seven eight nine ten eleven twelve community communities
development developments estates housing residential complex complexes
per square meter metre sqm yuan rmb cost costs worth selling sale sales sold transaction
units unit homes flats apartments sell sells best worst
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
compare contrast difference differ between among versus goes_up goes_down priced district districts zone area shi qu
early late mid middle ie eg happen happens happening recorded observed known quoted
"""

QUESTION_WORDS: frozenset[str] = frozenset(_WORDS.split())
