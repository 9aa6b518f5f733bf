"""Column selection shared by `map` and `filter`: `input_col` picks which fields of each item
the function receives, `output_col` where its result goes."""


def call_on_columns(fn, data, input_col):
    if input_col is None:
        return fn(data)
    if isinstance(input_col, (list, tuple)):
        return fn(*(data[col] for col in input_col))
    return fn(data[input_col])


def source_length(datapipe, source):
    if hasattr(source, "__len__"):
        return len(source)
    raise TypeError(f"{type(datapipe).__name__} instance doesn't have valid length")
