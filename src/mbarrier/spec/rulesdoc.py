"""The command line of the rule catalogue's document: `python -m mbarrier.spec.rulesdoc [--markdown]`
prints the rules (one a line) or docs/rules.md.

A module of its own because `import mbarrier` imports `spec.rules` (the object's violations carry their
rules): `python -m mbarrier.spec.rules` would run a module already imported, which runpy warns about."""

from __future__ import annotations

import sys

from mbarrier.spec.rules import RULES, markdown_document
from mbarrier.spec.textout import emit


def main(argv: list[str]) -> int:
    if argv == ["--markdown"]:
        emit(markdown_document())
    elif not argv:
        emit("".join(f"{r.id:24} {r.section:14} {r.title}\n" for r in RULES))
    else:
        print("usage: python -m mbarrier.spec.rulesdoc [--markdown]", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
