#!/usr/bin/env python3
"""Time per simulated cycle of the parallel simulator: a model fitted to measured runs and
its projection to many MPI ranks (docs/performance.md, "Parallel simulation").

Model, per cycle, for a k-ary 3-cube of N nodes on R ranks (one thread each):

    T(R) = c * N / R                      computation of the largest partition
         + s + a * (R - 1)                one message to every other rank (fixed cost s,
                                          a per message sent and received)
         + b * (D * 56 + F(R) * 24)       bytes received per rank: every rank's
                                          deliveries (D per cycle, 56 bytes each: every
                                          rank runs the run control), and the flits of
                                          its boundary channels (F(R) per cycle, 24 bytes)

c is fitted to the serial runs (seconds per node-cycle at that load), s to the 2-rank run
of the same network (what a cycle costs beyond half the serial computation, minus the
modelled message and byte costs), a and b are Open MPI's one-way latency and inverse
bandwidth as measured on this machine (docs/performance.md, runtime table) or given.
F(R): slab partitions have 2 boundary planes of k^2 channels each way; block partitions
(R = p^3) 6 faces of (k/p)^2; a channel carries `flits_per_channel` flits per cycle.
Threads inside a rank are modelled the same way with a = b = 0 and s fitted to the
2-thread run.

Usage (every number from ukai_sim_bench, see docs/performance.md):
  tools/sim_perf_model.py --serial-cps C16 --serial-cps-64 C64 --ranks2-cps R16 \\
      [--threads2-cps T16] [--latency-us 0.35] [--gbytes-per-s 5.6] [--rate 0.05]
"""
import argparse


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--serial-cps", type=float, required=True,
                   help="serial cycles/s of the 16^3 torus at rate 0.1 (case c)")
    p.add_argument("--serial-cps-64", type=float, required=True,
                   help="serial cycles/s of the 64^3 torus at rate 0.05 (case d)")
    p.add_argument("--ranks2-cps", type=float, required=True,
                   help="cycles/s of case (c) under mpirun -n 2")
    p.add_argument("--ranks2-cps-64", type=float, default=0,
                   help="cycles/s of case (d) under mpirun -n 2 (a second fit of s)")
    p.add_argument("--threads2-cps", type=float, default=0,
                   help="cycles/s of case (c) with 2 threads")
    p.add_argument("--latency-us", type=float, default=0.354,
                   help="one-way latency of a small MPI message (us)")
    p.add_argument("--gbytes-per-s", type=float, default=5.59,
                   help="MPI bandwidth between ranks (GB/s)")
    p.add_argument("--rate", type=float, default=0.05, help="projected load, flits/node/cycle")
    p.add_argument("--sync-us", type=float, default=-1,
                   help="use this fixed cost s per cycle (us) instead of the fit (e.g. 0: "
                        "ranks that never wait for a core)")
    p.add_argument("--flit-hops-per-node", type=float, default=0,
                   help="flit hops per node-cycle at the projected load (default: rate x "
                        "the mean hop count 3k/4 of uniform traffic)")
    args = p.parse_args()

    a = args.latency_us * 1e-6 * 2  # sent and received
    b = 1.0 / (args.gbytes_per_s * 1e9)
    flits_per_msg = 16

    def deliveries(n, rate):
        return n * rate / flits_per_msg

    def block_factors(r):
        # The most balanced p0 x p1 x p2 = r (what run.partition = "block" picks on a cube).
        best = None
        for p0 in range(1, r + 1):
            if r % p0:
                continue
            for p1 in range(p0, r // p0 + 1):
                if (r // p0) % p1:
                    continue
                p2 = r // p0 // p1
                if p2 < p1:
                    continue
                if best is None or p2 < best[2]:
                    best = (p0, p1, p2)
        return best

    def boundary_flits(k, r, rate, shape):
        # Flits per cycle over one rank's boundary channels (both directions): uniform
        # traffic loads each channel with rate * (mean hops per dimension) / 2 flits.
        per_channel = rate * (k / 4.0) / 2.0
        if r == 1:
            return 0.0
        if shape == "slab":
            channels = 2 * 2 * k * k
        else:
            p = block_factors(r)
            side = [k / q for q in p]
            channels = 0.0
            for d in range(3):
                if p[d] > 1:  # two faces of side[d'] x side[d''] channels, both ways
                    channels += 2 * 2 * side[(d + 1) % 3] * side[(d + 2) % 3]
        return channels * per_channel

    # Fit c on each serial run (it varies with the load and the network's cache footprint).
    n16, n64 = 16 ** 3, 64 ** 3
    c16 = 1.0 / args.serial_cps / n16
    c64 = 1.0 / args.serial_cps_64 / n64

    def comm(k, r, rate, shape):
        n = k ** 3
        return a * (r - 1) + b * (deliveries(n, rate) * 56 + boundary_flits(k, r, rate, shape) * 24)

    t2 = 1.0 / args.ranks2_cps
    s = t2 - c16 * n16 / 2 - comm(16, 2, 0.1, "slab")
    print("Fit (seconds per cycle):")
    print(f"  c = {c16 * 1e9:.1f} ns per node-cycle (16^3, rate 0.1), "
          f"{c64 * 1e9:.1f} ns (64^3, rate 0.05)")
    print(f"  2 ranks, 16^3: measured {t2 * 1e6:.1f} us = {c16 * n16 / 2 * 1e6:.1f} us "
          f"computation + {comm(16, 2, 0.1, 'slab') * 1e6:.2f} us messages + s = {s * 1e6:.1f} us")
    if args.ranks2_cps_64 > 0:
        t64 = 1.0 / args.ranks2_cps_64
        s64 = t64 - c64 * n64 / 2 - comm(64, 2, args.rate, "slab")
        print(f"  2 ranks, 64^3: measured {t64 * 1e3:.2f} ms = {c64 * n64 / 2 * 1e3:.2f} ms "
              f"computation + s = {s64 * 1e3:.2f} ms (imbalance and cache effects of the half)")
    if args.threads2_cps > 0:
        tt = 1.0 / args.threads2_cps
        print(f"  2 threads, 16^3: measured {tt * 1e6:.1f} us, "
              f"s_threads = {(tt - c16 * n16 / 2) * 1e6:.1f} us")
    s = max(s, 0.0)
    if args.sync_us >= 0:
        s = args.sync_us * 1e-6
        print(f"  s set to {args.sync_us} us (--sync-us)")
    print(f"  a = {a * 1e6:.2f} us per message (sent + received), b = {b * 1e9:.3f} ns/byte")
    print()
    print(f"Projection at rate {args.rate} (uniform, 16-flit messages), c = {c64 * 1e9:.1f} ns:")
    print(f"{'network':>8} {'ranks':>6} {'shape':>6} {'compute us':>11} {'messages us':>12} "
          f"{'bytes us':>9} {'cycle us':>9} {'cycles/s':>10} {'speed-up':>9} {'eff.':>6}")
    for k in (64, 128):
        n = k ** 3
        serial = c64 * n
        for r in (1, 16, 64, 256, 1024):
            for shape in ("slab", "block"):
                if r == 1 and shape == "block":
                    continue
                if shape == "slab" and r > k:
                    continue
                compute = c64 * n / r
                msgs = (a * (r - 1) + s) if r > 1 else 0.0
                byts = b * (deliveries(n, args.rate) * 56 + boundary_flits(k, r, args.rate, shape) * 24) if r > 1 else 0.0
                total = compute + msgs + byts
                print(f"{k:>5}^3 {r:>6} {shape:>6} {compute * 1e6:>11.1f} {msgs * 1e6:>12.1f} "
                      f"{byts * 1e6:>9.1f} {total * 1e6:>9.1f} {1 / total:>10.1f} "
                      f"{serial / total:>8.1f}x {serial / total / r:>6.2f}")


if __name__ == "__main__":
    main()
