using CoapNet.Messages;
using CoapNet.Messaging;

namespace CoapNet.Tests.Tcp;

/// <summary>Requests on one connection are matched by token, so they may be answered in any order (RFC 8323 section 3.3).</summary>
public sealed class PipeliningTests
{
    [Fact]
    public async Task ClientMatchesResponsesThatComeInReverseOrder()
    {
        await using TcpHarness client = TcpHarness.Client();
        Task<CoapMessage>[] responses = new Task<CoapMessage>[3];
        for (int i = 0; i < responses.Length; i++)
        {
            responses[i] = client.Endpoint.SendRequestAsync(TcpHarness.Get("r" + i, (byte)(i + 1)), TcpHarness.ServerPeer);
        }

        RawStreamPeer server = await client.AcceptAndHandshakeAsync();
        List<CoapMessage> requests = [await server.ReceiveAsync(), await server.ReceiveAsync(), await server.ReceiveAsync()];
        requests.Reverse();
        foreach (CoapMessage request in requests)
        {
            CoapMessage response = new() { Code = CoapCode.Content, Token = request.Token };
            response.SetPayload(request.UriPath);
            await server.SendAsync(response);
        }

        for (int i = 0; i < responses.Length; i++)
        {
            (await responses[i]).GetPayloadString().Should().Be("/r" + i);
        }

        client.Connector!.Opened.Should().Be(1, "the requests share one connection");
    }

    [Fact]
    public async Task ServerAnswersPipelinedRequestsInTheOrderItsHandlerFinishes()
    {
        List<CoapExchange> pending = [];
        await using TcpHarness server = TcpHarness.Server(handler: exchange =>
        {
            lock (pending)
            {
                pending.Add(exchange);
                if (pending.Count == 3)
                {
                    for (int i = pending.Count - 1; i >= 0; i--)
                    {
                        TcpHarness.Echo(pending[i]);
                    }
                }
            }
        });
        RawStreamPeer peer = await server.ConnectAndHandshakeAsync();

        for (byte token = 1; token <= 3; token++)
        {
            await peer.SendAsync(TcpHarness.Get("p" + token, token));
        }

        for (byte token = 3; token >= 1; token--)
        {
            CoapMessage response = await peer.ReceiveAsync();
            response.Token.ToArray().Should().Equal(token);
            response.GetPayloadString().Should().Be("/p" + token);
        }
    }
}
