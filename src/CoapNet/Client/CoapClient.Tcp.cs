using CoapNet.Messaging;
using CoapNet.Transports;

namespace CoapNet.Client;

public sealed partial class CoapClient
{
    /// <summary>The client's coap+tcp endpoint: connections opened on demand, one per server (RFC 8323).</summary>
    private static CoapEndpoint CreateTcpEndpoint(CoapClientOptions options)
        => new(new TcpConnectionFactory(options.Tcp), options.Endpoint, options.Connections);
}
