#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Check that each side of rtrs calls downward only.

usage: layers.py TOP HEADER

HEADER (rtrs-clt.h or rtrs-srv.h) lists the side's prototypes file by
file, each group opened by a comment that names its file:

    /* rtrs-clt-path.c: path lifecycle. */

That order, from the top down, is the side's layering; a file of the side
that the header does not name (the session file, whose entry points are
declared in rtrs.h) stands above them all.  The check finds every
function and global variable a file of the side defines without
"static", and every use of it in another file of the side (comments left
out), and fails for a use that runs upward: from a file to one listed
above it.  The only pair allowed to use each other is a file and its own
sysfs face, named in ALLOWED below.

Prints one line per upward use and exits 1 when there is one, 0 otherwise.
"""
import os
import re
import sys

ALLOWED = {
    ("sysfs/rtrs-clt-sysfs.c", "rtrs-clt-sess.c"),
}

GROUP = re.compile(r"^/\* ((?:sysfs/)?rtrs-[a-z-]+\.c)(?::| \*/)")
# A definition at file scope: a line that starts a declaration, names the
# symbol before its "(" or "=" / ";", is not static and is not a
# prototype.
FUNC = re.compile(r"^(?!static\b)[a-z][\w \*]*?\b(rtrs_\w+)\(")
VAR = re.compile(r"^(?!static\b|extern\b)(?:struct \w+ \*?|bool |unsigned int |"
                 r"u32 |int )\s*\*?(rtrs_\w+)\s*(?:=[^;]*)?;")
COMMENT = re.compile(r"/\*.*?\*/", re.S)
LINE_COMMENT = re.compile(r"//[^\n]*")


def order(top, header):
    files = []
    with open(os.path.join(top, header)) as f:
        for line in f:
            m = GROUP.match(line)
            if m and m.group(1) not in files:
                files.append(m.group(1))
    return files


def side_files(top, prefix):
    out = []
    for d in ("", "sysfs/"):
        for name in sorted(os.listdir(os.path.join(top, d or "."))):
            if name.startswith(prefix) and name.endswith(".c") and \
               not name.endswith("-trace.c"):
                out.append(d + name)
    return out


def definitions(text):
    names = set()
    lines = text.split("\n")
    for i, line in enumerate(lines):
        m = FUNC.match(line)
        if m:
            # the signature ends in "{" on a later line, not in ";"
            j = i
            while j < len(lines) and not lines[j].rstrip().endswith((")", ",")):
                j += 1
            if j + 1 < len(lines) and lines[j].rstrip().endswith(")") and \
               lines[j + 1].startswith("{"):
                names.add(m.group(1))
            continue
        m = VAR.match(line)
        if m:
            names.add(m.group(1))
    return names


def main():
    top, header = sys.argv[1], sys.argv[2]
    prefix = os.path.basename(header)[:-2] + "-"   # rtrs-clt-
    listed = order(top, header)
    if len(listed) < 3:
        print(f"{header}: too few file groups found ({listed})")
        return 1
    files = side_files(top, prefix)
    rank = {f: listed.index(f) + 1 if f in listed else 0 for f in files}
    text = {}
    for f in files:
        with open(os.path.join(top, f)) as fh:
            raw = fh.read()
        text[f] = raw
    code = {f: LINE_COMMENT.sub("", COMMENT.sub("", t)) for f, t in text.items()}
    bad = 0
    for owner in files:
        for name in sorted(definitions(text[owner])):
            word = re.compile(r"\b" + re.escape(name) + r"\b")
            for user in files:
                if user == owner or not word.search(code[user]):
                    continue
                if rank[user] > rank[owner] and \
                   (user, owner) not in ALLOWED:
                    print(f"{user} uses {name} of {owner}, a file above it in {header}")
                    bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
