"""README's Python examples run as written (the README must stay true)."""

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_python_example_runs(capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert blocks, "README has no Python example"
    exec(compile(blocks[0], "README.md", "exec"), {})
    assert "vectorized x.v" in capsys.readouterr().out


def test_readme_node_example_runs(capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert len(blocks) >= 2, "README lost its node-layer example"
    exec(compile(blocks[1], "README.md", "exec"), {})
    assert "(3, 512, 512)" in capsys.readouterr().out
