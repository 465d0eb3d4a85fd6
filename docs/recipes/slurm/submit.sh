#!/bin/bash
# Submit the shards (array.sbatch) and, once every task has ended, the merge of their reports
# from object storage. Credentials: the usual AWS_* variables (or ~/.aws), exported to the jobs.
#   RUN=s3://my-bucket/ambigqa/run-42 ./submit.sh

set -euo pipefail
cd "$(dirname "$0")"

: "${RUN:=s3://my-bucket/ambigqa/run-$(date +%Y%m%d-%H%M%S)}"
export RUN

array=$(sbatch --parsable --export=ALL array.sbatch)
sbatch --dependency="afterany:${array%%;*}" --job-name=ambigqa-merge --export=ALL \
  --output=ambigqa-merge-%j.out \
  --wrap="pytest-ambigqa merge '$RUN/shard-*/scorecard.json' -o '$RUN/merged'"
echo "shards: job $array; merged reports: $RUN/merged"
