"""Write trial 15 F18's chat: 31 turns of a user and an assistant planning a trip, turn 9
a pasted server log of ~1.1 MB (seeded: the same file every time).

usage: python make_chat.py OUT.jsonl
"""

from __future__ import annotations

import json
import random
import sys

BEFORE = [
    ("user", "Hi! I'm planning a weekend trip to Porto with my sister next Friday."),
    ("assistant", "That sounds lovely. Porto is great in spring. Are you going by train or "
                  "by car?"),
    ("user", "By train. We booked the Alfa Pendular from Lisbon Santa Apolónia; it leaves at "
             "7:39 and gets to Porto Campanhã at 10:28."),
    ("assistant", "Good choice, the Alfa Pendular is the fastest option. Arrive at the "
                  "station 15 minutes early so you can find your carriage."),
    ("user", "Which neighbourhood should we stay in?"),
    ("assistant", "Ribeira is charming and close to the river, but it is noisy at night. "
                  "Cedofeita is quieter and full of cafés."),
    ("user", "We'll take Cedofeita then. My sister is vegetarian, by the way."),
    ("assistant", "Noted. Porto has plenty of vegetarian places; try the vegetarian "
                  "francesinha at a few cafés near Rua de Cedofeita."),
    ("user", "Unrelated: our staging server keeps crashing at night. I'll paste the log."),
]
AFTER = [
    ("assistant", "Thanks. The log shows the worker pool running out of database connections "
                  "around 02:00 before the OOM killer stops the process. Raise the pool "
                  "limit or fix the leak in the export job."),
    ("user", "Okay, I'll look at the export job on Monday. Back to the trip: what should we "
             "see on Saturday?"),
    ("assistant", "Start at the Livraria Lello early, then walk down to the Ribeira and cross "
                  "the Dom Luís I bridge to the port cellars in Vila Nova de Gaia."),
    ("user", "Do we need tickets for the bookshop?"),
    ("assistant", "Yes, buy them online; the ticket price is deducted if you buy a book."),
    ("user", "Great. And on Sunday we want a day at the beach."),
    ("assistant", "Matosinhos beach is a short metro ride away and has excellent grilled "
                  "fish restaurants."),
    ("user", "My sister doesn't eat fish though."),
    ("assistant", "Then Foz do Douro is nicer: a seaside promenade with cafés that have "
                  "vegetarian options."),
    ("user", "What's the weather usually like in April?"),
    ("assistant", "Mild, 14 to 19 degrees, with some rain. Pack a light rain jacket."),
    ("user", "Should we buy an Andante card for the metro?"),
    ("assistant", "Yes, a rechargeable Andante card works on the metro, buses and the "
                  "funicular."),
    ("user", "How do we get from Campanhã station to Cedofeita?"),
    ("assistant", "Take the metro from Campanhã to Trindade, then walk ten minutes, or a taxi "
                  "for about 8 euros."),
    ("user", "Our train back on Sunday is the 18:52 from Campanhã."),
    ("assistant", "Then leave Foz by 17:30 to be safe; the bus to the centre can be slow on "
                  "Sunday evenings."),
    ("user", "Any tips for port wine tasting?"),
    ("assistant", "Graham's and Taylor's have good tours; book a morning slot to avoid "
                  "crowds."),
    ("user", "Thanks, that's a great plan."),
    ("assistant", "Enjoy Porto! Tell me how the trip went."),
]
SERVICES = ["api-gateway", "export-worker", "auth-service", "billing", "scheduler", "db-pool",
            "nginx", "cache"]
LEVELS = ["INFO", "INFO", "INFO", "DEBUG", "WARN", "ERROR"]
EVENTS = [
    "request GET /v1/orders/{n} status=200 latency={ms}ms user={u}",
    "request POST /v1/exports status=202 latency={ms}ms job={n}",
    "connection pool size={p} active={a} idle={i} waiting={w}",
    "retrying query after timeout attempt={k} elapsed={ms}ms",
    "cache miss key=session:{n} ttl=3600 fetched in {ms}ms",
    "scheduled job nightly-export started run_id={n}",
    "token refreshed for client={u} expires_in=900",
    "slow query on table invoices took {ms}ms rows={n}",
    "upstream responded 502 Bad Gateway after {ms}ms, backing off",
    "memory usage rss={p}MB heap={a}MB gc_pause={k}ms",
    "worker {k} picked batch {n} of export queue",
    "could not obtain connection from pool within 30000ms",
    "health check ok uptime={n}s load={k}.{w}",
    "TLS handshake completed with peer 10.0.{k}.{w} cipher=TLS_AES_128_GCM_SHA256",
    "user {u} logged in from 192.168.{k}.{w}",
]
USERS = ["alice", "bob", "carol", "dave", "erin", "svc-export"]


def log_text(size: int) -> str:
    """Return at least ``size`` bytes of timestamped log lines (``random.seed(7)`` first)."""
    lines: list[str] = []
    total = h = m = s = 0
    while total < size:
        s += random.randint(0, 3)
        if s >= 60:
            s, m = s - 60, m + 1
        if m >= 60:
            m, h = m - 60, (h + 1) % 24
        event = random.choice(EVENTS).format(
            n=random.randint(1000, 99999), ms=random.randint(1, 30000),
            u=random.choice(USERS), p=random.randint(10, 900), a=random.randint(0, 200),
            i=random.randint(0, 50), w=random.randint(0, 99), k=random.randint(1, 9))
        line = (f"2026-11-28T{h:02d}:{m:02d}:{s:02d}.{random.randint(0, 999):03d}Z "
                f"{random.choice(LEVELS)} [{random.choice(SERVICES)}] {event}")
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)


def main(out: str) -> None:
    random.seed(7)
    log = "Here is last night's log from staging:\n" + log_text(1_100_000)
    turns = [*BEFORE, ("user", log), *AFTER]
    with open(out, "w", encoding="utf-8") as fh:
        for i, (role, text) in enumerate(turns):
            fh.write(json.dumps({"conversation": "porto", "session": "1", "role": role,
                                 "text": text, "time": f"2026-11-30T10:{i:02d}:00Z"}) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
