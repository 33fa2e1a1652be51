using System.Net;
using CoapNet.Messaging;
using CoapNet.Server;

namespace CoapNet.Tests.Server;

/// <summary>
/// A started <see cref="CoapServer"/> on 127.0.0.1 at a port the OS picks, with the routes a test
/// maps before it starts; disposing it stops the server.
/// </summary>
internal sealed class LoopbackServer : IAsyncDisposable
{
    private IDisposable? _owned;

    private LoopbackServer(CoapServer server)
    {
        Server = server;
        EndPoint = FirstOf(server, "coap") ?? server.LocalEndPoints[0];
        TcpEndPoint = FirstOf(server, "coap+tcp");
    }

    public CoapServer Server { get; }

    /// <summary>The server's endpoint, 127.0.0.1 and the port it was given.</summary>
    public IPEndPoint EndPoint { get; }

    /// <summary>The server's TCP endpoint, when it listens on TCP.</summary>
    public IPEndPoint? TcpEndPoint { get; }

    /// <summary>
    /// Options for a loopback server: 127.0.0.1 over UDP at <paramref name="udpPort"/> (one the system picks by default;
    /// <see cref="Infrastructure.FreePorts"/> for a test that binds it again after the server), and at a port the system
    /// picks over TCP when <paramref name="tcp"/>; everything else as given.
    /// </summary>
    public static CoapServerOptions Options(
        int maxPendingRequests = 1024,
        int maxDegreeOfParallelism = 4,
        TimeSpan? separateResponseDelay = null,
        CoapTransmissionParameters? transmission = null,
        TimeProvider? time = null,
        TimeSpan? loadSheddingMaxAge = null,
        bool tcp = false,
        int udpPort = 0)
    {
        CoapServerOptions options = new()
        {
            MaxPendingRequests = maxPendingRequests,
            MaxDegreeOfParallelism = maxDegreeOfParallelism,
            Endpoint = new CoapEndpointOptions
            {
                SeparateResponseDelay = separateResponseDelay ?? TimeSpan.FromSeconds(1),
                TransmissionParameters = transmission ?? CoapTransmissionParameters.Default,
                TimeProvider = time ?? TimeProvider.System,
            },
            LoadSheddingMaxAge = loadSheddingMaxAge ?? TimeSpan.FromSeconds(5),
        };
        options.Listen($"coap://127.0.0.1:{udpPort}");
        return tcp ? options.Listen("coap+tcp://127.0.0.1:0") : options;
    }

    /// <summary>Creates a server with <paramref name="options"/> (default <see cref="Options"/>), maps routes, starts it.</summary>
    public static LoopbackServer Start(Action<CoapServer> map, CoapServerOptions? options = null)
    {
        CoapServer server = new(options ?? Options());
        try
        {
            map(server);
            server.Start();
            return new LoopbackServer(server);
        }
        catch
        {
            server.Dispose();
            throw;
        }
    }

    /// <summary>As <see cref="Start(Action{CoapServer}, CoapServerOptions?)"/>, keeping what the mapping returns (a timer) to dispose with the server.</summary>
    public static LoopbackServer Start(Func<CoapServer, IDisposable> map, CoapServerOptions? options = null)
    {
        IDisposable? owned = null;
        LoopbackServer server = Start(s => { owned = map(s); }, options);
        server._owned = owned;
        return server;
    }

    /// <summary>A coap:// (or coap+tcp://) URI on the server, such as Uri("/store/lamp").</summary>
    public Uri Uri(string pathAndQuery, string scheme = "coap")
        => new($"{scheme}://127.0.0.1:{(scheme == "coap" ? EndPoint : TcpEndPoint ?? throw new InvalidOperationException("The server does not listen on TCP.")).Port}{pathAndQuery}");

    private static IPEndPoint? FirstOf(CoapServer server, string scheme)
    {
        foreach (Uri uri in server.LocalUris)
        {
            if (uri.Scheme == scheme)
            {
                return new IPEndPoint(IPAddress.Parse(uri.Host), uri.Port);
            }
        }

        return null;
    }

    public async ValueTask DisposeAsync()
    {
        _owned?.Dispose();
        // Bounded: a test that fails while a handler is blocked must fail, not hang in its cleanup.
        using (CancellationTokenSource timeout = new(TimeSpan.FromSeconds(10)))
        {
            await Server.StopAsync(timeout.Token);
        }

        await Server.DisposeAsync();
    }
}
