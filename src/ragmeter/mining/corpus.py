"""Corpora of candidate documents: built from installed Python packages, or read from a file.

:func:`build_package_corpus` turns packages into one document per public class and function
(optionally per public method): the fully qualified name, the signature and the docstring.
A name re-exported by a package (``json.JSONDecoder`` for ``json.decoder.JSONDecoder``) is one
document whose id is the shortest public path; the other paths are kept as ``aliases`` so
seeds written either way find it.

A document's text is the same in every process (trial logs are resumed by comparing it): default
values are rendered without memory addresses (``<re.Pattern object at 0x…>`` loses the address)
and set members are sorted, whatever ``PYTHONHASHSEED`` is (:func:`render_value`).

>>> corpus = build_package_corpus(["textwrap"])
>>> doc = corpus.get("textwrap.fill")
>>> doc.text.splitlines()[0]
'textwrap.fill(text, width=70, **kwargs)'
>>> corpus.get("textwrap.TextWrapper").kind
'class'
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import pkgutil
import platform
import re
import sys
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from ragmeter.errors import ConfigError, InputError
from ragmeter.io.records import read_record_list


@dataclass(frozen=True)
class Document:
    """One candidate document: ``id`` (a fully qualified name), its ``text`` and other names."""

    id: str
    text: str
    kind: str = "document"
    aliases: tuple[str, ...] = ()

    def sha256(self) -> str:
        """SHA-256 of the text."""
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


@dataclass
class Corpus:
    """Documents by id, with an index of every name (id or alias) and where they came from."""

    documents: list[Document]
    provenance: dict[str, Any] = field(default_factory=dict)
    _names: dict[str, Document] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.documents = sorted(self.documents, key=lambda d: d.id)
        ids: set[str] = set()
        for doc in self.documents:
            if doc.id in ids:
                raise ValueError(f"document id {doc.id!r} is used twice")
            ids.add(doc.id)
        for doc in self.documents:
            self._names[doc.id] = doc
        for doc in self.documents:
            for alias in doc.aliases:
                self._names.setdefault(alias, doc)

    def __len__(self) -> int:
        return len(self.documents)

    def get(self, name: str) -> Document | None:
        """The document called ``name`` (its id or an alias), or ``None``."""
        return self._names.get(name)

    def sha256(self) -> str:
        """A hash over every id and text (what changed when a package was upgraded)."""
        digest = hashlib.sha256()
        for doc in self.documents:
            digest.update(doc.id.encode("utf-8") + b"\0" + doc.text.encode("utf-8") + b"\0")
        return digest.hexdigest()


_ADDRESS = re.compile(r"\s+at\s+0x[0-9A-Fa-f]+")
"""`` at 0x7f…`` in a repr: a memory address, different in every process."""


def without_addresses(text: str) -> str:
    """``text`` with every `` at 0x…`` memory address removed.

    >>> without_addresses("<built-in method match of re.Pattern object at 0x7f3a2c1b5e40>")
    '<built-in method match of re.Pattern object>'
    """
    return _ADDRESS.sub("", text)


class _Shown:
    """A default value as the signature shows it (its :func:`render_value` text)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def render_value(value: Any) -> str:
    """A repr that is the same in every process: no memory address, set members sorted.

    >>> render_value(frozenset({"b", "a"})), render_value({"y": 1, "x": {"b", "a"}})
    ("frozenset({'a', 'b'})", "{'y': 1, 'x': {'a', 'b'}}")
    >>> import difflib, inspect
    >>> print(render_value(inspect.signature(difflib.IS_LINE_JUNK).parameters["pat"].default))
    re.compile('\\\\s*(?:#\\\\s*)?$').match
    >>> render_value(object())
    '<object object>'
    """
    if isinstance(value, (set, frozenset)):
        inner = ", ".join(sorted(render_value(v) for v in value))
        if isinstance(value, frozenset):
            return f"frozenset({{{inner}}})" if value else "frozenset()"
        return f"{{{inner}}}" if value else "set()"
    if type(value) is dict:
        return "{" + ", ".join(f"{render_value(k)}: {render_value(v)}" for k, v in value.items()) + "}"
    if type(value) in (list, tuple):
        inner = ", ".join(render_value(v) for v in value)
        if isinstance(value, tuple):
            return f"({inner},)" if len(value) == 1 else f"({inner})"
        return f"[{inner}]"
    owner = getattr(value, "__self__", None)
    if callable(value) and owner is not None and not inspect.ismodule(owner) and not inspect.isclass(owner):
        return f"{render_value(owner)}.{getattr(value, '__name__', '?')}"  # a bound method: its object's text
    try:
        text = repr(value)
    except Exception:  # a broken __repr__ must not stop the corpus
        text = f"<{type(value).__name__}>"
    return without_addresses(text)


def _signature(obj: Any) -> str:
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        return "(...)"
    shown = [
        p if p.default is inspect.Parameter.empty else p.replace(default=_Shown(render_value(p.default)))
        for p in signature.parameters.values()
    ]
    return without_addresses(str(signature.replace(parameters=shown)))


def _document(fqn: str, obj: Any, kind: str, aliases: Iterable[str]) -> Document:
    doc = without_addresses(inspect.getdoc(obj) or "")
    head = f"class {fqn}{_signature(obj)}" if kind == "class" else f"{fqn}{_signature(obj)}"
    text = f"{head}\n\n{doc}".strip()
    return Document(id=fqn, text=text, kind=kind, aliases=tuple(sorted(set(aliases) - {fqn})))


def _is_private(name: str) -> bool:
    return any(part.startswith("_") for part in name.split("."))


def _walk_modules(root: ModuleType, notes: list[str]) -> list[ModuleType]:
    """The package and its public submodules (tests and ``__main__`` left out), importing each."""
    modules = [root]
    path = getattr(root, "__path__", None)
    if path is None:
        return modules
    for info in sorted(
        pkgutil.walk_packages(path, prefix=root.__name__ + ".", onerror=lambda name: None),
        key=lambda i: i.name,
    ):
        name = info.name
        tail = name[len(root.__name__) + 1 :]
        if _is_private(tail) or any(
            part in ("tests", "test", "testing", "conftest") for part in tail.split(".")
        ):
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                modules.append(importlib.import_module(name))
        except Exception as exc:  # a submodule that cannot be imported here (optional dependency, ...)
            notes.append(without_addresses(f"skipped module {name}: {type(exc).__name__}: {exc}"))
    return modules


def _public_names(module: ModuleType) -> list[str]:
    names = getattr(module, "__all__", None)
    if isinstance(names, (list, tuple)):
        return [str(n) for n in names if not str(n).startswith("_")]
    return [n for n in vars(module) if not n.startswith("_")]


def _package_version(name: str) -> str:
    top = name.split(".")[0]
    if top in sys.stdlib_module_names:
        return f"stdlib (Python {platform.python_version()})"
    try:
        from importlib.metadata import PackageNotFoundError, version

        return version(top)
    except (PackageNotFoundError, ValueError):
        module = sys.modules.get(top)
        return str(getattr(module, "__version__", "unknown"))


def build_package_corpus(
    packages: Sequence[str], *, include_methods: bool = False, exclude: Sequence[str] = ()
) -> Corpus:
    """One document per public class/function (and method) of the installed ``packages``.

    A name counts as public when it is listed in the module's ``__all__`` (or, without one,
    does not start with ``_``) and the object is defined inside the package being walked.
    """
    notes: list[str] = []
    found: dict[int, tuple[str, Any, str, set[str]]] = {}
    order: list[int] = []
    for package in packages:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                root = importlib.import_module(package)
        except Exception as exc:
            raise ConfigError(f"cannot import package {package!r} ({type(exc).__name__}: {exc})") from None
        root_name = package.split(".")[0]
        modules = _walk_modules(root, notes)
        modules.sort(key=lambda m: (m.__name__.count("."), m.__name__))
        for module in modules:
            for name in _public_names(module):
                obj = getattr(module, name, None)
                if inspect.isclass(obj):
                    kind = "class"
                elif inspect.isfunction(obj) or inspect.isbuiltin(obj):
                    kind = "function"
                else:
                    continue
                home = getattr(obj, "__module__", None) or ""
                if home.split(".")[0] != root_name:
                    continue  # imported from elsewhere, not part of this package
                fqn = f"{module.__name__}.{name}"
                if any(fqn == x or fqn.startswith(x + ".") for x in exclude):
                    continue
                key = id(obj)
                qualname = getattr(obj, "__qualname__", name)
                canonical = f"{home}.{qualname}"
                if key in found:
                    found[key][3].update({fqn, canonical})
                    continue
                found[key] = (fqn, obj, kind, {canonical})
                order.append(key)
    documents: list[Document] = []
    for key in order:
        fqn, obj, kind, aliases = found[key]
        documents.append(_document(fqn, obj, kind, aliases))
        if include_methods and kind == "class":
            for name, member in sorted(vars(obj).items()):
                if name.startswith("_") or not (
                    inspect.isfunction(member) or isinstance(member, (classmethod, staticmethod))
                ):
                    continue
                target = member.__func__ if isinstance(member, (classmethod, staticmethod)) else member
                method_aliases = {f"{a}.{name}" for a in aliases}
                documents.append(_document(f"{fqn}.{name}", target, "method", method_aliases))
    corpus = Corpus(documents)
    corpus.provenance = {
        "kind": "packages",
        "packages": {p: _package_version(p) for p in packages},
        "include_methods": include_methods,
        "documents": len(corpus),
        "sha256": corpus.sha256(),
        "notes": notes,
    }
    return corpus


def load_corpus_file(path: Path) -> Corpus:
    """Read documents ``{id, text[, aliases, kind]}`` from a JSONL, YAML or JSON file (key ``documents``)."""
    documents: list[Document] = []
    seen: set[str] = set()
    for record in read_record_list(path, key="documents"):
        value = record.value
        if not isinstance(value, dict):
            raise InputError(f"a document must be an object, got {type(value).__name__}", where=record.where)
        doc_id = value.get("id", value.get("fqn"))
        text = value.get("text")
        if not isinstance(doc_id, str) or not doc_id.strip():
            raise InputError("document has no string 'id'", where=record.where)
        if not isinstance(text, str):
            raise InputError(f"document {doc_id!r} has no string 'text'", where=record.where)
        if doc_id in seen:
            raise InputError(f"document id {doc_id!r} is used twice", where=record.where)
        seen.add(doc_id)
        aliases = value.get("aliases") or []
        if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
            raise InputError(f"aliases of {doc_id!r} must be a list of strings", where=record.where)
        documents.append(Document(doc_id, text, str(value.get("kind", "document")), tuple(aliases)))
    corpus = Corpus(documents)
    corpus.provenance = {
        "kind": "file",
        "path": str(path),
        "documents": len(corpus),
        "sha256": corpus.sha256(),
    }
    return corpus
