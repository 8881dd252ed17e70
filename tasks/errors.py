"""DataError, in a module of its own so the readers (columns, rows, sources) need not import tasks.base."""


class DataError(ValueError):
    """Bad or missing dataset input; the message names the file, line and expected fields."""
