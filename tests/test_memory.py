"""The memory facade over both scopes, with the deterministic hashing embedder."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from octomem.engine.errors import InvalidQueryError, NotFoundError
from octomem.engine.memory.facade import Memory, open_memory

#: The hashing embedder, and every hit kept (no cut of far weaker hits): these tests compare
#: scores and orders of whole answers.
HASHING = {"pipeline": {"embedder": "hashing"}, "retrieval": {"relative_floor": 0}}


@pytest.fixture
def open_project(tmp_path: Path) -> Iterator[Callable[[str], Memory]]:
    """``open_project(name)``: the memory of project ``name``; every project shares one
    global root. Closed after the test."""
    opened: list[Memory] = []

    def open_(name: str = "project", **overrides: object) -> Memory:
        root = tmp_path / name
        root.mkdir(exist_ok=True)
        memory = open_memory(overrides={**HASHING, **overrides}, project_root=root,
                             global_root=tmp_path / "global")
        opened.append(memory)
        return memory

    yield open_
    for memory in opened:
        memory.close()


@pytest.fixture
def memory(open_project: Callable[[str], Memory]) -> Memory:
    return open_project("project")


def ids(answer: object) -> list[str]:
    return [h.chunk.document_id for h in answer.hits]  # type: ignore[attr-defined]


# ---- scopes -------------------------------------------------------------------------


def test_reads_never_create_the_local_scope(memory: Memory) -> None:
    local = memory.roots.local
    assert memory.recall("anything").hits == [] and not local.exists()
    assert memory.status()["scopes"]["local"]["exists"] is False
    assert memory.statements("local") == []
    memory.remember("Build with make all")
    assert local.is_dir() and memory.status()["scopes"]["local"]["documents"] == 1


def test_global_is_shared_and_local_is_per_project(open_project: Callable[[str], Memory]) -> None:
    alpha, beta = open_project("alpha"), open_project("beta")
    pref = alpha.remember("The user prefers short commit messages", scope="global")
    a = alpha.remember("Alpha builds with make all", kind="FACT")
    b = beta.remember("Beta builds with cargo build", kind="FACT")
    assert (pref.scope, a.scope, b.scope) == ("global", "local", "local")
    for project, own, other in ((alpha, a, b), (beta, b, a)):
        answer = project.recall("how does it build")
        assert own.document.id in ids(answer) and other.document.id not in ids(answer)
        commits = project.recall("commit messages")
        assert commits.hits[0].scope == "global" and ids(commits)[0] == pref.document.id
    only_local = alpha.recall("commit messages", scope="local")
    assert pref.document.id not in ids(only_local) and only_local.scopes == ["local"]


def test_one_score_scale_across_scopes(memory: Memory) -> None:
    """A strong match in one scope outranks weak matches in the other (no interleaving)."""
    for i in range(5):
        memory.remember(f"Note {i}: the staging server restarts nightly at {i} am")
    exact = memory.remember("The user's favourite editor is Helix", scope="global")
    answer = memory.recall("favourite editor Helix")
    assert answer.hits[0].chunk.document_id == exact.document.id
    assert answer.hits[0].score > 1.2 * answer.hits[1].score
    assert answer.hits[0].contributions["fts5"].rank == 1


def test_scope_arguments_are_checked(memory: Memory) -> None:
    for call in (lambda: memory.recall("x", scope="team"), lambda: memory.remember("x", "both"),
                 lambda: memory.forget("x", scope="all")):
        with pytest.raises(InvalidQueryError, match="scope"):
            call()


# ---- remember --------------------------------------------------------------------------


def test_near_duplicates_are_reported_never_refused(memory: Memory) -> None:
    first = memory.remember("The staging database is db-stage-2", kind="FACT")
    assert first.near_duplicates == [] and first.embedded
    again = memory.remember("The staging database is db-stage-2", scope="global")
    close = memory.remember("The staging database is db-stage-2.", kind="FACT")
    assert [(n.scope, n.document.id) for n in again.near_duplicates] == [
        ("local", first.document.id)]
    assert again.near_duplicates[0].similarity == pytest.approx(1.0)
    assert {n.document.id for n in close.near_duplicates} == {
        first.document.id, again.document.id}
    assert all(n.similarity >= 0.85 for n in close.near_duplicates)
    unrelated = memory.remember("Lunch is at noon on Fridays")
    assert unrelated.near_duplicates == []
    assert memory.status()["scopes"]["local"]["documents"] == 3


def test_at_most_three_near_duplicates(memory: Memory) -> None:
    for end in (".", "!", " .", "!!", "..."):  # nearly the same text, 5 statements
        memory.remember(f"Deploys happen on Tuesdays{end}", kind="FACT")
    assert len(memory.remember("Deploys happen on Tuesdays",
                               kind="PREFERENCE").near_duplicates) == 3


def test_handoff_replaces_the_previous_one_per_scope(memory: Memory) -> None:
    first = memory.remember("Handoff: parser half done", kind="HANDOFF")
    glob = memory.remember("Handoff: global notes", kind="HANDOFF", scope="global")
    second = memory.remember("Handoff: parser done, tests next", kind="HANDOFF")
    assert [d.id for d in second.replaced] == [first.document.id] and glob.replaced == []
    assert second.near_duplicates == []
    answer = memory.recall("handoff parser", kinds=["HANDOFF"])
    assert set(ids(answer)) == {second.document.id, glob.document.id}
    old = memory.find(first.document.id)[0][1]
    assert old.superseded_by == second.document.id and not old.is_current


def test_supersede_links_both_ways_and_follows_the_old_scope(memory: Memory) -> None:
    old = memory.remember("The user writes Python 3.11", scope="global", event_time="2024-01-01")
    new = memory.remember("The user writes Python 3.12", supersedes=old.document.id,
                          event_time="2025-01-01")
    assert new.scope == "global" and new.superseded is not None
    assert new.near_duplicates == []  # the statement it supersedes is not news
    assert new.superseded.superseded_by == new.document.id
    assert new.document.supersedes == old.document.id
    with pytest.raises(InvalidQueryError, match="already superseded"):
        memory.remember("The user writes Python 3.13", supersedes=old.document.id)
    with pytest.raises(InvalidQueryError, match="global scope"):
        memory.remember("x", scope="local", supersedes=new.document.id)
    with pytest.raises(InvalidQueryError, match="supersedes"):
        memory.remember("x", supersedes="no-such-id")


def test_bad_remember_arguments_are_named(memory: Memory) -> None:
    for call, named in ((lambda: memory.remember("  "), "text"),
                        (lambda: memory.remember("x", kind="a fact"), "kind"),
                        (lambda: memory.remember("x", event_time="tomorrow"), "event_time")):
        with pytest.raises(InvalidQueryError, match=named):
            call()


# ---- time ------------------------------------------------------------------------------


def test_as_of_answers_with_what_was_current_then(memory: Memory) -> None:
    old = memory.remember("The CI runs on Jenkins", kind="FACT", event_time="2023-05-01")
    new = memory.remember("The CI runs on GitHub Actions", kind="FACT", event_time="2024-09-15",
                          supersedes=old.document.id)
    assert ids(memory.recall("where does the CI run")) == [new.document.id]
    assert ids(memory.recall("where does the CI run", as_of="2023-01-01")) == []
    then = memory.recall("where does the CI run", as_of="2024-09-14")
    assert ids(then) == [old.document.id] and then.hits[0].chunk.valid_to is not None
    assert ids(memory.recall("where does the CI run", as_of="2024-09-15")) == [new.document.id]
    both = memory.recall("where does the CI run", include_superseded=True)
    assert set(ids(both)) == {old.document.id, new.document.id}


def test_since_and_until_use_the_event_time(memory: Memory) -> None:
    early = memory.remember("Release 1.0 shipped", event_time="2024-03-01")
    late = memory.remember("Release 2.0 shipped", event_time="2025-03-01")
    assert ids(memory.recall("release shipped", since="2025-01-01")) == [late.document.id]
    assert ids(memory.recall("release shipped", until="2024-03-01")) == [early.document.id]
    with pytest.raises(InvalidQueryError, match="until"):
        memory.recall("release", until="March")


def test_forgotten_never_comes_back(memory: Memory) -> None:
    old = memory.remember("The vault token is abc123", event_time="2024-01-01")
    new = memory.remember("The vault token rotates monthly", supersedes=old.document.id)
    memory.forget(old.document.id, reason="a secret")
    for kwargs in ({}, {"as_of": "2024-06-01"}, {"include_superseded": True}):
        assert old.document.id not in ids(memory.recall("vault token", **kwargs))
    assert memory.find(new.document.id)[0][1].supersedes == old.document.id
    with pytest.raises(NotFoundError, match="already forgotten .* a secret"):
        memory.forget(old.document.id)


# ---- forget ----------------------------------------------------------------------------


def test_forget_ambiguous_text_lists_and_removes_none(memory: Memory) -> None:
    text = "Always run the linter"
    a = memory.remember(text)
    b = memory.remember(text, scope="global")
    listed = memory.forget(text)
    assert listed.forgotten is None
    assert {(s, d.id) for s, d in listed.matches} == {("local", a.document.id),
                                                      ("global", b.document.id)}
    assert len(memory.recall("linter", count=False).hits) + len(
        memory.recall("linter").collapsed) == 2
    gone = memory.forget(text, scope="global", reason="duplicate")
    assert gone.forgotten is not None and gone.forgotten[1].id == b.document.id
    assert gone.reason == "duplicate"
    with pytest.raises(NotFoundError, match="no existing|nothing"):
        memory.forget("never said")


# ---- recall details --------------------------------------------------------------------


def test_recall_counts_returned_statements_in_the_same_transaction(memory: Memory) -> None:
    hit = memory.remember("Invoices are archived after 90 days")
    miss = memory.remember("The office plant needs water")
    memory.recall("invoices archived", top_k=1)
    memory.recall("invoices archived", top_k=1)
    memory.recall("invoices archived", top_k=1, count=False)
    counted = memory.find(hit.document.id)[0][1]
    assert counted.recalls == 2 and counted.last_recalled_at is not None
    assert memory.find(miss.document.id)[0][1].recalls == 0


def test_identical_statements_in_both_scopes_collapse(memory: Memory) -> None:
    memory.remember("Use UTC in every log line", scope="global")
    memory.remember("Use UTC in every log line")
    answer = memory.recall("UTC log lines")
    assert len(answer.hits) == 1 and answer.hits[0].scope == "local"
    (collapsed,) = answer.collapsed
    assert (collapsed.scope, collapsed.kept_scope, collapsed.reason) == (
        "global", "local", "identical text")


def test_ties_go_to_the_newer_statement(memory: Memory) -> None:
    """The same words in another order score exactly alike in both arms: a tie."""
    older = memory.remember("meeting notes go in the wiki", event_time="2024-01-01")
    newer = memory.remember("the wiki: meeting notes go in", event_time="2025-06-01")
    answer = memory.recall("meeting notes wiki")
    assert ids(answer) == [newer.document.id]
    (collapsed,) = answer.collapsed
    assert collapsed.chunk.document_id == older.document.id
    assert collapsed.kept_chunk.document_id == newer.document.id
    tied = answer.hits[0].contributions
    assert tied["fts5"].rank == 1 and tied["sqlite-vec"].rank == 1


def test_recency_never_lifts_a_clearly_weaker_match(memory: Memory) -> None:
    strong = memory.remember("The payroll export runs on the last Friday of the month",
                             event_time="2023-01-01")
    weak = memory.remember("Friday is pizza day")  # recorded now: the full bonus
    answer = memory.recall("when does the payroll export run", top_k=2)
    assert ids(answer) == [strong.document.id, weak.document.id]
    assert answer.hits[1].recency == pytest.approx(0.01, abs=1e-4)
    assert answer.hits[0].recency < 1e-6


# ---- ingest ----------------------------------------------------------------------------


def test_ingest_text_is_idempotent_and_revisions_keep_history(memory: Memory) -> None:
    scope, report = memory.ingest("Release process: tag, build, upload.", title="Releasing",
                                  uri="wiki:releasing")
    assert scope == "local" and len(report.added) == 1
    _, again = memory.ingest("Release process: tag, build, upload.", title="Releasing",
                             uri="wiki:releasing")
    assert again.unchanged == report.added and again.chunks == 0
    _, changed = memory.ingest("Release process: tag, build, sign, upload.", title="Releasing",
                               uri="wiki:releasing")
    assert changed.replaced == report.added
    now = memory.recall("release process sign")
    assert now.hits[0].chunk.text.endswith("sign, upload.")
    history = memory.recall("release process", include_superseded=True)
    assert {h.chunk.revision for h in history.hits} == {1, 2}
    item = memory.find(report.added[0])[0][1]
    assert item.revision == 2 and item.kind == "DOC" and item.title == "Releasing"


def test_ingest_paths_relative_to_the_project_and_per_document(memory: Memory) -> None:
    docs = memory.roots.project / "docs"
    docs.mkdir()
    long = "\n\n".join(f"Paragraph {i} about caching layers and invalidation. " * 12
                       for i in range(6))
    (docs / "cache.md").write_text(f"# Caching\n\n{long}\n")
    (docs / "other.txt").write_text("Unrelated text about gardening.\n")
    _, report = memory.ingest("docs", tags=("handbook",))
    assert len(report.added) == 2 and report.chunks > 2
    per_chunk = memory.recall("caching invalidation", top_k=5)
    per_doc = memory.recall("caching invalidation", top_k=5, per="document")
    assert len({h.chunk.document_id for h in per_chunk.hits}) < len(per_chunk.hits)
    assert len({h.chunk.document_id for h in per_doc.hits}) == len(per_doc.hits)
    assert per_doc.hits[0].chunk.document_id == per_chunk.hits[0].chunk.document_id
    assert all("handbook" in h.chunk.tags for h in per_doc.hits)
    with pytest.raises(InvalidQueryError, match="per"):
        memory.recall("x", per="page")  # type: ignore[arg-type]


def test_a_paragraph_long_heading_does_not_multiply_the_chunks(memory: Memory) -> None:
    """A ``# `` heading becomes the title, repeated in every chunk: it is cut to 200
    characters, and a long title never leaves the text less than half of the budget."""
    path = memory.roots.project / "h.md"
    path.write_text("# " + "glorp " * 2000 + "\n\nA short body about glorp.\n")
    _, report = memory.ingest("h.md")
    item = memory.find(report.added[0])[0][1]
    assert len(item.title) <= 201 and item.title.endswith("…")  # was 12 KB, in 401 chunks
    assert report.chunks <= 100  # ~12 KB of text at >= half a 254-token budget
    _, long_title = memory.ingest("Short text about glorp.", title="glorp " * 2000)
    assert long_title.chunks == 1  # the text, not the title, is what gets chunked


# ---- settings ----------------------------------------------------------------------------


def test_global_root_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OCTOMEM_GLOBAL_ROOT", str(tmp_path / "from-env"))
    memory = open_memory(overrides=HASHING, project_root=tmp_path / "p")
    try:
        assert memory.roots.global_ == (tmp_path / "from-env").resolve()
        assert memory.remember("x", scope="global").scope == "global"
        assert (tmp_path / "from-env").is_dir()
    finally:
        memory.close()


def test_memory_settings_are_read(open_project: Callable[..., Memory]) -> None:
    memory = open_project("tuned", retrieval={"recency_weight": 0.0, "duplicate_threshold": 1.0})
    assert (memory.knobs.recency_weight, memory.knobs.duplicate_threshold) == (0.0, 1.0)
    memory.remember("The build cache lives in /var/cache/build")
    near = memory.remember("The build cache lives in /var/cache/build today").near_duplicates
    assert near == []  # cosine < 1.0 is not a duplicate at threshold 1.0
    assert memory.recall("build cache").hits[0].recency == 0.0
