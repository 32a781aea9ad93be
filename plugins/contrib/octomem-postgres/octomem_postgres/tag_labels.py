"""Stored tags brought to the form filters ask in, once per schema (as the ``sqlite``
storage does for its files, :mod:`octomem.plugins.sqlite.tag_labels`).

``recall``'s tags filter makes its tags NFC and refuses a comma
(:mod:`octomem.engine.labels`), and compares them exactly with the stored ones. An older
octomem stored tags as given: ``cafe`` + U+0301 (decomposed) or ``billing,api`` (meant as
two tags), which then no filter could match. :func:`relabel_stored_tags` rewrites such tags
as :func:`~octomem.engine.labels.relabelled` makes them (NFC, stripped, split at commas), in
``documents`` and ``chunks``, inside the transaction that opens the schema, and marks the
schema (``meta`` key :data:`LABELLED_KEY`) so that later opens cost one ``meta`` read.
"""

from __future__ import annotations

from typing import Any

from octomem.engine.labels import relabelled

#: The ``meta`` key saying every stored tag is a label (set when the schema is made, or
#: once by :func:`relabel_stored_tags`; every writer since stores labels only).
LABELLED_KEY = "tags_labelled"

#: Rows of ``{table}`` with a tag that :func:`relabelled` may change: one holding a
#: character outside printable ASCII, a comma, or surrounding whitespace.
_CANDIDATES = (
    "SELECT r.id, r.tags FROM {table} AS r WHERE r.tags <> '[]'::jsonb AND EXISTS ("
    "SELECT 1 FROM jsonb_array_elements(r.tags) AS t(v) WHERE jsonb_typeof(t.v) = 'string' "
    "AND (t.v #>> '{{}}' ~ '[^ -~]' OR strpos(t.v #>> '{{}}', ',') > 0 "
    "OR t.v #>> '{{}}' <> btrim(t.v #>> '{{}}')))")


def relabel_stored_tags(tx: Any) -> dict[str, int]:
    """Rewrite the stored tags that are not labels as labels, once per schema.

    :param tx: a psycopg connection inside the transaction that opens the schema (under
        its migration lock), with the schema on its ``search_path``.
    :returns: rows changed per table (``{"documents": n, "chunks": m}``; empty when the
        schema was marked already).
    """
    if tx.execute("SELECT 1 FROM meta WHERE key = %s", (LABELLED_KEY,)).fetchone():
        return {}
    changed = {table: _relabel(tx, table) for table in ("documents", "chunks")}
    mark_labelled(tx)
    return changed


def mark_labelled(tx: Any) -> None:
    """Record that every tag stored in the schema is a label (a new schema's first row)."""
    tx.execute("INSERT INTO meta (key, value) VALUES (%s, '1') ON CONFLICT (key) DO NOTHING",
               (LABELLED_KEY,))


def _relabel(tx: Any, table: str) -> int:
    """Rewrite the tags of the rows of ``table`` whose tags :func:`relabelled` changes.

    :returns: how many rows were rewritten.
    """
    from psycopg.types.json import Jsonb

    updates = []
    for row_id, tags in tx.execute(_CANDIDATES.format(table=table)).fetchall():
        if not all(isinstance(t, str) for t in tags):
            continue  # not written by octomem; left as it is
        labels, _ = relabelled(tags)
        if list(labels) != tags:
            updates.append((Jsonb(list(labels)), row_id))
    if updates:
        with tx.cursor() as cursor:
            cursor.executemany(f"UPDATE {table} SET tags = %s WHERE id = %s", updates)
    return len(updates)
