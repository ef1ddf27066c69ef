#!/usr/bin/env python3
"""Partitions the training models' joint graphs and reports or checks them.

usage: partition-report.py [--bin-dir DIR] [--models DIR] [--work DIR]
       partition-report.py --check MODEL [--partition=min-cut|save-all] ...

Without --check: for mlp, convnet_train, tinylm and sdpa_attention runs
gc-import, gc-opt --joint and gc-partition --report, and prints a markdown
table of the bytes the forward graph saves for the backward graph under the
default partition (save-all) and under min-cut, with gradients for the
parameters only (training's default). It fails if min-cut saves more on any
model, or not strictly less on a model named by --require-fewer.

With --check MODEL: partitions MODEL's joint graph, runs the forward graph
on in*.npy (checking out*.npy and the buffers it mutates), then the backward
graph on the saved values and tangent*.npy, checking every grad.*.npy.
Tools come from --bin-dir, else from PATH (lit puts the build's bin/ first).
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile

MODELS = ["mlp", "convnet_train", "tinylm", "sdpa_attention"]
REPORT_LINE = re.compile(r"^@\S+ (save-all|min-cut): (\d+) saved values, (\d+) bytes$")


def run(tool_dir, tool, *args):
    exe = os.path.join(tool_dir, tool) if tool_dir else tool
    proc = subprocess.run([exe, *args], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit("FAILED: %s %s\n%s%s" % (tool, " ".join(args), proc.stdout, proc.stderr))
    return proc


def joint_graph(opts, model, work, grad_inputs):
    aten, joint = os.path.join(work, "aten.gc"), os.path.join(work, "joint.gc")
    run(opts.bin_dir, "gc-import", os.path.join(opts.models, model, "model.pt2"), "-o", aten)
    run(opts.bin_dir, "gc-opt", aten, "--joint", *(["--grad-inputs"] if grad_inputs else []),
        "-o", joint)
    return joint


def report(opts):
    print("| model | default (save-all) saved bytes | min-cut saved bytes "
          "| values saved (default / min-cut) |")
    print("| --- | ---: | ---: | ---: |")
    failures = []
    if opts.work:
        os.makedirs(opts.work, exist_ok=True)
    for model in MODELS:
        with tempfile.TemporaryDirectory(dir=opts.work) as work:
            joint = joint_graph(opts, model, work, grad_inputs=False)
            err = run(opts.bin_dir, "gc-partition", joint, "--report",
                      "-o", os.path.join(work, "part.gc")).stderr
        rows = {}
        for line in err.splitlines():
            m = REPORT_LINE.match(line)
            if m:
                rows[m.group(1)] = (int(m.group(2)), int(m.group(3)))
        default, mincut = rows["save-all"], rows["min-cut"]
        print("| %s | %d | %d | %d / %d |" % (model, default[1], mincut[1], default[0], mincut[0]))
        if mincut[1] > default[1]:
            failures.append("%s: min-cut saves more bytes than save-all" % model)
        if model in opts.require_fewer and mincut[1] >= default[1]:
            failures.append("%s: min-cut saves no fewer bytes than save-all" % model)
    if failures:
        sys.exit("FAILED: " + "; ".join(failures))


def graph_header(text, graph):
    """The input and output lines of graph @graph in a module's text form."""
    start = text.index("graph @%s(" % graph)
    body = text.index("{\n", start)
    end = text.index("\n  }\n", body)
    returns = text[text.rindex("return ", body, end):end]
    return text[start:body], returns


def check(opts):
    model_dir = os.path.join(opts.models, opts.check)
    work = opts.work
    os.makedirs(work, exist_ok=True)
    if opts.gc_compile:
        # The whole training chain in one gc-compile process.
        archive = os.path.join(opts.models, opts.check, "model.pt2")
        train = ["--train", "--grad-inputs", "--partition=" + opts.partition]
        if opts.no_fallback:
            train.append("--no-fallback")
        text = run(opts.bin_dir, "gc-compile", archive, *train, "--compile-to=partitioned",
                   "--emit=text", "-o", "-").stdout
        part = os.path.join(work, "part.gcpkg")
        run(opts.bin_dir, "gc-compile", archive, *train, "--no-cache", "-o", part)
    else:
        joint = joint_graph(opts, opts.check, work, grad_inputs=True)
        part = os.path.join(work, "part.gc")
        run(opts.bin_dir, "gc-partition", joint, "--partition=" + opts.partition, "-o", part)
        text = run(opts.bin_dir, "gc-opt", part, "--passes=", "--emit=text", "-o", "-").stdout
    inputs, fw_returns = graph_header(text, "forward")
    if opts.compiled and not opts.gc_compile:
        # Both graphs through the backend into one package with a forward
        # and a backward entry point; gc-run runs either by name.
        loops, kernels = os.path.join(work, "part.loops.gc"), os.path.join(work, "part.kernels.gc")
        run(opts.bin_dir, "gc-lower", part, *(["--no-fallback"] if opts.no_fallback else []),
            "-o", loops)
        run(opts.bin_dir, "gc-codegen", loops, "-o", kernels)
        part = os.path.join(work, "part.gcpkg")
        run(opts.bin_dir, "gc-package", kernels, "-o", part)

    fw_dir = os.path.join(work, "forward")
    args = [part, "--graph", "forward", "--inputs-dir", model_dir, "--output-dir", fw_dir]
    for out in sorted(glob.glob(os.path.join(model_dir, "out*.npy"))):
        args += ["--expect", out]
    # PyTorch's buffers after one forward, where the corpus has them.
    for buf in re.findall(r'buffer_mutation\("([^"]+)"\)', fw_returns):
        expected = os.path.join(opts.models, "core_aten", opts.check, "buffer_after1.%s.npy" % buf)
        if os.path.exists(expected):
            args += ["--expect-buffer", "%s=%s" % (buf, expected)]
    os.makedirs(fw_dir, exist_ok=True)
    print(run(opts.bin_dir, "gc-run", *args).stdout, end="")

    saved = len(re.findall(r"saved_for_backward\(", fw_returns))
    args = [part, "--graph", "backward", "--rtol", "1e-3", "--atol", "1e-4"]
    for i in range(saved):
        args += ["--input", os.path.join(fw_dir, "saved%d.npy" % i)]
    for tangent in sorted(glob.glob(os.path.join(model_dir, "tangent*.npy"))):
        args += ["--input", tangent]
    for grad in sorted(glob.glob(os.path.join(model_dir, "grad.param.*.npy"))):
        args += ["--expect-grad", "%s=%s" % (os.path.basename(grad)[len("grad.param."):-4], grad)]
    user_inputs = re.findall(r'user_input\("([^"]+)"\)', inputs)
    for grad in sorted(glob.glob(os.path.join(model_dir, "grad.in*.npy"))):
        index = int(os.path.basename(grad)[len("grad.in"):-4])
        args += ["--expect-grad", "%s=%s" % (user_inputs[index], grad)]
    print("%s: %d saved values" % (opts.partition, saved))
    print(run(opts.bin_dir, "gc-run", *args).stdout, end="")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin-dir", default="", help="where the gc tools are (default: PATH)")
    parser.add_argument("--models", default=os.path.join(here, "..", "test", "Models", "Inputs"))
    parser.add_argument("--work", default=None, help="scratch directory")
    parser.add_argument("--check", metavar="MODEL", help="check one model's partition")
    parser.add_argument("--partition", default="min-cut", choices=["min-cut", "save-all"])
    parser.add_argument("--compiled", action="store_true",
                        help="--check: run the forward and backward graphs from a package "
                             "(gc-lower, gc-codegen, gc-package) instead of the interpreter")
    parser.add_argument("--gc-compile", action="store_true",
                        help="--check: make the package with gc-compile --train instead of the "
                             "separate tools")
    parser.add_argument("--no-fallback", action="store_true",
                        help="--check with --compiled or --gc-compile: refuse reference-kernel "
                             "fallbacks (gc-lower --no-fallback)")
    parser.add_argument("--require-fewer", metavar="MODEL", action="append", default=[],
                        help="fail unless min-cut saves strictly fewer bytes on MODEL")
    opts = parser.parse_args()
    if opts.check:
        if not opts.work:
            sys.exit("--check needs --work DIR")
        check(opts)
    else:
        report(opts)


if __name__ == "__main__":
    main()
