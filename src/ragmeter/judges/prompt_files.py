"""Versioned judge prompts: ``prompts/<id>.<version>.md`` files shipped in the package.

A prompt file has YAML front matter (``id``, ``version``, ``variables``) and two
sections, each introduced by a marker line ``<!-- system -->`` or
``<!-- user -->``. Placeholders are ``{{name}}``. A prompt's identity is
``id``, ``version`` and the SHA-256 of the file bytes; all three go into the
cache key and the provenance, so editing a file without bumping its version
still invalidates cached judgements.

>>> p = PromptTemplate.parse(
...     "---\\nid: demo\\nversion: v1\\nvariables: [name]\\n---\\n"
...     "<!-- system -->\\nBe brief.\\n<!-- user -->\\nHello {{name}}.\\n",
...     source="demo.v1.md",
... )
>>> p.render({"name": "Ada"})
[{'role': 'system', 'content': 'Be brief.'}, {'role': 'user', 'content': 'Hello Ada.'}]
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ragmeter.errors import ConfigError, InputError
from ragmeter.io.jsonyaml import TEXT_FIELDS, load_yaml
from ragmeter.io.text_files import read_text

DEFAULT_VERSIONS: dict[str, str] = {
    "groundedness": "v1",
    "correctness": "v1",
    "abstention": "v1",
    "conflict": "v1",
    "factual_match": "v1",
    "factual_verify": "v1",
    "relevance": "v1",
}
"""The prompt version each judge uses unless ``judge.prompt_versions`` says otherwise."""

_MARKER = re.compile(r"^<!--\s*(system|user)\s*-->\s*$", re.MULTILINE)
_PLACEHOLDER = re.compile(r"\{\{\s*([a-z_][a-z0-9_]*)\s*\}\}")


@dataclass(frozen=True)
class PromptTemplate:
    """One parsed prompt file."""

    id: str
    version: str
    sha256: str
    system: str
    user: str
    variables: tuple[str, ...]
    source: str

    @classmethod
    def parse(cls, text: str, *, source: str) -> PromptTemplate:
        """Parse the text of a prompt file; ``source`` names it in errors."""
        if not text.startswith("---\n"):
            raise ConfigError("a prompt file starts with '---' front matter", where=source)
        end = text.find("\n---\n", 4)
        if end < 0:
            raise ConfigError("front matter is not closed with '---'", where=source)
        try:  # a leading newline: the front matter's lines are the file's (it starts on line 2)
            meta = load_yaml("\n" + text[4:end], source=source, text_fields=TEXT_FIELDS | {"version"}) or {}
        except InputError as exc:
            raise ConfigError(exc.message, where=exc.where) from None
        if not isinstance(meta, dict) or not {"id", "version"} <= set(meta):
            raise ConfigError("front matter needs 'id' and 'version'", where=source)
        body = text[end + 5 :]
        sections: dict[str, str] = {}
        matches = list(_MARKER.finditer(body))
        for index, match in enumerate(matches):
            stop = matches[index + 1].start() if index + 1 < len(matches) else len(body)
            sections[match.group(1)] = body[match.end() : stop].strip()
        if "user" not in sections:
            raise ConfigError("a prompt file needs a '<!-- user -->' section", where=source)
        variables = tuple(str(v) for v in meta.get("variables", []))
        used = set(_PLACEHOLDER.findall(sections.get("system", "") + sections["user"]))
        undeclared = sorted(used - set(variables))
        if undeclared:
            raise ConfigError(f"placeholders not declared in 'variables': {undeclared}", where=source)
        return cls(
            id=str(meta["id"]),
            version=str(meta["version"]),
            sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
            system=sections.get("system", ""),
            user=sections["user"],
            variables=variables,
            source=source,
        )

    def render(self, values: Mapping[str, str]) -> list[dict[str, str]]:
        """The chat messages with every ``{{name}}`` replaced; a missing value is an error."""
        missing = [v for v in self.variables if v not in values]
        if missing:
            raise ConfigError(f"prompt {self.ref} needs values for {missing}", where=self.source)

        def fill(template: str) -> str:
            return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)

        messages = []
        if self.system:
            messages.append({"role": "system", "content": fill(self.system)})
        messages.append({"role": "user", "content": fill(self.user)})
        return messages

    @property
    def ref(self) -> str:
        """``id.version``, e.g. ``groundedness.v1``."""
        return f"{self.id}.{self.version}"

    def provenance(self) -> dict[str, str]:
        """``id``, ``version`` and ``sha256``, for results."""
        return {"id": self.id, "version": self.version, "sha256": self.sha256}


def load_prompt(prompt_id: str, version: str, *, prompts_dir: str | Path | None = None) -> PromptTemplate:
    """Load ``<prompt_id>.<version>.md`` from ``prompts_dir`` if it has one, else from the package.

    >>> p = load_prompt("groundedness", "v1")
    >>> p.ref, len(p.sha256)
    ('groundedness.v1', 64)
    """
    name = f"{prompt_id}.{version}.md"
    if prompts_dir is not None:
        candidate = Path(prompts_dir) / name
        if candidate.is_file():
            text = read_text(candidate).replace("\r\n", "\n")  # UTF-8 (a BOM is fine), CRLF is fine
            return _checked(PromptTemplate.parse(text, source=str(candidate)))
    resource = resources.files("ragmeter.judges").joinpath("prompts", name)
    if not resource.is_file():
        raise ConfigError(
            f"no prompt {prompt_id!r} version {version!r} (looked for {name}"
            + (f" in {prompts_dir} and" if prompts_dir else " in")
            + f" the package; shipped: {', '.join(shipped_prompts())})",
            where="judge.prompt_versions",
        )
    return _checked(
        PromptTemplate.parse(resource.read_text(encoding="utf-8"), source=f"ragmeter/judges/prompts/{name}")
    )


def _checked(prompt: PromptTemplate) -> PromptTemplate:
    expected = Path(prompt.source).name
    if expected != f"{prompt.ref}.md":
        raise ConfigError(f"front matter says {prompt.ref} but the file is {expected}", where=prompt.source)
    return prompt


def shipped_prompts() -> list[str]:
    """``id.version`` of every prompt file shipped in the package.

    >>> "relevance.v1" in shipped_prompts()
    True
    """
    folder = resources.files("ragmeter.judges").joinpath("prompts")
    return sorted(p.name.removesuffix(".md") for p in folder.iterdir() if p.name.endswith(".md"))
