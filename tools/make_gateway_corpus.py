#!/usr/bin/env python3
"""Writes the seed corpus of fuzz/gateway_packet_fuzz.cc into fuzz/corpus/gateway_packet/.

valid_*.bin decode (tests/wire/gateway_packet_fuzz_replay_test.cc checks it); bad_*.bin are
malformed in one named way each. Layout: src/wire/gateway_packet.h (ours, big-endian).
Usage: tools/make_gateway_corpus.py [OUTDIR]
"""
import os
import struct
import sys
import zlib


def frame(payload_len, ethertype=0x0800):
    dst = bytes([0x02, 0, 0, 0, 0, 0x05])
    src = bytes([0x52, 0x54, 0, 0x12, 0x34, 0x56])
    return dst + src + struct.pack(">H", ethertype) + bytes((i * 7) & 0xFF for i in range(payload_len))


def packet(flags, detour, dst, cmd=None, eth=frame(46), pad_byte=0, length_delta=0, crc_xor=0):
    head = bytes([flags, len(detour)]) + b"".join(struct.pack(">I", v) for v in detour)
    head += struct.pack(">I", dst)
    body = b""
    if cmd is not None:
        rdetour, src, cdst, c = cmd
        body += bytes([len(rdetour)]) + b"".join(struct.pack(">I", v) for v in rdetour)
        body += struct.pack(">IIB", src, cdst, c)
    body += struct.pack(">H", len(eth)) + eth
    size = len(head) + 2 + len(body)
    pad = (4 - size % 4) % 4
    total = size + pad + 4
    out = head + struct.pack(">H", total + length_delta) + body + bytes([pad_byte] * pad)
    return out + struct.pack(">I", zlib.crc32(out) ^ crc_xor)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "fuzz/corpus/gateway_packet"
    os.makedirs(out, exist_ok=True)
    cases = {
        "valid_outbound_command": packet(0x05, [], 8, ([9, 13], 21, 8, 0x01)),
        "valid_inbound_detour": packet(0x08, [14, 22], 21, eth=frame(1486)),
        "valid_broadcast": packet(0x02, [], 0xFFFFFFFF, eth=frame(0)),
        "valid_min_frame": packet(0x00, [1, 2, 3, 4], 7, eth=frame(1)),
        "bad_flags": packet(0x15, [], 8),
        "bad_via_count": bytes([0x00, 5]) + bytes(40),
        "bad_broadcast_detour": packet(0x02, [3], 0xFFFFFFFF),
        "bad_length": packet(0x00, [], 8, length_delta=4),
        "bad_cmd": packet(0x04, [], 8, ([], 1, 8, 0x80)),
        "bad_padding": packet(0x00, [], 8, eth=frame(47), pad_byte=1),
        "bad_crc": packet(0x00, [], 8, crc_xor=1),
        "bad_short_frame": packet(0x00, [], 8, eth=frame(0)[:10]),
        "bad_truncated": packet(0x05, [1], 8, ([2], 3, 8, 0))[:11],
    }
    for name, data in cases.items():
        with open(os.path.join(out, name + ".bin"), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
