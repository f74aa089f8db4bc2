"""Loaders and writers: YAML/JSON/JSONL records, datasets, outputs, TREC files."""
