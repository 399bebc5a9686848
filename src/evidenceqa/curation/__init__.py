"""The benchmark builder: question–answer pairs a publisher already wrote, mapped to the library
documents that answer them, labelled by transparent rules, validated by clinicians.

extract (pairs from Documents) → metadata (year, topic, question type, expected precision) →
mapping (gold sources with confidences) → candidates (JSONL, CSV) → review (decisions → the
validated benchmark in the shared format). `build.build_candidates` runs the first three.
See docs/builder.md.
"""
