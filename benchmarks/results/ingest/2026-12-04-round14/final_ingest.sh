#!/bin/bash
# final quiet ingest measurement: WT=worktree with final main installed editable
WT=$1; OUT=$2; mkdir -p $OUT /dev/shm/lead19f /tmp/lead19f
cd $WT && source .venv/bin/activate
export RUST_LOG=error LANCE_LOG=error
python -m compileall -q engine plugins mcp_server benchmarks/results/peers ${MAIN:-MAIN} >/dev/null
for run in 1 2; do
  for where in /dev/shm/lead19f /tmp/lead19f; do
    tag=$( [ $where = /dev/shm/lead19f ] && echo tmpfs || echo disk )
    echo "$(date -u +%H:%M:%S) $(uptime)" > $OUT/quiet-end-$tag-$run.txt
    PEERS_OUT=$where chrt -f 10 python benchmarks/results/peers/harness.py ingest-rounds 10000 9 >> $OUT/quiet-end-$tag-$run.txt 2>&1
    tail -1 $OUT/quiet-end-$tag-$run.txt
  done
done
for where in /dev/shm/lead19f /tmp/lead19f; do
  tag=$( [ $where = /dev/shm/lead19f ] && echo tmpfs || echo disk )
  echo "$(date -u +%H:%M:%S) $(uptime)" > $OUT/ab-end-$tag.txt
  PEERS_OUT=$where chrt -f 10 python benchmarks/results/ingest/2026-12-03-round9/ab.py 9 10000 main=octomem:${MAIN:-MAIN} after=octomem lance=lance >> $OUT/ab-end-$tag.txt 2>&1
  tail -4 $OUT/ab-end-$tag.txt
done
