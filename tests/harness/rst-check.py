#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Check that reStructuredText documents parse cleanly.

    rst-check.py KERNEL_DOC TOPDIR FILE...

Each FILE is parsed with docutils; every message of level WARNING or
above (an unknown directive or role, a broken table, a title underline
too short, a dangling reference...) is printed and fails the check.

The one thing plain docutils cannot do is the kernel's Sphinx extension
".. kernel-doc:: FILE": the kernel's Sphinx build runs scripts/kernel-doc
on FILE and parses its output with Sphinx's C domain, which docutils does
not have.  So that directive, and only that one, is replaced here by a
check of what Sphinx would be given: the directive takes the kernel's
options and no others, FILE (relative to TOPDIR here; relative to the top
of the kernel tree in an in-tree Sphinx build) exists, KERNEL_DOC -rst
run with the options Documentation/sphinx/kerneldoc.py derives from the
directive's (:export:, :internal:, :doc:, :identifiers:, :functions:,
:no-identifiers:) renders it without a warning and with something to
show, and each name of :identifiers: or :functions: is among what it
renders.

Over the whole document: no declaration is rendered twice (Sphinx's C
domain warns of a duplicate); every declaration kernel-doc finds in a
header (a FILE ending in ".h") is rendered by some directive; and every
function a header declares is rendered by some directive, from the
header or from the .c file that defines it and carries its kernel-doc.
So a new function of rtrs.h cannot be left off the API page unnoticed,
wherever its documentation lives.  The .c files themselves are not
held to render every kernel-doc comment they hold: most document
internals.
"""

import glob
import io
import re
import subprocess
import sys

from docutils import nodes
from docutils.core import publish_doctree
from docutils.parsers.rst import Directive, directives

DECL = re.compile(r"^\.\. c:(function|type|struct|union|enum|macro|var)::\s*(.*)$")


def kernel_doc(kdoc, path, opts=()):
    """Run kernel-doc -rst; return (declared names, output, stderr, exit status)."""
    cmd = ["perl", kdoc, "-rst", "-sphinx-version", "3.4.3"]
    p = subprocess.run(cmd + list(opts) + [path], capture_output=True,
                       text=True)
    found = []
    for line in p.stdout.splitlines():
        m = DECL.match(line)
        if not m:
            continue
        decl = m.group(2)
        if "(" in decl:
            decl = decl[:decl.index("(")]
        found.append(decl.split()[-1].lstrip("*"))
    return found, p.stdout, p.stderr.strip(), p.returncode


def header_functions(path):
    """Names of the functions a header declares (or defines) at file scope.

    Comments and preprocessor lines are dropped and brace-enclosed bodies
    skipped; a file-scope statement, ended by ';' or '{', declares a
    function when its first '(' follows a name that is not in capitals
    (a macro's) nor static_assert.  Enough for a header of declarations
    such as rtrs.h.
    """
    with open(path, encoding="utf-8") as f:
        text = f.read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", " ", text, flags=re.M)
    names, stmt, depth = [], [], 0
    for c in text:
        if depth:
            depth += {"{": 1, "}": -1}.get(c, 0)
            continue
        if c in ";{":
            s = "".join(stmt).strip()
            m = re.match(r"[^(]*?\b([A-Za-z_]\w*)\s*\(", s)
            if (m and not s.startswith("typedef") and
                    not m.group(1).isupper() and
                    m.group(1) not in ("static_assert", "_Static_assert")):
                names.append(m.group(1))
            stmt = []
            depth = c == "{"
            continue
        stmt.append(c)
    return names


class KernelDocCheck(Directive):
    """Stands in for Documentation/sphinx/kerneldoc.py: see above."""

    required_arguments = 1
    optional_arguments = 0
    has_content = False
    option_spec = {
        "doc": directives.unchanged_required,
        "export": directives.unchanged,
        "internal": directives.unchanged,
        "identifiers": directives.unchanged,
        "no-identifiers": directives.unchanged,
        "functions": directives.unchanged,
    }
    kdoc = None
    top = None
    # file -> names rendered by the directives seen so far
    rendered = {}
    # name -> the file of the directive that rendered it first
    where = {}
    # problems found outside docutils' own messages
    problems = []

    def options_for(self):
        """kernel-doc's options for this directive, as kerneldoc.py has them."""
        o = self.options
        opts, patterns, names = [], [], []
        if "functions" in o:
            o["identifiers"] = o["functions"]
        if "export" in o:
            opts.append("-export")
            patterns = (o["export"] or "").split()
        elif "internal" in o:
            opts.append("-internal")
            patterns = (o["internal"] or "").split()
        elif "doc" in o:
            opts += ["-function", o["doc"]]
        elif "identifiers" in o:
            names = (o["identifiers"] or "").split()
            for n in names:
                opts += ["-function", n]
            if not names:
                opts.append("-no-doc-sections")
        for n in (o.get("no-identifiers") or "").split():
            opts += ["-nosymbol", n]
        for pattern in patterns:
            files = sorted(glob.glob(f"{self.top}/{pattern}"))
            if not files:
                raise self.error(f"kernel-doc: no file matches {pattern}")
            for f in files:
                opts += ["-export-file", f]
        return opts, names

    def run(self):
        rel = self.arguments[0]
        path = f"{self.top}/{rel}"
        opts, names = self.options_for()
        found, out, err, rc = kernel_doc(self.kdoc, path, opts)
        if rc or err:
            raise self.error(f"kernel-doc {rel}: exit {rc}: {err}")
        if not (found if "doc" not in self.options else out.strip()):
            raise self.error(f"kernel-doc {rel}: renders nothing")
        missing = [n for n in names if n not in found]
        if missing:
            raise self.error(f"kernel-doc {rel}: no {' '.join(missing)}")
        for n in found:
            if n in self.where:
                self.problems.append(
                    f"kernel-doc {rel}: {n} is rendered already, from "
                    f"{self.where[n]}")
            else:
                self.where[n] = rel
        self.rendered.setdefault(rel, set()).update(found)
        return [nodes.comment(text=f"kernel-doc {rel}")]


def check(path):
    stream = io.StringIO()
    KernelDocCheck.rendered = {}
    KernelDocCheck.where = {}
    KernelDocCheck.problems = []
    with open(path, encoding="utf-8") as f:
        text = f.read()
    publish_doctree(text, source_path=path, settings_overrides={
        "report_level": 2, "halt_level": 5, "warning_stream": stream,
    })
    problems = stream.getvalue().strip().splitlines()
    problems += [f"{path}: {p}" for p in KernelDocCheck.problems]
    everywhere = set(KernelDocCheck.where)
    for rel, names in KernelDocCheck.rendered.items():
        if not rel.endswith(".h"):
            continue
        full = f"{KernelDocCheck.top}/{rel}"
        every, _, _, _ = kernel_doc(KernelDocCheck.kdoc, full)
        left = sorted(set(every) - names)
        if left:
            problems.append(f"{path}: kernel-doc {rel}: not rendered: "
                            + " ".join(left))
        left = sorted(set(header_functions(full)) - everywhere)
        if left:
            problems.append(f"{path}: {rel} declares, no directive renders: "
                            + " ".join(left))
    return problems


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__.strip().splitlines()[2])
    KernelDocCheck.kdoc, KernelDocCheck.top = sys.argv[1], sys.argv[2]
    directives.register_directive("kernel-doc", KernelDocCheck)
    bad = 0
    for path in sys.argv[3:]:
        problems = check(path)
        for p in problems:
            print(p)
        bad += bool(problems)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
