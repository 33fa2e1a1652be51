#!/bin/bash
# One run of the tls scenario against the sample server: server on core 0, load generator on core 1.
set -e
cd "$(git rev-parse --show-toplevel)"
OUT=$1
taskset -c 0 dotnet samples/CoapNet.Samples.Server/bin/Release/net10.0/CoapNet.Samples.Server.dll --address 127.0.0.1 --port 0 --tcp-port 25783 --dtls-port 0 --tls-port 25784 > /tmp/tls-sample.out 2>&1 &
PID=$!
sleep 4
{ date -u '+%Y-%m-%d %H:%M UTC'; echo "nproc $(nproc), uname -r $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"; 
  taskset -c 1 dotnet benchmarks/CoapNet.Scenarios/bin/Release/net10.0/CoapNet.Scenarios.dll tls --server coaps+tcp://127.0.0.1:25784/hello --plain coap+tcp://127.0.0.1:25783/hello --handshakes 500 --requests 50000 --concurrency 1,16 --rounds 3 --server-pid $PID;
  echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"; echo "server VmRSS: $(grep VmRSS /proc/$PID/status)"; } > $OUT 2>&1
kill $PID; wait $PID 2>/dev/null || true
