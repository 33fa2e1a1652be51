#!/bin/bash
# ucores.sh LABEL PORT PATH CMD... : one fresh UDP server (CMD, pinned to core 0) under coap-udp-load on core 1:
# WARM seconds of unrecorded load (default 3), then 5 s measured. Prints req/s, the server's and the generator's CPU
# per request (utime+stime) and each core's busy share from /proc/stat.
# Env: C client sockets (default 64), W requests in flight per socket (default 1), COAP_UDP_LOAD the generator
# (benchmarks/tools/coap-udp-load.c built with cc -O2; default: coap-udp-load on PATH).
label=$1; port=$2; path=$3; shift 3
gen=${COAP_UDP_LOAD:-coap-udp-load}
taskset -c 0 "$@" > "${TMPDIR:-/tmp}/ucores.$label.log" 2>&1 &
pid=$!
sleep 3
taskset -c 1 "$gen" -h 127.0.0.1 -p "$port" -u "$path" -c "${C:-64}" -w "${W:-1}" -d "${WARM:-3}" > /dev/null 2>&1
a=($(grep "^cpu0 " /proc/stat)); b=($(grep "^cpu1 " /proc/stat))
read -r u0 s0 < <(awk '{print $14, $15}' "/proc/$pid/stat")
r=$( { /usr/bin/time -f "client_user=%U client_sys=%S" taskset -c 1 "$gen" -h 127.0.0.1 -p "$port" -u "$path" -c "${C:-64}" -w "${W:-1}" -d 5; } 2>&1)
read -r u1 s1 < <(awk '{print $14, $15}' "/proc/$pid/stat")
c=($(grep "^cpu0 " /proc/stat)); d=($(grep "^cpu1 " /proc/stat))
kill "$pid"; wait "$pid" 2>/dev/null
rps=$(echo "$r" | sed -n 's/.*rps=\([0-9]*\).*/\1/p')
idle0=$((c[4] - a[4])); tot0=0; for k in 1 2 3 4 5 6 7 8; do tot0=$((tot0 + c[k] - a[k])); done
idle1=$((d[4] - b[4])); tot1=0; for k in 1 2 3 4 5 6 7 8; do tot1=$((tot1 + d[k] - b[k])); done
cu=$(echo "$r" | sed -n 's/.*client_user=\([0-9.]*\).*/\1/p'); cs=$(echo "$r" | sed -n 's/.*client_sys=\([0-9.]*\).*/\1/p')
echo "$label rps=$rps server_us=$(echo "scale=2; ($u1-$u0+$s1-$s0)*10000/($rps*5)" | bc) client_us=$(echo "scale=2; ($cu+$cs)*1000000/($rps*5)" | bc) core0_busy=$((100-100*idle0/tot0))% core1_busy=$((100-100*idle1/tot1))%"
