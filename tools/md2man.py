#!/usr/bin/env python3
"""Write the man page aotc(1) from docs/cli.md, so the command line is described once.

    python3 tools/md2man.py --version 0.1.0 --description TEXT docs/cli.md aotc.1

It knows the Markdown that docs/cli.md uses, and refuses anything else (naming the
line) so that a new construct there fails the build rather than printing garbage:

  # title          dropped; NAME comes from --description, and what follows the title
                   up to the first ## is the SYNOPSIS
  ## heading       .SH (upper case);  ### heading  .SS
  paragraphs       filled text
  ``` fences       no-fill, indented
  - bullets        .IP with a bullet; an item goes on over lines indented under it
  | tables |       one .TP per row: the first cell is the tag, the last the body, any
                   between on lines of their own ("header: cell"); plain man macros,
                   no tbl, so it reads well in man -l on any terminal
  `code`, **bold**, *emphasis*, [text](target)   plain text
  ![alt](file)     [picture: alt (file beside this page's source)]

The relative .md files the links name are listed under SEE ALSO, in --docdir
where they are installed (else beside the page's source). The output depends
only on the input and the arguments (no date), so it is reproducible.
"""
import argparse
import os
import re
import sys


class MarkdownError(Exception):
    pass


# ---- inline text -----------------------------------------------------------

CODE_SPAN = re.compile(r"(`+)(.+?)\1")
IMAGE = re.compile(r"!\[([^\]]*)\]\(([^)\s]*)\)")
LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]*)\)")
BOLD = re.compile(r"\*\*(.+?)\*\*")
EMPHASIS = re.compile(r"(?<![\w*])\*(?=\S)(.+?)(?<=\S)\*(?![\w*])")
ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
# What an ASCII terminal shows for the non-ASCII characters docs/cli.md uses,
# where groff has no glyph of its own (man in the C locale).
ASCII_FALLBACK = {"\u2026": "...", "\u00b7": ".", "\u00b9": "^1", "\u00b3": "^3", "\u00a7": "S",
                  "\u00d7": "x", "\u2212": "-", "\u2014": "--"}


def roff_chars(text, code):
    """Escape text for a roff text line: backslashes, non-ASCII characters
    (groff reads ASCII unless preconv runs) and minus signs. In code every '-'
    is a minus (options must survive copy and paste); in prose only one that
    starts a word (-1, -o), so that hyphenated words keep their hyphens."""
    out = []
    for i, ch in enumerate(text):
        if ch == "\\":
            out.append("\\(rs")
        elif ch == "-" and (code or i == 0 or not (text[i - 1].isalnum() or text[i - 1] in "-_")):
            out.append("\\-")
        elif ord(ch) > 126 or (ord(ch) < 32 and ch != "\t"):
            out.append("\\[u%04X]" % ord(ch))
        else:
            out.append(ch)
    return "".join(out)


def inline(text, links):
    """Markdown inline text to roff: code spans, links, bold and emphasis become
    their plain text; link targets are collected into links."""
    out = []
    pos = 0
    for m in CODE_SPAN.finditer(text):
        out.append(prose(text[pos:m.start()], links))
        out.append(roff_chars(m.group(2).strip(" ") or m.group(2), code=True))
        pos = m.end()
    out.append(prose(text[pos:], links))
    return "".join(out)


def prose(text, links):
    def link(m):
        links.append(m.group(2))
        return m.group(1)

    # A terminal shows no picture: say what it is and where.
    text = IMAGE.sub(lambda m: "[picture: %s (%s beside this page's source)]" % (m.group(1), m.group(2)), text)
    text = LINK.sub(link, text)
    text = BOLD.sub(r"\1", text)
    text = EMPHASIS.sub(r"\1", text)
    text = ESCAPE.sub(r"\1", text)
    return roff_chars(text, code=False)


def fill(text, width=78):
    """Break roff text into input lines at spaces; a line must not start with
    a control character ('.' or ')."""
    lines = []
    cur = ""
    for word in text.split():
        if cur and len(cur) + 1 + len(word) > width:
            lines.append(cur)
            cur = word
        else:
            cur = word if not cur else cur + " " + word
    if cur:
        lines.append(cur)
    return [("\\&" + line) if line[0] in ".'" else line for line in lines]


# ---- blocks ----------------------------------------------------------------

FENCE = re.compile(r"^```")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
BULLET = re.compile(r"^[-*+]\s+(.*)$")
UNSUPPORTED = [
    (re.compile(r"^\s{0,3}>"), "block quotes"),
    (re.compile(r"^\s{0,3}\d+[.)]\s"), "numbered lists"),
    (re.compile(r"^\s{0,3}<[A-Za-z!/]"), "HTML"),
    (re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$"), "horizontal rules"),
    (re.compile(r"^\s{0,3}(=+|-+)\s*$"), "setext headings"),
]


def table_cells(line):
    """The cells of a pipe-table row; an escaped \\| stays in its cell, as a |."""
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", body)]


def convert(lines, version, description, source, docdir=None):
    name = os.path.basename(os.path.dirname(os.path.abspath(source))) + "/" + os.path.basename(source)
    out = [
        ".\\\" Generated by tools/md2man.py from %s; edit that file, not this one." % name,
        ".TH AOTC 1 \"\" \"aotc %s\" \"aotc manual\"" % version,
        ".nh",
        ".ad l",
    ]
    for ch in sorted({c for line in lines for c in line if c in ASCII_FALLBACK}):
        out.append(".if !c\\[u%04X] .char \\[u%04X] %s" % (ord(ch), ord(ch), ASCII_FALLBACK[ch]))
    out += [
        ".SH NAME",
        "aotc \\- " + roff_chars(description, code=False),
    ]
    links = []
    seen_title = False
    need_pp = False  # a paragraph macro is needed before the next block
    i = 0

    def fail(msg):
        raise MarkdownError("%s:%d: %s" % (source, i + 1, msg))

    def block_start(line):
        return (not line.strip() or FENCE.match(line) or HEADING.match(line) or BULLET.match(line)
                or line.lstrip().startswith("|"))

    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        for pat, what in UNSUPPORTED:
            if pat.match(line) and not HEADING.match(line) and not BULLET.match(line):
                fail("md2man.py does not handle %s" % what)
        if FENCE.match(line):
            start = i
            i += 1
            body = []
            while i < len(lines) and not FENCE.match(lines[i]):
                body.append(lines[i])
                i += 1
            if i == len(lines):
                i = start
                fail("unterminated code block")
            i += 1
            if need_pp:
                out.append(".PP")
            out += [".RS 4", ".nf"]
            for b in body:
                b = roff_chars(b.rstrip(), code=True)
                out.append(("\\&" + b) if b[:1] in (".", "'") else b)
            out += [".fi", ".RE"]
            need_pp = True
            continue
        m = HEADING.match(line)
        if m:
            level = len(m.group(1))
            text = inline(m.group(2), links)
            if level == 1:
                if seen_title:
                    fail("a second # title")
                seen_title = True
                out.append(".SH SYNOPSIS")
            elif level == 2:
                out += [".SH", text.upper()]
            elif level == 3:
                out += [".SS", text]
            else:
                fail("md2man.py handles headings #, ## and ### only")
            need_pp = False
            i += 1
            continue
        if not seen_title:
            fail("the page must start with a # title")
        if line.lstrip().startswith("|"):
            rows = []
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                rows.append(table_cells(lines[i]))
                i += 1
            if len(rows) < 2 or not all(re.fullmatch(r":?-+:?", c) for c in rows[1]):
                fail("a table needs a header row and a | --- | row under it")
            ncols = len(rows[0])
            for r in rows[2:]:
                if len(r) != ncols:
                    fail("a table row with %d cells, the header has %d" % (len(r), ncols))
            # The last column is the body; the ones between follow it, each
            # on its own line as "header: cell".
            for r in rows[2:]:
                out += [".TP"] + fill(inline(r[0], links)) + fill(inline(r[-1], links))
                for head, cell in zip(rows[0][1:-1], r[1:-1]):
                    out += [".br"] + fill("%s: %s" % (inline(head, links), inline(cell, links)))
            need_pp = True
            continue
        if BULLET.match(line):
            while i < len(lines):
                m = BULLET.match(lines[i])
                if m:
                    item = [m.group(1)]
                    i += 1
                elif lines[i].strip():
                    break
                else:
                    # a blank line: the list goes on if another item follows
                    j = i
                    while j < len(lines) and not lines[j].strip():
                        j += 1
                    if j < len(lines) and BULLET.match(lines[j]):
                        i = j
                        continue
                    break
                while i < len(lines) and lines[i].startswith("  ") and lines[i].strip():
                    if BULLET.match(lines[i].lstrip()) or FENCE.match(lines[i].lstrip()):
                        fail("md2man.py does not handle nested lists or code in a list")
                    item.append(lines[i].strip())
                    i += 1
                out += [".IP \\(bu 2"] + fill(inline(" ".join(item), links))
            need_pp = True
            continue
        if line.startswith("    ") or line.startswith("\t"):
            fail("md2man.py does not handle indented code blocks: use a ``` fence")
        para = []
        while i < len(lines) and not block_start(lines[i]):
            para.append(lines[i].strip())
            i += 1
        if need_pp:
            out.append(".PP")
        out += fill(inline(" ".join(para), links))
        need_pp = True

    docs = sorted({t.split("#")[0] for t in links
                   if t.split("#")[0].endswith(".md") and "://" not in t})
    if docs:
        if docdir:
            out += [".SH", "SEE ALSO", "The documentation installed with aotc:"]
            out += fill(", ".join(roff_chars(docdir + "/" + os.path.basename(d), code=True) for d in docs) + ".")
        else:
            folder = os.path.basename(os.path.dirname(os.path.abspath(source)))
            out += [".SH", "SEE ALSO", "The documentation beside this page's source:"]
            out += fill(", ".join(roff_chars(folder + "/" + d, code=True) for d in docs) + ".")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description="Markdown (docs/cli.md's subset) to a man page")
    ap.add_argument("--version", required=True, help="aotc's version, for the page footer")
    ap.add_argument("--description", required=True, help="the NAME line after 'aotc -'")
    ap.add_argument("--docdir", help="where the linked .md files are installed, for SEE ALSO "
                                     "(without it: named beside the page's source)")
    ap.add_argument("input")
    ap.add_argument("output")
    args = ap.parse_args()
    with open(args.input, encoding="utf-8") as f:
        lines = f.read().splitlines()
    try:
        page = convert(lines, args.version, args.description, args.input, args.docdir)
    except MarkdownError as e:
        print("md2man.py: %s" % e, file=sys.stderr)
        return 1
    tmp = args.output + ".tmp"
    with open(tmp, "w", encoding="ascii") as f:
        f.write(page)
    os.replace(tmp, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
