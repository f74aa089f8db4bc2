"""LlamaIndex systems over the example vault: MarkdownNodeParser, a vector index, MockLLM."""

from __future__ import annotations

import vault_corpus
from llama_index.core import Document, VectorStoreIndex
from llama_index.core.embeddings import BaseEmbedding
from llama_index.core.llms import MockLLM
from llama_index.core.node_parser import MarkdownNodeParser


class HashedWords(BaseEmbedding):
    """Word-overlap embeddings (see vault_corpus.embed)."""

    def _get_query_embedding(self, query: str) -> list[float]:
        return list(vault_corpus.embed(query))

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return list(vault_corpus.embed(query))

    def _get_text_embedding(self, text: str) -> list[float]:
        return list(vault_corpus.embed(text))


documents = [Document(text=text, metadata={"file_path": rel}, id_=rel) for rel, text in vault_corpus.notes()]
nodes = MarkdownNodeParser().get_nodes_from_documents(documents)
index = VectorStoreIndex(nodes, embed_model=HashedWords())
retriever = index.as_retriever(similarity_top_k=vault_corpus.K)
query_engine = index.as_query_engine(llm=MockLLM(max_tokens=8), similarity_top_k=vault_corpus.K)
