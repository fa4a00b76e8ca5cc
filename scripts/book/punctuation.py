#!/usr/bin/env python3
"""Checks the built course book for command-line flags that smart
punctuation turned into dashes: `--no-sanitize` outside a code span becomes
"–no-sanitize" (an en dash) when mdBook's smart-punctuation is on, in
headings, the flag tables' descriptions (from --help) and image captions.
docs/book.toml turns it off; this catches it coming back, or a dash typed
before a flag by hand.

Usage: scripts/book/punctuation.py [BOOK_DIR]   (default target/book)
Exit 0 when no page has one, 1 with one line per finding, 2 when BOOK_DIR
is not a built book. Python standard library only.
"""

import re
import sys
from html.parser import HTMLParser
from pathlib import Path

# An en or em dash where a flag's two hyphens were: at the start of a word
# and followed by a letter ("–timeout", "– –timeout"). Ranges ("2–15") and
# prose dashes (" – ") are not this.
MANGLED = re.compile(r"(?:^|(?<=[\s(\[\"'/]))[\u2013\u2014][A-Za-z]")
CODE = {"code", "pre", "script", "style"}


class Page(HTMLParser):
    """The text and the alt and title attributes of a page, outside code."""

    def __init__(self):
        super().__init__()
        self.depth = 0
        self.texts = []

    def handle_starttag(self, tag, attrs):
        if tag in CODE:
            self.depth += 1
        for key, value in attrs:
            if key in ("alt", "title") and value:
                self.texts.append(value)

    def handle_endtag(self, tag):
        if tag in CODE and self.depth:
            self.depth -= 1

    def handle_data(self, data):
        if not self.depth:
            self.texts.append(data)


def findings(book):
    found = []
    for html in sorted(book.rglob("*.html")):
        if html.name in ("print.html", "404.html", "toc.html"):
            continue
        page = Page()
        page.feed(html.read_text(encoding="utf-8", errors="replace"))
        for text in page.texts:
            for match in MANGLED.finditer(text):
                start = max(match.start() - 30, 0)
                context = " ".join(text[start : match.end() + 30].split())
                found.append(f"{html.relative_to(book)}: a dash where a flag's '--' was: ...{context}...")
    return found


def main():
    book = Path(sys.argv[1] if len(sys.argv) > 1 else "target/book")
    if not (book / "index.html").exists():
        print(f"punctuation: {book} is not a built book (no index.html); run mdbook build docs first", file=sys.stderr)
        return 2
    found = findings(book)
    for line in found:
        print(f"punctuation: {line}")
    if found:
        print(f"punctuation: {len(found)} flags turned into dashes; keep smart-punctuation off in docs/book.toml and write flags as `--flag`")
        return 1
    print(f"punctuation: every flag keeps its two hyphens in {book}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
