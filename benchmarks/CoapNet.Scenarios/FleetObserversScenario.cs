using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Text;
using CoapNet.Client;
using CoapNet.Dtls;
using CoapNet.Messages;

namespace CoapNet.Scenarios;

/// <summary>
/// The dashboards of a fleet (issue 41, part 3): K <see cref="CoapClient"/>s, each with a DTLS session of its own under
/// its own identity (dash-001 ... from the fleet's key file, so the server authenticates its observers as it does its
/// devices), each observing M devices' /fleet/{identity} (RFC 7641) while benchmarks/tools/coap-fleet.c makes the
/// devices report. Dashboard k observes devices k*M+1 to (k+1)*M, so K*M distinct devices are observed. Every 10 s, and
/// at the end, it prints the notifications received and their lag: the time a notification arrived minus the time in
/// its SenML reading ("t", when the device first sent the report), so the lag includes the device's report and the
/// server's notification. Measures; asserts nothing.
/// </summary>
/// <remarks>
/// coaps rather than plain coap: the observers are authenticated like the devices, which is what a fleet's dashboards
/// are, and their notifications cost the server record protection as they would. Each dashboard binds its own source
/// address (127.2.0.k), so its handshake does not queue behind the others' under the server's per-address bound of
/// handshakes. M must stay within the server's observations per peer (ObserveOptions.MaxObservationsPerPeer, 100 by
/// default) and K*M within its total (MaxObservations, 10,000): past either the server answers without Observe, which
/// is counted as refused.
/// </remarks>
internal static class FleetObserversScenario
{
    public const string Usage = """
        fleet-observers --server coaps://127.0.0.1:PORT --keys FILE [--dashboards 100] [--devices-each 100] [--seconds 120] [--status 10]
          --server        the sample server's coaps base URI (its --dtls-port; it runs with --psk-file FILE)
          --keys          the fleet's key file (coap-fleet --write-keys FILE N --dashboards K): dash-NNN's keys
          --dashboards    K clients, each its own DTLS session and identity
          --devices-each  M devices observed by each
          --seconds       how long to observe once every observation is registered
          --status        seconds between the status lines
        Output lines (key=value): "registered", a "status" line every --status seconds, "summary" at the end.
        """;

    public static async Task<int> RunAsync(string[] args)
    {
        FleetTarget target = new();
        int dashboards = 100, each = 100, seconds = 120, statusSeconds = 10;
        CommandLine.Parse(args, Usage, [], (name, value) =>
        {
            if (target.TryApply(name, value))
            {
                return true;
            }

            switch (name)
            {
                case "--dashboards":
                    dashboards = CommandLine.ParseCount(name, value, 1);
                    return true;
                case "--devices-each":
                    each = CommandLine.ParseCount(name, value, 1);
                    return true;
                case "--seconds":
                    seconds = CommandLine.ParseCount(name, value, 1);
                    return true;
                case "--status":
                    statusSeconds = CommandLine.ParseCount(name, value, 1);
                    return true;
                default:
                    return false;
            }
        });
        target.Load(Usage);
        if (dashboards > 250)
        {
            throw new ArgumentException("--dashboards takes at most 250 (one source address 127.2.0.k each).");
        }

        Lags lags = new();
        List<CoapClient> clients = [];
        using CancellationTokenSource stop = new();
        List<Task<bool>> observations = [];
        Stopwatch started = Stopwatch.StartNew();
        try
        {
            for (int k = 0; k < dashboards; k++)
            {
                string identity = string.Create(CultureInfo.InvariantCulture, $"dash-{k + 1:D3}");
                byte[] key = target.KeyOf(identity, $"coap-fleet --write-keys FILE N --dashboards {dashboards}");
                CoapClient client = new(new CoapClientOptions { LocalEndPoint = new IPEndPoint(IPAddress.Parse(string.Create(CultureInfo.InvariantCulture, $"127.2.0.{k + 1}")), 0) }
                    .UseDtls(new DtlsClientOptions { PskIdentity = identity, PskKey = key }));
                clients.Add(client);
                for (int d = 0; d < each; d++)
                {
                    string device = string.Create(CultureInfo.InvariantCulture, $"dev-{(k * each) + d + 1:D6}");
                    observations.Add(ObserveAsync(client, new Uri(target.Server, "/fleet/" + device), lags, stop.Token));
                }
            }

            // Registered when each observation has its first response (or has ended without one).
            while (lags.Registered + lags.Refused + lags.Failed < observations.Count && started.Elapsed < TimeSpan.FromMinutes(5))
            {
                await Task.Delay(200);
            }

            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"registered observations={lags.Registered} refused={lags.Refused} failed={lags.Failed} dashboards={dashboards} devices_each={each} seconds={started.Elapsed.TotalSeconds:F1}"));
            Stopwatch run = Stopwatch.StartNew();
            long nextStatus = statusSeconds;
            while (run.Elapsed.TotalSeconds < seconds)
            {
                await Task.Delay(TimeSpan.FromSeconds(Math.Min(nextStatus, seconds) - run.Elapsed.TotalSeconds) is { Ticks: > 0 } wait ? wait : TimeSpan.Zero);
                if (run.Elapsed.TotalSeconds >= nextStatus)
                {
                    Console.WriteLine("status t_s=" + nextStatus.ToString(CultureInfo.InvariantCulture) + " " + lags.TakeInterval());
                    nextStatus += statusSeconds;
                }
            }

            Console.WriteLine("summary seconds=" + seconds.ToString(CultureInfo.InvariantCulture) + " " + lags.Total());
        }
        finally
        {
            await stop.CancelAsync();
            foreach (CoapClient client in clients)
            {
                await client.DisposeAsync();
            }
        }

        return 0;
    }

    /// <summary>Observes <paramref name="uri"/> until canceled, recording each notification's lag; true when the server accepted it.</summary>
    private static async Task<bool> ObserveAsync(CoapClient client, Uri uri, Lags lags, CancellationToken cancellationToken)
    {
        bool first = true;
        long? last = null;
        try
        {
            await foreach (CoapResponse response in client.ObserveAsync(uri, cancellationToken))
            {
                long? sent = Lags.SentAt(response.Payload.Span);
                if (first)
                {
                    first = false;
                    if (response.Message.Observe is null)
                    {
                        lags.Refuse();
                        return false;
                    }

                    lags.Register();
                    last = sent;
                    continue;
                }

                // The same reading again is no new report: the client registering again once Max-Age passed without a
                // notification (RFC 7641 section 3.3.1; 60 s by default, a report period) gets the current state anew.
                if (sent is not null && sent == last)
                {
                    lags.Repeat();
                    continue;
                }

                last = sent;
                lags.Add(sent);
            }
        }
        catch (OperationCanceledException)
        {
        }
        catch (Exception e) when (first)
        {
            lags.Fail(e);
        }
        catch (Exception e)
        {
            // After its registration: the client could not register again after a loss (RFC 7641 section 3.3.1).
            lags.End(e);
        }

        return !first;
    }

    /// <summary>Notification counts and lags, per status interval and over the run.</summary>
    private sealed class Lags
    {
        private readonly List<long> _interval = [];
        private readonly List<long> _total = [];
        private int _registered, _refused, _failed, _ended, _repeated, _unreadable;

        public int Registered => Volatile.Read(ref _registered);

        public int Refused => Volatile.Read(ref _refused);

        public int Failed => Volatile.Read(ref _failed);

        public void Register() => Interlocked.Increment(ref _registered);

        public void Refuse() => Interlocked.Increment(ref _refused);

        public void Repeat() => Interlocked.Increment(ref _repeated);

        public void Fail(Exception e)
        {
            if (Interlocked.Increment(ref _failed) <= 3)
            {
                Console.Error.WriteLine($"fleet-observers: a registration failed: {e.Message}");
            }
        }

        public void End(Exception e)
        {
            if (Interlocked.Increment(ref _ended) <= 3)
            {
                Console.Error.WriteLine($"fleet-observers: an observation ended: {e.Message}");
            }
        }

        /// <summary>A notification of a new reading sent at <paramref name="sentAt"/> (Unix milliseconds): its lag is now minus that.</summary>
        public void Add(long? sentAt)
        {
            long now = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
            if (sentAt is not long sent)
            {
                Interlocked.Increment(ref _unreadable);
                return;
            }

            lock (_interval)
            {
                _interval.Add(now - sent);
                _total.Add(now - sent);
            }
        }

        public string TakeInterval()
        {
            long[] samples;
            lock (_interval)
            {
                samples = [.. _interval];
                _interval.Clear();
            }

            return Describe(samples);
        }

        public string Total()
        {
            long[] samples;
            lock (_interval)
            {
                samples = [.. _total];
            }

            return Describe(samples) + string.Create(CultureInfo.InvariantCulture, $" registered={Registered} refused={Refused} failed={Failed} ended={Volatile.Read(ref _ended)} repeated={Volatile.Read(ref _repeated)} unreadable={Volatile.Read(ref _unreadable)}");
        }

        private static string Describe(long[] samples)
        {
            Array.Sort(samples);
            return samples.Length == 0
                ? "notifications=0 lag_p50_ms=0 lag_p99_ms=0 lag_max_ms=0"
                : string.Create(CultureInfo.InvariantCulture,
                    $"notifications={samples.Length} lag_p50_ms={Stats.Percentile(samples, 0.50)} lag_p99_ms={Stats.Percentile(samples, 0.99)} lag_max_ms={samples[^1]}");
        }

        /// <summary>The milliseconds of the reading's "t":SECONDS.MMM (as coap-fleet writes it), or null.</summary>
        public static long? SentAt(ReadOnlySpan<byte> payload)
        {
            int at = payload.IndexOf("\"t\":"u8);
            if (at < 0)
            {
                return null;
            }

            long ms = 0;
            int fraction = -1;
            foreach (byte b in payload[(at + 4)..])
            {
                if (b == '.' && fraction < 0)
                {
                    fraction = 0;
                }
                else if (b is >= (byte)'0' and <= (byte)'9' && fraction < 3)
                {
                    ms = (ms * 10) + (b - '0');
                    fraction = fraction < 0 ? -1 : fraction + 1;
                }
                else
                {
                    break;
                }
            }

            // Seconds with three decimals are milliseconds; fewer decimals are scaled up.
            for (int f = Math.Max(fraction, 0); f < 3; f++)
            {
                ms *= 10;
            }

            return ms;
        }
    }
}
