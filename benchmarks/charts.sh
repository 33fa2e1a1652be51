#!/usr/bin/env bash
# Draws the thesis-style charts (figures 14-17: time per message against payload size and against option
# count, synchronous beside asynchronous, log scale) from a BenchmarkDotNet CSV export, and writes the
# side-by-side table with the thesis's numbers.
#
#   benchmarks/charts.sh [RESULTS_DIR]
#
# RESULTS_DIR holds CoapNet.Benchmarks.ThesisMatrixBenchmarks-report.csv (BenchmarkDotNet writes it to
# BenchmarkDotNet.Artifacts/results; the recorded run is kept in benchmarks/results, the default).
# Writes benchmarks/charts/*.png and benchmarks/charts/thesis-comparison.md. Needs gnuplot
# (Debian: apt-get install gnuplot-nox) and awk.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
results="${1:-$here/results}"
out="$here/charts"
csv="$results/CoapNet.Benchmarks.ThesisMatrixBenchmarks-report.csv"
[[ -f "$csv" ]] || { echo "no $csv: run the ThesisMatrixBenchmarks first" >&2; exit 1; }
command -v gnuplot >/dev/null || { echo "gnuplot is missing (apt-get install gnuplot-nox)" >&2; exit 1; }
mkdir -p "$out"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# 1. Reshape: one line per case, "options payload method mean_ns allocated_b". The CSV is
#    semicolon-separated; numbers are quoted with thousands separators, which are stripped.
reshape() {
  awk -F';' '
    NR == 1 {
      for (i = 1; i <= NF; i++) col[$i] = i
      if (!("Mean [ns]" in col) || !("Allocated [B]" in col)) { print "unexpected CSV header" > "/dev/stderr"; exit 1 }
      next
    }
    function num(s) { gsub(/[",]/, "", s); return s }
    { print num($col["AmountOfOptions"]), num($col["LengthOfPayload"]), $col["Method"], num($col["Mean [ns]"]), num($col["Allocated [B]"]) }
  ' "$1"
}
reshape "$csv" > "$work/matrix.txt"

# The async/sync ratios come from the longer run of the four stream rows when there is one
# (results/async-sync: 15 iterations instead of 3, so the ratios are not within the noise).
ratios="$work/matrix.txt"
if [[ -f "$results/async-sync/CoapNet.Benchmarks.ThesisMatrixBenchmarks-report.csv" ]]; then
  reshape "$results/async-sync/CoapNet.Benchmarks.ThesisMatrixBenchmarks-report.csv" > "$work/async-sync.txt"
  ratios="$work/async-sync.txt"
fi

# 2. One data file per chart: rows are the 5 parameter values, columns the methods (ns; "NaN" if missing).
#    $1 = "payload" (options fixed at 0) or "options" (payload fixed at 0); $2.. = methods.
table() {
  local axis="$1"; shift
  awk -v axis="$axis" -v methods="$*" '
    BEGIN {
      n = split(methods, m, " ")
      split("0 1024 4096 65536 131072", xs, " ")
      label["0"] = "0"; label["1024"] = "1 Ki"; label["4096"] = "4 Ki"; label["65536"] = "64 Ki"; label["131072"] = "128 Ki"
    }
    { key = (axis == "payload" ? ($1 == 0 ? $2 : "") : ($2 == 0 ? $1 : "")); if (key != "") t[key, $3] = $4 }
    END {
      printf "x"; for (j = 1; j <= n; j++) printf " %s", m[j]; printf "\n"
      for (i = 1; i <= 5; i++) {
        printf "\"%s\"", label[xs[i]]
        for (j = 1; j <= n; j++) printf " %s", ((xs[i], m[j]) in t ? t[xs[i], m[j]] : "NaN")
        printf "\n"
      }
    }' "$work/matrix.txt"
}

deser="Deserialize DeserializeStream DeserializeAsync DeserializeAsyncPipe DeserializeMemory CopyToNewArray Copy"
ser="Serialize SerializeStream SerializeAsync SerializeAsyncPipe SerializeSpan CopyToNewArray Copy"
table payload $deser > "$work/deserialize-payload.dat"
table options $deser > "$work/deserialize-options.dat"
table payload $ser > "$work/serialize-payload.dat"
table options $ser > "$work/serialize-options.dat"

# 3. The thesis's numbers (Ryzen 5 2600, .NET 5; SEEDS-DIGEST section 1), in microseconds, for the 10 cells it tabulated.
cat > "$work/thesis.txt" <<'THESIS'
0 0 1.679 2.231 5.142 5.618
0 1024 3.683 3.298 5.867 5.658
0 4096 6.570 5.077 7.186 5.710
0 65536 98.533 64.490 23.527 7.356
0 131072 175.433 111.011 49.680 9.347
1024 0 1030 1440 552 858
4096 0 6477 8416 2758 3416
65536 0 166612 203181 58896 57920
131072 0 286106 372129 117808 112895
131072 131072 304488 370710 120454 112449
THESIS

# Thesis against CoapNet for the four thesis methods: $1 = "options" (payload 0) or "payload" (options 0).
thesis_table() {
  awk -v axis="$1" '
    function key(o, p) { return axis == "options" ? (p == 0 ? o : "") : (o == 0 ? p : "") }
    FNR == NR { k = key($1, $2); if (k != "") th[k] = $3 * 1000 " " $4 * 1000 " " $5 * 1000 " " $6 * 1000; next }
    { k = key($1, $2); if (k != "") t[k, $3] = $4 }
    END {
      split("0 1024 4096 65536 131072", xs, " ")
      label["0"] = "0"; label["1024"] = "1 Ki"; label["4096"] = "4 Ki"; label["65536"] = "64 Ki"; label["131072"] = "128 Ki"
      print "x thesis-Deserialize thesis-DeserializeAsync thesis-Serialize thesis-SerializeAsync Deserialize DeserializeAsync Serialize SerializeAsync"
      split("Deserialize DeserializeAsync Serialize SerializeAsync", ms, " ")
      for (i = 1; i <= 5; i++) {
        x = xs[i]
        printf "\"%s\" %s", label[x], (x in th ? th[x] : "NaN NaN NaN NaN")
        for (j = 1; j <= 4; j++) printf " %s", ((x, ms[j]) in t ? t[x, ms[j]] : "NaN")
        printf "\n"
      }
    }' "$work/thesis.txt" "$work/matrix.txt"
}
thesis_table options > "$work/thesis-options.dat"
thesis_table payload > "$work/thesis-payload.dat"

# 4. Charts.
plot() {
  local data="$1" png="$2" title="$3" xlabel="$4"
  local columns
  columns="$(head -n 1 "$data" | wc -w)"
  gnuplot <<GP
set terminal pngcairo size 1000,640 font "DejaVu Sans,11"
set output "$png"
set title "$title"
set xlabel "$xlabel"
set ylabel "mean time per message (ns, log scale)"
set logscale y
set format y "10^{%L}"
set grid ytics mytics xtics
set key outside right top
set offsets 0.2, 0.2, 0, 0
set style line 1 lc rgb "#1f77b4" lw 2 pt 7
set style line 2 lc rgb "#ff7f0e" lw 2 pt 6
set style line 3 lc rgb "#d62728" lw 2 pt 5
set style line 4 lc rgb "#2ca02c" lw 2 pt 9
set style line 5 lc rgb "#9467bd" lw 2 pt 13
set style line 6 lc rgb "#7f7f7f" lw 1.5 dt 2 pt 1
set style line 7 lc rgb "#000000" lw 1.5 dt 3 pt 2
set datafile missing "NaN"
plot for [i=2:$columns] "$data" using 0:i:xtic(1) with linespoints ls (i-1) title columnheader(i)
GP
}

plot "$work/deserialize-payload.dat" "$out/deserialize-vs-payload.png" "Deserialize vs payload size (0 options, RFC 8323 framing)" "payload (bytes)"
plot "$work/deserialize-options.dat" "$out/deserialize-vs-options.png" "Deserialize vs Uri-Path option count (0-byte payload, RFC 8323 framing)" "Uri-Path options"
plot "$work/serialize-payload.dat" "$out/serialize-vs-payload.png" "Serialize vs payload size (0 options, RFC 8323 framing)" "payload (bytes)"
plot "$work/serialize-options.dat" "$out/serialize-vs-options.png" "Serialize vs Uri-Path option count (0-byte payload, RFC 8323 framing)" "Uri-Path options"

thesis_plot() {
  local data="$1" png="$2" title="$3" xlabel="$4"
  gnuplot <<GP
set terminal pngcairo size 1000,640 font "DejaVu Sans,11"
set output "$png"
set title "$title"
set xlabel "$xlabel"
set ylabel "mean time per message (ns, log scale)"
set logscale y
set format y "10^{%L}"
set grid ytics mytics xtics
set key outside right top
set offsets 0.2, 0.2, 0, 0
set datafile missing "NaN"
array c[4] = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"]
plot for [i=2:5] "$data" using 0:i:xtic(1) with linespoints lw 2 dt 2 pt 4 lc rgb c[i-1] title columnheader(i), \\
     for [i=6:9] "$data" using 0:i with linespoints lw 2 pt 7 lc rgb c[i-5] title columnheader(i)
GP
}

thesis_plot "$work/thesis-options.dat" "$out/thesis-vs-coapnet-options.png" "Thesis (Ryzen 5 2600, .NET 5, dashed) vs CoapNet (solid), 0-byte payload" "Uri-Path options"
thesis_plot "$work/thesis-payload.dat" "$out/thesis-vs-coapnet-payload.png" "Thesis (Ryzen 5 2600, .NET 5, dashed) vs CoapNet (solid), 0 options" "payload (bytes)"

# 5. The side-by-side table: thesis time, ours, and the ratio thesis / ours, for the thesis's 10 cells.
awk '
  function fmt(ns) { return ns >= 1e6 ? sprintf("%.2f ms", ns / 1e6) : ns >= 1e3 ? sprintf("%.2f us", ns / 1e3) : sprintf("%.1f ns", ns) }
  FNR == NR { t[$1, $2, $3] = $4; next }
  {
    split("Deserialize DeserializeAsync Serialize SerializeAsync", ms, " ")
    line = "| " $1 " | " $2 " |"
    for (j = 1; j <= 4; j++) {
      ours = t[$1, $2, ms[j]]; thesis = $(j + 2) * 1000
      line = line sprintf(" %s | %s | **%sx** |", fmt(thesis), ours == "" ? "n/a" : fmt(ours), ours == "" ? "n/a" : sprintf(thesis / ours < 10 ? "%.1f" : "%.0f", thesis / ours))
    }
    rows = rows line "\n"
  }
  END {
    print "| options | payload B | Deserialize thesis | ours | ratio | DeserializeAsync thesis | ours | ratio | Serialize thesis | ours | ratio | SerializeAsync thesis | ours | ratio |"
    print "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    printf "%s", rows
  }' "$work/matrix.txt" "$work/thesis.txt" > "$out/thesis-comparison.md"

# 6. The full matrix as a Markdown table (mean time, allocated bytes) for RESULTS.md.
awk '
  function fmt(ns) { return ns >= 1e6 ? sprintf("%.2f ms", ns / 1e6) : ns >= 1e3 ? sprintf("%.2f us", ns / 1e3) : sprintf("%.1f ns", ns) }
  { key = $1 " " $2; if (!(key in seen)) { seen[key] = 1; keys[++n] = key }; t[key, $3] = $4; a[key, $3] = $5 }
  END {
    nm = split("Copy CopyToNewArray Deserialize DeserializeMemory DeserializeStream DeserializeAsync DeserializeAsyncPipe Serialize SerializeSpan SerializeStream SerializeAsync SerializeAsyncPipe", ms, " ")
    printf "| options | payload B |"; for (j = 1; j <= nm; j++) printf " %s |", ms[j]; printf "\n"
    printf "|---:|---:|"; for (j = 1; j <= nm; j++) printf "---:|"; printf "\n"
    for (i = 1; i <= n; i++) {
      split(keys[i], k, " "); printf "| %s | %s |", k[1], k[2]
      for (j = 1; j <= nm; j++) printf " %s |", ((keys[i], ms[j]) in t ? fmt(t[keys[i], ms[j]]) " (" a[keys[i], ms[j]] " B)" : "n/a")
      printf "\n"
    }
  }' "$work/matrix.txt" > "$out/matrix.md"

# 7. The targets, computed from the same numbers: per-option slopes, payload cells against the copy
#    baselines, and async against sync on every cell.
awk '
  { t[$1, $2, $3] = $4 }
  END {
    split("1024 4096 65536 131072", ns, " ")
    print "Per Uri-Path option, ns: (time(N options, 0 B) - time(0, 0)) / N"
    print ""
    printf "| method |"; for (i = 1; i <= 4; i++) printf " N = %s |", ns[i]; printf "\n|---|---:|---:|---:|---:|\n"
    nm = split("Deserialize DeserializeMemory DeserializeStream DeserializeAsync Serialize SerializeSpan SerializeStream SerializeAsync", ms, " ")
    for (j = 1; j <= nm; j++) {
      printf "| %s |", ms[j]
      for (i = 1; i <= 4; i++) printf " %.1f |", (t[ns[i], 0, ms[j]] - t[0, 0, ms[j]]) / ns[i]
      printf "\n"
    }
    print ""
    print "Payload cells (0 options) against the copy baselines: time / baseline time"
    print ""
    split("1024 4096 65536 131072", ps, " ")
    printf "| method | baseline |"; for (i = 1; i <= 4; i++) printf " %s B |", ps[i]; printf "\n|---|---|---:|---:|---:|---:|\n"
    nb = split("SerializeSpan:Copy SerializeStream:Copy SerializeAsync:Copy SerializeAsyncPipe:Copy Serialize:CopyToNewArray Deserialize:CopyToNewArray DeserializeStream:CopyToNewArray DeserializeAsync:CopyToNewArray DeserializeAsyncPipe:CopyToNewArray DeserializeMemory:Copy", bs, " ")
    for (j = 1; j <= nb; j++) {
      split(bs[j], mb, ":"); printf "| %s | %s |", mb[1], mb[2]
      for (i = 1; i <= 4; i++) printf " %.2f |", t[0, ps[i], mb[1]] / t[0, ps[i], mb[2]]
      printf "\n"
    }
  }' "$work/matrix.txt" > "$out/targets.md"
awk -v source="$([[ "$ratios" == "$work/async-sync.txt" ]] && echo "results/async-sync, 15 iterations" || echo "the matrix run")" '
  function fmt(ns) { return ns >= 1e6 ? sprintf("%.2f ms", ns / 1e6) : ns >= 1e3 ? sprintf("%.2f us", ns / 1e3) : sprintf("%.1f ns", ns) }
  { t[$1, $2, $3] = $4 }
  END {
    print ""
    print "Async / sync on every cell, same MemoryStream (" source "); the thesis paired DeserializeAsync with Deserialize(span), see the matrix"
    print ""
    print "| options | payload B | DeserializeStream | DeserializeAsync | async / sync | SerializeStream | SerializeAsync | async / sync |"
    print "|---:|---:|---:|---:|---:|---:|---:|---:|"
    split("0 1024 4096 65536 131072", xs, " ")
    for (a = 1; a <= 5; a++) for (b = 1; b <= 5; b++) {
      o = xs[a]; p = xs[b]
      if (!((o, p, "DeserializeAsync") in t)) continue
      rd = t[o, p, "DeserializeAsync"] / t[o, p, "DeserializeStream"]; wr = t[o, p, "SerializeAsync"] / t[o, p, "SerializeStream"]
      printf "| %s | %s | %s | %s | %s%.2f%s | %s | %s | %s%.2f%s |\n", o, p, fmt(t[o, p, "DeserializeStream"]), fmt(t[o, p, "DeserializeAsync"]), (rd > 1.25 ? "**" : ""), rd, (rd > 1.25 ? "**" : ""), fmt(t[o, p, "SerializeStream"]), fmt(t[o, p, "SerializeAsync"]), (wr > 1.25 ? "**" : ""), wr, (wr > 1.25 ? "**" : "")
    }
  }' "$ratios" >> "$out/targets.md"

# 7b. The interleaved async/sync harness (Program: interleaved-async), when its output was saved: one process,
#     batches alternating, minimum per side, so the per-cell ratio is not the guest's case-to-case noise.
if [[ -f "$results/interleaved-async.md" ]]; then
  { echo ""; echo "Async / sync on every cell, interleaved in one process (results/interleaved-async.md)"; echo ""; grep -v '^#' "$results/interleaved-async.md"; grep '^# worst' "$results/interleaved-async.md" | sed 's/^# //'; } >> "$out/targets.md"
fi

# 8. The everyday messages as a Markdown table, when that class was run too.
everyday="$results/CoapNet.Benchmarks.EverydayMessageBenchmarks-report.csv"
if [[ -f "$everyday" ]]; then
  awk -F';' '
    function num(s) { gsub(/[",]/, "", s); return s }
    function fmt(ns) { return ns >= 1e3 ? sprintf("%.2f us", ns / 1e3) : sprintf("%.1f ns", ns) }
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    {
      key = $col["Message"] " | " $col["Framing"]
      if (!(key in seen)) { seen[key] = 1; keys[++n] = key }
      t[key, $col["Method"]] = num($col["Mean [ns]"]); a[key, $col["Method"]] = num($col["Allocated [B]"])
    }
    END {
      nm = split("Deserialize DeserializeMemory DeserializeStream DeserializeAsync Serialize SerializeSpan SerializeStream SerializeAsync", ms, " ")
      printf "| message | framing |"; for (j = 1; j <= nm; j++) printf " %s |", ms[j]; printf " async/sync read | async/sync write |\n"
      printf "|---|---|"; for (j = 1; j <= nm; j++) printf "---:|"; printf "---:|---:|\n"
      for (i = 1; i <= n; i++) {
        printf "| %s |", keys[i]
        for (j = 1; j <= nm; j++) printf " %s (%s B) |", fmt(t[keys[i], ms[j]]), a[keys[i], ms[j]]
        printf " %.2f | %.2f |\n", t[keys[i], "DeserializeAsync"] / t[keys[i], "DeserializeStream"], t[keys[i], "SerializeAsync"] / t[keys[i], "SerializeStream"]
      }
    }' "$everyday" > "$out/everyday.md"
fi

# 9. CoapNet beside CoAPnet, from the report recorded on 2026-11-22 (the comparison class is gone, see RESULTS.md): per message and operation, both
#    times and allocations and the factor CoAPnet time / CoapNet time (above 1: CoapNet is faster).
peers="$results/CoapNet.Benchmarks.PeerBenchmarks-report.csv"
if [[ -f "$peers" ]]; then
  awk -F';' '
    function num(s) { gsub(/[",]/, "", s); return s }
    function fmt(ns) { return ns >= 1e3 ? sprintf("%.2f us", ns / 1e3) : sprintf("%.1f ns", ns) }
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    {
      method = $col["Method"]; lib = (method ~ /CoAPnet$/ ? "peer" : "ours"); op = method; sub(/(CoAPnet|CoapNet)$/, "", op)
      key = $col["Message"] " | " op
      if (!(key in seen)) { seen[key] = 1; keys[++n] = key }
      t[key, lib] = num($col["Mean [ns]"]); a[key, lib] = num($col["Allocated [B]"])
    }
    END {
      print "| message | operation | CoAPnet | CoapNet | CoAPnet / CoapNet | allocated CoAPnet | allocated CoapNet |"
      print "|---|---|---:|---:|---:|---:|---:|"
      for (i = 1; i <= n; i++)
        printf "| %s | %s | %s | **%.1fx** | %s B | %s B |\n", keys[i], fmt(t[keys[i], "peer"]), fmt(t[keys[i], "ours"]), t[keys[i], "peer"] / t[keys[i], "ours"], a[keys[i], "peer"], a[keys[i], "ours"]
    }' "$peers" | { read -r h1; read -r h2; echo "$h1"; echo "$h2"; sort -t'|' -k2,2 -k3,3; } > "$out/peers.md"
fi

echo "wrote $(ls "$out" | tr '\n' ' ')to $out"
