"""Recipe: RippleMem as the retriever of an LCEL chain, `{"memories": retriever | format_docs, ...} | prompt`.

HF_HUB_OFFLINE=1 python cookbook/langchain_retriever_chain.py [--offline]

Needs ``pip install 'ripplemem[langchain]'`` (langchain-core); add ``[openai]`` to answer with
ChatOpenAI. Without it the recipe stops with that pip command.
"""

from __future__ import annotations

from extras import missing_extra

try:
    from langchain_core.messages import AIMessage
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.runnables import RunnablePassthrough
    from langchain_models import ShowSystemPrompt, choose_model

    from langchain_ripplemem import RippleMemRetriever, format_docs
except ImportError as error:
    missing_extra("langchain", error)

from ripplemem import RippleMem

QUESTION = "What should I get my brother for his birthday?"
ANSWER = (
    "Leo has just taken up climbing in Grenoble, so a chalk bag or a guidebook to the Chartreuse "
    "crags would suit him; his birthday is on 12 May."
)


def main() -> None:
    """Seed a user's memories, then answer a question from the ones the retriever finds."""
    mem = RippleMem(path=None, user_id="sam")  # path="./memdb" keeps them on disk
    mem.add_many(
        [
            {"content": "My brother Leo moved to Grenoble last year.", "event_time": "2024-09-01"},
            {"content": "Leo took up rock climbing in the Chartreuse mountains.", "event_time": "2025-03-10"},
            {"content": "Leo's birthday is on 12 May.", "type": "semantic"},
            {"content": "I prefer window seats on trains.", "type": "semantic"},
            {"content": "The office moved to the fourth floor in January."},
        ]
    )
    retriever = RippleMemRetriever(memory=mem, k=4)

    print(f"Question: {QUESTION}\nRecalled (ripple):")
    for doc in retriever.invoke(QUESTION):
        print(f"  {doc.metadata['score']:.2f}  {doc.page_content}   [{doc.metadata['why']}]")

    model, label = choose_model([AIMessage(ANSWER)])
    prompt = ChatPromptTemplate.from_messages(
        [
            ("system", "You know these things about the user:\n{memories}\nAnswer from them."),
            ("human", "{question}"),
        ]
    )
    chain = (
        {"memories": retriever | format_docs, "question": RunnablePassthrough()}
        | prompt
        | model
        | StrOutputParser()
    )
    print(f"Chain with {label}:")
    answer = chain.invoke(QUESTION, config={"callbacks": [ShowSystemPrompt()]})
    print(f"Answer: {answer}")


if __name__ == "__main__":
    main()
