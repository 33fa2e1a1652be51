using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.NoResponse;
using CoapNet.Serialization;
using CoapNet.Tests.Interop;
using CoapNet.Tests.Server;
using CoapNet.Transports;

namespace CoapNet.Tests.NoResponse;

/// <summary>
/// RFC 7967 against libcoap 4.3's coap-client over real loopback sockets. The client sends to a socket of
/// the test, which passes each datagram on to our server and reads exactly what our server sends back
/// before passing that to the client. After the request under test, the test sends a probe request of its
/// own: our endpoint handles requests one after another on its receive thread and answers each before it
/// reads the next, so whatever it sent for the request under test arrives before the probe's answer. So
/// "nothing" is asserted by order, not by waiting.
/// </summary>
public sealed class LibCoapNoResponseTests
{
    private static readonly byte[] ProbeToken = [0x50, 0x52, 0x4F, 0x42];

    [SkippableFact]
    public async Task OurServerSendsNothingForANonRequestThatDeclinesEveryClass()
    {
        await using Relay relay = new(StartEndpoint(out CoapEndpoint server, out Func<int> handled));
        await using (server)
        {
            Process client = LibCoap.Start(LibCoap.Client, "-m", "put", "-N", "-B", "5", "-e", "on", "-O", "258,0x1a", relay.Uri("/x"));
            try
            {
                CoapMessage request = await relay.ForwardFromClientAsync();
                request.Type.Should().Be(CoapMessageType.NonConfirmable);
                request.NoResponse.Should().Be(CoapNoResponse.All, "libcoap sent option 258 with value 26");

                CoapMessage first = await relay.ProbeAsync();

                handled().Should().Be(1, "the request reached the handler, which answered 2.04");
                first.Token.ToArray().Should().Equal(ProbeToken, "our server sent nothing for the request before the probe's answer");
            }
            finally
            {
                LibCoap.Stop(client);
            }
        }
    }

    [SkippableFact]
    public async Task OurServerStillAnswersAnErrorTheRequestDidNotDecline()
    {
        // The whole server (routing answers 4.04 for a path it does not serve); libcoap declines 2.xx only.
        await using LoopbackServer server = LoopbackServer.Start(s => s.MapGet("/there", _ => CoapResponse.Content("here")));
        await using Relay relay = new(server.EndPoint);
        Process client = LibCoap.Start(LibCoap.Client, "-m", "get", "-N", "-B", "5", "-O", "258,0x02", relay.Uri("/missing"));
        try
        {
            CoapMessage request = await relay.ForwardFromClientAsync();
            request.NoResponse.Should().Be(CoapNoResponse.Success);

            CoapMessage response = await relay.ForwardFromServerAsync();
            response.Code.Should().Be(CoapCode.NotFound);
            response.Type.Should().Be(CoapMessageType.NonConfirmable);
            response.Token.ToArray().Should().Equal(request.Token.ToArray());

            // libcoap takes it as the response to its request and reports it.
            string output = await LibCoap.ReadOutputAsync(client, TimeSpan.FromSeconds(20));
            output.Should().Contain("4.04");
        }
        finally
        {
            LibCoap.Stop(client);
        }
    }

    [SkippableFact]
    public async Task OurServerAcknowledgesAConfirmableRequestThatDeclinesEveryClassWithAnEmptyAckOnly()
    {
        await using Relay relay = new(StartEndpoint(out CoapEndpoint server, out Func<int> handled));
        await using (server)
        {
            Process client = LibCoap.Start(LibCoap.Client, "-m", "put", "-B", "5", "-e", "on", "-O", "258,0x1a", relay.Uri("/x"));
            try
            {
                CoapMessage request = await relay.ForwardFromClientAsync();
                request.Type.Should().Be(CoapMessageType.Confirmable);
                request.NoResponse.Should().Be(CoapNoResponse.All);

                CoapMessage ack = await relay.ForwardFromServerAsync();
                ack.Type.Should().Be(CoapMessageType.Acknowledgement);
                ack.Code.Should().Be(CoapCode.Empty, "the 2.04 is suppressed, not piggybacked");
                ack.MessageId.Should().Be(request.MessageId);
                handled().Should().Be(1);

                CoapMessage next = await relay.ProbeAsync();
                next.Token.ToArray().Should().Equal(ProbeToken, "nothing followed the empty ACK: no separate response");
            }
            finally
            {
                LibCoap.Stop(client);
            }
        }
    }

    /// <summary>Our endpoint on 127.0.0.1 at a free port: 2.04 to every PUT, 2.05 to the probe's GET, answered on the receive thread.</summary>
    private static IPEndPoint StartEndpoint(out CoapEndpoint endpoint, out Func<int> handled)
    {
        int count = 0;
        endpoint = new CoapEndpoint(new UdpTransport(new IPEndPoint(IPAddress.Loopback, 0)))
        {
            RequestHandler = exchange =>
            {
                if (exchange.Request.Code == CoapCode.Put)
                {
                    Interlocked.Increment(ref count);
                }

                exchange.Respond(new CoapMessage { Code = exchange.Request.Code == CoapCode.Put ? CoapCode.Changed : CoapCode.Content });
            },
        };
        endpoint.Start();
        handled = () => Volatile.Read(ref count);
        return endpoint.LocalEndPoint;
    }

    /// <summary>One socket between libcoap and our server, moved by the test one datagram at a time.</summary>
    private sealed class Relay(IPEndPoint server) : IAsyncDisposable
    {
        private readonly UdpClient _socket = new(new IPEndPoint(IPAddress.Loopback, 0));
        private IPEndPoint? _client;

        public string Uri(string path) => $"coap://127.0.0.1:{((IPEndPoint)_socket.Client.LocalEndPoint!).Port}{path}";

        /// <summary>Waits for libcoap's next datagram and passes it on to the server.</summary>
        public async Task<CoapMessage> ForwardFromClientAsync()
        {
            UdpReceiveResult received = await ReceiveAsync(from => !from.Equals(server));
            _client = received.RemoteEndPoint;
            await _socket.SendAsync(received.Buffer, server);
            return CoapMessageSerializer.Udp.Deserialize(received.Buffer);
        }

        /// <summary>Waits for the server's next datagram and passes it on to libcoap.</summary>
        public async Task<CoapMessage> ForwardFromServerAsync()
        {
            UdpReceiveResult received = await ReceiveAsync(from => from.Equals(server));
            await _socket.SendAsync(received.Buffer, _client!);
            return CoapMessageSerializer.Udp.Deserialize(received.Buffer);
        }

        /// <summary>Sends a NON GET of the test's own to the server and returns the server's next datagram, which is not passed on.</summary>
        public async Task<CoapMessage> ProbeAsync()
        {
            CoapMessage probe = new() { Type = CoapMessageType.NonConfirmable, Code = CoapCode.Get, MessageId = 0x5052, Token = ProbeToken };
            probe.UriPath = "/probe";
            await _socket.SendAsync(CoapMessageSerializer.Udp.Serialize(probe), server);
            return CoapMessageSerializer.Udp.Deserialize((await ReceiveAsync(from => from.Equals(server))).Buffer);
        }

        public ValueTask DisposeAsync()
        {
            _socket.Dispose();
            return ValueTask.CompletedTask;
        }

        private async Task<UdpReceiveResult> ReceiveAsync(Func<IPEndPoint, bool> from)
        {
            // A bound on a lost datagram, not a timing goal; datagrams from the other side (a retransmission) are skipped.
            using CancellationTokenSource bound = new(TimeSpan.FromSeconds(10));
            while (true)
            {
                UdpReceiveResult received = await _socket.ReceiveAsync(bound.Token);
                if (from(received.RemoteEndPoint))
                {
                    return received;
                }
            }
        }
    }
}
