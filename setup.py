"""The compiled part of ragmeter; everything else is in pyproject.toml.

``ragmeter._intern`` is the fast agentic path's string table (src/ragmeter/interning.py). It is
optional: without a C compiler the install goes on, and ragmeter uses the same table in Python.
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("ragmeter._intern", ["src/ragmeter/_intern.c"], optional=True)])
