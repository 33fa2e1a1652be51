using System.Net;
using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Server;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Messaging;

/// <summary>
/// The stage chain is open and one-directional: an endpoint's stages are a list it is given, and every message of
/// an exchange passes every stage below the one that made it, in order, both ways. Two stages of the test's own, one
/// above block-wise and one nearest the wire, watch a block-wise Observe exchange (RFC 7641 with RFC 7959 section
/// 2.6) on both sides: the one above sees whole bodies only, the one below every block, registration, follow-up and
/// stage-made answer.
/// </summary>
public sealed class StageChainTests : IDisposable
{
    private static readonly IPEndPoint ServerAddress = InMemoryNetwork.EndPoint("10.0.0.2");
    private readonly ManualTimeProvider _time = new();
    private readonly InMemoryNetwork _network;
    private readonly List<IDisposable> _owned = [];
    private readonly RecordingStage _clientTop = new();
    private readonly RecordingStage _clientWire = new();
    private readonly RecordingStage _serverTop = new();
    private readonly RecordingStage _serverWire = new();
    private int _version;

    public StageChainTests() => _network = new InMemoryNetwork(_time) { DeliversImmediately = true };

    public void Dispose()
    {
        for (int i = _owned.Count - 1; i >= 0; i--)
        {
            _owned[i].Dispose();
        }
    }

    [Fact]
    public async Task StagesAddedFromOutsideSeeEveryMessageOfABlockwiseObservationInBothDirections()
    {
        CoapServer server = Own(new CoapServer(new CoapServerOptions
        {
            Stages = context => [_serverTop, .. CoapStages.CreateDefault(context), _serverWire],
            Endpoint = new CoapEndpointOptions { TimeProvider = _time },
        }.Listen(_network.CreateTransport(ServerAddress))));
        server.MapGet("/big", _ =>
        {
            byte[] body = new byte[3000];
            body[0] = (byte)Volatile.Read(ref _version);
            return CoapResponse.Content(body, CoapContentFormat.OctetStream);
        }).Observable();
        server.Start();
        CoapClient client = Own(new CoapClient(_network.CreateTransport("10.0.0.1"), new CoapClientOptions
        {
            Endpoint = new CoapEndpointOptions
            {
                TimeProvider = _time,
                Random = new Random(5),
                Stages = context => [_clientTop, .. CoapStages.CreateDefault(context), _clientWire],
            },
        }));

        // Read before the observation ends: its deregistration (Observe=1) is answered on the server's own time.
        await using IAsyncEnumerator<CoapResponse> observation = client.ObserveAsync(new Uri("coap://10.0.0.2/big")).GetAsyncEnumerator();
        (await observation.MoveNextAsync().AsTask().WaitAsync(TimeSpan.FromSeconds(30))).Should().BeTrue();
        Interlocked.Increment(ref _version);
        server.NotifyObservers("/big").Should().Be(1);
        (await observation.MoveNextAsync().AsTask().WaitAsync(TimeSpan.FromSeconds(30))).Should().BeTrue();
        observation.Current.Payload.Length.Should().Be(3000);

        // Client, above block-wise: the caller's registration goes down once; each representation comes up whole.
        _clientTop.Seen.Should().Equal(
            "request down GET observe=0",
            "response up 2.05 Content observe=2 3000 B",
            "response up 2.05 Content observe=3 3000 B");

        // Client, nearest the wire: the registration and each follow-up block request down, every block up.
        _clientWire.Seen.Should().Equal(
            "request down GET observe=0",
            "response up 2.05 Content observe=2 block2=0+ 1024 B",
            "request down GET block2=1",
            "response up 2.05 Content block2=1+ 1024 B",
            "request down GET block2=2",
            "response up 2.05 Content block2=2 952 B",
            "response up 2.05 Content observe=3 block2=0+ 1024 B",
            "request down GET block2=1",
            "response up 2.05 Content block2=1+ 1024 B",
            "request down GET block2=2",
            "response up 2.05 Content block2=2 952 B");

        // Server, above block-wise: the registration comes up; the handler's whole bodies go down (the notification's
        // runs the handler again without a request coming up); later blocks are answered below, from the stored body.
        _serverTop.Seen.Should().Equal(
            "request up GET observe=0",
            "response down 2.05 Content 3000 B",
            "response down 2.05 Content 3000 B");

        // Server, nearest the wire: every request comes up, every block goes down, the stage's own answers included.
        _serverWire.Seen.Should().Equal(
            "request up GET observe=0",
            "response down 2.05 Content observe=2 block2=0+ 1024 B",
            "request up GET block2=1",
            "response down 2.05 Content block2=1+ 1024 B",
            "request up GET block2=2",
            "response down 2.05 Content block2=2 952 B",
            "response down 2.05 Content observe=3 block2=0+ 1024 B",
            "request up GET block2=1",
            "response down 2.05 Content block2=1+ 1024 B",
            "request up GET block2=2",
            "response down 2.05 Content block2=2 952 B");
    }

    [Fact]
    public void AStageListThatHoldsAStageTwiceIsRefusedByName()
    {
        RecordingStage twice = new();
        Action create = () => _ = new CoapEndpoint(_network.CreateTransport("10.0.0.3"), new CoapEndpointOptions { Stages = _ => [twice, twice] });
        create.Should().Throw<ArgumentException>().WithMessage("*RecordingStage*twice*");
    }

    private T Own<T>(T disposable)
        where T : IDisposable
    {
        _owned.Add(disposable);
        return disposable;
    }

    /// <summary>A stage of the test's own: records each message that passes it, in order, and passes it on unchanged.</summary>
    private sealed class RecordingStage : CoapStage
    {
        private readonly List<string> _seen = [];

        public IReadOnlyList<string> Seen
        {
            get
            {
                lock (_seen)
                {
                    return [.. _seen];
                }
            }
        }

        public override void SendRequest(IClientCall call, CoapMessage request, Action<IClientCall, CoapMessage> next)
        {
            Record("request down", request);
            next(call, request);
        }

        public override void ReceiveResponse(IClientCall call, CoapMessage response, Action<IClientCall, CoapMessage> next)
        {
            Record("response up", response);
            next(call, response);
        }

        public override void ReceiveRequest(CoapExchange exchange, Action<CoapExchange> next)
        {
            Record("request up", exchange.Request);
            next(exchange);
        }

        public override void SendResponse(CoapExchange exchange, CoapMessage response, Action<CoapExchange, CoapMessage> next)
        {
            Record("response down", response);
            next(exchange, response);
        }

        private void Record(string what, CoapMessage message)
        {
            string text = $"{what} {(message.Code.IsRequest ? message.Code.Name : message.Code.ToString())}";
            if (message.Observe is uint observe)
            {
                text += $" observe={observe}";
            }

            if (message.Block2 is { } block)
            {
                text += $" block2={block.Number}{(block.More ? "+" : string.Empty)}";
            }

            if (!message.Payload.IsEmpty)
            {
                text += $" {message.Payload.Length} B";
            }

            lock (_seen)
            {
                _seen.Add(text);
            }
        }
    }
}
