#!/usr/bin/env bash
# redocly lint fails on errors only; the project also refuses warnings.
out=$(npx --no-install redocly lint spec/openapi.yaml --format=stylish 2>&1)
status=$?
printf '%s\n' "$out" | sed -n '/^validating/,$p'
[ $status -eq 0 ] || exit $status
if printf '%s\n' "$out" | grep -qE '^\s+[0-9]+:[0-9]+\s+warning'; then
  echo "spec lint: warnings are not allowed"
  exit 1
fi
# The bundle the server serves, through the OWASP API Security rules (.spectral.yaml): bounds on every input and
# answer, the headers every answer carries. Errors and warnings both fail.
npx --no-install spectral lint generated/openapi.json --ruleset .spectral.yaml --fail-severity warn
