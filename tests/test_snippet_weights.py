"""The hit list starts a hit's text at the sentence that answers, weighing rarer query
words more and a heading as a part of its own that yields to a sentence holding the same
words (trial 17 G2: a runbook's hits began at the section's heading and its first filler
sentence, or at a SQL line repeating "refunds" and "failed")."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_run import octomem

from octomem.engine.cli.snippets import best_part

FILLER = ("Secrets are stored in Vault and rotated by a cron job. Feature flags live in "
          "LaunchDarkly. The service is written in Go and deployed on Kubernetes. Logs are "
          "shipped to Loki with a seven day retention. ")
RUNBOOK = f"""# Payments runbook

## Restarting the ledger worker
{FILLER}To restart the ledger worker run `kubectl rollout restart deploy/ledger-worker`; \
wait until the lag drops under 5 before closing the incident.

## Refund failures
{FILLER}Refunds fail with code RF-22 when the card network times out; retry them from the \
admin console after 15 minutes.

```sql
SELECT id, status FROM refunds WHERE status = 'failed';
```

## Escalation
{FILLER}Escalate to Mireille Duval (payments lead) if more than 50 refunds fail in an hour.
"""
ANSWERS = {
    "what does refund error RF-22 mean?": "Refunds fail with code RF-22",
    "who do I escalate failed refunds to?": "Escalate to Mireille Duval",
    "how do I restart the ledger worker?": "To restart the ledger worker run",
}


@pytest.mark.parametrize("query", list(ANSWERS))
def test_the_part_shown_is_the_answering_sentence(query: str) -> None:
    assert best_part(RUNBOOK, query).startswith("… " + ANSWERS[query])


def test_a_heading_glued_to_a_code_fence_is_a_part_of_its_own() -> None:
    # the chunker packs paragraphs with a space: "``` ## Escalation" on one line
    packed = "SELECT id FROM refunds;\n``` ## Escalation\nStaging mirrors production."
    assert best_part(packed, "escalation") == "… ## Escalation\nStaging mirrors production."


def test_ties_and_no_match_keep_the_text_whole() -> None:
    assert best_part("Certbot renews TLS.\nTLS again.", "tls") == "Certbot renews TLS.\nTLS again."
    assert best_part("Deploys run Fridays. Certbot renews TLS.", "kafka") == (
        "Deploys run Fridays. Certbot renews TLS.")
    # a filler word ("tell") says nothing about where the text answers
    assert best_part("Tell the team. Certbot renews TLS.", "tell me") == (
        "Tell the team. Certbot renews TLS.")


def test_the_cli_shows_the_rf22_sentence(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "runbook-payments.md").write_text(RUNBOOK)
    octomem(tmp_path, "ingest", "docs")
    ran = octomem(tmp_path, "search", "what does refund error RF-22 mean?", "-k", "1",
                  COLUMNS="200")
    first = ran.out.splitlines()[1]
    assert "Payments runbook — … Refunds fail with code RF-22 when the card network" in first, (
        ran.out)
