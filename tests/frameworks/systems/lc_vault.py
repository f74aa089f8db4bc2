"""LangChain systems over the example vault: LangChain's markdown splitter, an in-memory vector store, a fake chat model."""

from __future__ import annotations

from itertools import cycle

import vault_corpus
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableParallel, RunnablePassthrough
from langchain_core.vectorstores import InMemoryVectorStore
from langchain_text_splitters import MarkdownHeaderTextSplitter

USAGE = {"input_tokens": 40, "output_tokens": 6, "total_tokens": 46}


class HashedWords(Embeddings):
    """Word-overlap embeddings (see vault_corpus.embed)."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [list(vault_corpus.embed(text)) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return list(vault_corpus.embed(text))


def _documents() -> list[Document]:
    splitter = MarkdownHeaderTextSplitter(
        [("#" * n, f"Header {n}") for n in range(1, 7)], strip_headers=False
    )
    documents = []
    for rel_path, text in vault_corpus.notes():
        for document in splitter.split_text(text):
            document.metadata["source"] = rel_path
            documents.append(document)
    return documents


store = InMemoryVectorStore(HashedWords())
store.add_documents(_documents(), ids=[f"lc-{i}" for i in range(len(_documents()))])
retriever = store.as_retriever(search_kwargs={"k": vault_corpus.K})
model = GenericFakeChatModel(
    messages=cycle(
        [
            AIMessage(
                content="See the notes.", usage_metadata=USAGE, response_metadata={"model_name": "fake-chat"}
            )
        ]
    )
)
prompt = ChatPromptTemplate.from_template("Answer from the notes.\n{context}\nQuestion: {question}")
chain = RunnableParallel(context=retriever, question=RunnablePassthrough()).assign(
    answer=prompt | model | StrOutputParser()
)
answer_only = RunnableParallel(context=retriever, question=RunnablePassthrough()) | prompt | model
