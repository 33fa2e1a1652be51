#!/bin/bash
set -e
cd "$(git rev-parse --show-toplevel)"
OUT=$1
taskset -c 0 coap-server-openssl -A 127.0.0.1 -p 25793 -c "${CERT:-/tmp/tls-bench-cert.pem}" -j "${KEY:-/tmp/tls-bench-key.pem}" -v 0 > /tmp/tls-libcoap.out 2>&1 &
PID=$!
sleep 2
{ date -u '+%Y-%m-%d %H:%M UTC'; echo "nproc $(nproc), uname -r $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"; echo "coap-server-openssl 4.3.1 -A 127.0.0.1 -p 25793 -c cert.pem -j key.pem (ECDSA P-256, self-signed; TLS on port + 1)";
  taskset -c 1 dotnet benchmarks/CoapNet.Scenarios/bin/Release/net10.0/CoapNet.Scenarios.dll tls --server coaps+tcp://127.0.0.1:25794/ --plain coap+tcp://127.0.0.1:25793/ --handshakes 500 --requests 50000 --concurrency 1,16 --rounds 3 --server-pid $PID;
  echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"; echo "server VmRSS: $(grep VmRSS /proc/$PID/status)"; } > $OUT 2>&1
kill $PID; wait $PID 2>/dev/null || true
