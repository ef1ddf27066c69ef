"""Checks a --time-trace file: Chrome trace-event JSON whose complete ("X")
events have names, non-negative times and integer threads, and nest: every
event of the main thread lies inside the tool's event, every pass inside the
tool or a stage, every kernel batch (on any thread) inside the emit-kernels
pass, and so every LLVM step. Prints the names of the events, one a line, sorted and unique, then the
number of threads that compiled kernels."""
import json
import sys

# Microseconds of rounding between events measured by different clocks reads.
SLACK = 2


def inside(inner, outer):
    return (outer["ts"] - SLACK <= inner["ts"]
            and inner["ts"] + inner["dur"] <= outer["ts"] + outer["dur"] + SLACK)


def fail(message):
    sys.exit("check_trace: " + message)


def main(path):
    with open(path) as f:
        trace = json.load(f)
    events = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    if not events:
        fail("no complete events")
    for e in events:
        for key in ("name", "cat", "ts", "dur", "pid", "tid"):
            if key not in e:
                fail("event without '%s': %r" % (key, e))
        if e["ts"] < 0 or e["dur"] < 0 or not isinstance(e["tid"], int):
            fail("bad times or thread: %r" % e)
    tools = [e for e in events if e["cat"] == "tool"]
    if len(tools) != 1 or tools[0]["tid"] != 0:
        fail("want one tool event on thread 0, got %r" % tools)
    stages = [e for e in events if e["cat"] == "stage"]
    for e in events:
        if e["tid"] == 0 and not inside(e, tools[0]):
            fail("%r is outside the tool's event" % e["name"])
        if e["cat"] == "pass" and not any(inside(e, s) for s in stages + tools):
            fail("pass %r is in no stage" % e["name"])
    emits = [e for e in events if e["name"] == "emit-kernels"]
    batches = [e for e in events if e["cat"] == "kernels"]
    for b in batches + [e for e in events if e["cat"] == "llvm"]:
        if not any(inside(b, e) for e in emits):
            fail("%r is outside emit-kernels" % b["name"])
    for name in sorted({e["name"] for e in events if e["cat"] != "kernels"}):
        print(name)
    if batches:
        print("kernel batches: %d, on %d threads" % (len(batches),
                                                     len({b["tid"] for b in batches})))


if __name__ == "__main__":
    main(sys.argv[1])
