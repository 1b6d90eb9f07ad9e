"""`mcp-kit check TARGET`: every problem of a server at once, each with the file and line of its function."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from mcp_kit._cli.main import main
from tests.helpers.support import ROOT

BROKEN = textwrap.dedent('''\
    import socket

    from mcp_kit import MCPServer

    app = MCPServer("broken")


    @app.tool
    def fine(a: int) -> int:
        return a


    @app.tool
    def wire(conn: socket.socket) -> str:
        return "never"


    @app.tool
    def later(x: "NoSuchType") -> str:
        return "never"


    @app.resource("notes://{name}")
    def note(title: str) -> str:
        return title


    @app.tool
    def spread(*items: str) -> str:
        return ""


    @app.prompt
    def ask(topic: str) -> str:
        return topic
''')


def test_check_reports_every_problem_with_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "broken_server.py"
    path.write_text(BROKEN, encoding="utf-8")
    code = main(["check", str(path)])
    out, err = capsys.readouterr()
    lines = out.splitlines()  # each names the line where its function starts (its decorator)
    assert code == 1
    assert len(lines) == 4, out
    assert lines[0].startswith(f"{path}:13: tool 'wire': parameter 'conn' is typed socket.socket")
    assert lines[1].startswith(f"{path}:23: resource template 'notes://{{name}}': {{name}} matches no parameter")
    assert lines[2].startswith(f"{path}:28: tool 'spread': *items cannot be passed")
    assert lines[3].startswith(f"{path}:18: tool 'later': cannot build its schema")
    assert "NameError: name 'NoSuchType' is not defined" in lines[3]
    assert "4 problems" in err and "2 tools, 0 resources, 0 templates, 1 prompts" in err


def test_check_of_a_sound_server_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "calc.py").write_text("from mcp_kit import MCPServer\napp = MCPServer('calc')\n\n"
                                      "@app.tool\ndef add(a: float, b: float) -> float:\n    return a + b\n")
    assert main(["check", str(tmp_path / "calc.py")]) == 0
    out = capsys.readouterr().out.strip()
    assert out == f"ok: {tmp_path / 'calc.py'}: 1 tools, 0 resources, 0 templates, 0 prompts"


@pytest.mark.parametrize("example", ["demo_server.py", "skills_server.py", "tasks_server.py"])
def test_check_passes_the_examples(example: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(ROOT / "examples" / example)]) == 0, capsys.readouterr()


def test_the_reference_servers_have_no_problems(tmp_path: Path) -> None:
    from mcp_kit._cli.check import server_problems
    from servers.filesystem.server import build_server as filesystem
    from servers.stock.providers import make_provider as stock_provider
    from servers.stock.server import build_server as stock
    from servers.weather.providers import make_provider as weather_provider
    from servers.weather.server import build_server as weather

    for app in (stock(stock_provider("sample")), weather(weather_provider("sample")), filesystem([tmp_path])):
        assert server_problems(app) == [], app.name
