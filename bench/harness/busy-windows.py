#!/usr/bin/env python3
"""How busy the GPU machine was while a grading ran, and with what,
from gpu-sampled-throughput.sh's folder.

Usage: busy-windows.py OUT [JOBS [SECONDS]]
  OUT  the folder (cpu.txt, gpu.txt, w/timeline-JOBS.tsv); JOBS  the
  grading's --jobs (default 16); SECONDS  the window (default 10).

For each window: the CPU's busy share (all cores), the GPU's utilization,
the most GPU memory in use, and the runs in flight by phase (their mean
count over the window). Then, for each phase, its runs' seconds, and the
core-seconds and GPU-busy seconds sampled while they ran: exact for a
grading one at a time (--jobs 1, one run in flight), shared out among
the phases in flight otherwise. Last, the whole grading's means: the
CPU's busy share and the GPU's utilization over every sample up to the
last run's end.
"""
import collections
import csv
import datetime
import sys

out = sys.argv[1]
jobs = sys.argv[2] if len(sys.argv) > 2 else "16"
width = float(sys.argv[3]) if len(sys.argv) > 3 else 10.0

lines = [l.split() for l in open(f"{out}/cpu.txt")]
cpu = [(float(l[0]), int(l[1]) / 10) for l in lines if " ".join(l[2:]) == f"--jobs {jobs}"]
if not cpu:
    sys.exit(f"busy-windows: no CPU sample of a grading at --jobs {jobs} in {out}/cpu.txt")
# The grading starts within half a second before its first sample.
start = cpu[0][0] - 0.25
cpu = [(t - start, busy) for t, busy in cpu]
gpu = []
for line in open(f"{out}/gpu.txt"):
    stamp, used, memory = line.strip().split(", ")
    at = datetime.datetime.strptime(stamp, "%Y/%m/%d %H:%M:%S.%f")
    at = at.replace(tzinfo=datetime.timezone.utc).timestamp() - start
    gpu.append((at, int(used.split()[0]), int(memory.split()[0])))
runs = [r for r in csv.DictReader(open(f"{out}/w/timeline-{jobs}.tsv"), delimiter="\t")
        if r["phase"] != "exercise"]
for r in runs:
    r["from"], r["to"] = float(r["start"]), float(r["end"])
end = max(r["to"] for r in runs)


def mean(values):
    return sum(values) / len(values) if values else 0.0


at = 0.0
while at < end:
    upto = at + width
    flight = collections.Counter()
    for r in runs:
        overlap = min(r["to"], upto) - max(r["from"], at)
        if overlap > 0:
            flight[r["phase"]] += overlap / width
    busy = mean([b for t, b in cpu if at <= t < upto])
    used = mean([u for t, u, _ in gpu if at <= t < upto])
    memory = max([m for t, _, m in gpu if at <= t < upto], default=0)
    phases = ", ".join(f"{p} {n:.1f}" for p, n in flight.most_common())
    print(f"{at:4.0f} to {upto:4.0f} s: CPU {busy:3.0f}%, GPU {used:3.0f}%, {memory / 1024:5.1f} GiB; {phases}")
    at = upto

# Each sample's core-seconds and GPU-busy seconds, shared among the runs in
# flight at it (one run at --jobs 1).
cores = int(open(f"{out}/device.txt").read().split()[-1])
seconds, core_s, gpu_s = collections.Counter(), collections.Counter(), collections.Counter()
for r in runs:
    seconds[r["phase"]] += r["to"] - r["from"]
for samples, into, scale in ((cpu, core_s, cores / 100), ([(t, u) for t, u, _ in gpu], gpu_s, 1 / 100)):
    for t, value in samples:
        there = [r["phase"] for r in runs if r["from"] <= t < r["to"]]
        for phase in there:
            into[phase] += value * scale * 0.5 / len(there)
print()
for phase in sorted(seconds):
    print(f"{phase}: {seconds[phase]:.1f} s of runs, {core_s[phase]:.1f} core-seconds, "
          f"{gpu_s[phase]:.1f} s of the GPU busy")
whole_cpu = mean([b for t, b in cpu if t < end])
whole_gpu = mean([u for t, u, _ in gpu if 0 <= t < end])
print(f"busy-windows: over {end:.1f} s, the CPU {whole_cpu:.0f}% busy and the GPU {whole_gpu:.0f}% on average")
