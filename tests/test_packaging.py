"""`pip install .` works: the wheel built from the tracked files alone installs into a fresh virtual
environment, puts `geval` on its PATH, and the installed package finds its bundled samples and
templates from any folder (not only from a checkout)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _run(command: list[str], cwd: Path, env: dict | None = None, timeout: int = 600) -> str:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{' '.join(map(str, command))} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A virtual environment (with the system's site-packages, so that no dependency is built again)
    holding the wheel built from a copy of the tracked files; returns its bin/ folder."""
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    root = tmp_path_factory.mktemp("packaging")
    checkout = root / "checkout"
    for name in _run(["git", "ls-files", "-z"], REPO).split("\0"):
        if name and (REPO / name).is_file():
            (checkout / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, checkout / name)
    _run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--disable-pip-version-check",
          "-w", str(root / "dist"), str(checkout)], root)
    wheels = list((root / "dist").glob("geval_studio-*.whl"))
    assert len(wheels) == 1, wheels
    _run([sys.executable, "-m", "venv", "--system-site-packages", str(root / "venv")], root)
    bin_dir = root / "venv" / "bin"
    _run([str(bin_dir / "python"), "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
          "--disable-pip-version-check", str(wheels[0])], root)
    return bin_dir


def _outside(tmp_path: Path, bin_dir: Path) -> dict:
    """An environment for a user's shell in a folder of their own: the venv first on the PATH, no
    shared datasets named, nothing of the checkout on the import path."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "GEVAL_SHARED_DATA", "GEVAL_PROMPTS_DIR")}
    env.update(PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", GEVAL_STORE=str(tmp_path / "store.sqlite"),
               VIRTUAL_ENV=str(bin_dir.parent))
    return env


def test_the_wheel_puts_geval_on_the_path(installed, tmp_path):
    env = _outside(tmp_path, installed)
    assert shutil.which("geval", path=env["PATH"]) == str(installed / "geval")
    assert "datasets" in _run(["geval", "--help"], tmp_path, env)
    where = _run(["geval", "--version"], tmp_path, env)
    assert where.startswith("geval ")


def test_the_installed_package_finds_its_samples_and_templates(installed, tmp_path):
    env = _outside(tmp_path, installed)
    listed = _run(["geval", "datasets", "list"], tmp_path, env)
    sample = next(line for line in listed.splitlines() if line.startswith("topicalchat_usr_sample"))
    path = Path(sample.split()[-1])
    assert path.is_file() and installed.parent in path.parents, sample  # the installed copy, not the checkout's
    module = _run(["python", "-c", "import geval; print(geval.__file__)"], tmp_path, env)
    assert installed.parent in Path(module.strip()).parents
    templates = _run(["geval", "templates", "list"], tmp_path, env)
    assert "topicalchat-naturalness" in templates
    shown = _run(["geval", "datasets", "show", "topicalchat_usr_sample", "--head", "1"], tmp_path, env)
    assert "topicalchat_usr_sample" in shown


def test_the_package_dependencies_are_the_versions_requirements_txt_pins():
    import tomllib

    declared = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"]["dependencies"]
    pinned = {}
    for line in (REPO / "requirements.txt").read_text("utf-8").splitlines():
        requirement = line.split("#", 1)[0].split(" --", 1)[0].strip()
        if "==" in requirement:
            name, version = requirement.split("==")
            pinned[name.split("[")[0].lower()] = version
    for dependency in declared:
        name, version = dependency.split(">=")
        assert pinned.get(name.lower()) == version, f"pyproject.toml: {dependency}; requirements.txt pins " \
                                                    f"{name}=={pinned.get(name.lower())}"
