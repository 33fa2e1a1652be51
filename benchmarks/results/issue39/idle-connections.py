#!/usr/bin/env python3
"""Resident memory of the sample server holding N idle coap+tcp connections (issue 39, item 1).

  idle-connections.py LABEL=PATH/CoapNet.Samples.Server.dll [LABEL=PATH ...] [--connections N] [--rounds R]

N below the server's MaxConnections (1,000 by default, so 900 here): each round's connections come from 127.0.0.10 up,
90 a source address, within MaxConnectionsPerAddress (100), so none is evicted.

For each server in turn (rounds interleave the servers): start it on free ports of 127.0.0.1 with coap+tcp only beside
UDP, wait until it answers, read VmRSS (/proc/PID/status); open N connections, each sending a CSM (RFC 8323 section 5.3)
and reading the server's, wait 3 s and read VmRSS ("idle"); send one GET /hello on every connection and read each
answer, wait 3 s and read VmRSS ("after one request each"). The server is stopped after each round. RSS includes
whatever the GC has not collected: the figures are per-connection upper bounds, not managed-heap sizes.
"""
import os, socket, subprocess, sys, time

def free_port(kind):
    s = socket.socket(socket.AF_INET, kind)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port

def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")

def read_frame(sock):
    # RFC 8323 section 3.2: Len/TKL, extended length, code, token, options and payload.
    def exact(n):
        data = b""
        while len(data) < n:
            chunk = sock.recv(n - len(data))
            if not chunk:
                raise EOFError
            data += chunk
        return data
    first = exact(1)[0]
    nibble, tkl = first >> 4, first & 0x0F
    ext = {13: 1, 14: 2, 15: 4}.get(nibble, 0)
    extra = exact(ext) if ext else b""
    body = nibble if ext == 0 else {1: 13, 2: 269, 4: 65805}[ext] + int.from_bytes(extra, "big")
    rest = exact(1 + tkl + body)
    return rest[0]

CSM = bytes([0x00, 0xE1])
# GET /hello, token 0x01: Len = 6 (Uri-Path option 11: 0xB5 'hello'), TKL 1.
GET = bytes([0x61, 0x01, 0x01, 0xB5]) + b"hello"

def measure(label, dll, n):
    udp, tcp = free_port(socket.SOCK_DGRAM), free_port(socket.SOCK_STREAM)
    proc = subprocess.Popen(["dotnet", dll, "--address", "127.0.0.1", "--port", str(udp), "--tcp-port", str(tcp),
                             "--dtls-port", "0", "--tls-port", "0"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            try:
                probe = socket.create_connection(("127.0.0.1", tcp), timeout=1)
                probe.sendall(CSM)
                read_frame(probe)
                probe.close()
                break
            except OSError:
                time.sleep(0.1)
        time.sleep(3)
        before = rss_kib(proc.pid)
        conns = []
        for i in range(n):
            # From 127.0.0.10 up, 90 connections a source address: under the server's MaxConnectionsPerAddress (100).
            c = socket.create_connection(("127.0.0.1", tcp), source_address=(f"127.0.0.{10 + i // 90}", 0))
            c.sendall(CSM)
            conns.append(c)
        for c in conns:
            assert read_frame(c) == 0xE1
        time.sleep(3)
        idle = rss_kib(proc.pid)
        for c in conns:
            c.sendall(GET)
        for c in conns:
            assert read_frame(c) == 0x45  # 2.05 Content
        time.sleep(3)
        after = rss_kib(proc.pid)
        print(f"{label}: before {before} KiB, {n} idle {idle} KiB (+{(idle - before) * 1024 / n:.0f} B each), "
              f"after one GET each {after} KiB (+{(after - before) * 1024 / n:.0f} B each)", flush=True)
        for c in conns:
            c.close()
    finally:
        proc.terminate()
        proc.wait()

def main(argv):
    n, rounds, servers = 900, 3, []
    i = 0
    while i < len(argv):
        if argv[i] == "--connections":
            n = int(argv[i + 1]); i += 2
        elif argv[i] == "--rounds":
            rounds = int(argv[i + 1]); i += 2
        else:
            label, path = argv[i].split("=", 1)
            servers.append((label, path)); i += 1
    print(f"# {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}, load {os.getloadavg()}, {n} connections, {rounds} rounds")
    for r in range(rounds):
        for label, path in servers:
            measure(label, path, n)

if __name__ == "__main__":
    main(sys.argv[1:])
