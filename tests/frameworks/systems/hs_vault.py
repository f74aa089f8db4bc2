"""Haystack pipelines over the example vault: InMemoryBM25Retriever, an OpenAI chat generator on 127.0.0.1.

The scripted chat server's URL comes from the environment (set by the tests before import).
"""

from __future__ import annotations

import os

import vault_corpus
from haystack import Document, Pipeline
from haystack.components.builders import ChatPromptBuilder
from haystack.components.generators.chat import OpenAIChatGenerator
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
from haystack.dataclasses import ChatMessage
from haystack.document_stores.in_memory import InMemoryDocumentStore
from haystack.document_stores.types import DuplicatePolicy
from haystack.utils import Secret

TEMPLATE = (
    "Answer from the notes.\n{% for d in documents %}{{ d.content }}\n{% endfor %}Question: {{ question }}"
)

store = InMemoryDocumentStore()
store.write_documents(
    [
        Document(
            content=c.text,
            meta={"file_path": c.rel_path, "heading_path": " > ".join(c.heading_path), "chunk_id": c.id},
        )
        for c in vault_corpus.chunks()
    ],
    policy=DuplicatePolicy.OVERWRITE,
)


def build(base_url: str) -> Pipeline:
    pipeline = Pipeline()
    pipeline.add_component("retriever", InMemoryBM25Retriever(document_store=store, top_k=vault_corpus.K))
    pipeline.add_component(
        "prompt_builder",
        ChatPromptBuilder(
            template=[ChatMessage.from_user(TEMPLATE)], required_variables=["question", "documents"]
        ),
    )
    pipeline.add_component(
        "llm",
        OpenAIChatGenerator(
            api_key=Secret.from_token("sk-test"), model="scripted-model", api_base_url=base_url, max_retries=0
        ),
    )
    pipeline.connect("retriever.documents", "prompt_builder.documents")
    pipeline.connect("prompt_builder.prompt", "llm.messages")
    return pipeline


pipeline = build(os.environ["RAGMETER_TEST_CHAT_URL"])
