using System.Net;
using CoapNet.Client;
using CoapNet.Server;
using CoapNet.Tests.Server;
using CoapNet.Tls;

namespace CoapNet.Tests.Tls;

/// <summary>A coaps+tcp server on 127.0.0.1 (a free port) with the test PKI's certificate, and clients that trust it.</summary>
internal static class TlsLoopback
{
    /// <summary>Server options with one coaps+tcp endpoint on 127.0.0.1:0 and no other; <paramref name="configure"/> adjusts the TLS part.</summary>
    public static CoapServerOptions ServerOptions(Action<TlsServerOptions>? configure = null)
    {
        TlsServerOptions tls = new() { Certificate = TestPki.Instance.Server };
        configure?.Invoke(tls);
        return new CoapServerOptions { Endpoint = { Blockwise = CoapNet.Samples.Server.SampleResources.Blockwise } }
            .Listen("coaps+tcp://127.0.0.1:0", endpoint => endpoint.UseTls(tls));
    }

    /// <summary>A started server whose only endpoint is coaps+tcp, with routes mapped by <paramref name="map"/>.</summary>
    public static LoopbackServer StartServer(Action<CoapServer> map, CoapServerOptions? options = null)
        => LoopbackServer.Start(map, options ?? ServerOptions());

    /// <summary>As <see cref="StartServer(Action{CoapServer}, CoapServerOptions?)"/>, keeping what the mapping returns to dispose with the server.</summary>
    public static LoopbackServer StartServer(Func<CoapServer, IDisposable> map, CoapServerOptions? options = null)
        => LoopbackServer.Start(map, options ?? ServerOptions());

    /// <summary>
    /// A started server whose GET /whoami answers who the client proved to be and over what, such as
    /// "cert:CN=device-7 over TLS 1.3", or "anonymous"; clients are asked for certificates as <paramref name="mode"/> says,
    /// trusted when the test CA issued them.
    /// </summary>
    public static LoopbackServer StartWhoAmI(TlsClientCertificateMode mode)
        => StartServer(
            s => s.MapGet("/whoami", request => CoapNet.Messages.CoapResponse.Content(
                request.Peer.Identity is { } identity ? $"{identity} over {request.Peer.SecurityContext!.Protocol}" : "anonymous")),
            ServerOptions(tls =>
            {
                tls.ClientCertificateMode = mode;
                tls.TrustedRoots = TestPki.Instance.Roots;
            }));

    /// <summary>The server's coaps+tcp endpoint.</summary>
    public static IPEndPoint EndPoint(LoopbackServer server)
    {
        foreach (Uri uri in server.Server.LocalUris)
        {
            if (uri.Scheme == "coaps+tcp")
            {
                return new IPEndPoint(IPAddress.Parse(uri.Host), uri.Port);
            }
        }

        throw new InvalidOperationException("The server does not listen on coaps+tcp.");
    }

    /// <summary>A coaps+tcp:// URI on the server.</summary>
    public static Uri Uri(LoopbackServer server, string pathAndQuery) => new($"coaps+tcp://127.0.0.1:{EndPoint(server).Port}{pathAndQuery}");

    /// <summary>A client that trusts the test CA (and only it), with <paramref name="configure"/> adjusting its TLS options.</summary>
    public static CoapClient Client(Action<TlsClientOptions>? configure = null)
    {
        CoapClientOptions options = new()
        {
            LocalEndPoint = new IPEndPoint(IPAddress.Loopback, 0),
            Tls = new TlsClientOptions { TrustedRoots = TestPki.Instance.Roots },
        };
        configure?.Invoke(options.Tls);
        return new CoapClient(options);
    }
}
