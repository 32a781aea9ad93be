"""Round 9: why the worker thread of ``Pipeline.add`` overlapped nothing, in isolation.

One thread runs ``S`` short SQL statements (each ~1 ms of SQLite work without the GIL: a
recursive CTE counting to 400, apsw releases the GIL while it steps) and a little
Python between them, as the ingest's caller writes a batch; another thread runs pure
Python meanwhile (what the worker's counting and rows are), a fixed amount of work. With
CPython's default switch interval (5 ms) the SQL thread waits up to 5 ms for the GIL after
every statement; with 0.2 ms (``octomem.engine.switching``) it gets it back almost at once.
Prints, per interval and per round, the SQL thread's wall time, the Python thread's, both
together, and the process CPU time, alternated ``R`` rounds.

Run: ``python benchmarks/results/ingest/2026-12-03-round9/gil_handoff.py [R] [S]``.
"""
# ruff: noqa
import os, statistics, sys, threading, time
import apsw

R = int(sys.argv[1]) if len(sys.argv) > 1 else 5
S = int(sys.argv[2]) if len(sys.argv) > 2 else 200
SQL = "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 400) SELECT count(*) FROM c"
conn = apsw.Connection(":memory:")


def sql_thread(out):
    t = time.perf_counter()
    for _ in range(S):
        conn.execute(SQL).fetchall()
        sum(range(200))  # a little Python between statements
    out["sql"] = time.perf_counter() - t


def python_thread(out, n):
    t = time.perf_counter()
    x = 0
    for i in range(n):
        x += i * i % 7
    out["py"] = time.perf_counter() - t


def alone():
    out = {}
    sql_thread(out)
    return out["sql"]


n_py = 1_000_000
res = {}
for r in range(R):
    for interval in (0.005, 0.0002):
        sys.setswitchinterval(interval)
        out = {}
        t, c = time.perf_counter(), time.process_time()
        a = threading.Thread(target=sql_thread, args=(out,))
        b = threading.Thread(target=python_thread, args=(out, n_py))
        a.start(); b.start(); a.join(); b.join()
        both, cpu = time.perf_counter() - t, time.process_time() - c
        res.setdefault(interval, []).append((out["sql"], out["py"], both, cpu))
        print(f"round {r + 1} interval {interval * 1e3:.1f} ms: SQL thread {out['sql']:.3f} s, Python "
              f"thread {out['py']:.3f} s, both {both:.3f} s, cpu {cpu:.3f} s, load {os.getloadavg()[0]:.1f}",
              flush=True)
sys.setswitchinterval(0.005)
print(f"SQL alone: {alone():.3f} s ({S} statements)")
for interval, rows in res.items():
    med = [statistics.median(x[i] for x in rows) for i in range(4)]
    print(f"median, interval {interval * 1e3:.1f} ms: SQL thread {med[0]:.3f} s, Python thread {med[1]:.3f} s, "
          f"both {med[2]:.3f} s, cpu {med[3]:.3f} s")
