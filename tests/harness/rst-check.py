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
renders it without a warning and with at least one declaration, each name
of :identifiers: or :functions: is among them, and every declaration
kernel-doc finds in FILE is rendered by some directive of the document.
"""

import io
import re
import subprocess
import sys

from docutils import nodes
from docutils.core import publish_doctree
from docutils.parsers.rst import Directive, directives

DECL = re.compile(r"^\.\. c:(function|type|struct|union|enum|macro|var)::\s*(.*)$")


def kernel_doc(kdoc, path, names=()):
    """Run kernel-doc -rst; return (declared names, stderr, exit status)."""
    cmd = ["perl", kdoc, "-rst", "-sphinx-version", "3.4.3"]
    for n in names:
        cmd += ["-function", n]
    p = subprocess.run(cmd + [path], capture_output=True, text=True)
    found = []
    for line in p.stdout.splitlines():
        m = DECL.match(line)
        if not m:
            continue
        decl = m.group(2)
        if "(" in decl:
            decl = decl[:decl.index("(")]
        found.append(decl.split()[-1].lstrip("*"))
    return found, p.stderr.strip(), p.returncode


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

    def run(self):
        rel = self.arguments[0]
        path = f"{self.top}/{rel}"
        names = (self.options.get("identifiers") or
                 self.options.get("functions") or "").split()
        found, err, rc = kernel_doc(self.kdoc, path, names)
        if rc or err:
            raise self.error(f"kernel-doc {rel}: exit {rc}: {err}")
        if not found:
            raise self.error(f"kernel-doc {rel}: renders no declaration")
        missing = [n for n in names if n not in found]
        if missing:
            raise self.error(f"kernel-doc {rel}: no {' '.join(missing)}")
        self.rendered.setdefault(rel, set()).update(found)
        return [nodes.comment(text=f"kernel-doc {rel}")]


def check(path):
    stream = io.StringIO()
    KernelDocCheck.rendered = {}
    with open(path, encoding="utf-8") as f:
        text = f.read()
    publish_doctree(text, source_path=path, settings_overrides={
        "report_level": 2, "halt_level": 5, "warning_stream": stream,
    })
    problems = stream.getvalue().strip().splitlines()
    for rel, names in KernelDocCheck.rendered.items():
        every, _, _ = kernel_doc(KernelDocCheck.kdoc,
                                 f"{KernelDocCheck.top}/{rel}")
        left = sorted(set(every) - names)
        if left:
            problems.append(f"{path}: kernel-doc {rel}: not rendered: "
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
