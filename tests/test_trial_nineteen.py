"""Findings of a fresh user's trial (trial 19, 2026-12-03).

- K2: a Markdown note whose front matter is not YAML (``title: "Broken "quoted" title"``,
  an unescaped quote) was stored whole, its ``---`` block as the text: its title, tags
  and date were lost without a word, and tag filters and ``--since`` missed the note.
- K3: an ingest whose vectors a full disk refused ended with status 0.
- K7: a token that one note of 20,000 holds, searched alone, was answered "nothing
  stored answers this" 4 times in 10.
- K8: whether an answer abstained depended on ``top_k`` when a tie of many notes straddled
  the first 10 hits.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_run import octomem

from octomem.engine.memory.judge import tie_end
from octomem.engine.memory.recall import ScopedHit
from octomem.engine.pipeline import Pipeline
from octomem.engine.relevance import relevance_of, shipped_model
from octomem.engine.relevance_features import run_stats
from octomem.engine.types import Chunk

BROKEN = ('---\ntitle: "Broken "quoted" title"\ntags: [ops]\ndate: 2024-05-01\n---\n'
          "Rotate the TLS certificates every ninety days.\n")


def test_front_matter_that_is_not_yaml_skips_its_note_naming_the_line(project: Path) -> None:
    notes = project / "notes"
    notes.mkdir()
    (notes / "a.md").write_text(BROKEN)
    (notes / "b.md").write_text("---\ntitle: Pager\ntags: [ops]\n---\n"
                                "The pager rota changes on Mondays.\n")
    ran = octomem(project, "ingest", "notes", ok=False)
    assert ran.code == 1 and "Traceback" not in ran.err
    assert "skipped: notes/a.md:2: front matter is not valid YAML (" in ran.err
    assert "added 1, replaced 0, unchanged 0 documents" in ran.out
    found = json.loads(octomem(project, "search", "certificates pager rota", "--json",
                               "--tag", "ops").out)
    assert [h["title"] for h in found["hits"]] == ["Pager"]
    # the note alone: refused, nothing stored
    ran = octomem(project, "ingest", str(notes / "a.md"), ok=False)
    assert ran.code == 1
    assert ran.err.startswith(f"error: {notes / 'a.md'}:2: front matter is not valid YAML (")
    # fixed, it is read as front matter
    (notes / "a.md").write_text(BROKEN.replace('"Broken "quoted" title"',
                                               "'Broken \"quoted\" title'"))
    octomem(project, "ingest", "notes")
    found = json.loads(octomem(project, "search", "rotate TLS certificates", "--json",
                               "--tag", "ops").out)
    hit = found["hits"][0]
    assert (hit["title"], hit["text"], hit["event_time"]) == (
        'Broken "quoted" title', "Rotate the TLS certificates every ninety days.",
        "2024-05-01T00:00:00+00:00")


def test_a_block_without_keys_that_is_not_yaml_stays_text(project: Path) -> None:
    note = project / "rule.md"  # two thematic breaks around a line YAML cannot read
    note.write_text("---\n* deploys [freeze] on Fridays: {always\n---\nmore\n")
    octomem(project, "ingest", str(note))
    found = json.loads(octomem(project, "search", "when do deploys freeze?", "--json").out)
    assert found["hits"][0]["text"].startswith("---\n* deploys [freeze] on Fridays")


def test_vectors_a_full_disk_refused_fail_the_ingest(project: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """K3: the documents were stored, their vectors refused (SQLITE_FULL), and the ingest
    ended with status 0 as if it had all worked. The disk fills between the two, by
    ``PRAGMA max_page_count`` on the store's connection (SQLite answers as for a full
    disk), as ``tests/test_disk_full.py`` does."""
    octomem(project, "add", "The ferret rotation is weekly.")
    notes = project / "notes"
    notes.mkdir()
    for i in range(300):
        (notes / f"n{i}.md").write_text(f"Note {i}: the pager rota for team {i} changes "
                                        "on Mondays.\n" * 3)
    embed = Pipeline.embed_pending

    def full_then_embed(self: Pipeline, *args: object, **kwargs: object) -> int:
        conn = self.arms.storage.connection()  # type: ignore[attr-defined]
        conn.execute(f"PRAGMA max_page_count={conn.execute('PRAGMA page_count').fetchone()[0]}")
        return embed(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Pipeline, "embed_pending", full_then_embed)
    ran = octomem(project, "ingest", "notes", ok=False)
    store = project / ".octomem" / "octomem.sqlite3"
    assert ran.code == 1 and "Traceback" not in ran.err
    summary = re.search(r"^added 300, replaced 0, unchanged 0 documents; 300 chunks "
                        r"indexed, ([0-9]+) embedded$", ran.out, re.M)
    assert summary, ran.out
    embedded = int(summary.group(1))  # the batches committed before the disk was full
    assert embedded < 300
    assert ran.err.strip().splitlines()[-1] == (
        f"error: vectors not written: {store}: the disk is full (database or disk is full): "
        f"nothing was written; free some space on the disk that holds {store.parent} and run "
        "the command again (the documents were stored and are found by their words; the "
        "next ingest embeds them)")
    monkeypatch.undo()  # room again: the next ingest embeds what was left
    again = octomem(project, "ingest", "notes")
    left = 300 - embedded
    assert f"unchanged 300 documents; 0 chunks indexed, {left} embedded ({left} left without " \
        "a vector by an earlier ingest)" in again.out, again.out


def _hit(i: int, turn: bool = False) -> ScopedHit:
    meta = {"conversation": "c", "position": i} if turn else {}
    return ScopedHit("global", Chunk("d", 0, f"text {i}", id=i, metadata=meta), 1.0, i, 1.0)


def test_a_tie_across_the_judged_cut_is_judged_whole() -> None:
    """K8: 53 notes tied with the semantic run's best at the keyword run's best score; the
    cut to the first 10 came before the ties were ordered by relevance, so whether the
    answer abstained depended on ``top_k``. The cut now runs to the end of the tie."""
    hits = [_hit(i) for i in range(60)]
    tied = [1.0] * 54 + [0.5] * 6  # 54 tie (within TIE: a recency bonus of 1e-9 is no step)
    tied[30] += 1e-9
    assert tie_end(hits, 10, tied) == 54
    assert tie_end(hits, 10, [1.0] * 10 + [0.9] * 50) == 10  # the 10th and 11th differ
    assert tie_end(hits, 10, []) == 10  # no values: the cut as asked
    assert tie_end(hits[:7], 10, tied) == 7
    turns = [*hits[:12], _hit(12, turn=True), *hits[13:]]
    assert tie_end(turns, 10, tied) == 12  # a turn ends a tie (turns keep their order)
    assert tie_end([*hits[:9], _hit(9, turn=True), *hits[10:]], 10, tied) == 10


def test_the_sole_keyword_match_of_the_whole_query_is_judged_at_least_as_a_turn() -> None:
    """K7: a marker token one note of 20,000 holds, asked alone: the note was the keyword
    run's one entry (``kw_z`` 9.95) but its cosine 0.15, 0.33 under the semantic run's mean,
    gave 0.044-0.056 under the document floor: "nothing stored answers this"."""
    model = shipped_model()
    text = "Note 1234 about billing. Marker token zq01234x."
    cosines = [0.48 - i / 1000 for i in range(100)]  # a background: the run holds its 100
    def judged(entries: list[float], query: str = "zq01234x") -> float:
        stats = run_stats(cosines, entries, 100)
        return relevance_of(query, text, 0.15, 0.07, embedder=model.embedder, stats=stats,
                            keyword_score=entries[0]).probability
    sole = judged([9.9])
    assert sole == pytest.approx(model.probability(0.15, 1.0)) and sole >= 0.2
    assert judged([9.9, 2.0]) < sole  # another chunk holds a query word: the document weights
    assert judged([9.9], "zq01234x invoices") < sole  # the sole match holds half the query
