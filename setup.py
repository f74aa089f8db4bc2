"""The compiled part of ragmeter; everything else is in pyproject.toml.

``ragmeter._intern`` is the fast agentic path's string table (src/ragmeter/interning.py);
``ragmeter._trec_scan`` reads plain TREC files in one pass (src/ragmeter/io/trec_scan.py). Both are
optional: without a C compiler the install goes on, and ragmeter does the same work in Python
(the string table) and with pyarrow and numpy (the TREC files).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("ragmeter._intern", ["src/ragmeter/_intern.c"], optional=True),
        Extension("ragmeter._trec_scan", ["src/ragmeter/_trec_scan.c"], optional=True),
    ]
)
