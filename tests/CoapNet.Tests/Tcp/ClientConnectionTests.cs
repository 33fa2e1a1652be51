using System.Net;
using System.Net.Sockets;
using CoapNet.Channels;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Transports;

namespace CoapNet.Tests.Tcp;

/// <summary>A client opens one connection per server on demand, reuses it, and opens a new one after it closed.</summary>
public sealed class ClientConnectionTests
{
    [Fact]
    public async Task ReusesOneConnectionAndOpensANewOneAfterTheServerClosedIt()
    {
        await using TcpHarness client = TcpHarness.Client();
        Task<CoapMessage> first = client.Endpoint.SendRequestAsync(TcpHarness.Get("1", 1), TcpHarness.ServerPeer);
        RawStreamPeer server = await client.AcceptAndHandshakeAsync();
        await Answer(server);
        await first;
        Task<CoapMessage> second = client.Endpoint.SendRequestAsync(TcpHarness.Get("2", 2), TcpHarness.ServerPeer);
        await Answer(server);
        await second;
        client.Connector!.Opened.Should().Be(1);

        // The server goes away with a request unanswered: that request fails with the reason, and the next one dials again.
        Task<CoapMessage> lost = client.Endpoint.SendRequestAsync(TcpHarness.Get("lost", 3), TcpHarness.ServerPeer);
        await server.ReceiveAsync();
        await server.CloseAsync();
        Func<Task> awaiting = () => lost;
        (await awaiting.Should().ThrowAsync<CoapConnectionException>()).Which.Message.Should().Contain("closed the connection");

        Task<CoapMessage> after = client.Endpoint.SendRequestAsync(TcpHarness.Get("after", 4), TcpHarness.ServerPeer);
        RawStreamPeer reopened = await client.AcceptAndHandshakeAsync();
        await Answer(reopened);
        (await after).Code.Should().Be(CoapCode.Content);
        client.Connector.Opened.Should().Be(2);
    }

    [Fact]
    public async Task ARequestFailsWithAConnectionErrorWhenTheServerCannotBeReached()
    {
        // A port that was free a moment ago: nothing listens there.
        IPEndPoint closed;
        using (Socket probe = new(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp))
        {
            probe.Bind(new IPEndPoint(IPAddress.Loopback, 0));
            closed = (IPEndPoint)probe.LocalEndPoint!;
        }

        await using CoapEndpoint client = new(new TcpConnectionFactory());
        client.Start();

        Func<Task> sending = () => client.SendRequestAsync(TcpHarness.Get("x", 1), CoapPeer.Tcp(closed));

        (await sending.Should().ThrowAsync<CoapConnectionException>()).Which.Message.Should().Contain("Could not connect");
    }

    private static async Task Answer(RawStreamPeer server)
    {
        CoapMessage request = await server.ReceiveAsync();
        await server.SendAsync(new CoapMessage { Code = CoapCode.Content, Token = request.Token });
    }
}
