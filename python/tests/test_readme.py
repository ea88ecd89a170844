"""The README's Python example runs as written: in this interpreter, and, when `.ci/run` names
the wheel it built (`LINEBLOOM_WHEEL`), in a fresh venv with nothing but that wheel installed
(numpy comes with it as a dependency)."""

import os
import re
import subprocess
import sys
import venv

import pytest


def readme_example(repo) -> str:
    readme = (repo / "README.md").read_text(encoding="utf-8")
    section = readme.split("## From Python", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 1, "the README's From Python section holds one python block"
    return blocks[0]


def test_readme_example_is_six_lines(repo):
    assert len(readme_example(repo).strip().splitlines()) == 6


def test_readme_example_runs(repo, tmp_path):
    script = tmp_path / "example.py"
    script.write_text(readme_example(repo), encoding="utf-8")
    subprocess.run([sys.executable, script], check=True, cwd=tmp_path)


@pytest.mark.skipif(not os.environ.get("LINEBLOOM_WHEEL"), reason="LINEBLOOM_WHEEL names no wheel")
def test_readme_example_in_a_fresh_venv(repo, tmp_path):
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    subprocess.run(
        [python, "-m", "pip", "install", "-q", "--disable-pip-version-check", os.environ["LINEBLOOM_WHEEL"]],
        check=True,
    )
    script = tmp_path / "example.py"
    script.write_text(readme_example(repo), encoding="utf-8")
    subprocess.run([python, script], check=True, cwd=tmp_path)
