using System.Diagnostics;
using System.Globalization;
using System.Net;
using CoapNet.Client;
using CoapNet.Messaging;
using CoapNet.Oscore;

namespace CoapNet.Scenarios;

/// <summary>
/// OSCORE (RFC 8613, issue 36) against plain coap on the same server, port and run: the sample server's coap port serves
/// both, with the demo context of RFC 8613 Appendix C.1. Rounds alternate, plain then OSCORE, each over a client of its
/// own, so both see the same machine; prints each round's requests per second and the ratio of the medians. Measures and
/// prints; asserts nothing.
/// </summary>
internal static class OscoreScenario
{
    public const string Usage = """
        oscore --server coap://127.0.0.1:PORT/hello [--requests 100000] [--concurrency 1,16] [--rounds 3] [--sequence-file FILE] [--durable]
          --server         a resource of the sample server's coap port (OSCORE with its demo context, and plain)
          --requests, --concurrency, --rounds   GETs per round, in flight at once, rounds of each kind (alternating)
          --sequence-file  where the client's Sender Sequence Number is kept between runs, so the server's replay window
                           takes the next run's requests too (default: coapnet-oscore-scenario.seq in the temp folder)
          --durable        write it durably every 100 numbers, as a device must (RFC 8613 section 7.5.1), within the timed
                           rounds; by default it is written once, after them, so the rounds time the protection alone
        Pin the server to one core (taskset -c 0) and this process to the other (taskset -c 1).
        """;

    public static async Task<int> RunAsync(string[] args)
    {
        Settings settings = Settings.Parse(args);
        OscoreSequenceFile file = new(settings.SequenceFile);
        IOscoreSequenceStore store = settings.Durable ? file : new DeferredStore(file);
        OscoreContext context = new(new OscoreContextOptions
        {
            MasterSecret = Convert.FromHexString("0102030405060708090a0b0c0d0e0f10"),
            MasterSalt = Convert.FromHexString("9e7ca92223786340"),
            SenderId = [],
            RecipientId = [0x01],
            SequenceStore = store,
        });
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"oscore: {settings.Server}, plain and OSCORE (RFC 8613 Appendix C.1's context, from sequence number {context.SenderSequenceNumber}, {(settings.Durable ? "reserved durably" : "saved after the rounds")}); {Environment.ProcessorCount} core(s) for this process, .NET {Environment.Version}"));
        IPEndPoint server = new(IPAddress.Parse(settings.Server.Host), settings.Server.Port);

        Console.WriteLine();
        Console.WriteLine("| scheme | concurrency | round | req/s | failed |");
        Console.WriteLine("|---|---:|---:|---:|---:|");
        try
        {
            foreach (int concurrency in settings.Concurrency)
            {
                await using CoapClient plain = Client(concurrency, null);
                await using CoapClient oscore = Client(concurrency, new OscoreOptions().AddClientContext(server, context));
                List<double> plainRates = [], oscoreRates = [];
                int warmup = Math.Min(settings.Requests, 20_000);
                await HandlerWaitScenario.RunLoadAsync(plain, settings.Server, warmup, concurrency);
                await HandlerWaitScenario.RunLoadAsync(oscore, settings.Server, warmup, concurrency);
                for (int round = 1; round <= settings.Rounds; round++)
                {
                    plainRates.Add(await RoundAsync("coap", plain, settings, concurrency, round));
                    oscoreRates.Add(await RoundAsync("oscore", oscore, settings, concurrency, round));
                }

                Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"| ratio | {concurrency} | median | {Median(oscoreRates) / Median(plainRates):0.00}x | |"));
            }
        }
        finally
        {
            if (store is DeferredStore deferred)
            {
                file.Reserve(deferred.Limit);
            }
        }

        return 0;
    }

    private static CoapClient Client(int concurrency, OscoreOptions? oscore)
    {
        CoapEndpointOptions endpoint = new() { TransmissionParameters = new CoapTransmissionParameters { NStart = concurrency } };
        return new(new CoapClientOptions
        {
            LocalEndPoint = new IPEndPoint(IPAddress.Loopback, 0),
            Udp = { SocketReceiveBufferSize = 4 * 1024 * 1024 },
            Endpoint = oscore is null ? endpoint : endpoint.UseOscore(oscore),
        });
    }

    private static async Task<double> RoundAsync(string scheme, CoapClient client, Settings settings, int concurrency, int round)
    {
        long start = Stopwatch.GetTimestamp();
        int failed = await HandlerWaitScenario.RunLoadAsync(client, settings.Server, settings.Requests, concurrency);
        double rate = settings.Requests / Stopwatch.GetElapsedTime(start).TotalSeconds;
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"| {scheme} | {concurrency} | {round} | {rate:N0} | {failed} |"));
        return rate;
    }

    private static double Median(List<double> values)
    {
        values.Sort();
        return values.Count % 2 == 1 ? values[values.Count / 2] : (values[(values.Count / 2) - 1] + values[values.Count / 2]) / 2;
    }

    /// <summary>
    /// Resumes from the file and keeps each reservation in memory while the rounds run; the scenario writes the last one
    /// to the file when it ends. A crash in between would reuse numbers at the next run: right for a benchmark whose
    /// context is public, never for a device.
    /// </summary>
    private sealed class DeferredStore(OscoreSequenceFile file) : IOscoreSequenceStore
    {
        public long Limit { get; private set; }

        public long Load() => Limit = file.Load();

        public void Reserve(long limit) => Limit = limit;
    }

    private sealed class Settings
    {
        public Uri Server { get; private set; } = null!;

        public int Requests { get; private set; } = 100_000;

        public IReadOnlyList<int> Concurrency { get; private set; } = [1, 16];

        public int Rounds { get; private set; } = 3;

        public string SequenceFile { get; private set; } = Path.Combine(Path.GetTempPath(), "coapnet-oscore-scenario.seq");

        public bool Durable { get; private set; }

        public static Settings Parse(string[] args)
        {
            Settings settings = new();
            CommandLine.Parse(args, Usage, ["--durable"], (name, value) =>
            {
                switch (name)
                {
                    case "--server":
                        settings.Server = new Uri(value!);
                        return true;
                    case "--requests":
                        settings.Requests = CommandLine.ParseCount(name, value, 1);
                        return true;
                    case "--concurrency":
                        settings.Concurrency = CommandLine.ParseCounts(name, value, 1);
                        return true;
                    case "--rounds":
                        settings.Rounds = CommandLine.ParseCount(name, value, 1);
                        return true;
                    case "--sequence-file":
                        settings.SequenceFile = value!;
                        return true;
                    case "--durable":
                        settings.Durable = true;
                        return true;
                    default:
                        return false;
                }
            });
            return settings.Server is { Scheme: "coap" } && IPAddress.TryParse(settings.Server.Host, out _)
                ? settings
                : throw new ArgumentException($"--server takes a coap:// URI with an IP address.\n{Usage}");
        }
    }
}
