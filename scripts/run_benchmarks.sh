#!/usr/bin/env bash
# Reproduce the benchmark figures of docs/benchmarks/ (except the neural rows of the forecasting table,
# which need the [neural] extra and several CPU minutes: add `--model all` to include them).
# Usage: scripts/run_benchmarks.sh [OUT_DIR]   (default: runs/)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-runs}
data=../shared/data
mkdir -p "$out"
db="$out/corpus.duckdb"

echo "== ingest the shared corpus (reference month 2021-12)"
/usr/bin/env time -f "ingest wall %e s" foretab ingest "$data/realestate/project_prices.csv.gz" --db "$db" --reference-month 2021-12

echo "== train the store's forecaster"
/usr/bin/env time -f "train wall %e s" foretab train --db "$db"

echo "== forecaster vs naive on the corpus (2022 scored against the future store)"
foretab bench corpus --db "$db" --json "$out/bench_corpus.json"

echo "== QA dataset and every ablation on its test split"
foretab bench build --db "$db" --out "$out/qa" --seed 0
for ablation in none gh-nf gtc gh-pf gh-gf; do
  foretab bench run --db "$db" --dataset "$out/qa/test.jsonl" --ablation "$ablation" --json "$out/qa_$ablation.json"
done
foretab bench report "$out"/qa_none.json "$out"/qa_gh-nf.json "$out"/qa_gtc.json "$out"/qa_gh-pf.json "$out"/qa_gh-gf.json --out "$out/qa_report.md"

echo "== latency: every test question of every family (docs/benchmarks/latency.md), its flame graph"
foretab bench build --db "$db" --out "$out/qa_all" --seed 0 --families all >/dev/null
foretab bench latency --db "$db" --dataset "$out/qa_all/test.jsonl" --n 0 --cold-runs 3 --json "$out/latency.json"
if command -v py-spy >/dev/null 2>&1; then  # the [bench] extra
  py-spy record --subprocesses --function --nonblocking --rate 100 --format flamegraph \
    --output "$out/latency-flame.svg" -- \
    foretab bench latency --db "$db" --dataset "$out/qa_all/test.jsonl" --n 0 --cold-runs 0 >/dev/null
fi

echo "== HTTP server load test (loopback, the corpus store; one worker, then two)"
foretab bench serve --db "$db" --dataset "$out/qa_all/test.jsonl" --dataset "$out/qa_all/val.jsonl" \
  --requests 2000 --concurrency 20 --seed 1 --json "$out/serve.json"

echo "== HTTP server load test (loopback, demo store; the earlier rounds' figures)"
foretab demo --db "$out/demo.duckdb" >/dev/null
# The load test's distinct questions (every family, EN and ZH), built once for the four runs.
foretab bench build --db "$out/demo.duckdb" --out "$out/serve_qa" >/dev/null
for future in model none; do
  foretab bench serve --db "$out/demo.duckdb" --dataset "$out/serve_qa" --requests 500 --concurrency 20 --future "$future" --json "$out/serve_$future.json"
done
foretab bench serve --db "$out/demo.duckdb" --dataset "$out/serve_qa" --requests 1500 --concurrency 20 --future none --json "$out/serve_none_1500.json"
foretab bench serve --db "$out/demo.duckdb" --dataset "$out/serve_qa" --requests 200 --concurrency 1 --engines 1 --future model --json "$out/serve_model_c1.json"
