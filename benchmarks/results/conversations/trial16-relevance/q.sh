#!/bin/bash
# usage: q.sh "query" k...   (run in a store dir)
q=$1; shift
for k in "$@"; do
  octomem search "$q" -k $k --explain --json | python3 -c "import json,sys; d=json.load(sys.stdin); h=(d['hits'] or [d.get('best_rejected')])[0]; print(repr(d['query']), 'top_k', $k, 'ABSTAINED' if not d['hits'] else str(len(d['hits']))+' hits', '|', h['text'][:40].replace(chr(10),' '), '| rel', h['relevance'], h['band'], h.get('relevance_from'))"
done
