"""Fresh samples of sources the corpus already reads (the eleventh, seventeenth and twenty-first batches).

A response is a candidate when its source is in the batch and no earlier batch sampled it, compared by where it sits in
its source and by its earlier-style id; each keeps that id with the batch's prefix in front, so its source's plain rules
and checks label it unchanged (`original`).
"""
from __future__ import annotations

from collections.abc import Callable, Container, Mapping
from dataclasses import replace
from typing import Any

from tests.judges.real.sources import Candidate


def location(c: Candidate) -> tuple[Any, ...]:
    """Where the response sits: repository, file (and zip member), position in the file, field."""
    return c.source["repo"], c.source["path"], c.source.get("member"), c.source.get("index"), c.source.get("field")


def fresh_candidates(all_candidates: list[Candidate], earlier: list[Candidate], prefix: str, sources: Container[str],
                     only_model: Mapping[str, str], key: Callable[[Candidate], tuple[Any, ...]] = location,
                     earlier_id: Callable[[str], str] = lambda rid: rid) -> list[Candidate]:
    """The batch's candidates: responses of its sources (one model only where only_model names it) that no earlier
    batch sampled, renamed with prefix. earlier_id maps an earlier record's id to the id its response had first."""
    taken_ids = {earlier_id(c.id) for c in earlier}
    taken_keys = {key(c) for c in earlier}
    out = []
    for c in all_candidates:
        source = c.id.split(":", 1)[0]
        if source not in sources or only_model.get(source, c.model) != c.model:
            continue
        if c.id in taken_ids or key(c) in taken_keys:
            continue
        out.append(replace(c, id=prefix + c.id))
    return out


def original(c: Candidate, prefix: str) -> Candidate:
    """The candidate under its earlier-style id, for its source's plain rules and checks."""
    return replace(c, id=c.id[len(prefix):])
