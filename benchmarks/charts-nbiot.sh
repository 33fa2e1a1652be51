#!/usr/bin/env bash
# Draws the NB-IoT chart from the nbiot scenario's data: the median flow completion time of seed 002's NB-IoT experiment
# per loss profile, the seed's three columns (Default CoAP, CoCoA, CoAP over TCP New Reno) beside our Default CoAP and
# CoCoA (packets the size of the seed's) and our best configuration, with the 25th-75th percentiles as error bars, on a
# log scale.
#
#   benchmarks/charts-nbiot.sh [TSV] [BEST-NAME]
#
# TSV defaults to benchmarks/results/issue40/nbiot.tsv (the scenario writes it and runs this script); writes
# benchmarks/charts/nbiot-fct.png. Needs gnuplot (Debian: apt-get install gnuplot-nox).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
data="${1:-$here/results/issue40/nbiot.tsv}"
best="${2:-ours, best configuration}"
out="$here/charts/nbiot-fct.png"
[[ -f "$data" ]] || { echo "no $data: run the nbiot scenario first" >&2; exit 1; }
command -v gnuplot >/dev/null || { echo "gnuplot is missing (apt-get install gnuplot-nox)" >&2; exit 1; }
mkdir -p "$here/charts"

# Columns: loss, then (median, p25, p75) for seed Default, ours Default, seed CoCoA, ours CoCoA, seed TCP New Reno, ours best.
gnuplot <<GP
set terminal pngcairo size 1100,660 font "DejaVu Sans,11"
set output "$out"
set title "Seed 002's NB-IoT download of 102,400 bytes, MTU 296, 2,500-byte buffer: median and p25-p75"
set ylabel "flow completion time (s, log scale)"
set xlabel "loss profile"
set logscale y
set yrange [20:8000]
set grid ytics mytics
set key top left Left reverse
set style data histogram
set style histogram errorbars gap 1 lw 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set datafile commentschars "#"
plot "$data" using 2:3:4:xtic(1) title "seed: Default CoAP" lc rgb "#9ecae1", \
     "" using 5:6:7 title "ours: Default CoAP" lc rgb "#1f77b4", \
     "" using 8:9:10 title "seed: CoCoA" lc rgb "#fdae6b", \
     "" using 11:12:13 title "ours: CoCoA" lc rgb "#d62728", \
     "" using 14:15:16 title "seed: CoAP over TCP New Reno" lc rgb "#bcbddc", \
     "" using 17:18:19 title "ours: $best" lc rgb "#2ca02c"
GP
echo "wrote $out"
