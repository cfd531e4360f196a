"""The one exception the CLI turns into a one-line message and a non-zero exit, the environment's failures that
libraries raise as plain exceptions, in words, and how messages count."""

import re


class ToucheError(Exception):
    """A problem with the user's input or settings, reported without a traceback."""


# What qualifies a noun in a count's phrase: the word before it takes the plural.
_QUALIFIED = re.compile(r"(.*?)((?: without | with | \().*)?$", re.S)


def counted(count: int, noun: str) -> str:
    """"1 bad line", "2 bad lines", "2 lines without text", "2 arguments with an id no run can hold", "2 unreadable
    pages (OSError)": a count and its noun, plural unless one (the word before what qualifies it)."""
    if count == 1:
        return f"{count} {noun}"
    head, rest = _QUALIFIED.match(noun).groups()
    return f"{count} {head}s{rest or ''}"


def listed(items: list[str], limit: int = 5) -> str:
    """"a, b, c, d, e, ...": the first `limit` items, and an ellipsis where there are more."""
    return ", ".join(items[:limit]) + (", ..." if len(items) > limit else "")


def environment_failure(error: Exception) -> str | None:
    """A failure of the machine or the environment that a library raised as a plain exception, in words."""
    text = " ".join(str(error).split())
    if isinstance(error, RuntimeError) and text.startswith("Symlink loop from "):  # pathlib's resolve()
        return f"a symbolic link loop: {text.removeprefix('Symlink loop from ')}"
    if isinstance(error, MemoryError) or any(words in text.lower() for words in (
            "can't allocate memory", "not enough memory", "out of memory",  # torch's, on CPU and CUDA
            "failed to map segment from shared object")) \
            or text == "could not create a primitive":  # oneDNN's, its scratch memory refused (not "... descriptor")
        return "out of memory (a memory limit such as ulimit -v, or the machine's)"
    if isinstance(error, RuntimeError) and text == "can't start new thread":  # threading's, at a process limit
        return "cannot start a thread (a limit on processes such as ulimit -u or docker run --pids-limit)"
    return None
