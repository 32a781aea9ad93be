"""The hit list shows a hit's text from the part that best matches the question, and a
line break ends a part (trial 10, finding 5): a Markdown list without full stops, a
heading, or a paragraph without one no longer hides the answering sentence after it."""

from __future__ import annotations

from pathlib import Path

from cli_run import octomem

from octomem.engine.cli.snippets import best_part

OPS = """# Operations notes

## Services
- api gateway on port 8080
- worker pool of 8 processes
- log shipper to loki

## Certificates
The TLS certificates are renewed by certbot on the first day of every month.
"""


def test_a_line_break_ends_a_part() -> None:
    text = OPS.split("\n", 2)[2]
    assert best_part(text, "when are the TLS certificates renewed?") == (
        "… The TLS certificates are renewed by certbot on the first day of every month.\n")
    assert best_part(text, "which port does the api gateway use?").startswith(
        "… - api gateway on port 8080\n")
    # sentences on one line still split at their full stops; the first part wins ties
    assert best_part("Deploys run Fridays. Certbot renews TLS.", "tls") == "… Certbot renews TLS."
    assert best_part("Certbot renews TLS.\nTLS again.", "tls") == "Certbot renews TLS.\nTLS again."


def test_the_hit_list_shows_the_answering_sentence_of_a_markdown_file(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "ops.md").write_text(OPS)
    octomem(tmp_path, "ingest", "notes")
    ran = octomem(tmp_path, "search", "when are the TLS certificates renewed?",
                  COLUMNS="200")
    first = ran.out.splitlines()[1]
    assert first.endswith("Operations notes — … The TLS certificates are renewed by certbot "
                          "on the first day of every month."), ran.out


FILLER = ("The build cache and the deploy worker queue share one retry budget per "
          "shard replica, and the cluster region backup schedule alerts the node owner. ")


def test_explain_shows_the_same_answering_sentence(tmp_path: Path) -> None:
    """trial 16 F18: with ``--explain`` the hit began at the chunk's first words, so the
    answer was not on screen in the mode meant for understanding a hit."""
    (tmp_path / "log.md").write_text(
        "# Ops log\n\n" + FILLER * 3 + "\n\n" + FILLER * 2 + "The secret rotation for the "
        "vault-sidecar happens every 45 days, owned by Ingrid.\n\n" + FILLER * 3 + "\n")
    octomem(tmp_path, "ingest", "log.md")
    question = "who owns the vault-sidecar secret rotation?"
    answer = "Ops log — … The secret rotation for the vault-sidecar happens every 45 days, " \
        "owned by Ingrid."
    plain = octomem(tmp_path, "search", question, COLUMNS="400").out.splitlines()[1]
    explained = octomem(tmp_path, "search", question, "--explain", COLUMNS="400")
    row = explained.out.splitlines()[3]  # the query, the header, the rule, then the hit
    assert row.startswith("1 ") and "fts5" in explained.out, explained.out
    assert answer in plain and answer in row, explained.out


def test_a_title_is_dropped_from_the_text_only_as_a_whole_word() -> None:
    from types import SimpleNamespace

    from octomem.engine.cli.hits import hit_text

    def shown(title: str, text: str, query: str = "") -> str:
        return hit_text(SimpleNamespace(title=title, text=text, kind="doc"), query)

    assert shown("Kestrel", "# Kestrel\nA photo backup app.") == "Kestrel — A photo backup app."
    assert shown("Kestrel", "Kestrel: a photo backup app.") == "Kestrel — a photo backup app."
    # "Kestrels" does not repeat the title "Kestrel": its "s" stays
    assert shown("Kestrel", "Kestrels nest on cliffs.") == "Kestrel — Kestrels nest on cliffs."
    assert shown("Kestrel", "Kestrels nest on cliffs.", "where do they nest?") == (
        "Kestrel — Kestrels nest on cliffs."
    )
