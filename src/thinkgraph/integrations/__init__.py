"""thinkgraph inside other frameworks: a LangChain retriever (``thinkgraph.integrations.langchain``,
``pip install 'thinkgraph[langchain]'``) and a LlamaIndex retriever and query engine
(``thinkgraph.integrations.llamaindex``, ``pip install 'thinkgraph[llamaindex]'``). Importing this
package loads neither framework; each module needs only its own."""
