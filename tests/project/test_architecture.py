"""The layout's promises, read from the source: which package may import which, no import loop,
the core imports no web framework, Connexion's and Schemathesis' internals are each touched from one module
(a seam), every folder
is a regular package, no module is long and no function takes many parameters without a reason, and what
a docstring or a comment names exists; the rewritten modules' docstrings are short sentences; and the
handler table is the spec's."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest
import schemathesis

from mock_server.api.routing import handler_table, operation_table
from mock_server.spec.schemas import load_spec
from mock_server.state.fixtures import record_fields
from mock_server.state.memory import MemoryStore
from tests.support.import_graph import ROOT, cycles, graph, longest_chain, modules

# A layer of mock_server -> the other parts of mock_server it may import. The top-level modules
# (app, stack, surfaces, rendering, arguments, cli, backends, replicas, shutdown: the composition) may import
# anything; settings imports nothing.
MAY_IMPORT = {
    "spec": set(),
    "ops": set(),  # the instruments every layer counts into
    "state": {"spec", "ops"},
    "http": {"spec"},
    "realm": {"http", "settings", "ops"},
    "api": {"spec", "state", "http", "realm"},
    "control": {"spec", "state", "http", "api", "realm", "settings", "ops"},
    "settings": set(),
}
WEB = ("connexion", "starlette", "uvicorn", "httpx")
SEAM = "mock_server.api.connexion_seam"
# Connexion's public surface: the app, its options and middleware positions, request and response,
# its exceptions, the resolver and the request context. Any other connexion module is internal.
CONNEXION_PUBLIC = {"connexion", "connexion.lifecycle", "connexion.exceptions", "connexion.middleware"}
CONNEXION_PUBLIC |= {"connexion.resolver", "connexion.options", "connexion.context"}
MOCK = modules("mock_server")


def layer(module: str) -> str:
    """`mock_server.api.routing` -> `api`; a top-level module is its own layer."""
    return module.split(".")[1] if "." in module else "mock_server"


def imports_of(module: str) -> list[str]:
    """Every module name `module` imports, of any package (absolute imports only: the project uses no others)."""
    tree = ast.parse(MOCK[module].read_text(encoding="utf-8"))
    names = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    return names + [node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]


# A layer of contract_tests -> the layers it may import. The bottom is the suite's top-level modules
# below every layer (the contract as data, the options, the check names); the entry points (cli,
# __main__, pytest_plugin) may import anything. The judging reads and writes the ledger, never a renderer.
SUITE_MAY_IMPORT = {
    "bottom": set(),
    "client": {"bottom"},
    "outcome": {"bottom"},
    "judge": {"bottom", "client", "outcome"},
    "run": {"bottom", "client", "judge", "outcome"},
}
SUITE_ENTRY_POINTS = {"contract_tests.__main__", "contract_tests.cli", "contract_tests.pytest_plugin"}
RENDERERS = {
    f"contract_tests.outcome.{name}" for name in ("report", "junit", "evidence", "html_report", "step_summary", "merge")
}
SUITE = modules("contract_tests")


def suite_layer(module: str) -> str:
    """`contract_tests.judge.domain.http` -> `judge`; the package (its version) and a top-level module other
    than an entry point -> `bottom`."""
    return module.split(".")[1] if module.count(".") >= 2 else "bottom"


@pytest.mark.parametrize("package", ["mock_server", "contract_tests"])
def test_no_import_loops(package: str) -> None:
    assert cycles(graph(package)) == []


MAX_LEVELS = 8
"""The longest chain of imports in contract_tests, counted in modules (entry point to the bottom)."""


def test_the_suite_has_at_most_max_levels() -> None:
    """A deep chain means a module that cannot be read without the many below it: each layer of the suite
    (entry points, run, judging, client and outcome, bottom) stays a level or two."""
    chain = longest_chain(graph("contract_tests"))
    assert len(chain) <= MAX_LEVELS, " -> ".join(chain)


def test_the_depth_finder_finds_the_longest_chain() -> None:
    edges = {"a": {"b", "c"}, "b": {"c"}, "c": {"d"}, "d": set(), "e": {"d"}}
    assert longest_chain(edges) == ["a", "b", "c", "d"]
    assert longest_chain({"a": set()}) == ["a"]


MAX_LINES = 350
LONG_BECAUSE = "Long because"
"""How a longer module's docstring starts the paragraph that says why it is not split."""


def too_long_unexplained(source: str) -> bool:
    """More than MAX_LINES lines, and no paragraph of the module's docstring starting LONG_BECAUSE."""
    docstring = ast.get_docstring(ast.parse(source)) or ""
    explained = any(paragraph.startswith(LONG_BECAUSE) for paragraph in docstring.split("\n\n"))
    return len(source.splitlines()) > MAX_LINES and not explained


@pytest.mark.parametrize("module", sorted(SUITE) + sorted(MOCK))
def test_each_module_is_short_or_says_why(module: str) -> None:
    """A module of one job stays readable in one sitting; a longer one states why it is not split."""
    path = SUITE.get(module) or MOCK[module]
    assert not too_long_unexplained(path.read_text(encoding="utf-8")), (
        f"{module}: over {MAX_LINES} lines; split it, or say why in a paragraph starting {LONG_BECAUSE!r}"
    )


def test_the_length_rule_tells_long_from_explained() -> None:
    body = "x = 1\n" * MAX_LINES
    assert not too_long_unexplained('"""Short."""\nx = 1\n')
    assert too_long_unexplained(f'"""Long."""\n{body}')
    assert not too_long_unexplained(f'"""Long.\n\n{LONG_BECAUSE} it is copied whole."""\n{body}')


def test_the_loop_finder_finds_a_loop() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(edges) == [["a", "b", "c"]]


def test_the_layers_are_the_packages() -> None:
    """A new package of mock_server gets a row in MAY_IMPORT, or its modules would go unchecked."""
    top = {"mock_server", "__main__", "app", "cli", "environment", "backends", "replicas", "shutdown", "generate"}
    top |= {"stack", "surfaces", "rendering", "arguments", "stops"}
    assert {layer(name) for name in MOCK} - top == set(MAY_IMPORT)


@pytest.mark.parametrize("module", sorted(name for name in MOCK if layer(name) in MAY_IMPORT))
def test_each_layer_imports_only_the_layers_below(module: str) -> None:
    allowed = MAY_IMPORT[layer(module)]
    wrong = {target for target in graph("mock_server")[module] if layer(target) not in allowed | {layer(module)}}
    assert not wrong, f"{module} may import only {sorted(allowed)}"


def test_the_suite_layers_are_its_packages() -> None:
    """A new package of contract_tests gets a row in SUITE_MAY_IMPORT, or its modules would go unchecked."""
    assert {suite_layer(name) for name in set(SUITE) - SUITE_ENTRY_POINTS} == set(SUITE_MAY_IMPORT)


@pytest.mark.parametrize("module", sorted(set(SUITE) - SUITE_ENTRY_POINTS))
def test_each_suite_layer_imports_only_the_layers_below(module: str) -> None:
    allowed = SUITE_MAY_IMPORT[suite_layer(module)] | {suite_layer(module)}
    targets = graph("contract_tests")[module]
    wrong = {target for target in targets if target in SUITE_ENTRY_POINTS or suite_layer(target) not in allowed}
    assert not wrong, f"{module} may import only {sorted(allowed)}, not {sorted(wrong)}"


@pytest.mark.parametrize("module", sorted(name for name in SUITE if suite_layer(name) == "judge"))
def test_the_judging_imports_no_renderer(module: str) -> None:
    """Checks report to the ledger; what the reports make of it is the outcome's business."""
    assert not graph("contract_tests")[module] & RENDERERS


@pytest.mark.parametrize("package", ["mock_server", "contract_tests"])
def test_nothing_imports_the_cli(package: str) -> None:
    """A CLI is an entry point: what another module needs of it (the suite's parser, which the pytest
    plugin shares) lives in a module of its own."""
    edges = graph(package)
    assert [name for name in edges if f"{package}.cli" in edges[name]] == [f"{package}.__main__"]


CORE = [
    name
    for name in MOCK
    if layer(name) in ("spec", "state")
    or (layer(name) == "realm" and name != "mock_server.realm.identity")
    or name in ("mock_server.api.pagination", "mock_server.settings")
]


@pytest.mark.parametrize("module", CORE)
def test_core_modules_import_no_web_framework(module: str) -> None:
    assert not [name for name in imports_of(module) if name.split(".")[0] in WEB]


@pytest.mark.parametrize("module", sorted(set(MOCK) - {SEAM}))
def test_only_the_seam_imports_connexion_internals(module: str) -> None:
    internal = [
        name for name in imports_of(module) if name.split(".")[0] == "connexion" and name not in CONNEXION_PUBLIC
    ]
    assert not internal, f"{module} imports Connexion internals {internal}: go through {SEAM}"


SCHEMATHESIS_SEAM = "contract_tests.schemathesis_seam"
# Schemathesis' public surface: the names its package exports (`schemathesis.__all__`). Any module below it
# (schemathesis.core, .engine, .config, ...) is internal.
SCHEMATHESIS_PUBLIC = set(schemathesis.__all__)


def schemathesis_internals(source: str) -> list[str]:
    """What `source` reaches of Schemathesis past its public surface: a module below the package imported,
    a name of the package it does not export (`schemathesis.core.curl`), or an object's class swapped."""
    tree = ast.parse(source)
    found = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    found += [node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    found = [name for name in found if name.startswith("schemathesis.")]
    found += [
        f"schemathesis.{node.attr}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "schemathesis"
        and node.attr not in SCHEMATHESIS_PUBLIC
    ]
    targets = [target for node in ast.walk(tree) if isinstance(node, ast.Assign) for target in node.targets]
    found += ["a class swap" for target in targets if isinstance(target, ast.Attribute) and target.attr == "__class__"]
    return found


@pytest.mark.parametrize("module", sorted(set(SUITE) - {SCHEMATHESIS_SEAM}))
def test_only_the_seam_touches_schemathesis_internals(module: str) -> None:
    """An internal moved by a Schemathesis release then breaks one module, pinned by
    tests/contract_tests/test_schemathesis_seam.py, rather than any of the suite's."""
    internal = schemathesis_internals(SUITE[module].read_text(encoding="utf-8"))
    assert not internal, f"{module} touches Schemathesis internals {internal}: go through {SCHEMATHESIS_SEAM}"


def test_schemathesis_internals_are_found() -> None:
    source = (
        "import schemathesis\nimport schemathesis.engine\nfrom schemathesis.core import curl\n"
        "schemathesis.openapi.from_dict({})\nschemathesis.core.NOT_SET\nschema.__class__ = type\n"
    )
    assert schemathesis_internals(source) == [
        "schemathesis.engine",
        "schemathesis.core",
        "schemathesis.core",
        "a class swap",
    ]


def test_the_handler_table_covers_exactly_the_spec_operations() -> None:
    spec = load_spec()
    operation_ids = {
        operation["operationId"]
        for item in spec["paths"].values()
        for operation in item.values()
        if isinstance(operation, dict) and "operationId" in operation
    }
    assert set(handler_table(*operation_table(MemoryStore(record_fields())))) == operation_ids


PACKAGES = ("mock_server", "contract_tests")


def folders_without_init(top: Path) -> list[str]:
    """The folders under `top` holding modules but no `__init__.py` (namespace packages)."""
    folders = {path.parent for path in top.rglob("*.py")}
    return sorted(str(folder.relative_to(top.parent)) for folder in folders if not (folder / "__init__.py").exists())


@pytest.mark.parametrize("package", PACKAGES)
def test_every_folder_of_modules_is_a_regular_package(package: str) -> None:
    """A namespace package imports, but pyproject's package list and the layer rules miss it."""
    assert folders_without_init(ROOT / package) == []


def test_a_folder_without_init_is_found(tmp_path: Path) -> None:
    (tmp_path / "top" / "sub").mkdir(parents=True)
    (tmp_path / "top" / "__init__.py").write_text("")
    (tmp_path / "top" / "sub" / "module.py").write_text("")
    assert folders_without_init(tmp_path / "top") == ["top/sub"]


PATH_NAMED = re.compile(r"(?<![\w./:-])((?:[\w-]+/)*\w+\.py)\b")
DOTTED_NAMED = re.compile(r"\b(?:mock_server|contract_tests)(?:\.\w+)+")


def prose(source: str) -> list[str]:
    """The docstrings and comments of a module's source."""
    texts = [
        docstring
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and (docstring := ast.get_docstring(node, clean=False))
    ]
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return texts + [token.string for token in tokens if token.type == tokenize.COMMENT]


def path_exists(named: str, module: Path) -> bool:
    """`x/y.py` from the repository's root, from the module's package or from any package it is in."""
    bases = [ROOT, *(folder for folder in module.parents if ROOT in folder.parents)]
    return any((base / named).is_file() for base in bases)


def dotted_exists(named: str, known: set[str]) -> bool:
    """`mock_server.x.y` is a module, or a name in one (`mock_server.x.y.Name`)."""
    return named in known or named.rpartition(".")[0] in known


def missing_names(source: str, module: Path, known: set[str]) -> list[str]:
    found = []
    for text in prose(source):
        found += [named for named in PATH_NAMED.findall(text) if not path_exists(named, module)]
        found += [named for named in DOTTED_NAMED.findall(text) if not dotted_exists(named, known)]
    return sorted(set(found))


KNOWN_MODULES = set(MOCK) | set(SUITE)


@pytest.mark.parametrize("module", sorted(KNOWN_MODULES))
def test_every_module_a_docstring_or_comment_names_exists(module: str) -> None:
    """A renamed or removed module leaves no reader looking for it."""
    path = SUITE.get(module) or MOCK[module]
    assert missing_names(path.read_text(encoding="utf-8"), path, KNOWN_MODULES) == []


def test_a_stale_module_name_is_found() -> None:
    module = ROOT / "mock_server" / "control" / "bypass.py"
    source = (
        '"""See control/bypass.py, api/fastpath.py, tests/mock_server/control/test_bypass.py and\n'
        "mock_server.http.cors.CORS;\n"
        'not state/gone.py nor mock_server.gone.module."""\n'
        "x = 1  # nor gone.py\n"
        'y = "a string is no prose: lost.py"\n'
    )
    assert missing_names(source, module, KNOWN_MODULES) == ["gone.py", "mock_server.gone.module", "state/gone.py"]


MAX_PARAMETERS = 6
"""Parameters a function of either package takes at most (self and cls not counted) without a reason."""
PARAMETERS_BECAUSE = re.compile(r"#\s*\w+ parameters because: \S")
"""The reason a function takes more: a comment `# Seven parameters because: ...` in the comment lines right
above its `def` (or above its first decorator), or at the end of the `def` line."""


def too_many_parameters(source: str) -> list[str]:
    """The functions of `source` taking more than MAX_PARAMETERS parameters with no reason beside them, as
    `name (N parameters, line L)`."""
    lines = source.splitlines()
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        arguments = node.args
        names = [argument.arg for argument in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)]
        names += [star.arg for star in (arguments.vararg, arguments.kwarg) if star is not None]
        count = len([name for name in names if name not in ("self", "cls")])
        first = min([node.lineno, *(decorator.lineno for decorator in node.decorator_list)])
        above = first - 2  # the comment lines right above the def (or its first decorator), a reason may wrap
        while above >= 0 and lines[above].lstrip().startswith("#"):
            above -= 1
        beside = [*lines[above + 1 : first - 1], lines[node.lineno - 1]]
        if count > MAX_PARAMETERS and not any(PARAMETERS_BECAUSE.search(line) for line in beside):
            found.append(f"{node.name} ({count} parameters, line {node.lineno})")
    return found


@pytest.mark.parametrize("module", sorted(SUITE) + sorted(MOCK))
def test_no_function_takes_more_than_six_parameters_without_a_reason(module: str) -> None:
    """Many parameters are values that travel together (the run object, judge/run_context.py, is the five
    every call of a run needed): group them, or say beside the function why they stay apart."""
    path = SUITE.get(module) or MOCK[module]
    assert too_many_parameters(path.read_text(encoding="utf-8")) == [], (
        f"{module}: over {MAX_PARAMETERS} parameters; group them, or say why in a comment "
        "'# Seven parameters because: ...' above the def"
    )


def test_a_function_with_seven_parameters_is_found() -> None:
    seven = "def f(a, b, c, d, e, f, g):\n    pass\n"
    assert too_many_parameters(seven) == ["f (7 parameters, line 1)"]
    assert too_many_parameters("class C:\n    def m(self, a, b, c, d, e, f):\n        pass\n") == []
    assert too_many_parameters("def f(a, *b, c, d, e, f, **g):\n    pass\n") == ["f (7 parameters, line 1)"]
    assert too_many_parameters(f"# Seven parameters because: they are one record's fields.\n{seven}") == []
    assert too_many_parameters(f"# Seven parameters because: a reason.\n@decorated\n{seven}") == []
    assert too_many_parameters(seven.replace(":\n", ":  # Seven parameters because: a reason.\n", 1)) == []
    assert too_many_parameters(f"# Seven parameters because: a reason\n# that wraps.\n{seven}") == []
    assert too_many_parameters(f"# Seven parameters.\n{seven}") == ["f (7 parameters, line 2)"]
    assert too_many_parameters(f"# Seven parameters because: a reason.\n\n{seven}") == ["f (7 parameters, line 3)"]


MAX_SENTENCE_WORDS = 35
"""Words a docstring sentence of a rewritten module may have: a longer one packs several facts into one."""
WORDED = (
    "contract_tests",
    "contract_tests.__main__",
    "contract_tests.check_names",
    "contract_tests.cli",
    "contract_tests.client",
    "contract_tests.client.auth",
    "contract_tests.client.bodies",
    "contract_tests.client.bounded",
    "contract_tests.client.bounded_httpx",
    "contract_tests.client.bounded_requests",
    "contract_tests.client.burst",
    "contract_tests.client.capacity",
    "contract_tests.client.causes",
    "contract_tests.client.keyring",
    "contract_tests.client.pacing",
    "contract_tests.client.surface",
    "contract_tests.client.target",
    "contract_tests.client.together",
    "contract_tests.client.under_test",
    "contract_tests.decisions",
    "contract_tests.identities",
    "contract_tests.judge",
    "contract_tests.judge.canonical",
    "contract_tests.judge.checks",
    "contract_tests.judge.conformance",
    "contract_tests.judge.consumer",
    "contract_tests.judge.consumer.document",
    "contract_tests.judge.consumer.replay",
    "contract_tests.judge.consumer.revision",
    "contract_tests.judge.deserializer",
    "contract_tests.judge.discovery",
    "contract_tests.judge.domain",
    "contract_tests.judge.domain.addressing",
    "contract_tests.judge.domain.auth_matrix",
    "contract_tests.judge.domain.bounds",
    "contract_tests.judge.domain.data",
    "contract_tests.judge.domain.encodings",
    "contract_tests.judge.domain.fidelity",
    "contract_tests.judge.domain.http",
    "contract_tests.judge.domain.identifier_variants",
    "contract_tests.judge.domain.immutability",
    "contract_tests.judge.domain.lifecycle",
    "contract_tests.judge.domain.locality",
    "contract_tests.judge.domain.media",
    "contract_tests.judge.domain.ordering",
    "contract_tests.judge.domain.owners",
    "contract_tests.judge.domain.pagination",
    "contract_tests.judge.domain.placement",
    "contract_tests.judge.domain.race_references",
    "contract_tests.judge.domain.races",
    "contract_tests.judge.domain.racing",
    "contract_tests.judge.domain.ranges",
    "contract_tests.judge.domain.referential",
    "contract_tests.judge.domain.request_shapes",
    "contract_tests.judge.domain.surfaces",
    "contract_tests.judge.domain.unknown",
    "contract_tests.judge.engine",
    "contract_tests.judge.hooks",
    "contract_tests.judge.known",
    "contract_tests.judge.refusals",
    "contract_tests.judge.rejudge",
    "contract_tests.judge.run_context",
    "contract_tests.judge.verdicts",
    "contract_tests.options",
    "contract_tests.outcome",
    "contract_tests.outcome.baseline",
    "contract_tests.outcome.coverage",
    "contract_tests.outcome.documented",
    "contract_tests.outcome.evidence",
    "contract_tests.outcome.export_tests",
    "contract_tests.outcome.files",
    "contract_tests.outcome.findings",
    "contract_tests.outcome.findings_file",
    "contract_tests.outcome.fingerprint",
    "contract_tests.outcome.generation",
    "contract_tests.outcome.html_report",
    "contract_tests.outcome.junit",
    "contract_tests.outcome.merge",
    "contract_tests.outcome.report",
    "contract_tests.outcome.reproduce",
    "contract_tests.outcome.standalone",
    "contract_tests.outcome.step_summary",
    "contract_tests.pytest_plugin",
    "contract_tests.redact",
    "contract_tests.run",
    "contract_tests.run.arguments",
    "contract_tests.run.guard",
    "contract_tests.run.interrupts",
    "contract_tests.run.pytest_suite",
    "contract_tests.run.replay",
    "contract_tests.run.runner",
    "contract_tests.run.scheduling",
    "contract_tests.schemathesis_seam",
    "contract_tests.sharding",
    "contract_tests.spec",
    "contract_tests.usage",
    "mock_server",
    "mock_server.__main__",
    "mock_server.api",
    "mock_server.api.addressing",
    "mock_server.api.connexion_seam",
    "mock_server.api.fastpath",
    "mock_server.api.formparsers",
    "mock_server.api.handlers",
    "mock_server.api.pagination",
    "mock_server.api.routing",
    "mock_server.api.security",
    "mock_server.api.validation",
    "mock_server.app",
    "mock_server.arguments",
    "mock_server.backends",
    "mock_server.cli",
    "mock_server.control",
    "mock_server.control.admin",
    "mock_server.control.admin_guard",
    "mock_server.control.backend_client",
    "mock_server.control.bypass",
    "mock_server.control.contract",
    "mock_server.control.dashboard",
    "mock_server.control.dashboard.page",
    "mock_server.control.dashboard.stream",
    "mock_server.control.faults",
    "mock_server.control.faults.connection",
    "mock_server.control.faults.memory",
    "mock_server.control.faults.middleware",
    "mock_server.control.faults.redis",
    "mock_server.control.faults.rules",
    "mock_server.control.journal",
    "mock_server.control.journal.base",
    "mock_server.control.journal.memory",
    "mock_server.control.journal.middleware",
    "mock_server.control.journal.redis",
    "mock_server.control.landing",
    "mock_server.control.metrics",
    "mock_server.control.mock_sessions",
    "mock_server.control.mock_sessions.redis",
    "mock_server.control.mock_sessions.registry",
    "mock_server.control.mock_sessions.scope",
    "mock_server.control.observe",
    "mock_server.control.prefer",
    "mock_server.control.probes",
    "mock_server.control.proxy",
    "mock_server.control.steering",
    "mock_server.control.swagger_ui",
    "mock_server.control.violations",
    "mock_server.control.violations.memory",
    "mock_server.control.violations.redis",
    "mock_server.environment",
    "mock_server.generate",
    "mock_server.http",
    "mock_server.http.coalescing",
    "mock_server.http.cors",
    "mock_server.http.forwarded",
    "mock_server.http.header_names",
    "mock_server.http.hosts",
    "mock_server.http.jsonlog",
    "mock_server.http.limits",
    "mock_server.http.masking",
    "mock_server.http.middleware",
    "mock_server.http.stopping",
    "mock_server.ops",
    "mock_server.ops.instruments",
    "mock_server.ops.tally",
    "mock_server.realm",
    "mock_server.realm.codecs",
    "mock_server.realm.flows",
    "mock_server.realm.identity",
    "mock_server.realm.keys",
    "mock_server.realm.login_page",
    "mock_server.realm.logins",
    "mock_server.realm.realm_file",
    "mock_server.realm.shared",
    "mock_server.realm.tokens",
    "mock_server.rendering",
    "mock_server.replicas",
    "mock_server.settings",
    "mock_server.shutdown",
    "mock_server.spec",
    "mock_server.spec.errors",
    "mock_server.spec.inputs",
    "mock_server.spec.operations",
    "mock_server.spec.quoting",
    "mock_server.spec.schemas",
    "mock_server.stack",
    "mock_server.state",
    "mock_server.state.fixtures",
    "mock_server.state.memory",
    "mock_server.state.overlay",
    "mock_server.state.redis",
    "mock_server.state.redis.copy",
    "mock_server.state.redis.layout",
    "mock_server.state.redis.scripts",
    "mock_server.state.redis.store",
    "mock_server.state.store",
    "mock_server.stops",
    "mock_server.surfaces",
)
"""The modules whose docstrings are written in short whole sentences (issue 38). A module joins the list
once it is rewritten, so the rule holds what was done without failing the modules not yet done."""
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(\"'-])|\n\s*\n|\n\s*- ")
"""Where a docstring sentence ends: at a full stop before a capital, a code span or a bracket, at a blank
line, or where a list item starts."""


def long_sentences(source: str) -> list[str]:
    """The docstring sentences of `source` over MAX_SENTENCE_WORDS words, each shown by its first words."""
    texts = [
        ast.get_docstring(node) or ""
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
    ]
    sentences = [sentence.split() for text in texts for sentence in SENTENCE_END.split(text)]
    return [" ".join(words[:8]) for words in sentences if len(words) > MAX_SENTENCE_WORDS]


@pytest.mark.parametrize("module", WORDED)
def test_a_rewritten_module_has_no_long_docstring_sentence(module: str) -> None:
    """Short whole sentences that say why are easy to read and to keep true, as starlette's and httpx's are."""
    path = SUITE.get(module) or MOCK[module]
    assert long_sentences(path.read_text(encoding="utf-8")) == [], (
        f"{module}: a docstring sentence over {MAX_SENTENCE_WORDS} words; split it into short whole sentences"
    )


def test_a_long_docstring_sentence_is_found() -> None:
    long = " ".join(["word"] * (MAX_SENTENCE_WORDS + 1))
    listed = long.replace("word word", "word\n- word", 1)
    assert long_sentences(f'"""{long}."""\n') == [" ".join(["word"] * 8)]
    assert long_sentences(f'"""{long.replace("word word", "word. Word", 1)}."""\n') == []
    assert long_sentences(f'"""Rules:\n- {listed}."""\n') == []
    assert long_sentences(f'"""Short."""\ndef f():\n    """{long}."""\n') == [" ".join(["word"] * 8)]
