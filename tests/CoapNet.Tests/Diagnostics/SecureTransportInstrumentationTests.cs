using CoapNet.Client;
using CoapNet.Diagnostics;
using CoapNet.Dtls;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Tests.Dtls;
using CoapNet.Tests.Infrastructure;
using CoapNet.Tests.Server;
using CoapNet.Tests.Tcp;
using CoapNet.Tests.Tls;
using CoapNet.Tls;
using Microsoft.Extensions.Logging;

namespace CoapNet.Tests.Diagnostics;

/// <summary>
/// What an operator sees of the secure transports under attack (issue 34): handshakes by outcome, connections refused,
/// sessions evicted, as metrics; and the DTLS refusals' log lines, rate-limited like the TLS listener's.
/// </summary>
[Collection(ProcessWideCollection.Name)]
public sealed class SecureTransportInstrumentationTests : IDisposable
{
    private readonly CoapMeterRecorder _meters = new();

    [Fact]
    public async Task DtlsHandshakesAreCountedByOutcomeWithTheAlertOrTheBound()
    {
        DtlsServerOptions options = DtlsLoopback.ServerOptions();
        options.MaxSessions = 1;
        await using LoopbackServer server = DtlsLoopback.StartServer(s => s.MapGet("/x", _ => CoapResponse.Content("ok")), out _, options);
        Uri uri = DtlsLoopback.Uri(server.EndPoint, "/x");
        await using CoapClient wrongKey = DtlsLoopback.Client(key: "wrong"u8.ToArray());
        await FluentActions.Awaiting(() => wrongKey.GetAsync(uri)).Should().ThrowAsync<System.Security.Authentication.AuthenticationException>();
        await using CoapClient good = DtlsLoopback.Client();
        await good.GetAsync(uri);
        await using CoapClient refused = DtlsLoopback.Client();
        await FluentActions.Awaiting(() => refused.GetAsync(uri)).Should().ThrowAsync<System.Security.Authentication.AuthenticationException>();

        // The server's counts (the clients' own handshakes count too, as established or failed on their side).
        Wait.Until(() => Handshakes("refused").Count >= 1, "the refusal was counted");
        Handshakes("failed").Should().Contain(t => Equals(t.GetValueOrDefault("error.type"), "bad_record_mac"));
        Handshakes("established").Should().NotBeEmpty();
        Handshakes("refused").Should().ContainSingle().Which["error.type"].Should().Be("session_bound");
    }

    [Fact]
    public async Task AnEvictedDtlsSessionAndAnEvictedConnectionAreCountedByScheme()
    {
        ManualTimeProvider time = new();
        DtlsServerOptions options = DtlsLoopback.ServerOptions(time);
        options.MaxSessions = 1;
        await using LoopbackServer server = DtlsLoopback.StartServer(s => s.MapGet("/x", _ => CoapResponse.Content("ok")), out _, options);
        Uri uri = DtlsLoopback.Uri(server.EndPoint, "/x");
        await using CoapClient first = DtlsLoopback.Client();
        await first.GetAsync(uri);
        time.Advance(options.SessionEvictionThreshold);
        await using CoapClient second = DtlsLoopback.Client();
        await second.GetAsync(uri);

        await using TcpHarness tcp = TcpHarness.Server(new CoapConnectionOptions { MaxConnections = 1 });
        RawStreamPeer idle = await tcp.ConnectAndHandshakeAsync(40001);
        await idle.SendAsync(TcpHarness.Get("sync", 1));
        await idle.ReceiveAsync();
        await tcp.ConnectAndHandshakeAsync(40002);
        await idle.ReceiveUntilClosedAsync();

        Counted(CoapInstrumentation.SessionsEvicted).Select(t => t["url.scheme"]).Should().BeEquivalentTo(["coaps", "coap+tcp"]);
    }

    [Fact]
    public async Task TlsConnectionsClosedBeforeTheirHandshakeAreCountedByReason()
    {
        ManualTimeProvider time = new();
        InMemoryListener inner = new();
        TlsServerOptions options = new() { Certificate = TestPki.Instance.Server, HandshakeTimeout = TimeSpan.FromSeconds(5), MaxPendingHandshakes = 1 };
        await using TlsConnectionListener listener = new(inner, options, timeProvider: time);
        _ = listener.AcceptAsync();
        List<InMemoryConnection> silent = [];
        for (int i = 0; i <= HandshakeAdmission.WaitingFactor; i++)
        {
            silent.Add(inner.Connect(40001 + i));
            Wait.Until(() => time.ActiveTimerCount == Math.Min(silent.Count, HandshakeAdmission.WaitingFactor), "it waits, its timeout armed");
            time.Advance(TimeSpan.FromMilliseconds(1));
        }

        await ReadToEndAsync(silent[0]);
        time.Advance(options.HandshakeTimeout);
        foreach (InMemoryConnection connection in silent.Skip(1))
        {
            await ReadToEndAsync(connection);
        }

        Wait.Until(() => Counted(CoapInstrumentation.TlsConnectionsRefused).Count == 9, "all were counted");
        Counted(CoapInstrumentation.TlsConnectionsRefused).Select(t => t["error.type"]).Should().BeEquivalentTo(["evicted", .. Enumerable.Repeat("handshake_timeout", 8)]);
    }

    [Fact]
    public async Task AThousandRefusedDtlsHandshakesWriteABoundedNumberOfLines()
    {
        ManualTimeProvider time = new();
        ListLoggerFactory log = new(LogLevel.Information);
        DtlsServerOptions options = DtlsLoopback.ServerOptions(time);
        options.MaxSessions = 1;
        options.LoggerFactory = log;
        await using LoopbackServer server = DtlsLoopback.StartServer(s => s.MapGet("/x", _ => CoapResponse.Content("ok")), out _, options);
        await using CoapClient holder = DtlsLoopback.Client();
        await holder.GetAsync(DtlsLoopback.Uri(server.EndPoint, "/x"));
        using DtlsAttacker attacker = await DtlsAttacker.CompleteCookieExchangeAsync(server.EndPoint);
        await attacker.ReceiveAlertAsync();

        // The same verified ClientHello, again and again: each is refused at MaxSessions with an alert (waited for one at
        // a time, so no alert is lost to a full receive buffer).
        for (int i = 0; i < 999; i++)
        {
            await attacker.ResendClientHelloAsync(recordSequence: 2 + i);
            await attacker.ReceiveAlertAsync();
        }

        List<string> refusals = [.. log.Warnings.Where(l => l.Contains("Refused a DTLS handshake", StringComparison.Ordinal))];
        refusals.Should().HaveCount(10, "at most 10 lines a second, on the server's clock");
        time.Advance(TimeSpan.FromSeconds(1));
        await attacker.ResendClientHelloAsync(recordSequence: 5000);
        await attacker.ReceiveAlertAsync();
        Wait.Until(() => log.Warnings.Any(l => l.StartsWith("990 lines about failed or refused DTLS handshakes were left out", StringComparison.Ordinal)), "the next line says how many were left out");
        log.Warnings.Should().NotContain(l => l.Contains("secretPSK", StringComparison.Ordinal), "a key is never logged");
    }

    public void Dispose() => _meters.Dispose();

    private static async Task ReadToEndAsync(InMemoryConnection connection)
    {
        using CancellationTokenSource bound = new(Wait.DefaultBound);
        while (true)
        {
            System.IO.Pipelines.ReadResult result = await connection.Input.ReadAsync(bound.Token);
            connection.Input.AdvanceTo(result.Buffer.End);
            if (result.IsCompleted)
            {
                return;
            }
        }
    }

    /// <summary>The tags of each count of the counter <paramref name="instrument"/>: a measurement of n counts n times.</summary>
    private List<Dictionary<string, object?>> Counted(string instrument)
        => [.. _meters.Of(instrument).SelectMany(m => Enumerable.Repeat(m.Tags, (int)m.Value))];

    private List<Dictionary<string, object?>> Handshakes(string outcome)
        => [.. Counted(CoapInstrumentation.DtlsHandshakes).Where(t => Equals(t[CoapInstrumentation.OutcomeTag], outcome))];
}
