#!/bin/sh
# alternate.sh ROUNDS OUT: conversation_latency of main at start (h19base) and h19fast, alternated
rounds=$1; out=$2
for r in $(seq 1 $rounds); do
  for v in before after; do
    if [ $v = before ]; then dir=${BEFORE:-../before}; else dir=${AFTER:-.}; fi
    line=$(cd $dir && .venv/bin/python -m octomem.benchmarks.conversation_latency ${DATA:-../shared/data}/locomo conv-26 2>/dev/null | tail -1)
    echo "{\"variant\": \"$v\", \"round\": $r, \"commit\": \"$(git -C $dir rev-parse --short HEAD)\", \"utc\": \"$(date -u +%H:%M:%S)\", \"result\": $line}" >> $out
  done
done
