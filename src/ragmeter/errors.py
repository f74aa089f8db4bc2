"""The one exception tree of ragmeter.

Every error a user can cause is a :class:`RagmeterError`; the CLI prints it as
``Error: <where>: <what>`` and exits non-zero, without a traceback::

    RagmeterError                 base: anything the user can fix
    ├── InputError                a file, record or field is malformed
    ├── ConfigError               a config/suite file or an option is wrong
    ├── MetricNameError           a metric name does not parse or is unknown
    └── MissingFieldError         a requested metric needs a field the data lacks

>>> str(InputError("bad k", where="run.trec:17"))
'run.trec:17: bad k'
"""

from __future__ import annotations


class RagmeterError(Exception):
    """Base of every user-facing error; ``where`` names the file, record and field."""

    def __init__(self, message: str, *, where: str | None = None) -> None:
        self.message = message
        self.where = where
        super().__init__(f"{where}: {message}" if where else message)


class InputError(RagmeterError):
    """A data file, record or field is malformed."""


class ConfigError(RagmeterError):
    """A configuration file, suite file or command-line option is wrong."""


class MetricNameError(RagmeterError):
    """A metric name does not parse, or names no known metric."""


class MissingFieldError(RagmeterError):
    """A requested metric needs an input field that the data does not have."""
