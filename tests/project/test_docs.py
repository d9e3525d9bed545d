"""The documentation cannot drift from the code: the command-line reference names exactly the options
each command's `--help` shows, every relative link of the README and the pages resolves (file and
anchor), the README stays short, its quick-start commands are the ones CI runs, and the admin API's
page lists exactly the routes the mock serves.

`mkdocs build --strict` (`tox -e docs`) checks the site's own links and anchors; this file checks what
the site build does not see (the README, GitHub's view of docs/) and what no build can (the options).
"""

from __future__ import annotations

import contextlib
import io
import re
import subprocess
import unicodedata
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
CLI_PAGE = DOCS / "cli.md"
README_MAX_LINES = 200

# Each command of the reference page (its `## ` heading) and the argv that asks for its help.
COMMANDS = {
    "shop-mock": ("shop-mock", []),
    "shop-mock contract": ("shop-mock", ["contract"]),
    "shop-mock generate": ("shop-mock", ["generate"]),
    "shop-contract": ("shop-contract", []),
    "shop-contract replay": ("shop-contract", ["replay"]),
    "shop-contract merge": ("shop-contract", ["merge"]),
}
PYTEST_PREFIX = "--shop-"  # the plugin's options: shop-contract's, prefixed (contract_tests/pytest_plugin.py)

OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
HELP_OPTION_LINE = re.compile(r"^  (?:-\w, )?(--[a-z][a-z0-9-]*)", re.MULTILINE)
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"`[^`\n]*`")
SNIPPET = re.compile(r'^--8<-- "([^":]+)(?::([\w-]+))?"$', re.MULTILINE)


def entry_point(script: str) -> Callable[[list[str]], int]:
    """The installed console script's function (pyproject's [project.scripts]), wherever it lives."""
    (found,) = [ep for ep in metadata.entry_points(group="console_scripts") if ep.name == script]
    main: Callable[[list[str]], int] = found.load()
    return main


def help_text(script: str, argv: list[str]) -> str:
    """`script *argv --help`, run in-process."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as exited:
        entry_point(script)([*argv, "--help"])
    assert exited.value.code == 0, f"{script} {' '.join(argv)} --help exited {exited.value.code}"
    return out.getvalue()


def help_options(script: str, argv: list[str]) -> set[str]:
    """The long options `--help` lists (its option lines, not options its descriptions mention)."""
    return set(HELP_OPTION_LINE.findall(help_text(script, argv)))


def page_sections(text: str) -> dict[str, str]:
    """The page's `## ` sections by heading (backticks dropped), each up to the next `## `."""
    sections: dict[str, str] = {}
    for part in re.split(r"^## ", text, flags=re.MULTILINE)[1:]:
        heading, _, body = part.partition("\n")
        sections[heading.strip().strip("`")] = body
    return sections


def without_code_blocks(text: str) -> str:
    return FENCE.sub("", text)


def snippet(path: str, section: str | None = None) -> str:
    """What a pymdownx.snippets line includes: the whole file, or the part between the file's
    `<!-- --8<-- [start:SECTION] -->` and `<!-- --8<-- [end:SECTION] -->` lines (empty if unmarked)."""
    text = (ROOT / path).read_text(encoding="utf-8")
    if section is None:
        return text
    return text.partition(f"<!-- --8<-- [start:{section}] -->\n")[2].partition(f"<!-- --8<-- [end:{section}] -->")[0]


def expanded(text: str) -> str:
    """The page as MkDocs renders it: pymdownx.snippets lines replaced by what they include."""
    return SNIPPET.sub(lambda match: snippet(match.group(1), match.group(2)), text)


def slug(heading: str) -> str:
    """Python-Markdown's toc slug (MkDocs' default): the heading's text, markup dropped, lower-cased,
    characters other than word characters, spaces and hyphens dropped, spaces as hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = text.replace("`", "").replace("*", "")
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(path: Path) -> set[str]:
    """The anchors of a Markdown file's headings (a repeated slug gets `_1`, `_2`, as toc does)."""
    found: set[str] = set()
    text = without_code_blocks(expanded(path.read_text(encoding="utf-8")))
    for heading in re.findall(r"^#{1,6} (.+?)\s*#*$", text, flags=re.MULTILINE):
        base = anchor = slug(heading)
        count = 0
        while anchor in found:
            count += 1
            anchor = f"{base}_{count}"
        found.add(anchor)
    return found


def relative_links(path: Path) -> list[str]:
    text = CODE_SPAN.sub("", without_code_blocks(expanded(path.read_text(encoding="utf-8"))))
    targets = [link or image for link, image in LINK.findall(text)]
    return [target for target in targets if not re.match(r"^[a-z][a-z0-9+.-]*:", target)]


def broken_links(path: Path) -> list[str]:
    """Each relative link of `path` whose file, or whose anchor in that file, does not exist."""
    broken = []
    for target in relative_links(path):
        file_part, _, anchor = target.partition("#")
        linked = path.parent / file_part if file_part else path
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{target}: no heading #{anchor} in {linked.name}")
    return broken


def quick_start_lines() -> list[str]:
    """The commands of the README's quick-start block, as written."""
    section = page_sections(README.read_text(encoding="utf-8"))["Quick start"]
    block = re.search(r"^```sh\n(.*?)^```", section, flags=re.MULTILINE | re.DOTALL)
    assert block, "the README's Quick start has no ```sh block"
    return block.group(1).splitlines()


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_option_of_the_help_is_in_the_command_line_reference(command: str) -> None:
    script, argv = COMMANDS[command]
    section = page_sections(CLI_PAGE.read_text(encoding="utf-8")).get(command)
    assert section is not None, f"docs/cli.md has no section '## `{command}`'"
    documented = set(OPTION.findall(section))
    missing = help_options(script, argv) - documented
    assert not missing, f"{command} --help lists options docs/cli.md does not document there: {sorted(missing)}"


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_option_of_the_reference_exists_in_the_help(command: str) -> None:
    script, argv = COMMANDS[command]
    section = page_sections(CLI_PAGE.read_text(encoding="utf-8"))[command]
    options = help_options(script, argv)
    plugin = {f"{PYTEST_PREFIX}{option[2:]}" for option in options if option != "--help"}
    unknown = set(OPTION.findall(section)) - options - plugin
    assert not unknown, f"docs/cli.md names options that {command} --help does not list: {sorted(unknown)}"


def test_the_reference_documents_only_the_commands_it_checks() -> None:
    sections = page_sections(CLI_PAGE.read_text(encoding="utf-8"))
    assert set(sections) == set(COMMANDS), f"docs/cli.md sections: {sorted(sections)}"


def test_a_help_option_line_is_read_as_such() -> None:
    """The reading of `--help` above bites: a flag the parser has is found, one only mentioned is not."""
    options = help_options("shop-contract", ["merge"])
    assert {"--help", "--junit-xml", "--baseline-prune"} <= options
    assert "--shard" not in options  # merge's description mentions it; merge has no such option


@pytest.mark.parametrize("path", [README, *sorted(DOCS.glob("*.md"))], ids=lambda path: path.name)
def test_every_relative_link_resolves(path: Path) -> None:
    assert not broken_links(path), broken_links(path)


def test_a_broken_link_or_anchor_is_found(tmp_path: Path) -> None:
    (tmp_path / "page.md").write_text("# A `code` title\n\n## Section (one): two\n\n## Section (one): two\n")
    source = tmp_path / "index.md"
    source.write_text(
        "[a](page.md#a-code-title) [b](page.md#section-one-two_1) [c](page.md#nope) [d](gone.md) [e](#here)\n"
        "## Here\n```sh\n[not a link](inside-code.md)\n```\n"
    )
    assert broken_links(source) == ["page.md#nope: no heading #nope in page.md", "gone.md: no such file"]


def test_the_sites_home_page_includes_the_readmes_introduction_rather_than_a_copy() -> None:
    """docs/index.md and the README open alike; one text, so the two cannot drift apart."""
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    introduction = snippet("README.md", "introduction")
    assert introduction.strip(), "README.md marks no introduction (<!-- --8<-- [start:introduction] --> ... [end:...])"
    assert '--8<-- "README.md:introduction"' in index.splitlines(), "docs/index.md does not include it"
    first_line = introduction.splitlines()[0]
    assert first_line not in index, "docs/index.md keeps a copy of the README's introduction"


def test_the_readme_is_at_most_200_lines() -> None:
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines; the rest belongs in docs/"


def test_the_second_quick_start_command_is_what_ci_runs() -> None:
    _, second = quick_start_lines()
    run = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert second in run, f".ci/run does not run the README's test command as written: {second}"


def test_ci_runs_the_first_quick_start_command_as_written() -> None:
    """.ci/run calls .ci/quickstart, which runs the very line of the README (it reads it there)."""
    first, _ = quick_start_lines()
    assert "bash .ci/quickstart" in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    shown = subprocess.run(
        ["bash", str(ROOT / ".ci" / "quickstart"), "--print-command"], capture_output=True, text=True, check=True
    )
    assert shown.stdout == first + "\n"
    assert first.endswith("&& shop-mock"), "the first quick-start command starts the mock"


ADMIN_PAGE = DOCS / "admin-api.md"
ROUTE_METHOD = re.compile(r"\b(GET|HEAD|POST|PUT|PATCH|DELETE)\b")
ROUTE_PATH = re.compile(r"/__mock__/[^\s`?]*")
DASHBOARD_FILES = re.compile(r"^/__mock__/ui(/[\w-]+\.(js|css))?$")  # the page's own files, and its redirect


def documented_routes() -> set[tuple[str, str]]:
    """(method, path) of each row of the admin page's route table, from its first cell: `GET`, `PUT`,
    `DELETE /__mock__/faults` is three; a query is left out; NAME is the path parameter `{name}`."""
    table = ADMIN_PAGE.read_text(encoding="utf-8").partition("## Routes")[2].partition("\n## ")[0]
    routes = set()
    for row in table.splitlines():
        cell = row.split("|")[1] if row.startswith("|") and row.count("|") > 2 else ""
        for path in ROUTE_PATH.findall(cell):
            routes |= {(method, path.replace("NAME", "{name}")) for method in ROUTE_METHOD.findall(cell)}
    return routes


def served_routes() -> set[tuple[str, str]]:
    """(method, path) of every route the mock serves under /__mock__/ (HEAD goes with GET): the router's,
    and the probes' and the metrics' that their layers answer."""
    from mock_server.app import create_app
    from mock_server.control.metrics import PATH as METRICS
    from mock_server.control.probes import LIVE, READY
    from mock_server.settings import Settings

    router = create_app(Settings()).middleware.app.router
    routes = {
        (method, route.path)
        for route in router.routes
        if getattr(route, "path", "").startswith("/__mock__/") and not DASHBOARD_FILES.match(route.path)
        for method in route.methods or ()
        if method != "HEAD"
    }
    return routes | {("GET", path) for path in (LIVE, READY, METRICS)}  # answered by their layers (stack.py)


def test_the_admin_page_lists_every_route_the_mock_serves_and_no_other() -> None:
    documented, served = documented_routes(), served_routes()
    assert len(served) > 10, "the mock's admin routes were not found: the test would pass on nothing"
    assert served - documented == set(), "served but not in docs/admin-api.md"
    assert documented - served == set(), "in docs/admin-api.md but not served"
