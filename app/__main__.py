"""`python -m app`: the `touche` command."""

from app.cli import main

main()
