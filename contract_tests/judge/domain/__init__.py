"""The dedicated domain tests: rules Schemathesis cannot know, each judged on purpose-made requests.

It has three levels, each importing only those below it.
- The base is `http` (the session and its evidence), `data` (the test context and request bodies) and
  `ranges`.
- The helpers several tests share are `media`, `owners` and `placement`.
- The tests come last, one module each, none importing another.

Which tests run, and in which order, is the run's table (`contract_tests.run.runner.PER_SURFACE`).
"""
