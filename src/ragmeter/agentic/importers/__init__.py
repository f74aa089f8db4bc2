"""Importers: traces users already have, converted to the native trace format.

>>> sorted(IMPORTERS)
['langsmith', 'openai-agents', 'otel']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ragmeter.agentic.importers.assemble import DEFAULT_SEARCH_TOOLS, SearchToolMatcher
from ragmeter.agentic.importers.langsmith import import_langsmith
from ragmeter.agentic.importers.openai_agents import import_openai_agents
from ragmeter.agentic.importers.otel import import_otel
from ragmeter.agentic.validate import KnownLength
from ragmeter.errors import InputError
from ragmeter.io.records import Record

IMPORTERS: dict[str, Callable[[Sequence[Record], SearchToolMatcher], KnownLength]] = {
    "otel": import_otel,
    "openai-agents": import_openai_agents,
    "langsmith": import_langsmith,
}
"""Importer per ``--format`` value (the native format needs none)."""


def import_records(records: Sequence[Record], trace_format: str, is_search: SearchToolMatcher) -> KnownLength:
    """Convert the records of an export in ``trace_format`` into native traces.

    The records are read at once; each trace is built and validated as it is taken (so the
    caller's progress covers that work), and their number is known before
    (``operator.length_hint``).
    """
    importer = IMPORTERS.get(trace_format)
    if importer is None:
        raise InputError(f"no importer for format {trace_format!r}")
    return importer(records, is_search)


__all__ = ["DEFAULT_SEARCH_TOOLS", "IMPORTERS", "SearchToolMatcher", "import_records"]
