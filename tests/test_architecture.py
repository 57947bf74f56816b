"""The architecture, checked: a small public API that the app, the CLI and the benchmarks keep
to; no private name imported from outside the engine; SQL only in the store; the packages
following the flow of data (nothing imports a later stage)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import geval

REPO = Path(__file__).resolve().parent.parent
#: Code that must reach the engine through `geval.<public name>` only.
ADAPTERS = [REPO / "app.py", *sorted((REPO / "views").glob("*.py")), *sorted((REPO / "studio").glob("*.py")),
            *sorted((REPO / "bench").glob("*.py")), REPO / "geval" / "cli.py"]
#: The engine's packages in the order data flows through them: each may import only earlier ones.
STAGES = ["data", "judging", "store", "scoring", "analysis", "tuning", "decisions", "reporting"]


def _python(paths) -> list[tuple[Path, ast.Module]]:
    return [(path, ast.parse(path.read_text(), filename=str(path))) for path in paths]


def test_the_public_api_is_small_and_every_name_is_there():
    assert len(geval.__all__) <= 20, geval.__all__
    assert len(set(geval.__all__)) == len(geval.__all__)
    missing = [name for name in geval.__all__ if not hasattr(geval, name)]
    assert not missing


@pytest.mark.parametrize("path, tree", _python(ADAPTERS), ids=lambda p: str(p.relative_to(REPO)) if isinstance(p, Path)
                         else "")
def test_the_app_the_cli_and_bench_use_only_the_public_api(path, tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "geval":
            pytest.fail(f"{path.name}:{node.lineno}: 'from {node.module} import ...'; use `import geval` and geval.X")
        if isinstance(node, ast.Import):
            for alias in node.names:
                assert alias.name == "geval" or not alias.name.startswith("geval."), \
                    f"{path.name}:{node.lineno}: import {alias.name}"
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "geval":
            assert node.attr in geval.__all__, f"{path.name}:{node.lineno}: geval.{node.attr} is not public"


def test_nothing_outside_the_engine_imports_a_private_name():
    outside = [*ADAPTERS, *sorted((REPO / "tests").glob("*.py")), *sorted((REPO / "stubs").glob("*.py"))]
    for path, tree in _python(outside):
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("geval"):
                private = [a.name for a in node.names if a.name.startswith("_") and a.name != "__version__"]
                assert not private, f"{path.relative_to(REPO)}:{node.lineno}: imports {private} from {node.module}"
                assert not any(part.startswith("_") for part in node.module.split(".")), node.module


SQL = re.compile(r"\bsqlite3\b|\.db\[|\.db\.|\.conn\.|\b(SELECT|INSERT INTO|DELETE FROM|CREATE TABLE|PRAGMA)\b")


def test_only_the_store_speaks_sql():
    code = [p for p in (REPO / "geval").rglob("*.py") if "store" not in p.relative_to(REPO / "geval").parts]
    code += [REPO / "app.py", *(REPO / "views").glob("*.py"), *(REPO / "studio").glob("*.py")]
    found = [f"{path.relative_to(REPO)}:{number}: {line.strip()}" for path in code
             for number, line in enumerate(path.read_text().splitlines(), 1) if SQL.search(line)]
    assert not found, "\n".join(found)


def test_the_packages_follow_the_flow_of_data():
    for path, tree in _python((REPO / "geval").rglob("*.py")):
        parts = path.relative_to(REPO / "geval").parts
        if parts[0] not in STAGES:
            continue
        type_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                     and getattr(node.test, "id", "") == "TYPE_CHECKING" for n in ast.walk(node)}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("geval.") \
                    and id(node) not in type_only:
                target = node.module.split(".")[1]
                if target in STAGES:
                    assert STAGES.index(target) <= STAGES.index(parts[0]), \
                        f"geval/{'/'.join(parts)}:{node.lineno}: {parts[0]} imports the later {target}"


def test_the_app_has_no_pages_folder():
    # Streamlit runs a file of a folder named pages/ next to app.py without app.py on a fresh server's
    # first deep link (its legacy multipage mode): the views live in views/ and only st.navigation lists them
    assert not (REPO / "pages").exists()
    assert sorted(p.name for p in (REPO / "views").glob("*.py")) == [
        "1_data.py", "2_prompts.py", "3_score.py", "4_inspect.py", "5_agreement.py", "6_tune.py", "7_label.py",
        "8_queues.py", "9_my_queue.py"]


def _module_of(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _engine_imports() -> dict[str, set[str]]:
    """Each engine module and the engine modules it imports anywhere in it (inside functions and
    under TYPE_CHECKING too: a type-only import is still a tie between the two files)."""
    modules = {_module_of(path): path for path in (REPO / "geval").rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            targets = []
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("geval"):
                targets = [f"{node.module}.{alias.name}" for alias in node.names] + [node.module]
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names if alias.name.startswith("geval")]
            for target in targets:
                if target in modules and target != name:
                    found.add(target)
                    break
        graph[name] = found
    return graph


def test_no_two_engine_modules_import_each_other_even_through_others():
    graph = _engine_imports()
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                cycle = path[path.index(target):] + [target]
                pytest.fail("an import circle: " + " -> ".join(cycle))
            if target not in state:
                visit(target, [*path, target])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
