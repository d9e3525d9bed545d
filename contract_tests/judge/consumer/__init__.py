"""Consumer contracts (`shop-contract --consumer FILE`): what a front end's traffic on the mock asked of the API.

The mock's `/__mock__/contract` records that traffic, and the suite checks it where it matters.

- `document` reads the file back. It is bounded and must be valid against
  `consumer_contract.schema.json`, as `merge` reads findings.json. Then it is read as `Interaction`s.
  The module also gives the field paths of an answer.
- `replay` replays each interaction on a backend. The identifiers are ones the target serves or the
  run makes, never the recording's. It asks for the same status class as the mock, a conforming
  answer, and every field the consumer received.
- `revision` reads each interaction against a new spec alone, and says what of it the revision
  breaks. openapi-spec-validator reads the spec, and openapi-schema-validator judges the recorded
  values.

Both report to the run's `Ledger`, with an interaction's verdicts under its name (`operation#N`). Both
describe each interaction in `Ledger.consumer`.
"""
