"""``python -m ragmeter``: the ``ragmeter`` command."""

from ragmeter.cli import main

if __name__ == "__main__":
    main()
