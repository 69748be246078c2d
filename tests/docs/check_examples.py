#!/usr/bin/env python3
"""Compiles every C and C++ example in weft's documentation.

Where examples are found
  * Markdown: README.md, docs/*.md and <folder>/README.md. A fenced block
    whose info string starts with `cpp` is C++, with `c` it is C. Other
    languages (sh, cmake, text, cuda, ...) are not compiled.
  * Headers: comments under include/weft. An example sits between a comment
    line `@code` (or `@code{.c}` for C, `@code{.cu}` for CUDA, which is not
    compiled) and a comment line `@endcode`; the comment prefix (`//` or
    ` *`) and the common indentation are stripped.

What a block may add after its language (`cpp fails-with: TEXT` in a fence,
`@code fails-with: TEXT` in a header)
  * `fails-with: TEXT`: the block shows a misuse; it must NOT compile, and
    the compiler's output must contain TEXT.
  * `synopsis`: a list of declarations, not a program; not compiled (it is
    reported as skipped).

How a block becomes a translation unit
  * `#include <weft/weft.hpp>` and a few standard headers (<cstdio>,
    <numeric>, <span>, <string>, <vector>) come first (C: <weft/ompx.h>,
    <stdio.h>, <stddef.h>); an example in a header also includes that header.
  * The block is cut into top-level items at brace depth 0. Preprocessor
    lines, struct/class/union/enum/namespace/template/typedef/extern/
    static_assert items and function definitions (`T name(...) {`) stay at
    namespace scope; every other item is a statement and goes, in order,
    into the body of a function `void weft_doc_example()`. So a block may be
    a whole program, a few statements, or both (helper functions followed by
    the calls that use them).
  * A comment line `// given: DECLARATIONS` (C: `/* given: ... */`) tells
    the reader what the fragment assumes and is compiled as code, like any
    other line: `// given: std::vector<float> x, y; weft::device d;`.
  * `#line` directives point the compiler's messages at the document's lines.
  * The C++ prelude is precompiled once per run (only to save time: a
    compiler that cannot use the precompiled header reads the headers).

Flags: -std=c++20 (C: -std=c11) -fsyntax-only -Wall -Wextra -Werror, -I
include and -I src (ARCHITECTURE.md shows layer code that includes
"layer/file.hpp"), -fopenmp when the block has `#pragma omp`. Warnings about
unused entities are off (-Wno-unused-variable, -Wno-unused-but-set-variable,
-Wno-unused-parameter, -Wno-unused-function, -Wno-unused-local-typedefs): an
example shows a value or a function without the rest of the program that
would use it. Every other warning fails the example (a function that falls
off its end without returning a value, for one).

Usage: check_examples.py [--cxx COMPILER] [--root DIR] [--jobs N] [--list]
                         [FILE...]
Exit status 0 when every block behaves as marked, 1 otherwise; each failure
names its file, line and block number and shows the compiler's output.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

CXX_PRELUDE = ["#include <weft/weft.hpp>", "#include <cstdio>", "#include <numeric>",
               "#include <span>", "#include <string>", "#include <vector>"]
C_PRELUDE = ["#include <weft/ompx.h>", "#include <stdio.h>", "#include <stddef.h>"]
COMMON_FLAGS = ["-fsyntax-only", "-Wall", "-Wextra", "-Werror",
                "-Wno-unused-variable", "-Wno-unused-but-set-variable",
                "-Wno-unused-parameter", "-Wno-unused-function",
                "-Wno-unused-local-typedefs"]
LANGS = {"cpp": "c++", "c++": "c++", "c": "c"}
NOT_COMPILED = {"cu", "cuda"}


@dataclass
class Block:
    path: str            # relative to the root
    line: int            # line of the block's first code line in `path`
    index: int           # 1-based block number within the file
    lang: str            # "c++", "c" or a language that is not compiled
    lines: list[str]
    fails_with: str | None = None
    synopsis: bool = False
    header: str | None = None   # include path of the header holding it
    first_lines: list[int] = field(default_factory=list)  # source line of each line

    def name(self) -> str:
        return f"{self.path}:{self.line} (block {self.index})"


def parse_options(words: str) -> tuple[str | None, bool]:
    """`fails-with: TEXT` / `synopsis` after the language."""
    words = words.strip()
    if words.startswith("fails-with:"):
        return words[len("fails-with:"):].strip(), False
    if words == "synopsis":
        return None, True
    if words:
        raise ValueError(f"unknown block option '{words}'")
    return None, False


FENCE = re.compile(r"^(\s*)```\s*([^\s`]*)\s*(.*)$")


def markdown_blocks(root: Path, rel: str) -> list[Block]:
    blocks: list[Block] = []
    lines = (root / rel).read_text().splitlines()
    i = 0
    count = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang, rest = len(m.group(1)), m.group(2).lower(), m.group(3)
        start = i + 1
        j = start
        while j < len(lines) and not re.match(r"^\s*```\s*$", lines[j]):
            j += 1
        if lang in LANGS:
            count += 1
            fails, syn = parse_options(rest)
            body = [l[indent:] if l[:indent].strip() == "" else l for l in lines[start:j]]
            blocks.append(Block(rel, start + 1, count, LANGS[lang], body, fails, syn,
                                first_lines=list(range(start + 1, j + 1))))
        i = j + 1
    return blocks


CODE_OPEN = re.compile(r"^\s*(?://+|/?\*+)\s*@code(?:\{\.(\w+)\})?\s*(.*)$")
CODE_CLOSE = re.compile(r"^\s*(?://+|/?\*+)\s*@endcode\s*(?:\*/)?\s*$")
COMMENT = re.compile(r"^\s*(?://+|\*(?!/))(.*)$")


def header_blocks(root: Path, rel: str) -> list[Block]:
    blocks: list[Block] = []
    lines = (root / rel).read_text().splitlines()
    i = 0
    count = 0
    while i < len(lines):
        m = CODE_OPEN.match(lines[i])
        if not m:
            i += 1
            continue
        lang = (m.group(1) or "cpp").lower()
        fails, syn = parse_options(m.group(2))
        start = i + 1
        body: list[str] = []
        j = start
        while j < len(lines) and not CODE_CLOSE.match(lines[j]):
            c = COMMENT.match(lines[j])
            if not c:
                raise ValueError(f"{rel}:{j + 1}: @code block without @endcode")
            body.append(c.group(1))
            j += 1
        if j == len(lines):
            raise ValueError(f"{rel}:{start}: @code block without @endcode")
        width = min((len(l) - len(l.lstrip()) for l in body if l.strip()), default=0)
        body = [l[width:] for l in body]
        count += 1
        blocks.append(Block(rel, start + 1, count, LANGS.get(lang, lang), body, fails, syn,
                            header=rel[len("include/"):],
                            first_lines=list(range(start + 1, j + 1))))
        i = j + 1
    return blocks


# --- cutting a block into namespace-scope items and statements ---------------

GIVEN = re.compile(r"^(\s*)(?://|/\*)\s*given:\s*(.*?)\s*(?:\*/)?\s*$")
TOP_KEYWORDS = re.compile(
    r"^(#|struct\b|class\b|union\b|enum\b|namespace\b|template\b|typedef\b|extern\b|"
    r"static_assert\b|__global__\b|\[\[)")
STATEMENT_KEYWORDS = {"return", "if", "for", "while", "switch", "do", "else", "co_await",
                      "co_return", "co_yield", "delete", "throw", "case", "goto", "break",
                      "continue", "new", "try", "catch"}
FUNCTION_HEAD = re.compile(r"^([A-Za-z_][\w:<>,\s\*&]*?)[\s\*&]+(~?[A-Za-z_]\w*(?:::~?\w+)*)\s*\(")


def strip_literals(line: str) -> str:
    """The line without comments, string and character literals (for brace counting)."""
    line = re.sub(r'"(?:\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(?:\\.|[^'\\])*'", "''", line)
    line = re.sub(r"/\*.*?\*/", "", line)
    return line.split("//", 1)[0]


def is_top_level(item: list[str]) -> bool:
    text = " ".join(strip_literals(l).strip() for l in item).strip()
    if TOP_KEYWORDS.match(text):
        return True
    m = FUNCTION_HEAD.match(text)
    if not m or m.group(1).split()[0] in STATEMENT_KEYWORDS or "=" in m.group(1):
        return False
    # a definition: the parameter list is followed by a body
    depth = 0
    for k in range(m.end() - 1, len(text)):
        depth += {"(": 1, ")": -1}.get(text[k], 0)
        if depth == 0:
            rest = text[k + 1:]
            return re.match(r"^\s*(const|noexcept|override|final|->\s*[\w:<>,\s\*&]+|\s)*\{", rest) is not None
    return False


def cut(block: Block) -> tuple[list[tuple[int, list[str]]], list[tuple[int, list[str]]]]:
    """(namespace-scope items, statements), each item with its first source line."""
    tops: list[tuple[int, list[str]]] = []
    stmts: list[tuple[int, list[str]]] = []
    item: list[str] = []
    item_line = 0
    depth = 0
    pending: list[str] = []   # comment and blank lines before an item
    pending_line = 0

    def finish():
        nonlocal item, pending
        if item:
            (tops if is_top_level(item) else stmts).append((item_line, pending + item))
        item, pending = [], []

    for line, src in zip(block.lines, block.first_lines):
        g = GIVEN.match(line)
        if g:
            line = g.group(1) + g.group(2)
        code = strip_literals(line).strip()
        if depth == 0 and not item:
            if not code:                      # a comment or blank line between items
                if not pending:
                    pending_line = src
                pending.append(line)
                continue
            item_line = pending_line if pending else src
        item.append(line)
        for ch in code:
            if ch in "{(":
                depth += 1
            elif ch in "})":
                depth -= 1
        if depth <= 0 and (code.endswith((";", "}")) or code.startswith("#")):
            depth = 0
            finish()
    if item:
        finish()
    if pending:
        stmts.append((pending_line, pending))
    return tops, stmts


def translation_unit(block: Block) -> str:
    out = list(CXX_PRELUDE if block.lang == "c++" else C_PRELUDE)
    if block.header:
        out.append(f"#include <{block.header}>")
    tops, stmts = cut(block)
    for line, item in tops:
        out.append(f'#line {line} "{block.path}"')
        out.extend(item)
    if stmts:
        out.append("void weft_doc_example(void) {")
        for line, item in stmts:
            out.append(f'#line {line} "{block.path}"')
            out.extend(item)
        out.append("}")
    return "\n".join(out) + "\n"


# --- compiling -----------------------------------------------------------------

@dataclass
class Result:
    block: Block
    ok: bool
    message: str
    skipped: bool = False


def precompile_prelude(cxx: str, root: Path, scratch: Path) -> None:
    """Precompiles the C++ prelude once (scratch/prelude.hpp.gch): every C++
    block then starts from it instead of parsing weft.hpp again. A compiler
    that cannot use it reads prelude.hpp itself, so this only saves time."""
    header = scratch / "prelude.hpp"
    header.write_text("\n".join(CXX_PRELUDE) + "\n")
    subprocess.run([cxx, "-x", "c++-header", "-std=c++20", "-I", str(root / "include"), "-I",
                    str(root / "src"), str(header), "-o", str(header) + ".gch"],
                   capture_output=True, cwd=root)


def check(block: Block, cxx: str, root: Path, scratch: Path) -> Result:
    if block.synopsis or block.lang not in ("c++", "c"):
        return Result(block, True, "skipped", skipped=True)
    source = translation_unit(block)
    flags = ["-x", "c++", "-std=c++20"] if block.lang == "c++" else ["-x", "c", "-std=c11"]
    if block.lang == "c++":
        flags += ["-include", str(scratch / "prelude.hpp")]
    if "#pragma omp" in source:
        flags.append("-fopenmp")
    name = re.sub(r"[^\w]", "_", block.path) + f"_{block.index}" + (".cpp" if block.lang == "c++" else ".c")
    src = scratch / name
    src.write_text(source)
    cmd = [cxx, *flags, *COMMON_FLAGS, "-I", str(root / "include"), "-I", str(root / "src"), str(src)]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=root)
    output = (proc.stdout + proc.stderr).strip()
    if block.fails_with is None:
        if proc.returncode == 0:
            return Result(block, True, "compiles")
        return Result(block, False, f"does not compile:\n{output}")
    if proc.returncode == 0:
        return Result(block, False, f"compiles, but is marked fails-with: {block.fails_with}")
    if block.fails_with not in output:
        return Result(block, False,
                      f"fails to compile, but without '{block.fails_with}':\n{output}")
    return Result(block, True, f"fails as marked ({block.fails_with})")


def documents(root: Path) -> list[str]:
    md = ["README.md"] + sorted(str(p.relative_to(root)) for p in (root / "docs").glob("*.md"))
    md += sorted(str(p.relative_to(root)) for p in root.glob("*/README.md")
                 if p.parent.name not in ("build", "docs") and not p.parent.name.startswith("."))
    headers = sorted(str(p.relative_to(root)) for p in (root / "include" / "weft").rglob("*")
                     if p.suffix in (".hpp", ".h"))
    return md + headers


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cxx", default=os.environ.get("CXX", "c++"))
    ap.add_argument("--root", default=str(Path(__file__).resolve().parents[2]))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--list", action="store_true", help="print the blocks found, compile nothing")
    ap.add_argument("--show", action="store_true", help="print each block's translation unit")
    ap.add_argument("files", nargs="*", help="only these files (relative to the root)")
    args = ap.parse_args()
    root = Path(args.root).resolve()

    blocks: list[Block] = []
    errors = 0
    for rel in args.files or documents(root):
        try:
            blocks += markdown_blocks(root, rel) if rel.endswith(".md") else header_blocks(root, rel)
        except ValueError as e:
            print(f"FAIL {rel}: {e}")
            errors += 1
    if args.list or args.show:
        for b in blocks:
            print(f"{b.name()} {b.lang}" + (f" fails-with: {b.fails_with}" if b.fails_with else "")
                  + (" synopsis" if b.synopsis else ""))
            if args.show:
                print(translation_unit(b))
        return 0

    with tempfile.TemporaryDirectory(prefix="weft-doc-examples-") as scratch, \
            concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        precompile_prelude(args.cxx, root, Path(scratch))
        results = list(pool.map(lambda b: check(b, args.cxx, root, Path(scratch)), blocks))
    compiled = skipped = 0
    for r in results:
        if r.skipped:
            skipped += 1
        elif r.ok:
            compiled += 1
        else:
            errors += 1
            print(f"FAIL {r.block.name()}: {r.message}\n")
    print(f"{len(blocks)} blocks: {compiled} as marked, {skipped} not compiled, {errors} failed")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
