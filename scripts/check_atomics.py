#!/usr/bin/env python3
"""Every atomic stronger than relaxed says what it pairs with.

The project's rule (docs/DESIGN.md, section 8, "Memory-order argument"): each atomic uses the
weakest correct order, and each non-relaxed one carries a short comment that
names its order and what it pairs with. This check finds the statements of
shipped code (the library, the maps, the drop-in, rqbpf and the tools; not
the tests) that use such an order, or an atomic without _explicit (which is
seq_cst), and reports those whose statement has no comment attached that names the order
("acquire: pairs with ...") or what it pairs with: on the statement's own
lines, or in the comment lines right above it (macro definitions are checked
where they are used).

Usage: check_atomics.py FILE...   (exit 1 when a statement lacks its comment)
"""
import re
import sys

STRONG = re.compile(
    r"memory_order_(acquire|release|acq_rel|seq_cst|consume)\b"
    r"|\bRQSPINLOCK_\w*_(ACQUIRE|RELEASE)\b"
    r"|\batomic_(load|store|exchange|fetch_add|fetch_sub|fetch_or|fetch_and|fetch_xor"
    r"|compare_exchange_strong|compare_exchange_weak|flag_test_and_set|flag_clear)\s*\(")
NAMED = re.compile(r"\b(acquire|release|acq_rel|seq_cst|consume)\b|pairs with", re.I)


def split_code_comments(lines):
    """Per line: (code without comments, comment text)."""
    out, in_block = [], False
    for line in lines:
        code, note, i = "", "", 0
        while i < len(line):
            if in_block:
                end = line.find("*/", i)
                note += line[i:] if end < 0 else line[i:end]
                if end < 0:
                    break
                in_block, i = False, end + 2
            elif line.startswith("/*", i):
                in_block, i = True, i + 2
            elif line.startswith("//", i):
                note += line[i + 2:]
                break
            else:
                code += line[i]
                i += 1
        out.append((code, note))
    return out


def ends_statement(code):
    code = code.strip()
    return code.endswith((";", "{", "}")) or code.startswith("#")


def attached_comment(parsed, i):
    """Comment text on statement line i, the lines of its statement above
    it, and the comment lines right above the statement. A comment may
    cover a run of such statements (two release stores, say): statements
    above that are themselves non-relaxed atomics belong to the run."""
    text = parsed[i][1]
    j = i - 1
    while j >= 0:
        code, note = parsed[j]
        if code.strip() and ends_statement(code) and not STRONG.search(code):
            break
        text += " " + note
        j -= 1
    return text


def check(path):
    with open(path, encoding="utf-8") as f:
        parsed = split_code_comments(f.read().split("\n"))
    bad, in_macro = 0, False
    for i, (code, _) in enumerate(parsed):
        macro_line = in_macro or code.lstrip().startswith("#")
        in_macro = macro_line and code.rstrip().endswith("\\")
        if macro_line or "signal_fence" in code:
            continue
        if not STRONG.search(code):
            continue
        if not NAMED.search(attached_comment(parsed, i)):
            print(f"{path}:{i + 1}: non-relaxed atomic without an 'order: pairs with' comment: "
                  f"{code.strip()}")
            bad += 1
    return bad


def main(paths):
    bad = sum(check(p) for p in paths)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
