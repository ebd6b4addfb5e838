#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The report of make bench: reads the guest's points (one line a measured
# point: "<rep> <stack> <layer> <point> name=value..."), takes the median
# of each figure over the repetitions, prints the table with the ratios of
# ours (its 2.1 and its 2.0 sessions) to mainline, to each other, to
# nvme-rdma and to raw rxe, and writes it all as JSON.

import argparse
import json
import os
import re
import statistics
import subprocess
import sys

# Ours twice: speaking protocol 2.1 (its default) and held to 2.0.
OURS = ["ours-2.1", "ours-2.0"]
STACKS = OURS + ["mainline", "nvme"]
COLUMNS = [("iops", "ops/s", "{:.0f}"), ("mib_s", "MiB/s", "{:.2f}"),
           ("p50_us", "p50 us", "{:.0f}"), ("p99_us", "p99 us", "{:.0f}"),
           ("cpu_us_per_io", "CPU us/IO", "{:.0f}"),
           ("pkts_per_io", "pkts/IO", "{:.2f}"),
           ("top_cpu_pct", "top CPU %", "{:.0f}")]


def read_points(path):
    """{(stack, layer, point): {figure: [value per repetition]}}"""
    runs = {}
    for line in open(path):
        f = line.split()
        if len(f) < 5:
            continue
        _, stack, layer, point = f[:4]
        figs = runs.setdefault((stack, layer, point), {})
        for kv in f[4:]:
            k, _, v = kv.partition("=")
            try:
                figs.setdefault(k, []).append(float(v))
            except ValueError:
                pass
    return runs


def medians(runs):
    return {key: {k: statistics.median(v) for k, v in figs.items()}
            for key, figs in runs.items()}


def raw_reference(med, point):
    """The raw rxe figure an rtrs or fio point is held against: for queue
    depth 1, the round trips per second ib_write_lat makes at 4 KiB; else
    the messages per second of ib_write_bw at the same size (128 KiB for
    the 124 KiB points)."""
    size = point.split("-")[1] if point.count("-") >= 2 else ""
    if point.endswith("qd1") and size == "4k":
        lat = med.get(("raw", "perftest", "write_lat-4k"), {}).get("p50_us")
        return 1e6 / lat if lat else None
    ref = {"4k": "write_bw-4k", "124k": "write_bw-128k",
           "128k": "write_bw-128k", "1m": "write_bw-1m"}.get(size)
    return med.get(("raw", "perftest", ref), {}).get("iops") if ref else None


def split_name(name):
    """(stack, point) of a profile pass file's name, STACK-POINT."""
    for stack in STACKS:
        if name.startswith(stack + "-"):
            return stack, name[len(stack) + 1:]
    return None, None


def module_group(stack):
    """The modules of a stack, as --modules names them: both of ours are
    the same build."""
    return "ours" if stack in OURS else stack


# Where a perf sample of the profile pass falls.  The transport of an
# rtrs stack is its three modules, of nvme the nvme-rdma and nvmet ones;
# "users" are the modules on top (the benchmark users, rnbd), "rdma" the
# RDMA core, "kernel" the rest of the kernel (network stack, block layer,
# scheduler, other modules), "user" user space (fio, perf itself).
TRANSPORT = {"ours-2.1": r"rtrs_(core|client|server)",
             "ours-2.0": r"rtrs_(core|client|server)",
             "mainline": r"rtrs_(core|client|server)",
             "nvme": r"nvme_rdma|nvmet_rdma|nvmet|nvme_fabrics|nvme_core"}
IDLE = re.compile(r"safe_halt|^default_idle|^cpu_idle|^do_idle|"
                  r"^arch_cpu_idle|^acpi_idle|^intel_idle|^mwait_idle")
CATEGORIES = ["transport", "users", "rxe", "rdma", "kernel", "user"]


def classify(stack, dso, sym):
    if not dso.startswith("["):
        return "user"
    mod = dso.strip("[]")
    if mod == "kernel.kallsyms":
        return "idle" if IDLE.search(sym) else "kernel"
    if re.fullmatch(TRANSPORT.get(stack, r"$^"), mod):
        return "transport"
    if re.fullmatch(r"rtrs_bench_(clt|srv)|rnbd_(client|server)", mod):
        return "users"
    if mod == "rdma_rxe":
        return "rxe"
    if re.fullmatch(r"ib_core|rdma_cm|ib_cm|iw_cm", mod):
        return "rdma"
    return "kernel"


def module_symbols(specs):
    """{stack: {symbol: module}} from the text symbols of the modules
    under each STACK=DIR of specs ("any" for every stack).  perf in the
    guest finds no module's file (ours are not under /lib/modules) and
    puts every kernel sample under [kernel.kallsyms], with the symbol
    resolved through /proc/kallsyms: its module is told by its name."""
    out = {}
    for spec in specs or []:
        stack, _, top = spec.partition("=")
        syms = out.setdefault(stack, {})
        for d, _, files in os.walk(top):
            for name in files:
                if not name.endswith(".ko"):
                    continue
                mod = name[:-3].replace("-", "_")
                nm = subprocess.run(["nm", "--defined-only", os.path.join(d, name)],
                                    capture_output=True, text=True, check=False)
                for line in nm.stdout.splitlines():
                    f = line.split()
                    if len(f) == 3 and f[1] in "tT":
                        syms.setdefault(f[2], mod)
    return out


def read_profile(path, stack, modsyms):
    """Samples by category, and the busiest symbols, of one profiled
    point (perf report -F sample,dso,sym with '|' between the fields)."""
    cats = dict.fromkeys(CATEGORIES + ["idle"], 0)
    syms = []
    for line in open(path):
        f = [x.strip() for x in line.split("|")]
        if len(f) < 3 or not f[0].isdigit():
            continue
        n, dso, sym = int(f[0]), f[1], re.sub(r"^\[.\] ", "", f[2])
        if dso == "[kernel.kallsyms]":
            mod = (modsyms.get(module_group(stack), {}).get(sym) or
                   modsyms.get("any", {}).get(sym))
            if mod:
                dso = f"[{mod}]"
        c = classify(stack, dso, sym)
        cats[c] += n
        if c != "idle":
            syms.append((n, c, dso, sym))
    return cats, sorted(syms, reverse=True)


def profiles(folder, modsyms):
    """{(stack, point): (samples by category, busiest symbols)}"""
    out = {}
    for name in sorted(os.listdir(folder)):
        stack, point = split_name(name[:-len(".txt")])
        if name.endswith(".txt") and stack:
            out[(stack, point)] = read_profile(os.path.join(folder, name), stack,
                                               modsyms)
    return out


def print_profiles(prof, detail, out):
    """The share of each category in the busy samples of a point, and
    how much faster the point could be at most if its transport took no
    CPU at all (busy / (busy - transport)): the bound holds where the
    point is CPU bound.  The busiest symbols go to DETAIL."""
    doc = {}
    print("\nWhere the CPU goes (profile pass: perf cpu-clock samples of both "
          "vCPUs while the point ran; % of busy samples)", file=out)
    print("  " + f"{'point':<20}{'stack':<10}{'busy%':>7}" +
          "".join(f"{c:>10}" for c in CATEGORIES) + f"{'bound':>8}", file=out)
    last = None
    for (stack, point), (cats, syms) in sorted(
            prof.items(), key=lambda kv: (kv[0][1], STACKS.index(kv[0][0]))):
        total = sum(cats.values())
        busy = total - cats["idle"]
        if busy <= 0:
            continue
        share = {c: 100.0 * cats[c] / busy for c in CATEGORIES}
        bound = busy / (busy - cats["transport"]) if busy > cats["transport"] else None
        doc.setdefault(point, {})[stack] = {
            "samples": total, "busy_pct": round(100.0 * busy / total, 1),
            "share_pct": {c: round(v, 1) for c, v in share.items()},
            "bound": round(bound, 3) if bound else None}
        name = point if point != last else ""
        last = point
        print("  " + f"{name:<20}{stack:<10}{100.0 * busy / total:>7.1f}" +
              "".join(f"{share[c]:>10.1f}" for c in CATEGORIES) +
              f"{fmt(bound):>8}", file=out)
        print(f"{stack} {point}: {busy} busy samples of {total}", file=detail)
        for n, c, dso, sym in syms[:15]:
            print(f"  {100.0 * n / busy:6.2f}%  {c:<10} {dso:<20} {sym}",
                  file=detail)
        print(file=detail)
    print("  bound: at most this many times faster if the transport's CPU "
          "were none (where the point is CPU bound)", file=out)
    return doc


# The counts of the profile pass (tests/e2e/bench.sh, COUNTED), in the
# order of the table.
COUNTS = [("cq_polls", "CQ polls"), ("completions", "completions"),
          ("work_items", "work items"), ("switches", "switches"),
          ("wakeups", "wakeups"), ("softirqs", "softirqs")]


def read_counts(folder, points_path):
    """{(stack, point): {count: per IO}} from the .count files of the
    profile pass and the IOs each profiled point made."""
    ops = {(s, p): figs["ops"][0]
           for (s, _, p), figs in read_points(points_path).items()
           if figs.get("ops") and figs["ops"][0] > 0}
    out = {}
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".count"):
            continue
        stack, point = split_name(name[:-len(".count")])
        if (stack, point) not in ops:
            continue
        counts = {}
        for line in open(os.path.join(folder, name)):
            f = line.split()
            if len(f) == 2 and f[1].isdigit():
                counts[f[0]] = int(f[1]) / ops[(stack, point)]
        out[(stack, point)] = counts
    return out


def print_counts(counts, out):
    """Events per IO of each profiled point."""
    doc = {}
    print("\nWork per IO (profile pass: tracefs counts on both vCPUs while the "
          "point ran, all tasks, divided by the point's IOs)", file=out)
    print("  " + f"{'point':<20}{'stack':<10}" +
          "".join(f"{h:>12}" for _, h in COUNTS), file=out)
    last = None
    for (stack, point), c in sorted(
            counts.items(), key=lambda kv: (kv[0][1], STACKS.index(kv[0][0]))):
        doc.setdefault(point, {})[stack] = {k: round(v, 3) for k, v in c.items()}
        name = point if point != last else ""
        last = point
        print("  " + f"{name:<20}{stack:<10}" +
              "".join(f"{fmt(c.get(k)):>12}" for k, _ in COUNTS), file=out)
    print("  completions: what the CQ polls returned, client and server; work "
          "items: workqueue items run, the server's CQ polling among them",
          file=out)
    return doc


def ratio(a, b):
    return round(a / b, 3) if a and b else None


def fmt(v, f="{:.2f}"):
    return "-" if v is None else f.format(v)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--points", required=True)
    ap.add_argument("--setup")
    ap.add_argument("--json", required=True)
    ap.add_argument("--kernel", default="")
    ap.add_argument("--quick", default="0")
    ap.add_argument("--profile", help="folder of the profile pass")
    ap.add_argument("--profile-detail", help="where the busiest symbols go")
    ap.add_argument("--profile-points", help="the points of the profile pass")
    ap.add_argument("--modules", action="append", metavar="STACK=DIR",
                    help="modules whose symbols the profile tells apart")
    a = ap.parse_args()

    runs = read_points(a.points)
    med = medians(runs)
    nrep = max((len(v) for figs in runs.values() for v in figs.values()),
               default=0)
    setup = open(a.setup).read().strip() if a.setup else ""
    out = sys.stdout

    print(f"make bench: stock kernel {a.kernel}, one guest boot ({setup})",
          file=out)
    print(f"each figure is the median of {nrep} run(s)"
          + (" -- QUICK MODE, not a benchmark" if a.quick == "1" else ""),
          file=out)

    print("\nRaw rxe (perftest, rxe0 -> rxe1, one QP)", file=out)
    print(f"  {'test':<16}{'ops/s':>10}{'MiB/s':>10}{'p50 us':>9}{'p99 us':>9}",
          file=out)
    for p in ["write_bw-4k", "write_bw-128k", "write_bw-1m", "write_lat-8b",
              "write_lat-4k"]:
        m = med.get(("raw", "perftest", p), {})
        print(f"  {p:<16}{fmt(m.get('iops'), '{:.0f}'):>10}"
              f"{fmt(m.get('mib_s')):>10}{fmt(m.get('p50_us'), '{:.1f}'):>9}"
              f"{fmt(m.get('p99_us'), '{:.1f}'):>9}", file=out)

    ratios = {}
    for layer, title in [("rtrs", "Transport (rtrs-bench-clt -> rtrs-bench-srv)"),
                         ("fio", "Block (fio on rnbd / nvme-rdma over null_blk; "
                                 "the 1m points on a brd device, with crc32c)")]:
        points, stacks = [], []
        for (s, l, p) in runs:
            if l == layer and p not in points:
                points.append(p)
            if l == layer and s not in stacks:
                stacks.append(s)
        if not points:
            continue
        stacks = [s for s in STACKS if s in stacks]
        print(f"\n{title}", file=out)
        print("  " + f"{'point':<20}{'stack':<10}" +
              "".join(f"{h:>11}" for _, h, _ in COLUMNS), file=out)
        for p in points:
            name = p
            for s in stacks:
                m = med.get((s, layer, p))
                if m is None:
                    row, note = {}, "  not run"
                elif m.get("skipped"):
                    row = {}
                    note = f"  skipped: largest IO {m.get('max_io_kib', 0):.0f} KiB"
                else:
                    row, note = m, ""
                print("  " + f"{name:<20}{s:<10}" +
                      "".join(f"{fmt(row.get(k), f):>11}" for k, _, f in COLUMNS) +
                      note, file=out)
                name = ""
        print("\n  ratios of ops/s (p50 latency in brackets)", file=out)
        print("  " + f"{'point':<20}{'stack':<10}" +
              "".join(f"{h:>14}" for h in
                      ["/mainline", "/ours-2.0", "/nvme-rdma", "/raw-rxe"]),
              file=out)
        for p in points:
            name = p
            for s in OURS:
                o = med.get((s, layer, p), {})
                if not o or o.get("skipped"):
                    continue
                r = {}
                for other in ["mainline", "ours-2.0", "nvme"]:
                    if other == s:
                        continue
                    m = med.get((other, layer, p), {})
                    r[f"{s}/{other}"] = ratio(o.get("iops"), m.get("iops"))
                    r[f"{s}/{other} p50"] = ratio(o.get("p50_us"), m.get("p50_us"))
                r[f"{s}/raw"] = ratio(o.get("iops"), raw_reference(med, p))
                ratios.setdefault(layer, {}).setdefault(p, {}).update(r)

                def both(k):
                    if r.get(k) is None:
                        return "-"
                    return f"{r[k]:.2f} ({fmt(r[k + ' p50'])})"
                print("  " + f"{name:<20}{s:<10}" +
                      "".join(f"{both(f'{s}/{o}'):>14}"
                              for o in ["mainline", "ours-2.0", "nvme"]) +
                      f"{fmt(r[f'{s}/raw']):>14}", file=out)
                name = ""

    print("\nMemory of one session, client and server together (KiB, "
          "MemFree drop / Slab / vmalloc)", file=out)
    for s in STACKS:
        m = med.get((s, "mem", "session"))
        if m:
            print(f"  {s:<10}{m.get('free_kib', 0):>10.0f}{m.get('slab_kib', 0):>10.0f}"
                  f"{m.get('vmalloc_kib', 0):>10.0f}", file=out)

    prof = {}
    if a.profile and os.path.isdir(a.profile):
        prof = profiles(a.profile, module_symbols(a.modules))
    profile_doc = {}
    if prof:
        with open(a.profile_detail or os.devnull, "w") as detail:
            profile_doc = print_profiles(prof, detail, out)
    counts_doc = {}
    if a.profile_points and os.path.isfile(a.profile_points) and \
            os.path.isdir(a.profile):
        counts = read_counts(a.profile, a.profile_points)
        if counts:
            counts_doc = print_counts(counts, out)

    print("\nops/s, MiB/s: per second of the run; p50/p99: completion latency "
          "(fio clat, rtrs-bench per IO, perftest t_typical/99%).", file=out)
    print("CPU us/IO: busy time of both vCPUs (/proc/stat) over the point, per IO, "
          "benchmark tool included; pkts/IO: packets both rxe devices sent per IO.",
          file=out)
    print("top CPU %: the busiest vCPU's share of that busy time (100: one vCPU did "
          "all the work; 50: both shared it).  At queue depth 1 it says whether the "
          "IOs ran as a chain on one vCPU or hopped between the two, which the "
          "link's hash of each flow decides (BENCH_LINK=onecpu takes the hash out).",
          file=out)
    print("ours-2.1: our rtrs, client and server speaking protocol 2.1 (the default); "
          "ours-2.0: the same modules, the client held to 2.0 (max_proto_minor=0).",
          file=out)
    print("124k: the largest IO of a 2.0 session (a 128 KiB chunk less its header), "
          "run by every stack; 1m: that of a 2.1 session, skipped where the "
          "session takes less.", file=out)
    print("/raw-rxe: ops/s against ib_write_bw at the same size (128 KiB for 124k); "
          "at queue depth 1, against the round trips per second of ib_write_lat 4 KiB.",
          file=out)

    doc = {
        "kernel": a.kernel,
        "setup": setup,
        "quick": a.quick == "1",
        "repetitions": nrep,
        "medians": {},
        "runs": {},
        "ratios": ratios,
        "profile": profile_doc,
        "work_per_io": counts_doc,
    }
    for (s, l, p), m in med.items():
        doc["medians"].setdefault(l, {}).setdefault(p, {})[s] = m
    for (s, l, p), figs in runs.items():
        doc["runs"].setdefault(l, {}).setdefault(p, {})[s] = figs
    with open(a.json, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
