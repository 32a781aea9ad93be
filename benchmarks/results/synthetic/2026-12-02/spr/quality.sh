#!/bin/sh
# SciFact train + LoCoMo tune, current graph (qbase, copied caches) vs LN+Gelu graph (qvar)
cd /work/wt/h15lat
O=/work/scratch/h15lat/q
for side in base var; do
  if [ $side = var ]; then SET="--set arms.fastembed.cache_dir=/work/scratch/h15lat/models-lngelu"; else SET=""; fi
  echo "$side scifact start $(date -u +%T) $(cut -d' ' -f1-3 /proc/loadavg)"
  nice -n 5 .venv/bin/octomem $SET bench /work/shared/data/scifact --split train --combo default=fts5+sqlite-vec+cosine+conversation --combo vec=sqlite-vec --abstention --cache-dir /work/scratch/h15lat/q$side --out $O/$side/scifact-train
  echo "$side locomo start $(date -u +%T) $(cut -d' ' -f1-3 /proc/loadavg)"
  nice -n 5 .venv/bin/octomem $SET bench /work/shared/data/locomo --group-by metadata.conv_id --combo default=fts5+sqlite-vec+cosine+conversation --combo vec=sqlite-vec --query-filter metadata.conv_id=conv-26,conv-30,conv-41,conv-42,conv-43 --abstention --cache-dir /work/scratch/h15lat/q$side --out $O/$side/locomo-tune
done
echo "end $(date -u +%T) $(cut -d' ' -f1-3 /proc/loadavg)"
