"""Stored tags brought to the form filters ask in, once per file (trial 20 L12).

``recall``'s tags filter makes its tags NFC and refuses a comma
(:mod:`octomem.engine.labels`), and compares them exactly with the stored ones. An older
octomem stored tags as given: ``cafe`` + U+0301 (decomposed, as macOS file names and some
agents send it) or ``billing,api`` (meant as two tags), which then no filter could match,
and "no stored document has tag café (stored tags: café; …)" read as a contradiction.
:func:`relabel_stored_tags` rewrites such tags as :func:`~octomem.engine.labels.relabelled`
makes them (NFC, stripped, split at commas), in ``documents`` and ``chunks``, inside the
opening write transaction, and marks the file (``meta`` key :data:`LABELLED_KEY`) so that
later opens cost one ``meta`` read. The ``chunks`` update triggers log each changed row,
so in-RAM filter indexes and snapshots follow, in this process and in others.

Only tags holding a non-ASCII character, a comma or surrounding whitespace can change;
the scan finds those rows through ``json_each`` (20k documents: see the test's timing).
"""

from __future__ import annotations

import json
from collections.abc import Callable

import apsw

from octomem.engine.labels import relabelled
from octomem.engine.sql.rows import dumps

#: The ``meta`` key saying every stored tag is a label (set once, by
#: :func:`relabel_stored_tags`; every writer since stores labels only).
LABELLED_KEY = "tags_labelled"

#: Rows of ``{table}`` with a tag that :func:`relabelled` may change.
_CANDIDATES = (
    "SELECT DISTINCT r.id, r.tags FROM {table} AS r, json_each(r.tags) AS t "
    "WHERE r.tags != '[]' AND t.type = 'text' AND (t.value GLOB '*[^ -~]*' "
    "OR instr(t.value, ',') > 0 OR t.value != trim(t.value))")


def relabel_stored_tags(tx: apsw.Connection,
                        set_meta: Callable[[str, str], None]) -> dict[str, int]:
    """Rewrite the stored tags that are not labels as labels, once per file.

    Called when the file opens, after the schema migration, in a write transaction of its
    own that a read-only file skips (:meth:`~.storage.SqliteStorage._migrate`), so that a
    failure leaves the file as it was. Nothing is read but the
    ``meta`` row once :data:`LABELLED_KEY` is set.

    :param set_meta: writes one ``meta`` key inside the same transaction.
    :returns: rows changed per table (``{"documents": n, "chunks": m}``; empty when the
        file was marked already).
    """
    row = tx.execute("SELECT value FROM meta WHERE key = ?", (LABELLED_KEY,)).fetchone()
    if row is not None:
        return {}
    changed = {table: _relabel(tx, table) for table in ("documents", "chunks")}
    set_meta(LABELLED_KEY, "1")
    return changed


def _relabel(tx: apsw.Connection, table: str) -> int:
    """Rewrite the tags of the rows of ``table`` whose tags :func:`relabelled` changes.

    :returns: how many rows were rewritten.
    """
    updates = []
    for row_id, tags_json in tx.execute(_CANDIDATES.format(table=table)).fetchall():
        tags = json.loads(tags_json)
        if not all(isinstance(t, str) for t in tags):
            continue  # not written by octomem; left as it is
        labels, _ = relabelled(tags)
        if list(labels) != tags:
            updates.append((dumps(list(labels), "tags") if labels else "[]", row_id))
    tx.executemany(f"UPDATE {table} SET tags = ? WHERE id = ?", updates)
    return len(updates)
