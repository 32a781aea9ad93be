#!/bin/sh
# G13 queries against the copy of trial 17's store (/work/scratch/h21sat/term)
O=${O:-/work/wt/h21sat/.venv/bin/octomem}
cd /work/scratch/h21sat/term; export OCTOMEM_GLOBAL_ROOT=/work/scratch/h21sat/g-term
for q in "who upgraded the redis cluster?" "which redis clusters were upgraded?" "redis upgrade" "when was redis upgraded?" "which alert led to the kafka restart on day 67?" "who restarted the kafka cluster?" "what is the capital of france?" "who baked the sourdough bread?" "postgres failover on day 12"; do
  $O search "$q" -k 10 --explain --json 2>/dev/null | python3 -c "
import json,sys; d=json.load(sys.stdin)
h = (d['hits'] or [d.get('best_rejected')])[0]
print(repr(d['query']), len(d['hits']), 'hits |', (d.get('abstained') or '')[:75], '|', h['relevance'], h['relevance_from'], h['text'][8:70].replace(chr(10),' '))"
done
