using System.Net;
using CoapNet.Transports;

namespace CoapNet.Samples.Transport;

/// <summary>
/// The "coap+serial" scheme: a server's endpoint of that scheme is the device's end of <paramref name="line"/>, a client's
/// transport for it the host's end. Registered in <c>CoapServerOptions.Transports</c> and <c>CoapClientOptions.Transports</c>,
/// it is found by the scheme of an endpoint's address and of a request's URI, like the built-in coap and coap+tcp.
/// </summary>
/// <param name="line">The line.</param>
internal sealed class SerialLineTransportFactory(SerialLine line) : CoapDatagramTransportFactory(SchemeName, DefaultPortNumber)
{
    /// <summary>The scheme (a private one: it names no IANA registration).</summary>
    public const string SchemeName = "coap+serial";

    /// <summary>The port an address of the scheme means when it names none: the line has one port at each end.</summary>
    public const int DefaultPortNumber = 1;

    /// <summary>The host's address on the line.</summary>
    public static readonly IPEndPoint Host = new(IPAddress.Parse("127.0.0.1"), DefaultPortNumber);

    /// <summary>The device's address on the line.</summary>
    public static readonly IPEndPoint Device = new(IPAddress.Parse("127.0.0.2"), DefaultPortNumber);

    /// <summary>The device's end, for the server's endpoint at <paramref name="localEndPoint"/>, which must be the device's address.</summary>
    public override IDatagramTransport Bind(IPEndPoint localEndPoint, CoapTransportContext context)
    {
        if (!localEndPoint.Equals(Device))
        {
            // As a socket reports an address that is not this host's: the server names the endpoint in its message.
            throw new CoapBindException(SchemeName, localEndPoint, new System.Net.Sockets.SocketException((int)System.Net.Sockets.SocketError.AddressNotAvailable));
        }

        return new SerialLineTransport(line.DeviceEnd, Device, Host, SchemeName);
    }

    /// <summary>The host's end, for a client.</summary>
    public override IDatagramTransport Open(CoapTransportContext context) => new SerialLineTransport(line.HostEnd, Host, Device, SchemeName);
}
