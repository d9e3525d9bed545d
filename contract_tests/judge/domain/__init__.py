"""The dedicated domain tests: rules Schemathesis cannot know, each judged on purpose-made requests.

Three levels, each importing only those below it: the base (`http`: the session and its evidence;
`data`: the test context and request bodies; `ranges`), the helpers several tests share (`media`,
`owners`, `placement`), and the tests, one module each, none importing another. Which tests run, in
which order, is the run's table (`contract_tests.run.runner.PER_SURFACE`).
"""
