using CoapNet.Channels;
using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.NoResponse;
using CoapNet.Tests.Server;

namespace CoapNet.Tests.NoResponse;

/// <summary>
/// Over TCP (RFC 8323) our server answers every class, No-Response or not: the connection layer counts a
/// request in flight until its response is written, so a suppressed one would hold its slot for ever. A
/// client still hears a response of a class it declined, and the connection goes on serving.
/// </summary>
public sealed class NoResponseTcpTests
{
    [Fact]
    public async Task OverTcpOurServerStillAnswersAndTheConnectionGoesOn()
    {
        await using LoopbackServer server = LoopbackServer.Start(s => s.MapGet("/there", _ => CoapResponse.Content("here")), LoopbackServer.Options(tcp: true));
        // A bound so that a server that suppressed here fails the test soon, not a timing goal.
        await using CoapClient client = new(new CoapClientOptions { Endpoint = new CoapEndpointOptions { ResponseTimeout = TimeSpan.FromSeconds(10) } });
        CoapPeer peer = CoapPeer.Tcp(server.TcpEndPoint!);

        for (int i = 0; i < 3; i++)
        {
            CoapMessage request = new() { Code = CoapCode.Get, Type = CoapMessageType.Confirmable };
            request.UriPath = "/there";
            request.NoResponse = CoapNoResponse.Success;

            CoapResponse response = await client.SendAsync(request, peer);

            response.Code.Should().Be(CoapCode.Content);
            response.GetPayloadString().Should().Be("here");
        }
    }
}
