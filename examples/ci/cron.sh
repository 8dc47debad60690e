#!/usr/bin/env bash
# chronoprobe check as a cron job (docs/check.md, "GitHub Actions and cron"):
#
# chronoprobe on the PATH: a checkout's .venv activated, or a pip install then `chronoprobe prepare` (README,
# "Installed with pip").
#
#   0 6 * * 1  cd /srv/chronoprobe && MODEL=my-model ENDPOINT=http://127.0.0.1:8000/v1 ./examples/ci/cron.sh
#
# Each run writes a new folder results/check/<model>-<date> against the pinned snapshot and fails
# (exit 1) when a threshold does not hold. With LIVE=1 it judges against today's Wikidata answers
# instead (the cached answers, re-judged: no model call) and updates the history of the model.
set -euo pipefail

MODEL=${MODEL:?set MODEL to the name the server serves}
ENDPOINT=${ENDPOINT:?set ENDPOINT to the server, e.g. http://127.0.0.1:8000/v1}
SNAPSHOT=${SNAPSHOT:-dyknow-2023-12-18}
CACHE=${CACHE:-results/calls.sqlite}
DAY=$(date -u +%Y-%m-%d)
OUT="results/check/$MODEL-$DAY"

if [ "${LIVE:-0}" = 1 ]; then
  GOLD=(--live)
  OUT="$OUT-live"
else
  GOLD=(--snapshot "$SNAPSHOT")
fi

status=0
chronoprobe check --model "$MODEL=openai:$MODEL@$ENDPOINT" "${GOLD[@]}" --budget quick \
  --out "$OUT" --cache "$CACHE" \
  --require 'outdated.soft_constraint_pct.up-to-date >= 40' \
  --require 'outdated.knowledge_date >= 2023-01' \
  --junit "$OUT.junit.xml" || status=$?

if [ "${LIVE:-0}" = 1 ]; then
  chronoprobe history results/check --only-model "$MODEL" --out "results/history/$MODEL-$DAY"
fi
exit "$status"
