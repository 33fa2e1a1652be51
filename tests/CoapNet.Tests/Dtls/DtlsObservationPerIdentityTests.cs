using CoapNet.Channels;
using CoapNet.Client;
using CoapNet.Dtls;
using CoapNet.Messages;
using CoapNet.Observe;
using CoapNet.Server;
using CoapNet.Tests.Server;

namespace CoapNet.Tests.Dtls;

/// <summary>
/// <see cref="ObserveOptions.MaxObservationsPerIdentity"/> over DTLS on loopback: a device that comes back in a new
/// session is a new peer but the same identity, so its observations count together (issue 41).
/// </summary>
public sealed class DtlsObservationPerIdentityTests
{
    [Fact]
    public async Task ADevicesSessionsShareItsObservationBoundAndAnotherDeviceHasItsOwn()
    {
        DtlsServerOptions options = new() { PskKeys = DtlsServerOptions.PskTable(new Dictionary<string, byte[]> { ["device-1"] = [1], ["device-2"] = [2] }) };
        CoapServerOptions server = new() { Observe = new ObserveOptions { MaxObservationsPerIdentity = 1 } };
        await using LoopbackServer running = DtlsLoopback.StartServer(s => s.MapGet("/v", _ => CoapResponse.Content("v")).Observable(), out _, options, server: server);
        await using CoapClient first = DtlsLoopback.Client("device-1", [1]);
        await using CoapClient second = DtlsLoopback.Client("device-1", [1]);
        await using CoapClient other = DtlsLoopback.Client("device-2", [2]);

        CoapResponse registered = await Register(first, running, 1);
        CoapResponse refused = await Register(second, running, 2);
        CoapResponse otherDevice = await Register(other, running, 3);

        registered.Observe.Should().NotBeNull();
        refused.Code.Should().Be(CoapCode.Content);
        refused.Observe.Should().BeNull("device-1 holds its one observation in its first session: a plain response (RFC 7641 section 4.1)");
        otherDevice.Observe.Should().NotBeNull();
    }

    private static Task<CoapResponse> Register(CoapClient client, LoopbackServer server, byte token)
    {
        CoapMessage request = new() { Type = CoapMessageType.Confirmable, Code = CoapCode.Get, Token = new byte[] { token, token, token, token }, Observe = 0 };
        request.UriPath = "/v";
        return client.SendAsync(request, new CoapPeer(CoapPeer.DtlsScheme, server.EndPoint));
    }
}
