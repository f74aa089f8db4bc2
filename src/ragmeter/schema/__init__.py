"""Pydantic models for what ragmeter reads: samples, system outputs, TREC data."""

from ragmeter.schema.outputs import RetrievedItem, SystemOutput
from ragmeter.schema.samples import Sample

__all__ = ["RetrievedItem", "Sample", "SystemOutput"]
