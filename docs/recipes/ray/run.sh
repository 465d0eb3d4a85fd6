#!/bin/bash
# pytest-ambigqa on a Ray cluster: SHARDS pytest runs at once, each joined to the cluster that
# RAY_ADDRESS names, its system's calls made in Ray actors spread over the cluster's nodes and
# its reports written to object storage; then the merge of them from there, which gates the run.
# Run it on the head node (or wherever every node is reachable); see README.md.
#   RAY_ADDRESS=HEAD:6379 RUN=s3://my-bucket/ambigqa/run-42 ./run.sh

set -euo pipefail

: "${RAY_ADDRESS:?set RAY_ADDRESS to the head, HOST:PORT as ray start --head printed it}"
: "${RUN:=s3://my-bucket/ambigqa/run-$(date +%Y%m%d-%H%M%S)}"
SYSTEM="${SYSTEM:-mypkg.qa:Answerer}"
SHARDS="${SHARDS:-2}"
ACTORS="${ACTORS:-2}" # per shard: SHARDS x ACTORS x --ambig-ray-cpus within the cluster's CPUs
export RAY_ADDRESS RUN

pids=()
for i in $(seq 1 "$SHARDS"); do
  pytest --ambig-suite=march --ambig-system="$SYSTEM" --ambig-executor=ray \
    --ambig-ray-actors="$ACTORS" --ambig-shard="$i/$SHARDS" \
    --ambig-report="$RUN/shard-$i" >"ambigqa-shard-$i.log" 2>&1 &
  pids+=("$!")
done
# Exit 1 (items failed) still wrote the shard's scorecard; the merge refuses a missing shard.
for i in $(seq 1 "$SHARDS"); do
  status=0
  wait "${pids[$((i - 1))]}" || status=$?
  echo "shard $i/$SHARDS: exit $status (ambigqa-shard-$i.log)"
done
pytest-ambigqa merge "$RUN/shard-*/scorecard.json" -o "$RUN/merged"
