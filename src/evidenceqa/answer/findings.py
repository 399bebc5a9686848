"""Which sentences state a finding, and which way the evidence points on a yes/no question.

A clinician reads the first sentence of an answer and maybe the second: it should say what was
found ("was associated with", "did not reduce", a rate or an odds ratio), not what the study set
out to do ("To determine whether …") or how ("We retrospectively reviewed …"). Sentences in a
Results or Conclusions section, or with the language of a result, weigh up; aims, methods and
background weigh down. For a question that asks yes or no, the sentences that state a finding
vote: a negated result ("did not", "no significant difference") says no, a stated effect says yes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from evidenceqa.text.tokens import terms

_RESULT = re.compile(
    r"\b(?:was|were|is|are)\s+(?:significantly\s+|independently\s+|strongly\s+)?(?:associated|correlated|linked)"
    r"|\bsignificant(?:ly)?\b|\b(?:reduc|increas|decreas|improv|lower|rais|shorten|prolong|prevent)(?:ed|es)\b"
    r"|\b(?:higher|lower|fewer|greater|shorter|longer|less|more)\s+(?:than|in|among|with)\b"
    r"|\b(?:odds|hazard|risk)\s+ratio|\b(?-i:OR|RR|HR|CI)\b|\bp\s*[<=>≤]\s*0?\.\d|\d\s*%"
    r"|\b(?:resulted in|led to|did not|was not|were not|no (?:significant|difference|association|effect|benefit))"
    r"|\b(?:effective|safe|superior|inferior|comparable|similar|predict(?:s|ed|ive)?|recommend(?:s|ed)?)\b"
    r"|\b(?:we|these|our) (?:found|showed|conclude|suggest|demonstrate)|\b(?:in conclusion|overall|taken together)\b",
    re.I,
)
# An aim told as a bare purpose: "To perform an updated meta-analysis …", "To critically assess …".
# The verbs past the first ten say an aim only without a main clause after a comma ("To perform
# this function, the gene provides …" is a finding).
_AIM_ADVERB = r"(?:(?:critically|prospectively|retrospectively|systematically|further) )?"
_NOT_A_FINDING = re.compile(
    rf"^(?:to {_AIM_ADVERB}(?:determine|assess|evaluate|investigate|examine|compare|identify|describe|test|explore)\b"
    rf"|to {_AIM_ADVERB}(?:perform|study|ascertain|report|analy[sz]e|discuss|estimate|characteri[sz]e|clarify"
    r"|illustrate|validate|elucidate|observe|outline|demonstrate|correlate|develop|define|quantify|measure"
    r"|establish|review)\b[^,;:]*$"
    r"|(?:here,? )?(?:the |our )?(?:aim|objective|purpose|goal)s? (?:of|was|were|is)\b|we (?:aimed|sought|hypothesi[sz]ed)\b"
    r"|this (?:study|review|trial|paper|article) (?:aims|aimed|was designed|investigates|examines|describes)\b"
    r"|we (?:retrospectively |prospectively )?(?:reviewed|enrolled|recruited|conducted|performed|analy[sz]ed|collected|searched)\b"
    r"|(?:a total of )?[\d,]+ (?:[\w-]+ ){0,5}?(?:patients|participants|subjects|children|women|men|adults|cases)"
    r" (?:[\w-]+ ){0,5}?(?:were|was) (?:randomly |prospectively |retrospectively )?(?:enrolled|included|recruited"
    r"|randomi[sz]ed|allocated|assigned|divided|studied|reviewed)\b"
    r"|data (?:were|was) (?:collected|obtained|extracted|analy[sz]ed)\b)",
    re.I,
)
# A method told in the passive or with the patients as subject, anywhere in the sentence ("Serum
# concentrations of 31 patients were collected.", "Patients underwent radical or partial
# nephrectomy."): a method unless the sentence also states a result.
_METHOD = re.compile(
    r"\b(?:was|were) (?:prospectively |retrospectively |then |also )?(?:collected|recorded|measured|obtained"
    r"|extracted|enrolled|recruited|randomi[sz]ed|allocated|assigned)\b"
    r"|^(?:all |the )?(?:patients|participants|subjects) (?:underwent|were treated with)\b"
    # Opened by the study period ("Between May and November 2006, all patients … were assessed.").
    r"|^(?:between|from|during)\b[^.,;]{0,80}\b(?:1[89]|20)\d\d\b[^,;]{0,40},",
    re.I,
)
_FINDING_SECTION = re.compile(
    r"\b(?:results?|conclusions?|findings|interpretation|summary|discussion|recommendations?)\b", re.I
)
_OTHER_SECTION = re.compile(
    r"\b(?:methods?|materials|design|setting|patients and methods|participants|objectives?|aims?|purpose"
    r"|background|introduction|context|outcomes and measures)\b",
    re.I,
)
_BACKGROUND = re.compile(r"\b(?:background|introduction|importance)\b", re.I)
# A structured abstract's label kept in its sentence ("OBJECTIVE: To assess …", "Conclusions: …",
# as CORD-19 abstracts read; "Summary : …", as MedlinePlus pages): a section of its own, more precise
# than the chunk's.
_SENTENCE_LABEL = re.compile(
    r"^((?:[A-Z]{2,}(?:\s+(?:&|[A-Z]{2,}))*)|Background|Objectives?|Aims?|Purpose|Methods?|Design|Setting"
    r"|Results?|Findings|Conclusions?|Interpretation|Importance|Context|Introduction|Discussion|Summary)\s?:\s+(?=\S)"
)
# A stated absence of effect: the evidence says no to "does X …?". A negated auxiliary or modal
# ("cannot be relied upon", "will not be able to"; not "is not only", nor the uncertain "may or may
# not" and "cannot be ruled out"), a denied quantity ("no difference", "none of", "not all"), or a
# word that says no by itself ("lacks the necessary sensitivity", "insufficient", "unlikely to",
# "limited ability", "poor predictive value", "little awareness"), or a measure of agreement or
# knowledge stated to be low ("correlation … remains low").
_NEGATED = re.compile(
    r"(?<!may or )\b(?:did|does|do|was|were|is|are|could|can|should|has|have|had|will|would|may|might|must"
    r"|need)\s+(?:(?:usually|typically|generally|normally|often|always)\s+)?not\b"
    r"(?!\s+(?:only|just)\b|\s+be\s+(?:excluded|ruled out)\b)"
    r"|\b(?:didn't|doesn't|don't|wasn't|weren't|isn't|aren't|cannot|can't|won't|wouldn't|couldn't|shouldn't"
    r"|hasn't|haven't)\b(?!\s+be\s+(?:excluded|ruled out)\b)"
    r"|\b(?:no|little) (?:[\w-]+ ){0,3}(?:differences?|associations?|effects?|benefits?|improvement|reduction"
    r"|increase|changes?|evidence|correlation|relation(?:ship)?|indications?|value|role|alteration|impact"
    r"|advantage|need|place|data)\b"
    r"|\black(?:s|ed)? (?:of )?(?:[\w-]+ ){0,2}(?:correlation|association|effect|evidence|benefit|difference"
    r"|sensitivity|specificity|accuracy|power)\b"
    r"|\bnot (?:significantly|associated|related|correlated|different|effective|superior|improved|reduced)\b"
    r"|\b(?:failed to|neither|unrelated|no longer|not statistically|unable to|insufficient|inadequate(?:ly)?"
    r"|unreliable|inaccurate|ineffective|unnecessary|unlikely|none of|not all)\b"
    r"|\b(?:appears?|appeared|seems?|seemed) not\b"
    r"|\b(?:casts?|raises?|raised) (?:\w+ )?doubts? (?:on|about|over)\b"
    r"|\blimited (?:[\w-]+ ){0,1}(?:ability|value|role|benefit|effect|utility|accuracy|usefulness|impact)\b"
    r"|\bpoor(?:ly)? (?:[\w-]+ ){0,1}(?:predictive|predictor|predicts?|correlat\w*|agreement|sensitivity"
    r"|specificity|accuracy|reliability|performance)\b"
    r"|\b(?:similar|comparable|equivalent) (?:in|between|to|(?:[\w-]+ ){0,2}(?:rates|outcomes|patterns|results|levels|survival))\b"
    r"|\b(?:little|poor|low|limited|lack of) (?:[\w-]+ ){0,1}(?:awareness|knowledge|understanding)\b"
    r"|\b(?:correlation|association|agreement|accuracy|sensitivity|specificity|concordance|reliability|yield|uptake"
    r"|adherence|compliance|awareness|knowledge)\b[^,;]*?\b(?:was|were|is|are|remains?|remained)\s+"
    r"(?:very |relatively |rather )?(?:low|weak|poor)\b",
    re.I,
)
# A stated effect or property: what says yes to "does X …?" (a rate or a count alone does not).
_STATED = re.compile(
    r"\bsignificant(?:ly)?\b|\b(?:reduc|increas|decreas|improv|rais|prevent|enhanc|lower)(?:ed|es|e|s)?\b"
    r"|\b(?:associated|correlated|linked) with\b|\bpredict(?:s|ed|ive|or)?\b|\b(?:feasible|useful|beneficial"
    r"|better|worse|benefits?|effective|efficacious|accurate(?:ly)?|reliabl[ey]|safe(?:ly)?|justified|necessary"
    r"|superior|inferior|recommend(?:s|ed)?)\b|\bpositive (?:impact|effect|association)"
    r"|\bcan be (?:considered|used|predicted)|\bconsequence of|\brole in\b|\b(?:resulted in|led to)\b",
    re.I,
)
# A conclusion says what the study found as a whole: it outweighs a single result.
_CONCLUDING = re.compile(
    r"^(?:in conclusion|overall|taken together|in summary|these (?:results|findings|data)|our (?:results|findings|data)"
    r"|we conclude|this study (?:shows|showed|demonstrates|suggests))\b",
    re.I,
)
_CONCLUSION_SECTION = re.compile(r"\b(?:conclusions?|interpretation|summary)\b", re.I)
# The main clause: what follows "…, while …" or "…; …" qualifies it, and what "If …," sets as a condition
# is not what the sentence says.
_QUALIFIER = re.compile(r",\s*(?:while|whereas|but|although|though)\b|;\s")
_CONDITION = re.compile(r"^(?:if|when|where|unless|although|though|while|whereas|once)\b[^,]*,\s*", re.I)
# Uncertainty states no direction ("remains unclear"); a modal hedge states one tentatively ("shaving
# may increase infection" is how a trial's conclusion says yes).
_UNCERTAIN = re.compile(
    r"\b(?:unclear|uncertain|remains? (?:to be|controversial|unknown)|inconclusive|conflicting|controversial"
    r"|not (?:yet )?(?:clear|known|established)|may or may not|little is known"
    r"|(?:cannot|can't|could not|can not) be (?:excluded|ruled out))\b",
    re.I,
)
_TENTATIVE = re.compile(r"\b(?:may|might|appears? to|seems? to|possibly|potentially)\b", re.I)
# Yes/no at the start, or after a title's colon or dash ("Necrotizing fasciitis: is it …?").
_YES_NO = re.compile(
    r"(?:^|[:;,]\s*|\s[-–—]+\s*)(?:is|are|was|were|does|do|did|can|could|should|will|would|has|have|had|may|might"
    r"|must|shall)\b",
    re.I,
)

# A question put without its auxiliary, as clinicians shorthand one ("DDAVP ok for haemophilia B?",
# "pre-op statin -> less POAF after CABG?") and paper titles pose one ("Necrotizing fasciitis: an
# indication for hyperbaric oxygenation?"), asks whether, unless it asks what, which, how … or
# offers a choice ("APACHE II pre-op or on ICU admission?", "Clipping versus shaving?", "GK - 1 vs 2
# isocentres?"; not a comparison that its last clause asks a yes/no of: "RALP vs open RRP - CRP
# response lower with the robot?"). A word or two ("CVP?") names a topic.
_SHORTHAND_MIN_WORDS = 3
_NOT_WHETHER = re.compile(r"\b(?:what|which|who|whom|whose|when|where|why|how|or)\b", re.I)
_CLAUSE_BREAK = re.compile(r"\s[-–—]+\s|:\s|->")
_VERSUS = re.compile(r"\b(?:vs|versus)\b", re.I)

# A second question joined by "or": "…, or is there a group where a lobectomy is enough?".
_ALTERNATIVE = re.compile(
    r"\bor\s+(?:is|are|was|were|does|do|did|can|could|should|will|would|has|have|had|may|might|must|shall)\b",
    re.I,
)

# A request for information put as a question ("Do you have information about ERAS?", "Can you tell
# me about tranexamic acid in hip replacement?", "Are there any guidelines on …?") asks for what the
# library holds, not for a yes or a no. "Do you have to stop aspirin …?" and "Is there evidence that
# (or of) …?" still do.
_REQUEST = re.compile(
    r"^(?:please\s+)?(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?(?:tell|give|show|explain"
    r"|summari[sz]e|find|list|describe|provide|outline|help)\b"
    r"|(?:do|does)\s+(?:you|the library)\s+(?:have|hold)\s+(?:any\s+)?(?:information|info|data|material"
    r"|resources|guidance|literature|evidence|papers|articles|studies|anything)\b"
    r"|(?:is|are)\s+there\s+(?:any\s+)?(?:information|info|literature|data|guidance|guidelines?|papers"
    r"|articles|studies|resources|material|evidence)\s+(?:on|about|regarding)\b)",
    re.I,
)

# "Is X safe?" is answered by findings that state safety or tolerability themselves. One that states
# only a benefit ("decreases blood loss") says nothing to it, however positive; one about harms says
# yes or no by which way they went ("did not increase complications" is a yes), which the wording
# rules do not read. Either takes no side. (On PubMedQA: one more even-numbered question right, the
# odd half unchanged; docs/answering.md.)
_ASKS_SAFETY = re.compile(r"\bsafe(?:ly|ty)?\b", re.I)
_STATES_SAFETY = re.compile(r"\b(?:safe(?:ly|ty)?|unsafe|tolera(?:ted|ble|bility))\b", re.I)

# The words that say two things are alike, asked of ("equivalent to") or denied ("not equivalent").
_ALIKE = r"as (?:[\w-]+ ){1,3}as|equivalent|equal(?:ly)?|similar|comparable|non-?inferior|identical|interchangeable"
# "Is X as effective as Y?", "equivalent to", "the same message from …": a question whether two things
# are alike, to which "no significant difference" says yes, a stated difference ("lower than",
# "superior") says no, and an effect that compares nothing ("reduced infection") says neither.
# Not such a question: "the same haemoglobin level to avoid transfusion", "at the same time as", and
# the conjunctions and amounts "as well as", "as long as", "as much as".
_ASKS_SAMENESS = re.compile(
    rf"\b(?:(?!as (?:well|soon|long|far|much|many) as\b){_ALIKE}"
    r"|the same (?!time\b)(?:[\w-]+ ){0,2}(?:as|from|between|in))\b",
    re.I,
)
_DIFFERENCE = re.compile(
    r"\b(?:higher|lower|fewer|greater|shorter|longer|less|more|better|worse)\b(?:\s+[\w-]+){0,3}\s+than\b"
    r"|\b(?:superior|inferior)\b|\bdiffer(?:s|ed|ent|ences?)\b"
    r"|\bsignificantly (?:higher|lower|different|greater|less|more|better|worse|reduced|increased)\b",
    re.I,
)
# A negated likeness: a difference stated with "not" ("not as effective as"), where other negations
# ("no significant difference") state likeness.
_UNLIKE = re.compile(rf"\bnot (?:{_ALIKE}|the same)\b", re.I)
# "Is X necessary?" ("needed", "required", "mandatory", "essential", "do we need …") is answered no by a
# finding that does well without X: "stone retrieval can safely be done without the use of
# fluoroscopy", "some patients enjoy prolonged disease-free survival without adjuvant radiation". Not
# by one that only mentions going without ("patients without surgery died sooner" says yes).
_ASKS_NEED = re.compile(
    r"\b(?:necessary|needed|needs?|required|requires?|mandatory|essential|indispensable|obligatory)\b", re.I
)
_WITHOUT = re.compile(
    r"\bwithout\s+(?:the\s+(?:use|need)\s+(?:of|for)\s+|(?:a|an|the|any|routine|an?\s+\w+)\s+)?"
    r"(?P<what>[\w-]+(?:\s+[\w-]+){0,2})",
    re.I,
)
_DOES_WELL = re.compile(
    r"\b(?:safe(?:ly)?|feasible|success(?:ful(?:ly)?)?|sufficient|adequate(?:ly)?|effective(?:ly)?|enjoy"
    r"|(?:can|could|may) (?:\w+ )?be (?:done|performed|achieved|managed|treated|omitted|avoided))\b",
    re.I,
)

DIRECTIONS = ("yes", "no", "mixed", "unclear")
# The share of the question's terms a finding must restate to say yes by restating it.
ECHO_SHARE = 0.5
# A side needs this share of the votes, else the evidence is mixed.
MAJORITY = 2 / 3
CONCLUSION_VOTE = 2.0  # a conclusion's vote: what a study found as a whole outweighs a single result
# `finding_weight` of a study's aim or method by its wording: never quoted as an answer.
AIM_OR_METHOD = -1.0


def finding_weight(text: str, section_path: Sequence[str] = ()) -> float:
    """-1 … 1: how much a sentence reads as a finding (1) rather than an aim, a method or
    background (-1), from its own wording and the section it stands in."""
    text, section_path = _labelled(text, section_path)
    if _NOT_A_FINDING.match(text.strip()):
        return AIM_OR_METHOD
    result = bool(_RESULT.search(text))
    if _METHOD.search(text.strip()) and not result:
        return AIM_OR_METHOD
    return (0.5 if result else 0.0) + _section_weight(section_path)


def _section_weight(section_path: Sequence[str]) -> float:
    """+0.5 in a section named for what a study found, -0.5 in one named for what it set out to do
    (background, aim, methods), else 0."""
    section = " ".join(section_path)
    if _BACKGROUND.search(section):  # "Summary of Background Data" is background, not a summary
        return -0.5
    if _FINDING_SECTION.search(section):
        return 0.5
    return -0.5 if _OTHER_SECTION.search(section) else 0.0


def is_preamble(section_path: Sequence[str]) -> bool:
    """Whether a section is named for what a study set out to do rather than what it found: its
    background, aim or methods."""
    return _section_weight(section_path) < 0


def without_label(text: str) -> str:
    """The sentence without its structured-abstract label ("RESULTS: …"): what an answer quotes of it."""
    return _labelled(text, ())[0]


def _labelled(text: str, section_path: Sequence[str]) -> tuple[str, Sequence[str]]:
    """The sentence without its structured-abstract label, and the label as its section; else as given."""
    text = text.strip()
    label = _SENTENCE_LABEL.match(text)
    return (text[label.end() :], (label.group(1),)) if label else (text, section_path)


def asks_yes_or_no(question: str) -> bool:
    """Whether the question is answered by yes or no ("Does …?", "Can …?", "Is …?", "DDAVP ok for
    haemophilia B?"), not a request for information put as one ("Can you tell me about …?") nor a
    choice between two ("Do I need an inguinal exploration, or can I open it through the scrotum?"),
    which a yes would not answer."""
    question = question.strip()
    shorthand = (
        question.endswith("?")
        and len(question.split()) >= _SHORTHAND_MIN_WORDS
        and not _NOT_WHETHER.search(question)
        and not _VERSUS.search(_CLAUSE_BREAK.split(question)[-1])
    )
    return (
        bool(_YES_NO.search(question) or shorthand)
        and not _REQUEST.match(question)
        and not _ALTERNATIVE.search(question)
    )


def polarity(text: str, question: str = "") -> str | None:
    """What a finding says to "does X …?": "no" when it states no effect or difference, "yes" when
    it states one or restates at least ECHO_SHARE of `question`'s terms (`_side`), None when it
    states neither, says it is uncertain, or does not state safety to a question about it."""
    return _answer(text, question, set(terms(question)))[0]


def is_tentative(text: str) -> bool:
    """Whether a finding states its direction only tentatively ("may reduce", "appears to")."""
    return _stance(text)[1]


def _main_clause(text: str) -> str:
    """What a sentence states: not a leading condition ("Although outcomes remain poor, …") nor what
    qualifies it ("…, while …")."""
    return _QUALIFIER.split(_CONDITION.sub("", text, count=1), maxsplit=1)[0]


def _stance(text: str) -> tuple[str | None, bool]:
    main = _main_clause(text)
    for clause in dict.fromkeys((main, text)):  # the main clause decides; else the whole sentence
        tentative = bool(_TENTATIVE.search(clause))
        if _NEGATED.search(clause):
            return "no", tentative
        if (_RESULT.search(clause) or _STATED.search(clause)) and not _UNCERTAIN.search(clause):
            return "yes", tentative
    return None, False


def _side(text: str, asked: set[str]) -> tuple[str | None, bool]:
    """(side, tentative): the finding's own stance; else "yes" when its main clause restates the
    question's terms `asked` ("These arrhythmias subside over time" to "Do ventricular arrhythmias
    in athletes subside over time?") without calling it uncertain."""
    stance = _stance(text)
    if stance[0] is not None or not asked or _UNCERTAIN.search(text):
        return stance
    restated = asked & set(terms(_main_clause(text)))  # not what "If hair has to be removed, …" sets out
    if len(restated) < ECHO_SHARE * len(asked):
        return stance
    return "yes", bool(_TENTATIVE.search(text))


def _answer(text: str, question: str, asked: set[str]) -> tuple[str | None, bool]:
    """`_side`, for a finding that speaks to what `question` asks (safety itself, when it asks that;
    sameness or a difference, when it asks whether two things are alike)."""
    if _ASKS_SAFETY.search(question) and not _STATES_SAFETY.search(text):
        return None, False
    side, tentative = _side(text, asked)
    if side != "no" and _ASKS_NEED.search(question) and _does_well_without(text, asked):
        return "no", tentative
    if side is None or not _ASKS_SAMENESS.search(question) or side != _stance(text)[0]:
        return side, tentative  # a finding that restates the question says yes to it as asked
    main = _main_clause(text)
    if side == "no":
        return ("no" if _UNLIKE.search(main) else "yes"), tentative
    return ("no", tentative) if _DIFFERENCE.search(main) else (None, False)


def _does_well_without(text: str, asked: set[str]) -> bool:
    """Whether a finding states a good result without something the question asks about."""
    main = _main_clause(text)
    if not _DOES_WELL.search(main):
        return False
    return any(set(terms(m.group("what"))) & asked for m in _WITHOUT.finditer(main))


def is_conclusion(section_path: Sequence[str]) -> bool:
    """Whether a section states what a study found as a whole (Conclusions, Interpretation, Summary;
    not a "Summary of Background Data")."""
    path = " ".join(section_path)
    return bool(_CONCLUSION_SECTION.search(path)) and not _BACKGROUND.search(path)


def vote_weight(text: str, section_path: Sequence[str] = ()) -> float:
    """How much a finding counts towards the verdict: a conclusion twice a single result."""
    text, section_path = _labelled(text, section_path)
    return CONCLUSION_VOTE if _CONCLUDING.match(text.strip()) or is_conclusion(section_path) else 1.0


# Every yes/no line opens so: how a reader (and `direction_of`) tells it from a quoted sentence.
VERDICT_OPENING = "In short: the evidence found"
_LINES = {
    "yes": f"{VERDICT_OPENING} indicates yes.",
    "no": f"{VERDICT_OPENING} indicates no.",
    "mixed": f"{VERDICT_OPENING} is mixed.",
    "unclear": f"{VERDICT_OPENING} does not say clearly.",
}
# When every finding on the winning side only says "may" or "appears to".
_TENTATIVE_LINES = {
    "yes": f"{VERDICT_OPENING} suggests yes.",
    "no": f"{VERDICT_OPENING} suggests no.",
}


def direction_of(line: str) -> str | None:
    """The direction a yes/no line states; None for any other sentence."""
    lines = [*_LINES.items(), *_TENTATIVE_LINES.items()]
    return next((d for d, text in lines if line.strip() == text), None)


# After "is mixed", one line per side names the kind and year of its sources.
_SIDE_OPENINGS = {"yes": "Saying yes: ", "no": "Saying no: "}


def side_line(side: str, sources: Sequence[str]) -> str:
    return f"{_SIDE_OPENINGS[side]}{'; '.join(sources)}."


def is_summary(line: str) -> bool:
    """Whether a sentence is the answer's own summary (the yes/no line, a side of a mixed one),
    not a sentence quoted from the evidence."""
    return direction_of(line) is not None or line.strip().startswith(tuple(_SIDE_OPENINGS.values()))


@dataclass(frozen=True)
class Verdict:
    direction: str  # one of DIRECTIONS
    citations: list[int]  # the evidence numbers of the sentences that say so
    # Per side ("yes", "no"): the evidence numbers of the findings that take it; both, when mixed.
    sides: dict[str, list[int]] = field(default_factory=dict)
    tentative: bool = False  # every finding that says so says it tentatively

    def line(self) -> str:
        """The first line of an answer (its citations are shown after it, as a sentence's are)."""
        if self.tentative and self.direction in _TENTATIVE_LINES:
            return _TENTATIVE_LINES[self.direction]
        return _LINES[self.direction]


class _Vote(NamedTuple):
    side: str  # "yes" or "no"
    hedged: bool
    n: int  # the finding's evidence number
    weight: float


def verdict(
    sentences: Sequence[tuple[str, int]],
    weights: Sequence[float] | None = None,
    question: str = "",
    sources: Sequence[str] | None = None,
) -> Verdict:
    """The direction of the (sentence, evidence number) findings on `question`, each counting its
    weight (1 when not given), cited by those that agree with it (all that take a side when mixed).
    Given each finding's source (a document id), a source whose conclusion takes a side speaks
    through its conclusions alone: a single result of its own that points the other way is what
    its authors weighed, not a second study."""
    weighed = zip(sentences, weights or [1.0] * len(sentences), strict=True)
    asked = set(terms(question))
    votes = [_Vote(side, hedged, n, w) for (text, n), w in weighed
             for side, hedged in [_answer(text, question, asked)] if side is not None]  # fmt: skip
    if sources is not None:
        source_of = dict(zip((n for _, n in sentences), sources, strict=True))
        concluded = {source_of[v.n] for v in votes if v.weight >= CONCLUSION_VOTE}
        votes = [v for v in votes if v.weight >= CONCLUSION_VOTE or source_of[v.n] not in concluded]
    if not votes:
        return Verdict("unclear", [])
    total = sum(v.weight for v in votes)
    yes = sum(v.weight for v in votes if v.side == "yes")
    if yes >= MAJORITY * total:
        direction = "yes"
    elif total - yes >= MAJORITY * total:
        direction = "no"
    else:
        direction = "mixed"
    cited = [v.n for v in votes if direction == "mixed" or v.side == direction]
    sides = {side: list(dict.fromkeys(v.n for v in votes if v.side == side)) for side in ("yes", "no")}
    tentative = all(v.hedged for v in votes if v.side == direction)
    return Verdict(direction, list(dict.fromkeys(cited)), {k: v for k, v in sides.items() if v}, tentative)
