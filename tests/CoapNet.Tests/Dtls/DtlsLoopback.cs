using System.Net;
using System.Text;
using CoapNet.Client;
using CoapNet.Dtls;
using CoapNet.Messages;
using CoapNet.Server;
using CoapNet.Tests.Server;
using CoapNet.Transports;

namespace CoapNet.Tests.Dtls;

/// <summary>A coaps server on 127.0.0.1 (a free port) with one PSK client, and clients that speak to it.</summary>
internal static class DtlsLoopback
{
    public const string Identity = "client-1";

    public static readonly byte[] Key = Encoding.ASCII.GetBytes("secretPSK");

    /// <summary>The server's DTLS options: <see cref="Identity"/> with <see cref="Key"/>.</summary>
    public static DtlsServerOptions ServerOptions(TimeProvider? time = null)
        => new()
        {
            PskKeys = DtlsServerOptions.PskTable(new Dictionary<string, byte[]> { [Identity] = Key }),
            TimeProvider = time ?? TimeProvider.System,
        };

    /// <summary>A started server whose only transport is DTLS over a UDP socket on 127.0.0.1 (at <paramref name="port"/>, a free one by default), with routes mapped by <paramref name="map"/>.</summary>
    public static LoopbackServer StartServer(Action<CoapServer> map, out DtlsServerTransport transport, DtlsServerOptions? options = null, int port = 0)
    {
        DtlsServerTransport dtls = new(new UdpTransport(new IPEndPoint(IPAddress.Loopback, port)), options ?? ServerOptions());
        transport = dtls;
        return LoopbackServer.Start(map, new CoapServerOptions().Listen(dtls));
    }

    /// <summary>A started server with one coaps endpoint on 127.0.0.1 (a free port) secured by UseDtls, as an application writes it.</summary>
    public static LoopbackServer StartEndpoint(Action<CoapServer> map, DtlsServerOptions? options = null, CoapServerOptions? server = null)
        => LoopbackServer.Start(map, (server ?? new CoapServerOptions()).Listen("coaps://127.0.0.1:0", endpoint => endpoint.UseDtls(options ?? ServerOptions())));

    /// <summary>A client whose coaps:// requests go through DTLS with <paramref name="identity"/> and <paramref name="key"/>.</summary>
    public static CoapClient Client(string identity = Identity, byte[]? key = null, DtlsClientOptions? options = null)
    {
        options ??= new DtlsClientOptions();
        options.PskIdentity ??= identity;
        options.PskKey ??= key ?? Key;
        return ClientWith(options);
    }

    /// <summary>A client whose coaps:// requests go through DTLS with exactly the credentials of <paramref name="options"/> (its sockets on 127.0.0.1).</summary>
    public static CoapClient ClientWith(DtlsClientOptions options)
        => new(new CoapClientOptions { LocalEndPoint = new IPEndPoint(IPAddress.Loopback, 0) }.UseDtls(options));

    /// <summary>Server options with no credentials yet.</summary>
    public static DtlsServerOptions BareServerOptions() => new();

    /// <summary>Maps GET <paramref name="path"/> to answer "ok" and record the session of every request, in order.</summary>
    public static void MapSessionRecorder(CoapServer server, string path, List<CoapNet.Channels.CoapSecurityContext> sessions)
        => server.MapGet(path, request =>
        {
            lock (sessions)
            {
                sessions.Add(request.Peer.SecurityContext!);
            }

            return CoapResponse.Content("ok");
        });

    /// <summary>Maps GET /who to answer "hello " and the client's identity, and record the identity.</summary>
    public static void MapWho(CoapServer server, List<CoapNet.Channels.CoapPeerIdentity> seen)
        => server.MapGet("/who", request =>
        {
            lock (seen)
            {
                seen.Add(request.Peer.Identity!);
            }

            return CoapResponse.Content("hello " + request.Peer.Identity);
        });

    /// <summary>
    /// A server with <paramref name="serverOptions"/> and a client with <paramref name="clientOptions"/> that cannot
    /// agree on trust: the client's GET fails its handshake, and the handler is never reached.
    /// </summary>
    /// <returns>The client's error.</returns>
    public static async Task<System.Security.Authentication.AuthenticationException> RefusedAsync(DtlsServerOptions serverOptions, DtlsClientOptions clientOptions)
    {
        int calls = 0;
        await using LoopbackServer server = StartServer(s => s.MapGet("/x", _ => { Interlocked.Increment(ref calls); return CoapResponse.Content("no"); }), out _, serverOptions);
        await using CoapClient client = ClientWith(clientOptions);

        Func<Task> get = () => client.GetAsync(Uri(server.EndPoint, "/x"));

        System.Security.Authentication.AuthenticationException refused = (await get.Should().ThrowAsync<System.Security.Authentication.AuthenticationException>()).Which;
        calls.Should().Be(0);
        return refused;
    }

    public static Uri Uri(IPEndPoint server, string path) => new($"coaps://127.0.0.1:{server.Port}{path}");
}
