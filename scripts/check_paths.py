#!/usr/bin/env python3
"""Every file path that a doc or a comment names exists (issue: stale references).

Checks docs/*.md, README.md, CONTRIBUTING.md and the comments of tracked C
sources, headers, CMake files and scripts. A path is a token with a known
top-level directory of this repository (src/, bpf/, ...) or a bare file name
ending in a source extension. A bare name must exist somewhere in the tree;
a path must exist (a glob must match). Paths of other projects (the kernel,
libbpf, ...) are skipped where the line says whose they are. Exit 1 and list
each stale reference.
"""
import fnmatch
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
TOPS = ("src", "bpf", "maps", "tools", "tests", "docs", "scripts", "pthread", "model",
        "include", "man", "examples", "cmake", ".ci", "bench", "util")
EXTS = ("c", "h", "md", "sh", "py", "txt", "cmake", "in", "map", "pml", "cpp", "bpf.c", "json")
# A line that says the path is another project's, or a build output's.
FOREIGN = re.compile(r"linux|kernel|libbpf|upstream|origin|github|selftests|bootstrap|glibc|"
                     r"liburcu|urcu|ck_|concurrency kit|bpftool|ubpf|relacy|debian|/usr/|"
                     r"asm-generic|build/|\$\{|\$out|\$\(|\bmktemp|/tmp/", re.I)
# Names that stand for the reader's own files in examples, or for files a
# tool generates; never files of this repository.
EXAMPLES = {
    "app.c",  # README, docs: the user's program
    "prog.bpf.c",  # README, docs/BPF.md: the user's BPF program
    "run.json", "abba.json",  # docs/BENCHMARKS.md: rqtorture --json outputs
    "pan.c", "result.txt",  # model/check.sh: Spin's generated verifier, its output
    "summary.txt", "summary.csv", "goals.txt",  # make bench's outputs (build/bench-results/)
}
# Where the system's headers are (a header named without its directory).
SYSTEM_INCLUDES = ["/usr/include"] + glob.glob("/usr/lib/gcc/*/*/include")
TOKEN = re.compile(r"(?<![\w./-])((?:[\w.+-]+/)*[\w*+-]+\.(?:%s))(?![\w/])" % "|".join(
    re.escape(e) for e in sorted(EXTS, key=len, reverse=True)))


def system_header(p):
    return p.endswith(".h") and any(os.path.exists(os.path.join(d, p)) for d in SYSTEM_INCLUDES)


def tracked():
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    return [f for f in out.splitlines() if os.path.exists(os.path.join(ROOT, f))]


def comment_lines(path, text):
    """(line number, text) of the comment lines of a source file; every line of a doc."""
    if path.endswith(".md") or path.endswith((".1", ".3", ".7")):
        return list(enumerate(text.splitlines(), 1))
    out, in_block = [], False
    for n, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if path.endswith((".c", ".h", ".cpp")):
            if in_block or s.startswith(("/*", "*", "//")) or "/*" in s or "//" in s:
                out.append((n, line))
            if "/*" in s and "*/" not in s.split("/*", 1)[1]:
                in_block = True
            if in_block and "*/" in s:
                in_block = False
        elif "#" in s:
            out.append((n, line[line.index("#"):]))
    return out


def main():
    files = tracked()
    names = {os.path.basename(f) for f in files}
    dirs = set()
    for f in files:
        d = os.path.dirname(f)
        while d:
            dirs.add(d)
            d = os.path.dirname(d)
    checked = [f for f in files
               if (f.startswith("docs/") and f.endswith(".md")) or f in ("README.md", "CONTRIBUTING.md")
               or (f.endswith((".c", ".h", ".cpp", ".sh", ".py", ".cmake")) or
                   os.path.basename(f) == "CMakeLists.txt")]
    bad = 0
    for f in checked:
        if "/tests/progs/" in f or "/fuzz-regressions/" in f:
            continue
        with open(os.path.join(ROOT, f), encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        for n, line in comment_lines(f, text):
            if FOREIGN.search(line):
                continue
            for m in TOKEN.finditer(line):
                p = m.group(1).rstrip(".")
                if "/" in p:
                    # Another project's path; a system header (bpf/bpf_helpers.h).
                    if p.split("/", 1)[0] not in TOPS or system_header(p):
                        continue
                    ok = any(fnmatch.fnmatch(x, p) for x in files) if "*" in p else (
                        p in dirs or os.path.exists(os.path.join(ROOT, p)))
                    # A path relative to the part the text is about
                    # (docs/VERIFIER.md's tests/ is bpf/verifier/tests/).
                    ok = ok or any(fnmatch.fnmatch(x, "*/" + p) for x in files)
                else:
                    ok = any(fnmatch.fnmatch(x, p) for x in names) if "*" in p else p in names
                    ok = ok or p in EXAMPLES or p + ".in" in names or system_header(p)
                if not ok:
                    print(f"{f}:{n}: names {p}, which does not exist")
                    bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
