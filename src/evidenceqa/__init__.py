"""evidenceqa: evidence-based answers from a medical publisher's own library, with citations."""

__version__ = "0.1.0"
