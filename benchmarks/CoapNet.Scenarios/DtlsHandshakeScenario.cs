using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Security.Cryptography;
using CoapNet.Dtls;
using CoapNet.Transports;

namespace CoapNet.Scenarios;

/// <summary>
/// Full DTLS handshakes per second by credential kind, server and clients in this process on loopback: PSK
/// (TLS_PSK_WITH_AES_128_CCM_8) and raw public keys (TLS_ECDHE_ECDSA_WITH_AES_128_CCM_8, P-256, both sides signing).
/// Each handshake is a new client socket and session, closed after. Prints handshakes/s and this process's CPU time per
/// handshake (both ends' work); asserts nothing.
/// </summary>
internal static class DtlsHandshakeScenario
{
    public const string Usage = """
        dtls-handshakes [--handshakes 500] [--concurrency 8]
          --handshakes    full handshakes per credential kind (after 20 to warm up)
          --concurrency   handshakes at once
        """;

    public static async Task<int> RunAsync(string[] args)
    {
        int count = 500;
        int concurrency = 8;
        CommandLine.Parse(args, Usage, [], (name, value) =>
        {
            switch (name)
            {
                case "--handshakes":
                    count = CommandLine.ParseCount(name, value, 1);
                    return true;
                case "--concurrency":
                    concurrency = CommandLine.ParseCount(name, value, 1);
                    return true;
                default:
                    return false;
            }
        });

        using ECDsa serverKey = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        using ECDsa clientKey = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        byte[] psk = "sample-secret"u8.ToArray();
        await using DtlsServerTransport server = new(new UdpTransport(new IPEndPoint(IPAddress.Loopback, 0)), new DtlsServerOptions
        {
            PskKeys = DtlsServerOptions.PskTable(new Dictionary<string, byte[]> { ["coapnet"] = psk }),
            RawPublicKeyPair = serverKey,
            TrustedRawPublicKeys = DtlsOptions.RawPublicKeyTable([clientKey.ExportSubjectPublicKeyInfo()]),
        });
        server.Start(new Ignore());
        IPEndPoint target = new(IPAddress.Loopback, server.LocalEndPoint.Port);
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"dtls-handshakes: {count} per kind, {concurrency} at once; .NET {Environment.Version}, {Environment.ProcessorCount} cores, load {LoadAverage.Read()}"));
        foreach ((string kind, Func<DtlsClientOptions> options) in new (string, Func<DtlsClientOptions>)[]
        {
            ("PSK (TLS_PSK_WITH_AES_128_CCM_8)", () => new DtlsClientOptions { PskIdentity = "coapnet", PskKey = psk }),
            ("raw public keys (TLS_ECDHE_ECDSA_WITH_AES_128_CCM_8)", () => new DtlsClientOptions
            {
                RawPublicKeyPair = clientKey,
                TrustedRawPublicKeys = DtlsOptions.RawPublicKeyTable([serverKey.ExportSubjectPublicKeyInfo()]),
            }),
        })
        {
            await HandshakesAsync(target, options, 20, concurrency);
            TimeSpan cpu = Process.GetCurrentProcess().TotalProcessorTime;
            long start = Stopwatch.GetTimestamp();
            int failed = await HandshakesAsync(target, options, count, concurrency);
            double seconds = Stopwatch.GetElapsedTime(start).TotalSeconds;
            double cpuMs = (Process.GetCurrentProcess().TotalProcessorTime - cpu).TotalMilliseconds / count;
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{kind}: {count / seconds:N0} handshakes/s, {cpuMs:N2} ms CPU per handshake (client and server), {failed} failed"));
        }

        return 0;
    }

    /// <summary>Runs <paramref name="count"/> full handshakes against <paramref name="target"/>, <paramref name="concurrency"/> at a time; returns how many failed.</summary>
    internal static async Task<int> HandshakesAsync(IPEndPoint target, Func<DtlsClientOptions> options, int count, int concurrency)
    {
        int next = -1;
        int failed = 0;
        Task[] workers = new Task[concurrency];
        for (int w = 0; w < workers.Length; w++)
        {
            workers[w] = Task.Run(async () =>
            {
                while (Interlocked.Increment(ref next) < count)
                {
                    await using DtlsClientTransport client = new(new UdpTransport(new IPEndPoint(IPAddress.Loopback, 0)), options());
                    client.Start(new Ignore());
                    try
                    {
                        await client.ConnectAsync(target);
                    }
                    catch (Exception e) when (e is TimeoutException or System.Security.Authentication.AuthenticationException)
                    {
                        Interlocked.Increment(ref failed);
                    }
                }
            });
        }

        await Task.WhenAll(workers);
        return failed;
    }

    private sealed class Ignore : CoapNet.Transports.IDatagramReceiver
    {
        public void OnDatagram(ReadOnlySpan<byte> datagram, IPEndPoint remote)
        {
        }
    }
}
