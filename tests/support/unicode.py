"""Strings of any characters, for hypothesis, without its slowest cold start."""

from __future__ import annotations

from hypothesis import strategies as st


def any_text(max_size: int) -> st.SearchStrategy[str]:
    """What `st.text(max_size=...)` draws: strings of every character UTF-8 encodes, which is
    all of Unicode but the surrogates, exactly the general category Cs. Spelt with the category
    because text()'s default alphabet, `characters(codec="utf-8")`, makes hypothesis run all
    1.1 M code points through the codec once per process (~2.5 s) when no .hypothesis/ cache
    holds the answer: in a fresh clone, in each xdist worker."""
    return st.text(st.characters(exclude_categories=("Cs",)), max_size=max_size)
