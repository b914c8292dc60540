"""Parses PowerShell scripts with tree-sitter's PowerShell grammar (PyPI
`tree-sitter-powershell`) and reports every place it cannot parse.

usage: python parse_powershell.py <script.ps1>...

Exits 0 when every script parses, 1 with each error's line and column on stderr when
one does not. A syntax check only, by a grammar that is not PowerShell's own parser:
`cargo xtask dist` runs it on install.ps1 where no PowerShell is installed; the
release workflow runs the script itself on Windows.
"""

import sys

import tree_sitter
import tree_sitter_powershell


def errors(tree: tree_sitter.Tree) -> list[str]:
    found = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            line, column = node.start_point
            what = f"missing {node.type}" if node.is_missing else "cannot parse"
            text = node.text.decode("utf-8", "replace").splitlines()
            found.append(f"{line + 1}:{column + 1}: {what}: {text[0][:60] if text else ''}")
        elif node.has_error:
            stack.extend(reversed(node.children))
    return found


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_powershell.language()))
    failed = False
    for path in sys.argv[1:]:
        with open(path, "rb") as f:
            tree = parser.parse(f.read())
        for error in errors(tree):
            print(f"{path}:{error}", file=sys.stderr)
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
