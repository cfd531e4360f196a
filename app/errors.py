"""The one exception the CLI turns into a one-line message and a non-zero exit."""


class ToucheError(Exception):
    """A problem with the user's input or settings, reported without a traceback."""
