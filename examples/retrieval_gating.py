"""Retrieve only where an answer may have changed: gate a RAG pipeline's questions with the trained router.

    python examples/retrieval_gating.py [CUT_OFF]     # default 0.5: retrieve when P(change within a year) >= it

The router (the classifier shipped with chronoprobe: MiniLM embeddings + TF-IDF, no generation) says for
each question how likely its answer changes within a year; only those questions go to the retriever, the
others are answered from the model's own memory. A lower cut-off misses fewer changing answers and
retrieves more often (docs/router.md, "The cut-off").
"""

import sys

import chronoprobe as cp

cut_off = float(sys.argv[1]) if len(sys.argv) > 1 else 0.5
questions = [
    "What is the current price of a barrel of Brent crude oil?",
    "Who is the prime minister of the United Kingdom?",
    "What is the boiling point of water at sea level?",
    "Who wrote Pride and Prejudice?",
    "How many people live in Tokyo?",
    "What is the latest version of Python?",
    "Which team won the most recent FIFA World Cup?",
    "What is the chemical symbol for gold?",
]


def retrieve(question: str) -> str:
    """Stand-in for a search call (a vector store, a web search): the part a gate saves."""
    return f"<fresh documents about: {question}>"


retrievals = 0
for decision in cp.route(questions, min_share=cut_off):
    if decision.retrieve:
        retrievals += 1
        evidence = retrieve(decision.question)
    else:
        evidence = "<the model's own knowledge>"
    print(
        f"{'RETRIEVE' if decision.retrieve else 'skip    '} P(change within a year) = "
        f"{decision.share_within_threshold:.2f}  {decision.question}  -> {evidence[:40]}"
    )
saved = len(questions) - retrievals
print(f"retrieved for {retrievals} of {len(questions)} questions; {saved} searches saved at cut-off {cut_off}")
