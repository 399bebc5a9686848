"""British and American spellings folded onto one, so that keyword search matches either.

Clinicians write "anaesthetic", "oedema", "haemorrhage", "randomised", "theatre"; MedlinePlus and
most journals write "anesthetic", "edema", "hemorrhage", "randomized", "theater". Stemming does
not join them ("anaesthet" vs "anesthet"), so a British question missed American passages on
BM25's side, and the other way round. `one_spelling` maps a lower-cased token to one spelling;
it runs on both the indexed text and the question (`evidenceqa.text.tokens.terms`), so what
matters is that the two spellings of a word meet, not that the result is a real word: folding a
word that has no other spelling ("realise" and "reprise" alike) is harmless, and the rules take
care not to join two different words. They are the regular spelling differences, not a list of
medical terms, so they hold for any library. The one list is of drug names: a British clinician
still writes the old British Approved Names ("adrenaline", "lignocaine", "suxamethonium",
"paracetamol") where American and most international literature writes the US or international
name ("epinephrine", "lidocaine", "succinylcholine", "acetaminophen"); each pair is one drug, so it
is folded like a spelling.
"""

from __future__ import annotations

import re
from functools import lru_cache

# Whole words whose difference follows no rule below.
_WORDS = {
    "aluminium": "aluminum",
    "defence": "defense",
    "gord": "gerd",  # gastro-oesophageal reflux disease
    "grey": "gray",
    "judgement": "judgment",
    "licence": "license",
    "manoeuvre": "maneuver",
    "manoeuvres": "maneuvers",
    "mould": "mold",
    "moulds": "molds",
    "offence": "offense",
    "practise": "practice",
    "practised": "practiced",
    "practising": "practicing",
    "programme": "program",
    "programmes": "programs",
    # One drug, two names: the British (or international) name onto the American one.
    "aciclovir": "acyclovir",
    "adrenaline": "epinephrine",
    "amethocaine": "tetracaine",
    "amoxycillin": "amoxicillin",
    "cefalexin": "cephalexin",
    "chlorphenamine": "chlorpheniramine",
    "ciclosporin": "cyclosporine",
    "ergometrine": "ergonovine",
    "frusemide": "furosemide",
    "glibenclamide": "glyburide",
    "hyoscine": "scopolamine",
    "indometacin": "indomethacin",
    "isoprenaline": "isoproterenol",
    "lignocaine": "lidocaine",
    "noradrenaline": "norepinephrine",
    "oxpentifylline": "pentoxifylline",
    "paracetamol": "acetaminophen",
    "pethidine": "meperidine",
    "phenobarbitone": "phenobarbital",
    "rifampicin": "rifampin",
    "salbutamol": "albuterol",
    "suxamethonium": "succinylcholine",
    "thiopentone": "thiopental",
    "valaciclovir": "valacyclovir",
}

# (pattern, replacement), applied in order to a lower-case token.
_RULES = [
    (re.compile(p), r)
    for p, r in (
        # ae inside a word: haemorrhage, anaesthesia, paediatric, ischaemia, leukaemia, faeces.
        # Not at the start (aerosol) nor the end (vertebrae, the Latin plural).
        (r"(?<=.)ae(?=.)", "e"),
        (r"^aetiol", "etiol"),
        # oe: oedema, oesophagus, oestrogen; diarrhoea, apnoea, dyspnoea; foetus; coeliac.
        # Only in these places: "does", "toes", "poem", "coefficient" keep theirs.
        (r"^oe(?=[ds])", "e"),
        (r"(?<=rrh|.pn)oe", "e"),
        (r"^(f|am|hom)oe", r"\1e"),
        (r"^coel(?=i)", "cel"),
        # and "oedema" inside a compound: lymphoedema, papilloedema, myxoedema ("gastroesophageal" is
        # American: "gastro-oesophageal" is two tokens).
        (r"(?<=.)oe(?=dem)", "e"),
        # c for k: leucocyte, leucopenia, leucocytosis.
        (r"^leuco", "leuko"),
        # -our: tumour, labour, colour, behaviour, odour, humour (not four, hour, pour, tour).
        (r"^(tum|lab|col|behavi|fav|hon|hum|od|vap|rum|neighb|harb|vig|rig|endeav|arm|val|sav)our", r"\1or"),
        # -ize / -yze the other way, onto -ise / -yse: the stemmer strips "-ization" down to the
        # root ("hospitalization" → "hospit", as "hospital"; "randomized" → "random") but keeps
        # "hospitalis" and "randomis" apart, so the British form is the one that keeps words apart.
        (r"(?<=..)iz(e|es|ed|ing|ation|ations|ational|er|ers|able)$", r"is\1"),
        (r"yz(e|es|ed|ing|er|ers)$", r"ys\1"),
        # -re: theatre, centre, litre, titre, goitre, fibre, calibre.
        (r"(?<=[a-z])(t|b)re(s?)$", r"\1er\2"),
        # -ogue: catalogue, analogue, dialogue.
        (r"(?<=..)ogue(s?)$", r"og\1"),
        # ph for f in sulphur and its compounds: sulphate, sulphonamide, sulphasalazine.
        (r"sulph", "sulf"),
    )
]


@lru_cache(maxsize=65536)  # a library's vocabulary is Zipfian: most tokens repeat
def one_spelling(token: str) -> str:
    """`token` (lower case) in the one spelling its British and American forms share; else unchanged."""
    if token in _WORDS:
        return _WORDS[token]
    for pattern, replacement in _RULES:
        token = pattern.sub(replacement, token)
    return token
