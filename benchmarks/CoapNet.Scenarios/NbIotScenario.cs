using System.Diagnostics;
using System.Globalization;
using System.Text;
using CoapNet.Messaging;
using CoapNet.Messaging.Retransmission;
using CoapNet.QBlock;
using CoapNet.Simulation;

namespace CoapNet.Scenarios;

/// <summary>
/// Issues 24 and 40: seed 002's NB-IoT experiment (tables 6 to 10: one client fetches a 102,400-byte resource with Block2,
/// 256-byte blocks, NSTART 1, MAX_RETRANSMIT 20, over the emulated link with a 2,500-byte buffer and MTU 296) run by our
/// client and server over the simulated link in virtual time (tests/CoapNet.Simulation), many seeds a row: what each byte
/// of a block costs on that link and what the path settings (<see cref="CoapPathOptions"/>) save; Default CoAP and CoCoA
/// with packets the size of the seed's beside the seed's figures; our best configuration, chosen on seeds kept apart,
/// beside every column of the seed's table (Default, CoCoA, TCP New Reno); and a cell of 1 to 100 devices sharing the one
/// bottleneck. Writes the tables (nbiot.md), the chart's data (nbiot.tsv, cells.tsv) and, with gnuplot, the chart
/// (benchmarks/charts/nbiot-fct.png). Measures; asserts nothing.
/// </summary>
internal static class NbIotScenario
{
    public const string Usage = """
        nbiot [--seeds 51] [--cell-seeds 11] [--bad-run 1.4] [--parallel 1] [--out benchmarks/results/issue40] [--no-chart]
          --seeds       runs per row (seeds 1..N; the seed paper ran at least 20)
          --cell-seeds  runs per cell of the many-devices table (seeds 1..N)
          --bad-run     the mean stay in the bad state, in packets, of the medium and high profiles (the seed does not say;
                        1.4 reproduces its medians, benchmarks/results/issue24/nbiot-analysis.md)
          --parallel    runs at a time (a run is a function of its seed: the figures do not depend on it)
          --out         where nbiot.md, nbiot.tsv and cells.tsv go (relative to the repository); the PNG goes to benchmarks/charts
          --no-chart    do not run benchmarks/charts-nbiot.sh
        """;

    /// <summary>The seed's link MTU: libcoap's 256-byte blocks travelled in packets of about this size.</summary>
    private const int Mtu = 296;

    /// <summary>The body, seed 002's firmware image.</summary>
    private const int BodyBytes = 102_400;

    /// <summary>The downlink's rate in bytes per second, and what of it a 256-byte block in a 296-byte packet carries as body.</summary>
    private const double LinkBytesPerSecond = 30_000 / 8.0;

    /// <summary>Seed 002's 25th percentile, median and 75th percentile, in seconds (tables 6, 8, 9, 10; 2,500-byte buffer, one client).</summary>
    private static readonly Dictionary<(string Loss, string Control), (double P25, double Median, double P75)> Seed = new()
    {
        [("none", "Default")] = (285.694, 285.695, 285.696),
        [("none", "CoCoA")] = (285.693, 285.696, 285.697),
        [("none", "TCP")] = (36.213, 36.213, 36.214),
        [("low", "Default")] = (319.161, 336.859, 345.589),
        [("low", "CoCoA")] = (299.088, 304.267, 308.842),
        [("low", "TCP")] = (43.166, 48.844, 56.610),
        [("medium", "Default")] = (563.452, 601.462, 638.710),
        [("medium", "CoCoA")] = (459.740, 492.896, 530.758),
        [("medium", "TCP")] = (124.164, 152.292, 174.389),
        [("high", "Default")] = (1101.680, 1269.150, 1312.080),
        [("high", "CoCoA")] = (915.251, 1028.140, 1230.990),
        [("high", "TCP")] = (694.989, 1105.210, 1415.230),
    };

    /// <summary>Seed 002's medians with four clients on the clean link (table 7, 2,500-byte buffer).</summary>
    private static readonly Dictionary<string, double> SeedFourClients = new() { ["Default"] = 285.963, ["CoCoA"] = 286.001, ["TCP"] = 125.964 };

    private static int _parallel = 1;

    public static Task<int> RunAsync(string[] args)
    {
        int seeds = 51;
        int cellSeeds = 11;
        double badRun = 1.4;
        string output = "benchmarks/results/issue40";
        bool chart = true;
        CommandLine.Parse(args, Usage, ["--no-chart"], (name, value) =>
        {
            switch (name)
            {
                case "--seeds":
                    seeds = CommandLine.ParseCount(name, value, 1);
                    return true;
                case "--cell-seeds":
                    cellSeeds = CommandLine.ParseCount(name, value, 1);
                    return true;
                case "--parallel":
                    _parallel = CommandLine.ParseCount(name, value, 1);
                    return true;
                case "--bad-run":
                    badRun = double.TryParse(value, NumberStyles.Float, CultureInfo.InvariantCulture, out double run) && run >= 1
                        ? run
                        : throw new ArgumentException($"--bad-run takes a number of packets from 1 up, not '{value}'.");
                    return true;
                case "--out":
                    output = value!;
                    return true;
                case "--no-chart":
                    chart = false;
                    return true;
                default:
                    return false;
            }
        });

        Stopwatch total = Stopwatch.StartNew();
        StringBuilder report = new();
        void Say(string line = "")
        {
            Console.WriteLine(line);
            report.AppendLine(line);
        }

        int[] main = [.. Enumerable.Range(1, seeds)];
        Say($"# NB-IoT (seed 002) in virtual time: {seeds} seeds per row, bad-state stays of {badRun.ToString(CultureInfo.InvariantCulture)} packets, MTU {Mtu}");
        Say();
        BytesPerBlock(Say);

        Say();
        Say($"## 2. The seed's table: Default CoAP and CoCoA with packets the size of the seed's ({Mtu}-byte MTU, paths set)");
        Say();
        Say($"Both ends know the path (MTU {Mtu}), the client's tokens are a 2-byte counter and the firmware image is immutable:");
        Say("a 256-byte block travels as one packet of 295 or 296 bytes, as libcoap's did (the seed's 285.7 s on the clean link");
        Say("is 400 round trips of a 296-byte response and a request of about 40 bytes).");
        Say();
        Config[] seedConfigs = [Config.Default(economy: true), Config.Cocoa(economy: true)];
        Dictionary<(string, string), Row> reproduced = Measure(seedConfigs, NbIot.LossProfiles, badRun, main);
        SeedTable(Say, seedConfigs, reproduced);

        Say();
        Say($"### 2a. The same with our packets as the defaults make them (no path set): 8-byte random tokens, a 4-byte ETag, Size2");
        Say();
        Say($"Each 256-byte block is a packet of 307 to 310 bytes (section 1, second row): over MTU {Mtu} two IPv4 fragments, lost when either is.");
        Say();
        Config[] unsetConfigs = [Config.Default(economy: false), Config.Cocoa(economy: false)];
        SeedTable(Say, unsetConfigs, Measure(unsetConfigs, NbIot.LossProfiles, badRun, main));

        Say();
        Say("## 3. Our best configuration, chosen on seeds 1001-1010");
        Say();
        Say("Every candidate runs with the paths set (section 1's last row but one: 296-byte packets). The candidates: Block2");
        Say("windows (BlockwiseOptions.MaxBlocksInFlight = NSTART) with CoCoA-S and a congestion window whose ceiling is NSTART");
        Say("(CocoaOptions.CongestionWindow), its back-off bound 32 s (CoCoA's) or 60 s (the seed's for Default CoAP); the same");
        Say("windows fixed (issue 24's best kind); and Q-Block2 (RFC 9177) with sets that fit the 2,500-byte buffer. The score");
        Say("is the geometric mean of the four medians, among the candidates that hold up with 100 devices on seeds 1001-1003:");
        Say("their aggregate goodput at least 0.8 times the better of one device's and a hundred's (no collapse), and no more");
        Say("downloads given up after MAX_RETRANSMIT than CoCoA's on the same seeds.");
        Say();
        Config[] grid =
        [
            .. from window in (int[])[8, 12, 16, 24]
               from bound in (int[])[32, 60]
               select Config.Ours(window, bound),
            .. from window in (int[])[8, 12, 16]
               select Config.Fixed(window),
            .. from payloads in (int[])[4, 8]
               select Config.QBlock(payloads),
        ];
        int[] selection = [.. Enumerable.Range(1001, 10)];
        Dictionary<(string, string), Row> searched = Measure(grid, NbIot.LossProfiles, badRun, selection);
        int[] crowdSeeds = [1001, 1002, 1003];
        Dictionary<(string, int), CellRow> crowd = MeasureCells([.. grid, Config.Cocoa(economy: true)], [100], crowdSeeds);
        int cocoaFailed = crowd[(Config.Cocoa(economy: true).Name, 100)].Failed;
        Say("| configuration | " + string.Join(" | ", NbIot.LossProfiles) + " | geometric mean | 100 devices: goodput | failed | vs one device | eligible |");
        Say("|---|" + string.Concat(NbIot.LossProfiles.Select(_ => "---:|")) + "---:|---:|---:|---:|---|");
        Config best = grid[0];
        double bestScore = double.MaxValue;
        foreach (Config config in grid)
        {
            double score = Math.Exp(NbIot.LossProfiles.Average(loss => Math.Log(searched[(loss, config.Name)].Median)));
            CellRow hundred = crowd[(config.Name, 100)];
            double alone = BodyBytes / searched[("none", config.Name)].Median;
            double ratio = hundred.Goodput / Math.Max(alone, hundred.Goodput);
            bool eligible = ratio >= 0.8 && hundred.Failed <= cocoaFailed;
            Say($"| {config.Name} | " + string.Join(" | ", NbIot.LossProfiles.Select(loss => $"{searched[(loss, config.Name)].Median:0.0} s")) + $" | {score:0.0} s | {hundred.Goodput:0} B/s | {hundred.Failed} of {hundred.Clients} | {ratio:0.00}x | {(eligible ? "yes" : "no")} |");
            if (eligible && score < bestScore)
            {
                (best, bestScore) = (config, score);
            }
        }

        Say();
        Say($"With 100 devices on those seeds CoCoA gave up {cocoaFailed} of {crowd[(Config.Cocoa(economy: true).Name, 100)].Clients} downloads.");
        Say();
        Say($"## 4. {best.Name}, on the reported seeds, beside every column of the seed's table");
        Say();
        Dictionary<(string, string), Row> ours = Measure([best], NbIot.LossProfiles, badRun, main);
        Say("| loss | ours median | p25-p75 | min-max | seed Default | seed CoCoA | seed TCP New Reno | ours vs TCP | our Default | our CoCoA | buffer drops (median) | requests (median) | failed |");
        Say("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        foreach (string loss in NbIot.LossProfiles)
        {
            Row row = ours[(loss, best.Name)];
            double tcp = Seed[(loss, "TCP")].Median;
            Say($"| {loss} | **{row.Median:0.0} s** | {row.P25:0.0}-{row.P75:0.0} | {row.Min:0.0}-{row.Max:0.0} | {Seed[(loss, "Default")].Median:0.0} s | {Seed[(loss, "CoCoA")].Median:0.0} s | {tcp:0.0} s | {row.Median / tcp:0.00}x | {reproduced[(loss, seedConfigs[0].Name)].Median:0.0} s | {reproduced[(loss, seedConfigs[1].Name)].Median:0.0} s | {row.BufferDrops} | {row.Requests} | {row.Failed} |");
        }

        Say();
        Say("The seed's ideal over TCP on the clean link is 32.2 s: 400 segments of 296 bytes at 30 kbit/s and a round trip.");

        Say();
        Say("## 5. Many devices: one cell, the seed's 2,500-byte buffer and rates, the clean link");
        Say();
        Say($"N clients start within one second and each fetches the image once through the one bottleneck (both directions shared,");
        Say($"first in, first out); seeds 1-{cellSeeds} per cell, the paths set on every configuration. Completion times pool every");
        Say("client of every seed that completed; link throughput is the IP bytes the downlink carried per second, goodput the");
        Say("completed images' bytes per second, both from the first start to the last completion and averaged over the seeds;");
        Say("Jain's fairness index is over each client's throughput (image bytes over its completion time, 0 for one that failed).");
        Say($"The downlink carries {LinkBytesPerSecond:0} B/s, {LinkBytesPerSecond * 256 / 296:0} B/s of image in 296-byte packets.");
        Say();
        Config[] cellConfigs = [Config.Default(economy: true), Config.Cocoa(economy: true), best];
        int[] counts = [1, 4, 10, 30, 100];
        Dictionary<(string, int), CellRow> cells = MeasureCells(cellConfigs, counts, [.. Enumerable.Range(1, cellSeeds)]);
        Say("| devices | configuration | median | p95 | link throughput | goodput | Jain | failed | seed 002 (4 clients) |");
        Say("|---:|---|---:|---:|---:|---:|---:|---:|---:|");
        foreach (int n in counts)
        {
            foreach (Config config in cellConfigs)
            {
                CellRow cell = cells[(config.Name, n)];
                string seedColumn = n == 4 && SeedFourClients.TryGetValue(config.Control, out double s) ? $"{s:0.0} s" : n == 4 && config == best ? $"TCP New Reno {SeedFourClients["TCP"]:0.0} s" : string.Empty;
                Say($"| {n} | {config.Name} | {cell.Median:0.0} s | {cell.P95:0.0} s | {cell.Throughput:0} B/s ({cell.Throughput / LinkBytesPerSecond:0%}) | {cell.Goodput:0} B/s | {cell.Jain:0.000} | {cell.Failed} of {cell.Clients} | {seedColumn} |");
            }
        }

        Say();
        Say("Collapse (goodput falling as devices are added): each configuration's goodput with 100 devices against its best at any count.");
        Say();
        Say("| configuration | best goodput (devices) | goodput with 100 | ratio | collapses |");
        Say("|---|---:|---:|---:|---|");
        foreach (Config config in cellConfigs)
        {
            (int atCount, double peak) = counts.Select(n => (n, cells[(config.Name, n)].Goodput)).MaxBy(p => p.Goodput);
            double hundred = cells[(config.Name, 100)].Goodput;
            Say($"| {config.Name} | {peak:0} B/s ({atCount}) | {hundred:0} B/s | {hundred / peak:0.00}x | {(hundred / peak < 0.8 ? "yes" : "no")} |");
        }

        Say();
        Say($"Real time for all of the above: {total.Elapsed.TotalSeconds:0.0} s ({_parallel} run{(_parallel == 1 ? string.Empty : "s")} at a time, {Environment.ProcessorCount} processors).");

        string root = RepositoryRoot();
        string directory = Path.Combine(root, output);
        Directory.CreateDirectory(directory);
        File.WriteAllText(Path.Combine(directory, "nbiot.md"), report.ToString());
        string tsv = Path.Combine(directory, "nbiot.tsv");
        WriteChartData(tsv, reproduced, seedConfigs, ours, best);
        WriteCells(Path.Combine(directory, "cells.tsv"), cells, cellConfigs, counts);
        Console.WriteLine($"wrote {Path.Combine(directory, "nbiot.md")}, {tsv} and cells.tsv");
        if (chart)
        {
            DrawChart(root, tsv, best.Name);
        }

        return Task.FromResult(0);
    }

    /// <summary>Section 1: one download on the clean link per step of the byte economy, and what its packets are.</summary>
    private static void BytesPerBlock(Action<string> say)
    {
        say("## 1. Bytes per block: what each path setting saves");
        say(string.Empty);
        say($"One download on the clean link per row (stop-and-wait, 256-byte blocks asked for); sizes are IPv4 packets, MTU {Mtu},");
        say("a fragmented datagram counted as its fragments. \"First\" is block 0, \"later\" block 16 and on (a 3-byte Block2).");
        say(string.Empty);
        say("| packets | block size | first block | later block | request | downlink bytes per image byte | clean-link time |");
        say("|---|---:|---:|---:|---:|---:|---:|");
        (string Name, TransferSetup Setup)[] steps =
        [
            ("issue 24's: 8-byte tokens and ETag, Size2 on block 0", Economy(null, null, false, 8)),
            ("the defaults now: 8-byte tokens, a 4-byte ETag (BlockwiseOptions.ETagLength)", Economy(null, null, false, 4)),
            ("+ a 2-byte counter token (CoapPathOptions.TokenLength = 2)", Economy(null, 2, false, 4)),
            ("+ a 1-byte ETag (ETagLength = 1)", Economy(null, 2, false, 1)),
            ("+ an immutable image, no ETag (CoapResponse.Immutable)", Economy(null, 2, true, 4)),
            ($"+ the path's MTU on both ends (CoapPathOptions.Mtu = {Mtu}): Size2 only when asked", Economy(Mtu, 2, true, 4)),
            ($"the path's MTU with a 4-byte ETag: the server halves the block to fit", Economy(Mtu, 2, false, 4)),
        ];
        foreach ((string name, TransferSetup setup) in steps)
        {
            TransferOutcome outcome = TransferSimulation.Run(setup);
            List<Datagram> blocks = [.. outcome.Trace.Where(d => d.From.Equals(TransferSimulation.ServerAddress) && d.Message?.Block2 is not null)];
            Datagram first = blocks[0];
            Datagram later = blocks.First(d => d.Message!.Block2!.Value.Number >= 16 && d.Message.Block2.Value.More);
            Datagram request = outcome.Trace.First(d => d.From.Equals(TransferSimulation.ClientAddress) && d.Message?.Block2 is { Number: >= 16 });
            long downlink = outcome.Downlink.Bytes;
            say($"| {name} | {first.Message!.Block2!.Value.Size} | {Packet(first.Bytes.Length)} | {Packet(later.Bytes.Length)} | {Packet(request.Bytes.Length)} | {downlink / (double)BodyBytes:0.000} | {outcome.CompletionTime?.TotalSeconds:0.0} s |");
        }

        static TransferSetup Economy(int? mtu, int? token, bool immutable, int etag) => new()
        {
            Parameters = CoapTransmissionParameters.Default with { MaxRetransmit = 20 },
            Policy = CoapRetransmissionPolicy.Cocoa(),
            Uplink = NbIot.Uplink(GilbertElliott.None),
            Downlink = NbIot.Downlink(GilbertElliott.None),
            PathMtu = mtu,
            TokenLength = token,
            Immutable = immutable,
            ETagLength = etag,
            Seed = 1,
        };
    }

    /// <summary>"296 B" or "305 B (2 fragments, 325 B)" for a CoAP datagram of <paramref name="coap"/> bytes on the link.</summary>
    private static string Packet(int coap)
    {
        int ip = coap + LinkProfile.UdpIpv4Overhead;
        if (ip <= Mtu)
        {
            return $"{ip} B";
        }

        int perFragment = (Mtu - LinkProfile.Ipv4HeaderBytes) / 8 * 8;
        int fragments = (ip - LinkProfile.Ipv4HeaderBytes + perFragment - 1) / perFragment;
        return $"{ip} B ({fragments} fragments, {ip + ((fragments - 1) * LinkProfile.Ipv4HeaderBytes)} B)";
    }

    private static void SeedTable(Action<string> say, Config[] configs, Dictionary<(string, string), Row> rows)
    {
        say("| loss | control | seed median | ours median | ours vs seed | seed p25-p75 | ours p25-p75 | ours min-max | requests (median) | failed |");
        say("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|");
        foreach (string loss in NbIot.LossProfiles)
        {
            foreach (Config config in configs)
            {
                (double p25, double median, double p75) = Seed[(loss, config.Control)];
                Row row = rows[(loss, config.Name)];
                say($"| {loss} | {config.Control} | {median:0.0} s | {row.Median:0.0} s | {Delta(row.Median, median)} | {p25:0.0}-{p75:0.0} | {row.P25:0.0}-{row.P75:0.0} | {row.Min:0.0}-{row.Max:0.0} | {row.Requests} | {row.Failed} |");
            }
        }
    }

    private static string Delta(double ours, double seed)
    {
        double delta = (ours / seed) - 1;
        string text = delta.ToString("+0.0%;-0.0%", CultureInfo.InvariantCulture);
        return Math.Abs(delta) <= 0.05 ? text : $"**{text}**";
    }

    /// <summary>Runs every configuration on every loss profile and seed, <see cref="_parallel"/> runs at a time.</summary>
    private static Dictionary<(string, string), Row> Measure(IReadOnlyList<Config> configs, IReadOnlyList<string> losses, double badRun, int[] seeds)
    {
        List<(Config Config, string Loss, int Seed)> jobs = [.. from c in configs from l in losses from s in seeds select (c, l, s)];
        TransferOutcome[] outcomes = new TransferOutcome[jobs.Count];
        Parallel.For(0, jobs.Count, new ParallelOptions { MaxDegreeOfParallelism = _parallel }, i =>
        {
            (Config config, string loss, int seed) = jobs[i];
            outcomes[i] = TransferSimulation.Run(config.Setup(NbIot.Loss(loss, badRun), seed, clients: 1));
        });

        Dictionary<(string, string), Row> rows = [];
        foreach (IGrouping<(string, string), int> group in Enumerable.Range(0, jobs.Count).GroupBy(i => (jobs[i].Loss, jobs[i].Config.Name)))
        {
            rows[group.Key] = Row.Of([.. group.Select(i => outcomes[i])]);
        }

        return rows;
    }

    /// <summary>Runs every configuration with every number of devices on the clean link, each seed once.</summary>
    private static Dictionary<(string, int), CellRow> MeasureCells(IReadOnlyList<Config> configs, int[] counts, int[] seeds)
    {
        List<(Config Config, int Count, int Seed)> jobs = [.. from c in configs from n in counts from s in seeds select (c, n, s)];
        CellOutcome[] outcomes = new CellOutcome[jobs.Count];
        Parallel.For(0, jobs.Count, new ParallelOptions { MaxDegreeOfParallelism = _parallel }, i =>
        {
            (Config config, int count, int seed) = jobs[i];
            outcomes[i] = TransferSimulation.RunCell(config.Setup(GilbertElliott.None, seed, count));
        });

        Dictionary<(string, int), CellRow> rows = [];
        foreach (IGrouping<(string, int), int> group in Enumerable.Range(0, jobs.Count).GroupBy(i => (jobs[i].Config.Name, jobs[i].Count)))
        {
            rows[group.Key] = CellRow.Of([.. group.Select(i => outcomes[i])]);
        }

        return rows;
    }

    private static void WriteChartData(string path, Dictionary<(string, string), Row> reproduced, Config[] seedConfigs, Dictionary<(string, string), Row> ours, Config best)
    {
        StringBuilder tsv = new("# loss\tseedDefault p25 p75\toursDefault p25 p75\tseedCoCoA p25 p75\toursCoCoA p25 p75\tseedTCP p25 p75\tbest p25 p75\n");
        foreach (string loss in NbIot.LossProfiles)
        {
            List<double> values = [];
            foreach (Config config in seedConfigs)
            {
                (double p25, double median, double p75) = Seed[(loss, config.Control)];
                Row row = reproduced[(loss, config.Name)];
                values.AddRange([median, p25, p75, row.Median, row.P25, row.P75]);
            }

            (double tp25, double tcp, double tp75) = Seed[(loss, "TCP")];
            Row b = ours[(loss, best.Name)];
            values.AddRange([tcp, tp25, tp75, b.Median, b.P25, b.P75]);
            tsv.Append(loss).Append('\t').AppendJoin('\t', values.Select(v => v.ToString("0.###", CultureInfo.InvariantCulture))).Append('\n');
        }

        File.WriteAllText(path, tsv.ToString());
    }

    private static void WriteCells(string path, Dictionary<(string, int), CellRow> cells, Config[] configs, int[] counts)
    {
        StringBuilder tsv = new("# devices\tconfiguration\tmedian\tp95\tthroughput\tgoodput\tjain\tfailed\tclients\n");
        foreach (int n in counts)
        {
            foreach (Config config in configs)
            {
                CellRow c = cells[(config.Name, n)];
                tsv.Append(CultureInfo.InvariantCulture, $"{n}\t{config.Name}\t{c.Median:0.###}\t{c.P95:0.###}\t{c.Throughput:0.#}\t{c.Goodput:0.#}\t{c.Jain:0.####}\t{c.Failed}\t{c.Clients}\n");
            }
        }

        File.WriteAllText(path, tsv.ToString());
    }

    private static void DrawChart(string root, string tsv, string bestName)
    {
        string script = Path.Combine(root, "benchmarks", "charts-nbiot.sh");
        try
        {
            using Process? process = Process.Start(new ProcessStartInfo("bash", [script, tsv, bestName]) { UseShellExecute = false });
            process?.WaitForExit();
            if (process is { ExitCode: not 0 })
            {
                Console.Error.WriteLine($"{script} failed (exit {process.ExitCode}); the data is in {tsv}.");
            }
        }
        catch (System.ComponentModel.Win32Exception e)
        {
            Console.Error.WriteLine($"Could not run {script} ({e.Message}); the data is in {tsv}.");
        }
    }

    private static string RepositoryRoot()
    {
        for (DirectoryInfo? directory = new(Directory.GetCurrentDirectory()); directory is not null; directory = directory.Parent)
        {
            if (File.Exists(Path.Combine(directory.FullName, "CoapNet.sln")))
            {
                return directory.FullName;
            }
        }

        throw new ArgumentException("Run the nbiot scenario from inside the repository (it writes its results there).");
    }

    /// <summary>
    /// A column of a table: the control's name in the seed's tables, its retransmission policy, its window (NSTART and as
    /// many Block2 requests in flight), whether the path settings are made (a 2-byte counter token, the MTU on both ends,
    /// an immutable image), and Q-Block2's MAX_PAYLOADS (0 for Block2).
    /// </summary>
    private sealed record Config(string Name, string Control, CoapRetransmissionPolicy Policy, int Window, bool Economy, int MaxPayloads = 0)
    {
        // Seed 002 section 4.2: CoCoA bounds its back-off at 32 s; for Default CoAP, which names no bound, it used 60 s.
        private static readonly CoapRetransmissionPolicy BoundedDefault = new BoundedBackOffPolicy(CoapRetransmissionPolicy.Rfc7252, TimeSpan.FromSeconds(60));

        public static Config Default(bool economy) => new(economy ? "Default" : "Default, no path set", "Default", BoundedDefault, 1, economy);

        public static Config Cocoa(bool economy) => new(economy ? "CoCoA" : "CoCoA, no path set", "CoCoA", CoapRetransmissionPolicy.Cocoa(), 1, economy);

        public static Config Ours(int window, int bound)
            => new($"CoCoA-S, congestion window up to {window}, back-off bound {bound} s", "ours", CoapRetransmissionPolicy.Cocoa(new CocoaOptions { WeakEstimator = false, CongestionWindow = true, MaxTimeout = TimeSpan.FromSeconds(bound) }), window, true);

        public static Config Fixed(int window)
            => new($"CoCoA-S, fixed NSTART {window}", "ours", CoapRetransmissionPolicy.Cocoa(new CocoaOptions { WeakEstimator = false }), window, true);

        // RFC 9177: the server sends MAX_PAYLOADS blocks per request, back to back, so a set must fit the 2,500-byte buffer
        // (8 packets of 296 bytes); the one CON request of each set is retransmitted with CoCoA-S, and NON_MAX_RETRANSMIT
        // follows the seed's MAX_RETRANSMIT 20 (section 7.2 ties their defaults).
        public static Config QBlock(int maxPayloads)
            => new($"Q-Block2, MAX_PAYLOADS {maxPayloads}", "ours", CoapRetransmissionPolicy.Cocoa(new CocoaOptions { WeakEstimator = false }), 1, true, maxPayloads);

        public TransferSetup Setup(GilbertElliott loss, int seed, int clients) => new()
        {
            BodyBytes = BodyBytes,
            BlockSize = 256,
            BlocksInFlight = Window,
            Parameters = CoapTransmissionParameters.Default with { MaxRetransmit = 20, NStart = Window },
            Policy = Policy,
            QBlock = new QBlockOptions { Enabled = MaxPayloads > 0, MaxPayloads = Math.Max(MaxPayloads, 1), NonMaxRetransmit = 20 },
            Uplink = NbIot.Uplink(loss),
            Downlink = NbIot.Downlink(loss),
            PathMtu = Economy ? Mtu : null,
            TokenLength = Economy ? 2 : null,
            Immutable = Economy,
            Clients = clients,
            StartWithin = clients > 1 ? TimeSpan.FromSeconds(1) : TimeSpan.Zero,
            Seed = seed,
        };
    }

    /// <summary>A row's statistics over its seeds, in seconds: medians and quartiles as R's type 7 (linear between order statistics).</summary>
    private sealed record Row(double Min, double P25, double Median, double P75, double Max, long Requests, long BufferDrops, int Failed)
    {
        public static Row Of(TransferOutcome[] runs)
        {
            // A run that did not complete (the client gave up after MAX_RETRANSMIT) counts as longer than any that did.
            double[] times = [.. runs.Select(r => r.CompletionTime?.TotalSeconds ?? double.PositiveInfinity).Order()];
            long[] requests = [.. runs.Select(r => (long)r.Requests).Order()];
            long[] drops = [.. runs.Select(r => r.Uplink.BufferDrops + r.Downlink.BufferDrops).Order()];
            return new Row(times[0], Quantile(times, 0.25), Quantile(times, 0.5), Quantile(times, 0.75), times[^1], requests[requests.Length / 2], drops[drops.Length / 2], runs.Count(r => !r.Completed));
        }
    }

    /// <summary>A cell's statistics over its seeds: completion times pooled over the clients that completed, the rest averaged per seed.</summary>
    private sealed record CellRow(int Clients, double Median, double P95, double Throughput, double Goodput, double Jain, int Failed)
    {
        public static CellRow Of(CellOutcome[] runs)
        {
            double[] times = [.. runs.SelectMany(r => r.CompletionTimes).Where(t => t is not null).Select(t => t!.Value.TotalSeconds).Order()];
            int failed = runs.Sum(r => r.CompletionTimes.Count(t => t is null));
            double throughput = runs.Average(r => r.Downlink.Bytes / r.Duration.TotalSeconds);
            double goodput = runs.Average(r => r.CompletionTimes.Count(t => t is not null) * (double)BodyBytes / r.Duration.TotalSeconds);
            double jain = runs.Average(r =>
            {
                double[] rates = [.. r.CompletionTimes.Select(t => t is { } time ? BodyBytes / time.TotalSeconds : 0)];
                double sum = rates.Sum();
                double squares = rates.Sum(x => x * x);
                return squares == 0 ? 0 : sum * sum / (rates.Length * squares);
            });
            return new CellRow(runs.Sum(r => r.CompletionTimes.Count), times.Length == 0 ? double.NaN : Quantile(times, 0.5), times.Length == 0 ? double.NaN : Quantile(times, 0.95), throughput, goodput, jain, failed);
        }
    }

    private static double Quantile(double[] sorted, double q)
    {
        double position = q * (sorted.Length - 1);
        int below = (int)Math.Floor(position);
        if (below == position)
        {
            // An order statistic itself: no interpolation, which with a failed run (infinite) would give NaN.
            return sorted[below];
        }

        int above = Math.Min(below + 1, sorted.Length - 1);
        return sorted[below] + ((position - below) * (sorted[above] - sorted[below]));
    }
}
