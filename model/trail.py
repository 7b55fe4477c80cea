#!/usr/bin/env python3
"""Condense a Spin trail (spin -t -p output on stdin) for reading.

Prints one line per step: step number, process, model line, the label of
that line in the model (if any) and the first statement executed, so that a
counterexample reads as a sequence of the C code's steps (docs/MODEL.md maps
labels to the C code). Usage: spin -t -p [-D...] model.pml | trail.py model.pml
"""
import re
import sys

def labels_of(path):
    lab = {}
    pat = re.compile(r'^([a-z][a-z0-9_]*):')
    with open(path) as f:
        for no, line in enumerate(f, 1):
            m = pat.match(line)
            if m:
                lab[no] = m.group(1)
    return lab

def main():
    lab = labels_of(sys.argv[1]) if len(sys.argv) > 1 else {}
    names = {}
    step_re = re.compile(r'^\s*(\d+):\s+proc\s+(\d+) \((\w+)(?::\d+)?\) \S+:(\d+) \(state \d+\)\s+\[(.*)\]')
    last = None
    for line in sys.stdin:
        m = step_re.match(line)
        if not m:
            if 'assertion violated' in line or 'invalid end state' in line or 'acceptance' in line or 'cycle' in line:
                print('>>> ' + line.strip())
            continue
        step, proc, name, lno, stmt = m.groups()
        if (step, proc) == last:
            continue
        last = (step, proc)
        lno = int(lno)
        print('%5s %-8s %4d %-10s %s' % (step, name + proc, lno, lab.get(lno, ''), stmt[:70]))

main()
