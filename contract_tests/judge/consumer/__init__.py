"""Consumer contracts (`shop-contract --consumer FILE`): what a front end's traffic on the mock asked of
the API (recorded by the mock's `/__mock__/contract`), checked where it matters.

- `document`: the file read back: bounded and valid against `consumer_contract.schema.json` (as
  `merge` reads findings.json), then as `Interaction`s; the field paths of an answer.
- `replay`: each interaction replayed on a backend, with identifiers the target serves or the run
  makes, never the recording's: same status class as the mock, a conforming answer, every field the
  consumer received.
- `revision`: each interaction read against a new spec alone (openapi-spec-validator reads it,
  openapi-schema-validator judges the recorded values): what of it the revision breaks.

Both report to the run's `Ledger`, an interaction's verdicts under its name (`operation#N`), and
describe each interaction in `Ledger.consumer`.
"""
