"""Hand-made candidates for the review tests: a safety question with two gold sources, a factual one,
and one whose answer holds a script (document text is untrusted)."""

from __future__ import annotations

from evidenceqa.curation.candidates import Candidate, Location, Source, candidate_id
from evidenceqa.curation.metadata import Metadata

SCRIPT = "<script>alert(1)</script>"


def candidate(question: str, answer: str, doc_id: str, others: tuple[str, ...] = (), kind: str = "factual",
              precision: str = "high") -> Candidate:  # fmt: skip
    sources = [Source(doc_id, "source", 1.0, f"Title of {doc_id}", answer.split(". ")[0] + ".", "Results")]
    sources += [Source(o, "answers", 0.7, f"Title of {o}", f"Passage of {o}.", "Discussion") for o in others]
    return Candidate(
        candidate_id=candidate_id(doc_id, question),
        question=question,
        answer=answer,
        doc_id=doc_id,
        title=f"Title of {doc_id}",
        pattern="question-heading",
        location=Location(["Results", question], 3, 0, f"/data/{doc_id}.xml"),
        metadata=Metadata(
            2015, "wound care", "keywords: wound", kind, "rule", precision, "default", "journal-article"
        ),
        sources=sources,
    )


def sample_candidates() -> list[Candidate]:
    return [
        candidate("Is chlorhexidine safe on mucous membranes?",
                  "Chlorhexidine gluconate should not be used on mucous membranes. It is safe on intact skin.",
                  "chg", ("shave",), "clinical safety", "critical"),
        candidate("Does shaving the incision site increase infection?",
                  "Shaving the incision site increased the rate of postoperative infection. Clipping did not.",
                  "shave"),
        candidate("Does cefazolin reduce surgical site infection?",
                  f"Cefazolin given within sixty minutes before incision {SCRIPT} reduced infection.", "xss"),
    ]  # fmt: skip
