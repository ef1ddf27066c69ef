#!/usr/bin/env python3
"""Runs a command and records or bounds its peak resident memory.

Usage:
  peak-rss.py --save FILE -- COMMAND [ARG...]
  peak-rss.py --above FILE --max MB -- COMMAND [ARG...]

The peak is ru_maxrss of the waited-for command, which counts the file pages
it mapped as well as its private memory, in MB (10^6 bytes). --save writes it
to FILE; --above fails (exit 1) unless it stays under the peak saved in FILE
plus MB, so that a bound holds whatever the binary's own size (a sanitizer
build, a static LLVM). A command that fails fails this too.
"""

import argparse
import resource
import subprocess
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--save")
    parser.add_argument("--above")
    parser.add_argument("--max", type=float)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    rc = subprocess.call(command)
    if rc != 0:
        sys.exit("peak-rss.py: the command failed with status %d" % rc)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1000.0
    if args.save:
        with open(args.save, "w") as f:
            f.write("%.1f\n" % peak)
        return
    with open(args.above) as f:
        bound = float(f.read()) + args.max
    print("peak RSS %.0f MB, %s the bound of %.0f MB" % (peak, "under" if peak < bound else "over",
                                                         bound))
    sys.exit(0 if peak < bound else 1)


if __name__ == "__main__":
    main()
