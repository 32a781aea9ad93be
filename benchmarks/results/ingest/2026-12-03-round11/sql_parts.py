"""Round 11: round 9's ``sql_parts.py`` (imported from ``../2026-12-03-round9``: its parts,
rounds and medians) with three more variants: ``prefix8`` / ``prefix16`` (the content-hash
index on the hash's first 8 / 16 hex digits instead of all 64), ``trigger1`` (the
change-log insert trigger without its per-row prune), ``explicitlog`` (no insert trigger:
the batch's ``chunks`` rows logged by one ``changelog.record`` after the insert, timed with
it), and ``pagesK``: thousands of pages SQLite wrote from its cache
(``SQLITE_DBSTATUS_CACHE_WRITE``) over the 10 transactions. Round 9's variants run as
there.

Run: ``PEERS_OUT=DIR python sql_parts.py R base prefix8 ...``
"""
# ruff: noqa
import importlib.util, sys
from pathlib import Path
_spec = importlib.util.spec_from_file_location(
    "round9_sql_parts", Path(__file__).resolve().parents[1] / "2026-12-03-round9" / "sql_parts.py")
R9 = importlib.util.module_from_spec(_spec); _spec.loader.exec_module(R9)


def setup(conn, variant):
    """Round 9's variants, and this round's."""
    if variant == "explicitlog":
        conn.execute("DROP TRIGGER chunks_log_insert")
    elif variant.startswith("prefix"):
        conn.execute(f"DROP INDEX documents_content_hash; CREATE INDEX documents_content_prefix ON documents(substr(content_hash, 1, {int(variant[6:])}))")
    elif variant == "trigger1":  # the insert trigger without its prune: pruned once per batch (in the log part)
        conn.execute(R9.NOPRUNE)
    else:
        R9.setup(conn, variant)


def after_chunks(conn, variant, first, rows):
    """``explicitlog``: the batch's ``chunks`` rows logged by one statement."""
    if variant == "explicitlog":
        from octomem.plugins.sqlite import changelog
        changelog.record(conn, "chunks", list(range(first, first + len(rows))))


if __name__ == "__main__":
    R9.main(sys.argv, lambda v: R9.one(v, setup, after_chunks, pages=True))
