"""The one exception the CLI turns into a one-line message and a non-zero exit, and how messages count."""


class ToucheError(Exception):
    """A problem with the user's input or settings, reported without a traceback."""


def counted(count: int, noun: str) -> str:
    """"1 bad line", "2 bad lines", "2 lines without text": a count and its noun, plural unless one."""
    if count == 1:
        return f"{count} {noun}"
    first, _, rest = noun.partition(" without ")
    return f"{count} {first}s" + (f" without {rest}" if rest else "")
