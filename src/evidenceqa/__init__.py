"""evidenceqa: evidence-based answers from a medical publisher's own library, with citations."""

__version__ = "0.1.0"

# Said by the CLI, every page of the web app and the API description.
DISCLAIMER = "evidenceqa is a research and familiarisation tool. It is not for real-time clinical decisions."
