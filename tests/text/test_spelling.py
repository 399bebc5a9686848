import pytest

from evidenceqa.text.spelling import one_spelling
from evidenceqa.text.tokens import terms

# (British, American): each pair must analyse to the same terms.
VARIANTS = [
    ("anaesthetic", "anesthetic"),
    ("haemorrhage", "hemorrhage"),
    ("paediatric", "pediatric"),
    ("orthopaedic", "orthopedic"),
    ("ischaemia", "ischemia"),
    ("leukaemia", "leukemia"),
    ("caesarean", "cesarean"),
    ("aetiology", "etiology"),
    ("oedema", "edema"),
    ("oesophageal", "esophageal"),
    ("oestrogen", "estrogen"),
    ("diarrhoea", "diarrhea"),
    ("apnoea", "apnea"),
    ("dyspnoeic", "dyspneic"),
    ("foetal", "fetal"),
    ("coeliac", "celiac"),
    ("tumours", "tumors"),
    ("labour", "labor"),
    ("behaviour", "behavior"),
    ("randomised", "randomized"),
    ("hospitalisation", "hospitalization"),
    ("analysed", "analyzed"),
    ("theatre", "theater"),
    ("titre", "titer"),
    ("fibres", "fibers"),
    ("analogue", "analog"),
    ("sulphonamide", "sulfonamide"),
    ("manoeuvre", "maneuver"),
    ("programme", "program"),
    ("lymphoedema", "lymphedema"),
    ("papilloedema", "papilledema"),
    ("leucocytes", "leukocytes"),
    ("leucopenia", "leukopenia"),
    ("GORD", "GERD"),
    # One drug under its British and its American name.
    ("adrenaline", "epinephrine"),
    ("noradrenaline", "norepinephrine"),
    ("lignocaine", "lidocaine"),
    ("suxamethonium", "succinylcholine"),
    ("paracetamol", "acetaminophen"),
    ("thiopentone", "thiopental"),
    ("salbutamol", "albuterol"),
]


@pytest.mark.parametrize(("british", "american"), VARIANTS)
def test_british_and_american_spellings_analyse_alike(british, american):
    assert terms(british) == terms(american)


@pytest.mark.parametrize(
    "word",
    [
        "toe",
        "poem",
        "coefficient",
        "aerosol",
        "vertebrae",
        "four",
        "hour",
        "tour",
        "rise",
        "size",
        "leucine",
        "gastroesophageal",
    ],
)
def test_words_with_one_spelling_are_left_alone(word):
    assert one_spelling(word) == word


@pytest.mark.parametrize(
    ("word", "other"),
    [
        ("hospitalisation", "hospital"),
        ("organization", "organ"),
        ("colonization", "colon"),
        ("randomized", "random"),
    ],
)
def test_folding_keeps_words_apart_that_the_stemmer_would_join(word, other):
    # "-ization" is folded onto "-isation", which the stemmer does not cut back to the root word.
    assert terms(word) != terms(other)
