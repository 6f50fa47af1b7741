"""`python -m eko.cli …` is `eko …` (for environments where the script is not on PATH)."""

from eko.cli.app import main

main()
