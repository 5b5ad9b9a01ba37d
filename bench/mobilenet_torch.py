#!/usr/bin/python3
"""bench/mobilenet_torch.py -- the mobilenet_v2 training step of ../shared/models/mobilenet_v2.hlo
(a PyTorch/XLA dump: batch 96, 3x224x224, batch norm in training mode, cross-entropy, SGD)
timed through hlorun and the same step in PyTorch on the CPU (torchvision's mobilenet_v2,
oneDNN convolutions), NCHW and channels_last, with the same thread count, in one run.

usage: python3 bench/mobilenet_torch.py [--hlorun PATH] [--model PATH] [--threads N]
                                        [--steps N] [--batch N] [--json OUT] [--isa avx2]

Needs python3-torch and python3-torchvision (Debian packages); without them it says so and
exits 0 (the hloc figure alone is printed).  Prints per-step median seconds for each and the
ratio torch/hloc (> 1: hloc faster), plus hlorun's peak RSS and arena.

--isa avx2 runs both as an AVX2 host would: hloc's code for x86-64-v3 with its runtime held to
AVX2 (HLO_RT_ISA), PyTorch's kernels held to AVX2 (ATEN_CPU_CAPABILITY) and oneDNN for both
(ONEDNN_MAX_CPU_ISA).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def hloc_step(args):
    cmd = [args.hlorun, args.model, "--random-inputs", "--threads", str(args.threads),
           "--benchmark", str(args.steps), "-v"] + (["--target-cpu=x86-64-v3"] if args.isa == "avx2" else [])
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("hlorun failed (%d): %s" % (r.returncode, r.stderr[-500:]))
    med = float(re.search(r"median_ms=([0-9.]+)", r.stdout).group(1)) / 1e3
    rss = re.search(r"peak RSS (\d+) bytes.*arena (\d+) bytes", r.stderr)
    return med, (int(rss.group(1)), int(rss.group(2))) if rss else (None, None)


def torch_step(args, channels_last):
    import torch
    import torchvision
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    model = torchvision.models.mobilenet_v2(num_classes=1000)
    model.train()
    x = torch.randn(args.batch, 3, 224, 224)
    y = torch.randint(0, 1000, (args.batch,))
    if channels_last:
        model = model.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()

    step()  # warm-up (oneDNN primitive creation)
    times = []
    for _ in range(args.steps):
        t = time.perf_counter()
        step()
        times.append(time.perf_counter() - t)
    times.sort()
    return times[len(times) // 2]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hlorun", default=os.path.join(ROOT, "build", "hlorun"))
    ap.add_argument("--model", default=os.path.join(ROOT, "..", "shared", "models", "mobilenet_v2.hlo"))
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--batch", type=int, default=96)
    ap.add_argument("--json")
    ap.add_argument("--isa", choices=["avx2"], help="run both as an AVX2 host would (above)")
    args = ap.parse_args()
    if args.isa == "avx2":  # before torch is imported, and inherited by hlorun
        os.environ.update(HLO_RT_ISA="avx2", ATEN_CPU_CAPABILITY="avx2", ONEDNN_MAX_CPU_ISA="AVX2")

    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            info = f.read()
        cpu = "%s, family %s model %s" % (re.search(r"model name\s*: (.*)", info).group(1),
                                          re.search(r"cpu family\s*: (\d+)", info).group(1),
                                          re.search(r"model\s*: (\d+)", info).group(1))
    except (OSError, AttributeError):
        pass
    print("mobilenet_v2 training step, batch %d, %d threads, %s%s" % (
        args.batch, args.threads, cpu, ", held to AVX2 (--isa avx2)" if args.isa else ""), flush=True)
    h, (rss, arena) = hloc_step(args)
    out = {"cpu": cpu, "isa": args.isa, "threads": args.threads, "hloc_s": h, "hloc_peak_rss": rss, "hloc_arena": arena}
    print("hloc (hlorun)          %8.3f s per step  (peak RSS %s, arena %s bytes)" % (h, rss, arena), flush=True)
    try:
        import torch  # noqa: F401
        import torchvision  # noqa: F401
    except ImportError:
        print("PyTorch: python3-torch / python3-torchvision not installed; only hloc timed")
    else:
        for name, cl in (("channels_last", True), ("NCHW", False)):
            t = torch_step(args, cl)
            out["torch_%s_s" % name] = t
            print("PyTorch %-14s %8.3f s per step  torch/hloc %.2f" % (name, t, t / h), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
