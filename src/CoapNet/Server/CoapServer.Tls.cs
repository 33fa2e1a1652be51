using System.Net;
using CoapNet.Tls;
using CoapNet.Transports;

namespace CoapNet.Server;

// CoAP over TLS (coaps+tcp, RFC 8323 section 9.1): a TLS listener over a TCP one, served like any connection listener.
public sealed partial class CoapServer
{
    /// <summary>A coaps+tcp listener on <paramref name="binding"/>: TCP bound as <see cref="CoapServerOptions.Tcp"/> says, TLS as <see cref="CoapServerOptions.Tls"/> does.</summary>
    private TlsConnectionListener CreateTlsListener(IPEndPoint binding)
    {
        TcpConnectionListener tcp = new(binding, _options.Tcp);
        try
        {
            return new TlsConnectionListener(tcp, _options.Tls, _options.Tcp, _options.Endpoint.LoggerFactory, _options.Endpoint.TimeProvider);
        }
        catch
        {
            _ = tcp.DisposeAsync();
            throw;
        }
    }
}
