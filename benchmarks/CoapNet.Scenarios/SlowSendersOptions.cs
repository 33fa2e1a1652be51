using System.Globalization;
using CoapNet.Messaging;

namespace CoapNet.Scenarios;

/// <summary>The settings of the slow-senders scenario, from its command line.</summary>
internal sealed class SlowSendersOptions
{
    public const string Usage = """
        slow-senders [--connections 0,10,100,1000] [--requests 2000] [--warmup 500] [--rounds 3]
                     [--max-connections M] [--max-load 1.0] [--max-wait 300] [--run-seconds 600]
          --connections    the numbers N of slow-sender connections to measure, in order
          --requests       sequential GET /hello of the fast client measured per run
          --warmup         GETs before the measurement (JIT, the client's connection)
          --rounds         how often each N is measured; every round starts fresh servers
          --max-connections the server's CoapConnectionOptions.MaxConnections (default: the library's
                           1000, or the largest N + 1 when that is more, so the fast client still gets in)
          --max-load/--max-wait  before each run, wait up to max-wait s for the 1-minute load average
                           to fall below max-load; the run then goes ahead and its load is printed
          --run-seconds    the slow senders give up after this long whatever happens (a bound, not a setting)
        """;

    public IReadOnlyList<int> Connections { get; private init; } = [0, 10, 100, 1000];

    public int Requests { get; private init; } = 2000;

    public int Warmup { get; private init; } = 500;

    public int Rounds { get; private init; } = 3;

    public int MaxConnections { get; private init; }

    public double MaxLoad { get; private init; } = 1.0;

    public int MaxWaitSeconds { get; private init; } = 300;

    public int RunSeconds { get; private init; } = 600;

    public static SlowSendersOptions Parse(string[] args)
    {
        List<int> connections = [0, 10, 100, 1000];
        int requests = 2000, warmup = 500, rounds = 3, maxConnections = 0, maxWait = 300, runSeconds = 600;
        double maxLoad = 1.0;
        CommandLine.Parse(args, Usage, [], (name, value) =>
        {
            switch (name)
            {
                case "--connections":
                    connections = [.. value!.Split(',').Select(n => CommandLine.ParseCount(name, n, 0))];
                    return true;
                case "--requests":
                    requests = CommandLine.ParseCount(name, value, 1);
                    return true;
                case "--warmup":
                    warmup = CommandLine.ParseCount(name, value, 0);
                    return true;
                case "--rounds":
                    rounds = CommandLine.ParseCount(name, value, 1);
                    return true;
                case "--max-connections":
                    maxConnections = CommandLine.ParseCount(name, value, 1);
                    return true;
                case "--max-load":
                    maxLoad = double.Parse(value!, CultureInfo.InvariantCulture);
                    return true;
                case "--max-wait":
                    maxWait = CommandLine.ParseCount(name, value, 0);
                    return true;
                case "--run-seconds":
                    runSeconds = CommandLine.ParseCount(name, value, 10);
                    return true;
                default:
                    return false;
            }
        });

        int defaultMax = new CoapConnectionOptions().MaxConnections;
        return new SlowSendersOptions
        {
            Connections = connections,
            Requests = requests,
            Warmup = warmup,
            Rounds = rounds,
            MaxConnections = maxConnections > 0 ? maxConnections : Math.Max(defaultMax, connections.Max() + 1),
            MaxLoad = maxLoad,
            MaxWaitSeconds = maxWait,
            RunSeconds = runSeconds,
        };
    }
}
