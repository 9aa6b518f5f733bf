"""One line per op saying what it computes, for the generated docstrings (PyTorch keeps its
docstrings apart from the schemas too, in torch/_torch_docs.py). Keyed by the op's name."""

DESCRIPTIONS = {
    "exp": "The exponential of each element: e ** x.",
    "sum": "The sum of the elements, over all of them or along the dims given.",
}
