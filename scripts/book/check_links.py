#!/usr/bin/env python3
"""Checks the built course book: every relative link and image in its HTML
resolves to a file of the book, and every #anchor to an id on that page.

Usage: scripts/book/check_links.py [BOOK_DIR]   (default target/book)
Exit 0 when all resolve, 1 with one line per broken link, 2 when BOOK_DIR
is not a built book. Python standard library only, so CI needs nothing more.
"""

import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit


class Page(HTMLParser):
    """The links (a href, img/script src, link href) and ids of one page."""

    def __init__(self):
        super().__init__()
        self.links = []
        self.ids = set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        for key in ("href", "src"):
            if attrs.get(key):
                self.links.append((tag, attrs[key]))


def parse(path):
    page = Page()
    page.feed(path.read_text(encoding="utf-8", errors="replace"))
    return page


def broken_links(book):
    pages = {}

    def page(path):
        if path not in pages:
            pages[path] = parse(path)
        return pages[path]

    broken = []
    for html in sorted(book.rglob("*.html")):
        # mdBook's print page and 404 page repeat the chapters' links with
        # another base; the chapters themselves are what readers follow.
        if html.name in ("print.html", "404.html", "toc.html"):
            continue
        for tag, link in page(html).links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith("mailto:"):
                continue
            target = html if not parts.path else (html.parent / unquote(parts.path))
            target = target.resolve()
            where = f"{html.relative_to(book)}: <{tag}> {link}"
            if book.resolve() not in target.parents and target != book.resolve():
                broken.append(f"{where}: points outside the book")
            elif target.is_dir():
                if not (target / "index.html").exists():
                    broken.append(f"{where}: a folder without index.html")
            elif not target.exists():
                broken.append(f"{where}: no such file")
            elif parts.fragment and target.suffix == ".html":
                if unquote(parts.fragment) not in page(target).ids:
                    broken.append(f"{where}: no id '{parts.fragment}' on that page")
    return broken


def main():
    book = Path(sys.argv[1] if len(sys.argv) > 1 else "target/book")
    if not (book / "index.html").exists():
        print(f"check_links: {book} is not a built book (no index.html); run mdbook build docs first", file=sys.stderr)
        return 2
    broken = broken_links(book)
    for line in broken:
        print(f"check_links: {line}")
    checked = len(list(book.rglob("*.html")))
    if broken:
        print(f"check_links: {len(broken)} broken links in {book}; fix the markdown under docs/src/")
        return 1
    print(f"check_links: every link and image resolves in {checked} pages of {book}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
