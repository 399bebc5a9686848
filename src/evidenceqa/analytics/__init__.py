"""Pilot analytics: what the stored conversations and feedback say about the system in use.

- `rows`: the pilot's answers with their ratings and cited documents, read from the store.
- `metrics`: the figures (success, satisfaction, latency, cache, cost, per week): pure functions.
- `failures`: a category, with its evidence, for every poorly rated or abstained answer.
- `gaps`: abstained and missing-content questions grouped into topics, for the publisher.
- `compare`: the same questions before and after (two periods or index versions), by re-running.
- `report`, `charts`, `exports`: the report as Markdown, JSON, PNG charts and CSV/JSON exports.
- `simulate`: a scripted pilot through the real HTTP API, for tests and demos.

Definitions: docs/analytics.md.
"""
