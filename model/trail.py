#!/usr/bin/env python3
"""Condense a Spin trail for reading: spin -t -p [-D...] model.pml | trail.py

Prints one line per step: step number, process, model line and the first
statement of the step, dropping the bookkeeping of the context programs, so
that a counterexample reads as a sequence of the C code's steps. (Spin's
line numbers follow its own preprocessing and can be a few lines off the
source after an #ifdef'd block; the statement text identifies the step.)
"""
import re
import sys

NOISE = re.compile(r'^(else|\(1\)|sub-sequence|IF|\.\(goto\)|ok = 0|chk = 0|ret = 0|'
                   r'L = |op = |pc = |val = 0|n = 0|j = 0|t = \(|failed|\(\(op<4\)\)|'
                   r'\(\(\(pc<5\)|\(\(c!=0\)\)|\(\(c==0\)\))')


def main():
    step_re = re.compile(r'^\s*(\d+):\s+proc\s+(\d+) \((\w+)(?::\d+)?\) \S+:(\d+) '
                         r'\(state \d+\)\s+\[(.*)\]')
    last = None
    for line in sys.stdin:
        m = step_re.match(line)
        if not m:
            if 'violated' in line or 'invalid end state' in line:
                print('>>> ' + line.strip())
            continue
        step, proc, name, lno, stmt = m.groups()
        if (step, proc) == last or NOISE.match(stmt):
            continue
        last = (step, proc)
        who = {'Thread0': 'T0', 'Handler': 'H'}.get(name, 'T%d' % (int(proc) - 1))
        print('%5s %-3s %4s  %s' % (step, who, lno, stmt[:90]))


main()
