"""The documented blocks of README.md and docs/*.md, as the doc tests read them.

The rules (README.md "Docs that run" says the same for writers):

* **Shell blocks** are fenced blocks with no language or with ``sh``, ``bash``, ``shell`` or
  ``console``. Each is a script, one command per line (a line ending in ``\\`` continues on the
  next); ``#`` comments are the shell's. Output, formulas and other text that is not a command go
  in a ```` ```text ```` block.
* **Output** is shown ``console``-style: when a block has lines starting with ``$ ``, those lines
  are the commands and the lines under each, up to the next ``$ ``, are output the command must
  print (stdout and stderr together), each as part of one line, in the order shown, whitespace
  collapsed. ``...`` (or ``…``) stands for any text inside a line, and alone on a line for
  lines left out. A block without ``$ `` lines is a script whose commands must all succeed.
* **Python blocks** (```` ```python ````) are run as a script with the project's Python. A Python
  block written as an interactive session (```` ```pycon ````, or ```` ```python ```` starting with
  ``>>> ``) is run as a doctest: each value it shows must be what the code gives (``...`` stands
  for any text, whitespace is collapsed).
* **Files the page asks you to write**: a ```` ```yaml ```` block whose first line is
  ``# NAME.yaml``, or a ```` ```python ```` block whose first line is ``# NAME.py``, is written to
  NAME (relative to the repository root) before the page's later blocks run, with the judge
  endpoint of the examples (``http://127.0.0.1:8000/v1``) pointed at the tests' scripted judge.
* **Blocks that cannot run** carry a visible line right above them,
  ``*(not run by the doc tests: REASON)*``; the doc tests report them as skipped, with the reason.

>>> [(b.line, b.kind, b.commands[0].text, b.not_run) for b in parse_blocks("t.md", EXAMPLE)]
[(2, 'shell', 'ragmeter metrics', None), (10, 'shell', 'ragmeter --version', 'shows a prompt')]
>>> block = parse_blocks("t.md", EXAMPLE)[1]
>>> block.files, block.commands[0].output
([('ragmeter.yaml', '# ragmeter.yaml\\nk: 5\\n')], ['ragmeter ...'])
>>> missing_output(["ragmeter ..."], "ragmeter 1.0\\n")
[]
>>> missing_output(["ragmeter ..."], "Ragmeter 1.0\\n")
['ragmeter ...']
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

SHELL_LANGUAGES = frozenset({"", "sh", "bash", "shell", "console"})
PYTHON_LANGUAGES = frozenset({"python", "py", "pycon"})
RUN_LANGUAGES = SHELL_LANGUAGES | PYTHON_LANGUAGES
NOT_RUN = re.compile(r"^\*\(not run by the doc tests: (?P<reason>[^)]*\S[^)]*)\)\*$")
FILE_HEADER = re.compile(r"^# (?P<name>[\w.-][\w./-]*\.(?:ya?ml|py))\s*$")
FILE_LANGUAGES = {"yaml": (".yaml", ".yml"), "yml": (".yaml", ".yml"), "python": (".py",), "py": (".py",)}
ELLIPSIS = re.compile(r"\.\.\.|…")
FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
EXAMPLE = """# A page
```
ragmeter metrics
```
```yaml
# ragmeter.yaml
k: 5
```
*(not run by the doc tests: shows a prompt)*
```console
$ ragmeter --version
ragmeter ...
```
"""


@dataclass(frozen=True)
class Command:
    """One command of a block, and the output lines the doc shows under it (console blocks)."""

    text: str
    output: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Block:
    """One runnable block: where it is, what it runs, and the files its page wrote before it."""

    doc: str
    line: int
    kind: str  # "shell", "python" (a script) or "doctest" (a session: >>> lines and their values)
    text: str
    commands: list[Command]
    files: list[tuple[str, str]]
    not_run: str | None

    @property
    def id(self) -> str:
        """``docs/harness.md:7``: the page and the line of the opening fence."""
        return f"{self.doc}:{self.line}"


def fenced_blocks(text: str) -> list[tuple[int, str, str]]:
    """``(line of the opening fence, language, content)`` of every fenced block of a markdown text.

    >>> fenced_blocks("a\\n```sh\\nls\\n```\\n  ~~~~ yaml x\\nk: 1\\n  ~~~~\\n")
    [(2, 'sh', 'ls\\n'), (5, 'yaml', 'k: 1\\n')]
    """
    lines = text.splitlines()
    blocks: list[tuple[int, str, str]] = []
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if opening is None or ("`" in opening["info"] and opening["fence"][0] == "`"):
            index += 1
            continue
        fence, indent = opening["fence"], len(opening["indent"])
        closing = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}\s*$")
        end = index + 1
        while end < len(lines) and not closing.match(lines[end]):
            end += 1
        body = [line[min(indent, len(line) - len(line.lstrip(" "))) :] for line in lines[index + 1 : end]]
        info = opening["info"].strip()
        blocks.append((index + 1, info.split()[0] if info else "", "".join(f"{b}\n" for b in body)))
        index = end + 1
    return blocks


def commands(text: str) -> list[Command]:
    """The commands of a shell block; in a console block (``$ `` lines) with their output.

    >>> commands("cd x\\nragmeter eval \\\\\\n  -m mrr   # note\\n")
    [Command(text='cd x', output=[]), Command(text='ragmeter eval \\\\\\n  -m mrr   # note', output=[])]
    >>> commands("$ ragmeter metrics\\nmrr\\n\\n$ true\\n")
    [Command(text='ragmeter metrics', output=['mrr', '']), Command(text='true', output=[])]
    """
    lines = text.splitlines()
    console = any(line.startswith("$ ") for line in lines)
    found: list[Command] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        if console and not line.startswith("$ "):
            if not found:
                raise ValueError(f"output before the first command: {line!r}")
            found[-1].output.append(line)
            index += 1
            continue
        if console:
            line = line[2:]
        if not line.strip() or line.lstrip().startswith("#"):
            index += 1
            continue
        parts = [line]
        while parts[-1].endswith("\\") and index + 1 < len(lines):
            index += 1
            parts.append(lines[index])
        found.append(Command("\n".join(parts)))
        index += 1
    return found


def _kind(language: str, content: str) -> str:
    """``shell``, ``python`` or ``doctest`` (a Python session).

    >>> _kind("", "ls"), _kind("python", "x = 1"), _kind("python", ">>> 1 + 1\\n2"), _kind("pycon", "")
    ('shell', 'python', 'doctest', 'doctest')
    """
    if language not in PYTHON_LANGUAGES:
        return "shell"
    return "doctest" if language == "pycon" or content.lstrip().startswith(">>>") else "python"


def parse_blocks(doc: str, text: str) -> list[Block]:
    """The runnable blocks of one page (``doc`` names it), with the files its page wrote before each."""
    lines = text.splitlines()
    files: dict[str, str] = {}
    blocks: list[Block] = []
    for line, language, content in fenced_blocks(text):
        header = FILE_HEADER.match(content.split("\n", 1)[0])
        if header and header["name"].endswith(FILE_LANGUAGES.get(language, ())):
            files[header["name"]] = content
            continue
        if language not in RUN_LANGUAGES:
            continue
        above = next((lines[i].strip() for i in range(line - 2, -1, -1) if lines[i].strip()), "")
        marker = NOT_RUN.match(above)
        kind = _kind(language, content)
        blocks.append(
            Block(
                doc=doc,
                line=line,
                kind=kind,
                text=content,
                commands=commands(content) if kind == "shell" else [],
                files=list(files.items()),
                not_run=marker["reason"] if marker else None,
            )
        )
    return blocks


def documented_blocks(root: Path) -> list[Block]:
    """Every runnable block of ``root``'s README.md and docs/*.md, in page order."""
    pages = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    return [
        block
        for page in pages
        for block in parse_blocks(page.relative_to(root).as_posix(), page.read_text(encoding="utf-8"))
    ]


def _pattern(shown: str) -> re.Pattern[str]:
    parts = ELLIPSIS.split(" ".join(shown.split()))
    return re.compile(".*?".join(re.escape(part) for part in parts))


def missing_output(shown: list[str], printed: str) -> list[str]:
    """The shown lines that ``printed`` lacks: each must be part of one printed line, in order.

    >>> missing_output(["a ... c", "...", "d"], "x\\na b c\\ny\\nd e\\n")
    []
    >>> missing_output(["d", "a"], "a\\nd\\n")
    ['a']
    """
    actual = [" ".join(line.split()) for line in printed.splitlines()]
    missing: list[str] = []
    position = 0
    for line in shown:
        if not line.strip() or ELLIPSIS.fullmatch(line.strip()):
            continue
        pattern = _pattern(line)
        found = next((i for i in range(position, len(actual)) if pattern.search(actual[i])), None)
        if found is None:
            missing.append(line)
        else:
            position = found + 1
    return missing
