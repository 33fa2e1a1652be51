using System.Diagnostics;
using System.Globalization;
using System.Text;
using CoapNet.Messaging;
using CoapNet.Messaging.Retransmission;
using CoapNet.QBlock;
using CoapNet.Simulation;

namespace CoapNet.Scenarios;

/// <summary>
/// Issue 24: seed 002's NB-IoT experiment (tables 6, 8, 9 and 10: one client fetches a 102,400-byte resource with Block2,
/// 256-byte blocks, NSTART 1, MAX_RETRANSMIT 20, over the emulated link with a 2,500-byte buffer) run by our client and
/// server over the simulated link in virtual time (tests/CoapNet.Simulation), Default CoAP and CoCoA on the four loss
/// profiles, many seeds each; our medians and quartiles beside the seed's; which unstated parameter explains what
/// differs; and our best configuration, block-wise with a window of requests or Q-Block2 (RFC 9177). Writes the tables (nbiot.md), the chart's data (nbiot.tsv) and,
/// with gnuplot, the chart (benchmarks/charts/nbiot-fct.png). Measures; asserts nothing.
/// </summary>
internal static class NbIotScenario
{
    public const string Usage = """
        nbiot [--seeds 51] [--bad-run 1.4] [--out benchmarks/results/issue24] [--no-chart]
          --seeds     runs per row (seeds 1..N; the seed paper ran at least 20)
          --bad-run   the mean stay in the bad state, in packets, of the medium and high profiles (the seed does not say;
                      1.4 reproduces its medians, section 2b shows the others)
          --out       where nbiot.md and nbiot.tsv go (relative to the repository); the PNG goes to benchmarks/charts
          --no-chart  do not run benchmarks/charts-nbiot.sh
        """;

    /// <summary>The seed's link MTU; our 256-byte block responses are 313-byte packets, so they travel as two fragments on it.</summary>
    private const int StatedMtu = 296;

    /// <summary>An MTU our 313-byte block responses fit, as the seed's libcoap responses fit 296 (see the scenario's section 2a).</summary>
    private const int OnePacketMtu = 320;

    /// <summary>Seed 002's 25th percentile, median and 75th percentile, in seconds (tables 6, 8, 9, 10; 2,500-byte buffer, one client).</summary>
    private static readonly Dictionary<(string Loss, string Control), (double P25, double Median, double P75)> Seed = new()
    {
        [("none", "Default")] = (285.694, 285.695, 285.696),
        [("none", "CoCoA")] = (285.693, 285.696, 285.697),
        [("low", "Default")] = (319.161, 336.859, 345.589),
        [("low", "CoCoA")] = (299.088, 304.267, 308.842),
        [("medium", "Default")] = (563.452, 601.462, 638.710),
        [("medium", "CoCoA")] = (459.740, 492.896, 530.758),
        [("high", "Default")] = (1101.680, 1269.150, 1312.080),
        [("high", "CoCoA")] = (915.251, 1028.140, 1230.990),
    };

    public static Task<int> RunAsync(string[] args)
    {
        int seeds = 51;
        double badRun = 1.4;
        string output = "benchmarks/results/issue24";
        bool chart = true;
        CommandLine.Parse(args, Usage, ["--no-chart"], (name, value) =>
        {
            switch (name)
            {
                case "--seeds":
                    seeds = CommandLine.ParseCount(name, value, 1);
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
        Config[] seedConfigs = [Config.Default(OnePacketMtu), Config.Cocoa(OnePacketMtu)];

        Say($"# NB-IoT (seed 002) in virtual time: {seeds} seeds per row, bad-state stays of {badRun.ToString(CultureInfo.InvariantCulture)} packets");
        Say();
        Say($"## 1. The seed's table: Default CoAP and CoCoA, one packet per block (MTU {OnePacketMtu}, see 2a)");
        Say();
        Dictionary<(string, string), Row> reproduced = Measure(seedConfigs, NbIot.LossProfiles, badRun, main);
        SeedTable(Say, seedConfigs, reproduced);

        Say();
        Say("## 2. What the seed does not state, and what it moves");
        Say();
        Say($"### 2a. Packet size: the link as stated (MTU {StatedMtu}), our packets as they are");
        Say();
        Say($"Our 256-byte block responses are 313-byte IPv4 packets (8-byte token, the 8-byte ETag our server adds, Block2,");
        Say($"Size2 on the first, Content-Format): over MTU {StatedMtu} each is two fragments, and a block is lost when either is.");
        Say("The seed's 285.7 s on the clean link is 400 round trips of 0.714 s: 0.63 s of delays and 84 ms of transmission,");
        Say("which at 30 and 60 kbit/s is a response of about 296 bytes and a request of about 40: libcoap's blocks fit the MTU.");
        Say();
        Config[] stated = [Config.Default(StatedMtu), Config.Cocoa(StatedMtu)];
        SeedTable(Say, stated, Measure(stated, NbIot.LossProfiles, badRun, main));

        Say();
        Say("### 2b. Burst length: the mean stay in the bad state (packets of one direction) of the alternating profiles");
        Say();
        double[] runs = [1, 1.25, 1.4, 1.5, 2, 3];
        Say("| loss | control | seed median | " + string.Join(" | ", runs.Select(r => $"stay {r.ToString(CultureInfo.InvariantCulture)}")) + " |");
        Say("|---|---|---:|" + string.Concat(runs.Select(_ => "---:|")));
        foreach (string loss in (string[])["medium", "high"])
        {
            foreach (Config config in seedConfigs)
            {
                double seedMedian = Seed[(loss, config.Control)].Median;
                StringBuilder line = new($"| {loss} | {config.Control} | {seedMedian:0.0} s |");
                foreach (double run in runs)
                {
                    Row row = Measure([config], [loss], run, main)[(loss, config.Name)];
                    line.Append(CultureInfo.InvariantCulture, $" {row.Median:0.0} s ({Delta(row.Median, seedMedian)}){(row.Failed > 0 ? $", {row.Failed} failed" : string.Empty)} |");
                }

                Say(line.ToString());
            }
        }

        Say();
        Say("## 3. Our best configuration, on the link as stated (MTU 296)");
        Say();
        Say("Chosen on seeds 1001-1010 (not the reported ones) by the geometric mean of the four medians, among CoCoA and its");
        Say("strong-only variant, 128- and 256-byte blocks, and NSTART 4 to 16 with as many Block2 requests in flight; and");
        Say("Q-Block2 (RFC 9177) with CoCoA-S for its requests, 128- and 256-byte blocks and MAX_PAYLOADS 4 to 16 (a set goes out");
        Say("back to back, so the 2,500-byte buffer holds about 13 of our 128-byte blocks and 7 of our 256-byte ones):");
        Say();
        Config[] grid =
        [
            .. from weak in (bool[])[true, false]
               from block in (int[])[128, 256]
               from window in (int[])[4, 8, 12, 16]
               select Config.Best(weak, block, window),
            .. from block in (int[])[128, 256]
               from payloads in (int[])[4, 6, 8, 12, 13, 16]
               select Config.QBlock(block, payloads),
        ];
        int[] selection = [.. Enumerable.Range(1001, 10)];
        Dictionary<(string, string), Row> searched = Measure(grid, NbIot.LossProfiles, badRun, selection);
        Say("| configuration | " + string.Join(" | ", NbIot.LossProfiles) + " | geometric mean |");
        Say("|---|" + string.Concat(NbIot.LossProfiles.Select(_ => "---:|")) + "---:|");
        Config best = grid[0];
        double bestScore = double.MaxValue;
        Config bestQBlock = grid[^1];
        double bestQBlockScore = double.MaxValue;
        foreach (Config config in grid)
        {
            double score = Math.Exp(NbIot.LossProfiles.Average(loss => Math.Log(searched[(loss, config.Name)].Median)));
            Say($"| {config.Name} | " + string.Join(" | ", NbIot.LossProfiles.Select(loss => $"{searched[(loss, config.Name)].Median:0.0} s")) + $" | {score:0.0} s |");
            if (score < bestScore)
            {
                (best, bestScore) = (config, score);
            }

            if (config.MaxPayloads > 0 && score < bestQBlockScore)
            {
                (bestQBlock, bestQBlockScore) = (config, score);
            }
        }

        Say();
        Say($"Best: {best.Name}; best with Q-Block2: {bestQBlock.Name}. On the reported seeds, beside the seed's CoCoA and ours (section 1):");
        Say();
        Config[] finalists = best == bestQBlock ? [best] : [best, bestQBlock];
        Dictionary<(string, string), Row> ours = Measure(finalists, NbIot.LossProfiles, badRun, main);
        Say("| loss | configuration | median | p25-p75 | min-max | seed CoCoA | vs seed CoCoA | our CoCoA | vs our CoCoA | buffer drops (median) | requests (median) |");
        Say("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        foreach (string loss in NbIot.LossProfiles)
        {
            foreach (Config config in finalists)
            {
                Row row = ours[(loss, config.Name)];
                double seedCocoa = Seed[(loss, "CoCoA")].Median;
                double ourCocoa = reproduced[(loss, seedConfigs[1].Name)].Median;
                Say($"| {loss} | {config.Name} | {row.Median:0.0} s | {row.P25:0.0}-{row.P75:0.0} | {row.Min:0.0}-{row.Max:0.0} | {seedCocoa:0.0} s | {row.Median / seedCocoa:0.00}x | {ourCocoa:0.0} s | {row.Median / ourCocoa:0.00}x | {row.BufferDrops} | {row.Requests} |");
            }
        }

        Say();
        Say($"Real time for all of the above: {total.Elapsed.TotalSeconds:0.0} s ({Environment.ProcessorCount} processors, one run per processor at a time).");

        string root = RepositoryRoot();
        string directory = Path.Combine(root, output);
        Directory.CreateDirectory(directory);
        File.WriteAllText(Path.Combine(directory, "nbiot.md"), report.ToString());
        string tsv = Path.Combine(directory, "nbiot.tsv");
        WriteChartData(tsv, reproduced, seedConfigs, ours, best);
        Console.WriteLine($"wrote {Path.Combine(directory, "nbiot.md")} and {tsv}");
        if (chart)
        {
            DrawChart(root, tsv, best.Name);
        }

        return Task.FromResult(0);
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

    /// <summary>Runs every configuration on every loss profile and seed, one run per processor at a time.</summary>
    private static Dictionary<(string, string), Row> Measure(IReadOnlyList<Config> configs, IReadOnlyList<string> losses, double badRun, int[] seeds)
    {
        List<(Config Config, string Loss, int Seed)> jobs = [.. from c in configs from l in losses from s in seeds select (c, l, s)];
        TransferOutcome[] outcomes = new TransferOutcome[jobs.Count];
        Parallel.For(0, jobs.Count, new ParallelOptions { MaxDegreeOfParallelism = Environment.ProcessorCount }, i =>
        {
            (Config config, string loss, int seed) = jobs[i];
            GilbertElliott model = NbIot.Loss(loss, badRun);
            outcomes[i] = TransferSimulation.Run(new TransferSetup
            {
                BlockSize = config.BlockSize,
                BlocksInFlight = config.Window,
                Parameters = CoapTransmissionParameters.Default with { MaxRetransmit = 20, NStart = config.Window },
                Policy = config.Policy,
                // NON_MAX_RETRANSMIT follows MAX_RETRANSMIT, which the seed raised to 20 (RFC 9177 section 7.2 ties their defaults).
                QBlock = new QBlockOptions { Enabled = config.MaxPayloads > 0, MaxPayloads = Math.Max(config.MaxPayloads, 1), NonMaxRetransmit = 20 },
                Uplink = NbIot.Uplink(model) with { Mtu = config.Mtu },
                Downlink = NbIot.Downlink(model) with { Mtu = config.Mtu },
                Seed = seed,
            });
        });

        Dictionary<(string, string), Row> rows = [];
        foreach (IGrouping<(string, string), int> group in Enumerable.Range(0, jobs.Count).GroupBy(i => (jobs[i].Loss, jobs[i].Config.Name)))
        {
            TransferOutcome[] runs = [.. group.Select(i => outcomes[i])];
            rows[group.Key] = Row.Of(runs);
        }

        return rows;
    }

    private static void WriteChartData(string path, Dictionary<(string, string), Row> reproduced, Config[] seedConfigs, Dictionary<(string, string), Row> ours, Config best)
    {
        StringBuilder tsv = new("# loss\tseedDefault p25 p75\toursDefault p25 p75\tseedCoCoA p25 p75\toursCoCoA p25 p75\tbest p25 p75\n");
        foreach (string loss in NbIot.LossProfiles)
        {
            List<double> values = [];
            foreach (Config config in seedConfigs)
            {
                (double p25, double median, double p75) = Seed[(loss, config.Control)];
                Row row = reproduced[(loss, config.Name)];
                values.AddRange([median, p25, p75, row.Median, row.P25, row.P75]);
            }

            Row b = ours[(loss, best.Name)];
            values.AddRange([b.Median, b.P25, b.P75]);
            tsv.Append(loss).Append('\t').AppendJoin('\t', values.Select(v => v.ToString("0.###", CultureInfo.InvariantCulture))).Append('\n');
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

    /// <summary>A column of a table: the control's name in the seed's tables, how it is configured, and the link's MTU.</summary>
    private sealed record Config(string Name, string Control, CoapRetransmissionPolicy Policy, int BlockSize, int Window, int Mtu, int MaxPayloads = 0)
    {
        // Seed 002 section 4.2: CoCoA bounds its back-off at 32 s; for Default CoAP, which names no bound, it used 60 s.
        public static Config Default(int mtu) => new($"Default/{mtu}", "Default", new BoundedBackOffPolicy(CoapRetransmissionPolicy.Rfc7252, TimeSpan.FromSeconds(60)), 256, 1, mtu);

        public static Config Cocoa(int mtu) => new($"CoCoA/{mtu}", "CoCoA", CoapRetransmissionPolicy.Cocoa(), 256, 1, mtu);

        public static Config Best(bool weak, int block, int window)
            => new($"{(weak ? "CoCoA" : "CoCoA-S")}, {block}-byte blocks, NSTART {window}", "CoCoA", CoapRetransmissionPolicy.Cocoa(new CocoaOptions { WeakEstimator = weak }), block, window, StatedMtu);

        // RFC 9177: the server sends MAX_PAYLOADS blocks per request (NON, paced by the RFC's NON_TIMEOUT and the client's
        // requests for the rest); the one CON request of each set is retransmitted with CoCoA-S.
        public static Config QBlock(int block, int maxPayloads)
            => new($"Q-Block2, {block}-byte blocks, MAX_PAYLOADS {maxPayloads}", "CoCoA", CoapRetransmissionPolicy.Cocoa(new CocoaOptions { WeakEstimator = false }), block, 1, StatedMtu, maxPayloads);
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
}
