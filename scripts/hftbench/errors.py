"""Exceptions that the CLI turns into an exit status and one message."""


class UsageError(Exception):
    """Bad input from the user (unknown name, malformed config, missing binary): exit 2.

    The message names the input and the fix; the CLI prints it as is.
    """


def raise_interrupt(*_) -> None:
    """A SIGTERM handler: a cancelled CI job unwinds like Ctrl-C (results kept, cleanup run)."""
    raise KeyboardInterrupt
