"""Keeps generated lines within 120 characters by wrapping argument lists and long strings."""
from __future__ import annotations

WIDTH = 120


def _scan(line: str):
    """Yield (index, char, depth) for characters outside string literals."""
    depth, quote, i = 0, None, 0
    while i < len(line):
        c = line[i]
        if quote:
            if c == "\\":
                i += 2
                continue
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        else:
            if c in "([{":
                depth += 1
            elif c in ")]}":
                depth -= 1
            yield i, c, depth
        i += 1


def split_string(lit: str, room: int) -> list:
    """A long ``'...'`` literal as adjacent literals of at most ``room`` - 1 characters (room for a comma),
    split after spaces."""
    q, body = lit[0], lit[1:-1]
    pieces, cur = [], ""
    for word in body.split(" "):
        nxt = word if not cur else cur + " " + word
        if cur and len(nxt) + 4 > room:      # quotes, the trailing space kept in the piece, a comma
            pieces.append(q + cur + " " + q)
            cur = word
        else:
            cur = nxt
    pieces.append(q + cur + q)
    return pieces


def fit(line: str, width: int = WIDTH) -> list:
    """``line`` as one or more lines, each within ``width`` when the syntax allows a break."""
    if len(line) <= width:
        return [line]
    indent = len(line) - len(line.lstrip())
    opened = close = None
    groups, start, commas = [], None, 0
    for i, c, depth in _scan(line):     # top-level bracket groups, and whether each has a comma to break at
        if c in "([" and depth == 1:
            start, commas = i, 0
        elif c == "," and depth == 1:
            commas += 1
        elif c in ")]" and depth == 0 and start is not None:
            groups.append((start, i, commas))
            start = None
    with_commas = [g for g in groups if g[2]]
    lone_strings = [g for g in groups if line[g[0] + 1:g[1]].strip()[:1] in "'\"" and not g[2]]
    if with_commas:
        opened, close, _ = with_commas[0]
    elif lone_strings:          # f("a very long message"): the literal over several lines
        opened, close, _ = lone_strings[0]
        head, lit, tail = line[:opened + 1], line[opened + 1:close].strip(), line[close:]
        pad = " " * (len(head) if len(head) <= width // 2 else indent + 8)
        parts = split_string(lit, width - len(pad) - len(tail))
        first = [head + parts[0]] if len(head) <= width // 2 else [head, pad + parts[0]]
        return first + [pad + p for p in parts[1:-1]] + ([pad + parts[-1] + tail] if len(parts) > 1 else [])
    else:
        stripped = line.strip()
        if stripped[:1] in "'\"" and stripped[-1:] == stripped[:1]:
            parts = split_string(stripped, width - indent)
            return [" " * indent + p for p in parts]
        return [line]
    head, inner, tail = line[:opened + 1], line[opened + 1:close], line[close:]
    args, start = [], 0
    for i, c, depth in _scan(inner):
        if c == "," and depth == 0:
            args.append(inner[start:i].strip())
            start = i + 1
    last = inner[start:].strip()
    if last:
        args.append(last)
    col = len(head)
    if col > width // 2:        # hanging indent when the opening is far right
        pad = " " * (indent + 8)
        out, cur = [head], pad
    else:
        pad = " " * col
        out, cur = [], head
    for k, a in enumerate(args):
        piece = a + ("," if k < len(args) - 1 else "")
        sep = "" if cur.endswith(("(", "[")) or cur == pad else " "
        if len(cur) + len(sep) + len(piece) + (len(tail) if k == len(args) - 1 else 0) > width and cur.strip() \
                and cur != pad and not cur.endswith(("(", "[")):
            out.append(cur)
            cur = pad + piece
        else:
            cur = cur + sep + piece
        if len(cur) > width and piece[:1] in "'\"" and piece.rstrip(",")[-1:] == piece[:1]:
            lit = piece.rstrip(",")
            parts = split_string(lit, width - len(pad))
            prefix = cur[:len(cur) - len(piece)]
            if prefix.strip():
                out.append(prefix.rstrip())
            out.extend(pad + p for p in parts[:-1])
            cur = pad + parts[-1] + piece[len(lit):]
    out.append(cur + tail)
    return [y for part in out for y in (fit(part, width) if len(part) > width and part != line else [part])]


def fit_all(lines) -> list:
    return [x for line in lines for x in fit(line)]
