#!/bin/bash
# Issue 15's Done-when lines, quiet, in one window: peers 10k/100k (filtered and not),
# the curve's unfiltered hybrid 10k/100k end to end, ingest vs LanceDB (tmpfs, disk).
# Usage: quiet_all.sh WT OUT [parts]   parts: any of peers,curve,ingest (default all)
WT=$1; OUT=$2; PARTS=${3:-peers,curve,ingest}
mkdir -p $OUT /dev/shm/lead20q /tmp/lead20q
cd $WT && source .venv/bin/activate
export RUST_LOG=error LANCE_LOG=error
python -m compileall -q engine plugins mcp_server benchmarks >/dev/null
stamp() { echo "$(date -u +%H:%M:%S) $(uptime)"; }
if [[ $PARTS == *peers* ]]; then
  for n in 10000 100000; do PEERS_OUT=/dev/shm/lead20q python benchmarks/results/peers/harness.py build $n > $OUT/build-$n.txt 2>&1; done
  { stamp; PEERS_OUT=/dev/shm/lead20q python benchmarks/results/peers/rounds.py 10000 5; stamp; } > $OUT/rounds-10k.txt 2>&1
  tail -12 $OUT/rounds-10k.txt
  { stamp; PEERS_OUT=/dev/shm/lead20q python benchmarks/results/peers/rounds.py 100000 3; stamp; } > $OUT/rounds-100k.txt 2>&1
  tail -12 $OUT/rounds-100k.txt
fi
if [[ $PARTS == *curve* ]]; then
  { stamp; XDG_CACHE_HOME=/work/scratch/lead20/cache python benchmarks/results/synthetic/2026-12-02/run_rows.py 10k,100k $OUT/curve \
    "hybrid,hybrid-serial=fts5+sqlite-vec+rrf+cosine+retrieval.parallel_arms=false,hybrid-again=fts5+sqlite-vec+rrf+cosine" /work/shared/data; stamp; } > $OUT/curve.txt 2>&1
  tail -5 $OUT/curve.txt
fi
if [[ $PARTS == *ingest* ]]; then
  for where in /dev/shm/lead20q /tmp/lead20q; do
    tag=$( [ $where = /dev/shm/lead20q ] && echo tmpfs || echo disk )
    { stamp; PEERS_OUT=$where chrt -f 10 python benchmarks/results/peers/harness.py ingest-rounds 10000 9; stamp; } > $OUT/ingest-$tag.txt 2>&1
    tail -3 $OUT/ingest-$tag.txt
  done
fi
if [[ $PARTS == *ab* ]]; then
  for where in /dev/shm/lead20q /tmp/lead20q; do
    tag=$( [ $where = /dev/shm/lead20q ] && echo tmpfs || echo disk )
    python -m compileall -q /work/scratch/h25ingest/MAIN >/dev/null
    { stamp; PEERS_OUT=$where chrt -f 10 python benchmarks/results/ingest/2026-12-03-round9/ab.py 9 10000 main=octomem:/work/scratch/h25ingest/MAIN after=octomem lance=lance; stamp; } > $OUT/ab-$tag.txt 2>&1
    tail -4 $OUT/ab-$tag.txt
  done
fi
