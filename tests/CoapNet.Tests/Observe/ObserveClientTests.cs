using System.Net;
using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Server;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Observe;

/// <summary>
/// RFC 7641 on the client, in virtual time on the in-memory network: a raw peer plays the server so
/// that order, staleness, silence and rejection can be staged exactly; then our client against our
/// server, with block-wise notifications and the 24-bit wrap.
/// </summary>
public sealed class ObserveClientTests : IAsyncLifetime
{
    private static readonly IPEndPoint ServerAddress = InMemoryNetwork.EndPoint("10.0.0.2");
    private readonly ManualTimeProvider _time = new();
    private readonly InMemoryNetwork _network;
    private readonly List<IDisposable> _owned = [];
    private CoapClient? _client;
    private int _counter;

    public ObserveClientTests() => _network = new InMemoryNetwork(_time) { DeliversImmediately = true };

    private static Uri Resource => new("coap://10.0.0.2/counter");

    private CoapClient Client => _client ??= Own(new CoapClient(_network.CreateTransport("10.0.0.1"), new CoapClientOptions { Endpoint = new CoapEndpointOptions { TimeProvider = _time, Random = new Random(5) } }));

    public Task InitializeAsync() => Task.CompletedTask;

    public Task DisposeAsync()
    {
        for (int i = _owned.Count - 1; i >= 0; i--)
        {
            _owned[i].Dispose();
        }

        return Task.CompletedTask;
    }

    [Fact]
    public async Task StaleNotificationsAreDroppedAndTheRestArriveInOrder()
    {
        (TestPeer server, IAsyncEnumerator<CoapResponse> observation, CoapMessage registration) = await RegisterAsync(5, "five");
        await using IAsyncEnumerator<CoapResponse> disposing = observation;
        Notify(server, registration.Token, 0x500, observe: 7, "seven");
        Notify(server, registration.Token, 0x501, observe: 6, "six (stale)");
        Notify(server, registration.Token, 0x502, observe: 8, "eight");

        List<string> received = [];
        for (int i = 0; i < 2; i++)
        {
            (await observation.MoveNextAsync().AsTask().WaitAsync(TimeSpan.FromSeconds(30))).Should().BeTrue();
            received.Add(observation.Current.GetPayloadString());
        }

        received.Should().Equal("seven", "eight");
    }

    [Fact]
    public async Task ANotificationAfterA128SecondGapIsNewerWhateverItsValue()
    {
        (TestPeer server, IAsyncEnumerator<CoapResponse> observation, CoapMessage registration) = await RegisterAsync(100, "first", maxAge: 600);
        await using IAsyncEnumerator<CoapResponse> disposing = observation;

        _time.Advance(TimeSpan.FromSeconds(129));
        Notify(server, registration.Token, 0x600, observe: 3, "after a restart");

        (await observation.MoveNextAsync().AsTask().WaitAsync(TimeSpan.FromSeconds(30))).Should().BeTrue();
        observation.Current.GetPayloadString().Should().Be("after a restart", "RFC 7641 section 3.4: T2 > T1 + 128 s");
    }

    [Fact]
    public async Task AConfirmableNotificationIsAcknowledged()
    {
        (TestPeer server, IAsyncEnumerator<CoapResponse> observation, CoapMessage registration) = await RegisterAsync(1, "one");
        await using IAsyncEnumerator<CoapResponse> disposing = observation;

        Notify(server, registration.Token, 0x700, observe: 2, "two", CoapMessageType.Confirmable);

        (await observation.MoveNextAsync().AsTask().WaitAsync(TimeSpan.FromSeconds(30))).Should().BeTrue();
        server.Last.Parsed.Type.Should().Be(CoapMessageType.Acknowledgement);
        server.Last.Parsed.MessageId.Should().Be(0x700);
    }

    [Fact]
    public async Task CancelingDeregistersWithObserveOneAndALaterNotificationGetsReset()
    {
        using CancellationTokenSource stop = new();
        (TestPeer server, IAsyncEnumerator<CoapResponse> observation, CoapMessage registration) = await RegisterAsync(1, "one", cancellationToken: stop.Token);

        ValueTask<bool> next = observation.MoveNextAsync();
        await stop.CancelAsync();
        Func<Task> waiting = async () => await next;
        await waiting.Should().ThrowAsync<OperationCanceledException>();
        await observation.DisposeAsync();

        CoapMessage deregistration = server.Received.Select(d => d.Parsed).Last(m => m.Code == CoapCode.Get);
        deregistration.Observe.Should().Be(1u, "RFC 7641 section 3.6");
        deregistration.Token.ToArray().Should().Equal(registration.Token.ToArray());
        server.SendPiggybacked(deregistration, Client.LocalEndPoint, CoapCode.Content, "bye");

        Notify(server, registration.Token, 0x800, observe: 2, "late", CoapMessageType.NonConfirmable);

        server.Last.Parsed.Type.Should().Be(CoapMessageType.Reset, "RFC 7641 section 3.6: a notification for an ended observation is rejected");
        server.Last.Parsed.MessageId.Should().Be(0x800);
    }

    [Fact]
    public async Task SilencePastMaxAgeAndTheMarginMakesTheClientRegisterAgainWithTheSameToken()
    {
        (TestPeer server, IAsyncEnumerator<CoapResponse> observation, CoapMessage registration) = await RegisterAsync(1, "one", maxAge: 10);
        await using IAsyncEnumerator<CoapResponse> disposing = observation;

        _time.Advance(TimeSpan.FromSeconds(14));
        server.Received.Count(d => d.Parsed.Code == CoapCode.Get).Should().Be(1, "Max-Age 10 s plus the 5 s margin has not passed");
        _time.Advance(TimeSpan.FromSeconds(2));

        CoapMessage again = server.Received.Select(d => d.Parsed).Last(m => m.Code == CoapCode.Get);
        again.MessageId.Should().NotBe(registration.MessageId);
        again.Observe.Should().Be(0u);
        again.Token.ToArray().Should().Equal(registration.Token.ToArray(), "RFC 7641 section 3.3.1: re-registration keeps the token");
        Answer(server, again, observe: 9, "renewed");
        (await observation.MoveNextAsync().AsTask().WaitAsync(TimeSpan.FromSeconds(30))).Should().BeTrue();
        observation.Current.GetPayloadString().Should().Be("renewed");
    }

    [Fact]
    public async Task AServerThatDoesNotObserveGivesOneResponseAndTheSequenceEnds()
    {
        TestPeer server = Own(new TestPeer(_network, "10.0.0.2"));
        List<string> received = [];
        Task reading = Task.Run(async () =>
        {
            await foreach (CoapResponse response in Client.ObserveAsync(Resource))
            {
                received.Add(response.GetPayloadString());
            }
        });
        Wait.Until(() => server.Received.Count > 0);

        Answer(server, server.Last.Parsed, observe: null, "plain");

        await reading.WaitAsync(TimeSpan.FromSeconds(30));
        received.Should().Equal("plain");
    }

    [Fact]
    public async Task OurClientObservesOurServerThroughTheWrapWithBlockwiseNotifications()
    {
        CoapServer server = StartServer();
        server.ObservationRegistry.FirstSequence = (1 << 24) - 2;
        List<CoapResponse> received = [];
        await using IAsyncEnumerator<CoapResponse> observation = Client.ObserveAsync(new Uri("coap://10.0.0.2/big")).GetAsyncEnumerator();
        (await observation.MoveNextAsync().AsTask().WaitAsync(TimeSpan.FromSeconds(30))).Should().BeTrue();
        received.Add(observation.Current);

        for (int i = 1; i <= 3; i++)
        {
            Interlocked.Increment(ref _counter);
            server.NotifyObservers("/big").Should().Be(1);
            (await observation.MoveNextAsync().AsTask().WaitAsync(TimeSpan.FromSeconds(30))).Should().BeTrue();
            received.Add(observation.Current);
        }

        received.Select(r => r.Payload.Length).Should().AllBeEquivalentTo(3000, "each notification's later blocks are fetched (RFC 7959 section 2.6)");
        received.Select(r => (int)r.Payload.Span[0]).Should().Equal(0, 1, 2, 3);
        received.Select(r => r.Observe).Should().Equal((1u << 24) - 1, 0u, 1u, 2u);
    }

    [Fact]
    public void TheCallbackFormDeliversEachNotificationAndDisposingDeregisters()
    {
        CoapServer server = StartServer();
        List<string> received = [];
        using ManualResetEventSlim third = new();

        using (CoapObservation observation = Client.Observe(Resource, response =>
        {
            lock (received)
            {
                received.Add(response.GetPayloadString());
                if (received.Count == 3)
                {
                    third.Set();
                }
            }
        }))
        {
            observation.IsActive.Should().BeTrue();
            server.Observations.Should().Be(1);
            for (int i = 1; i <= 2; i++)
            {
                Interlocked.Increment(ref _counter);
                server.NotifyObservers("/counter");
                Wait.Until(() => { lock (received) { return received.Count == i + 1; } });
            }

            third.Wait(TimeSpan.FromSeconds(30)).Should().BeTrue();
        }

        Wait.Until(() => server.Observations == 0);
        received.Should().Equal("0", "1", "2");
    }

    [Fact]
    public async Task AHandBuiltRequestObservesWithItsOptionsAndDeregisterAsyncReturnsTheServersAnswer()
    {
        CoapServer server = StartServer();
        CoapMessage request = CoapMessage.CreateRequest(CoapCode.Get, Resource, CoapMessageType.Confirmable);
        request.Accept = CoapContentFormat.TextPlain;
        List<string> received = [];

        using CoapObservation observation = Client.Observe(request, new Channels.CoapPeer("coap", ServerAddress), response =>
        {
            lock (received)
            {
                received.Add(response.GetPayloadString());
            }
        });
        server.Observations.Should().Be(1);
        CoapResponse? answer = await observation.DeregisterAsync().WaitAsync(TimeSpan.FromSeconds(30));

        server.Observations.Should().Be(0, "the server answered the deregistration, so it has let go (RFC 7641 section 3.6)");
        answer.Should().NotBeNull();
        answer!.Code.Should().Be(CoapCode.Content);
        answer.Observe.Should().BeNull("the answer to a GET with Observe=1 carries no Observe");
        CoapMessage[] gets = [.. _network.SentBetween(InMemoryNetwork.EndPoint("10.0.0.1"), ServerAddress).Select(d => d.Parsed).Where(m => m.Code == CoapCode.Get)];
        gets.Select(m => m.Observe).Should().Equal(0u, 1u);
        gets.Should().OnlyContain(m => m.Accept == CoapContentFormat.TextPlain, "the request's options go with the registration and the deregistration");
        received.Should().Equal("0");
        (await observation.DeregisterAsync()).Should().NotBeNull("a second call waits for the same deregistration");
    }

    [Fact]
    public async Task DeregisterAsyncAfterTheServerEndedTheObservationSendsNothing()
    {
        TestPeer server = Own(new TestPeer(_network, "10.0.0.2"));
        Task<CoapObservation> observing = Task.Run(() => Client.Observe(new Uri("coap://10.0.0.2/counter"), _ => { }));
        Wait.Until(() => server.Received.Count > 0);
        Answer(server, server.Last.Parsed, observe: null, "not observable");
        CoapObservation observation = await observing.WaitAsync(TimeSpan.FromSeconds(30));

        CoapResponse? answer = await observation.DeregisterAsync().WaitAsync(TimeSpan.FromSeconds(30));

        answer.Should().BeNull();
        server.Received.Should().ContainSingle("no GET with Observe=1 follows a response without Observe");
    }

    [Fact]
    public void OnlyGetAndFetchObserve()
    {
        CoapMessage post = CoapMessage.CreateRequest(CoapCode.Post, Resource, CoapMessageType.Confirmable);

        Action observe = () => Client.Observe(post, new Channels.CoapPeer("coap", ServerAddress), _ => { });

        observe.Should().Throw<ArgumentException>().Which.ParamName.Should().Be("request");
    }

    /// <summary>Starts observing /counter with a raw peer as the server, which answers the registration with <paramref name="observe"/>.</summary>
    private async Task<(TestPeer Server, IAsyncEnumerator<CoapResponse> Observation, CoapMessage Registration)> RegisterAsync(uint observe, string payload, uint? maxAge = null, CancellationToken cancellationToken = default)
    {
        TestPeer server = Own(new TestPeer(_network, "10.0.0.2"));
        IAsyncEnumerator<CoapResponse> observation = Client.ObserveAsync(Resource, cancellationToken).GetAsyncEnumerator(cancellationToken);
        ValueTask<bool> first = observation.MoveNextAsync();
        CoapMessage registration = server.Last.Parsed;
        registration.Observe.Should().Be(0u, "RFC 7641 section 3.1: a registration is a GET with Observe=0");
        Answer(server, registration, observe, payload, maxAge);
        (await first.AsTask().WaitAsync(TimeSpan.FromSeconds(30))).Should().BeTrue();
        observation.Current.GetPayloadString().Should().Be(payload);
        return (server, observation, registration);
    }

    private static void Answer(TestPeer server, CoapMessage request, uint? observe, string payload, uint? maxAge = null)
    {
        CoapMessage response = new() { Type = CoapMessageType.Acknowledgement, Code = CoapCode.Content, MessageId = request.MessageId, Token = request.Token, Observe = observe, MaxAge = maxAge };
        response.SetPayload(payload);
        server.Send(response, InMemoryNetwork.EndPoint("10.0.0.1"));
    }

    private static void Notify(TestPeer server, ReadOnlyMemory<byte> token, ushort messageId, uint observe, string payload, CoapMessageType type = CoapMessageType.NonConfirmable)
    {
        CoapMessage notification = new() { Type = type, Code = CoapCode.Content, MessageId = messageId, Token = token, Observe = observe };
        notification.SetPayload(payload);
        server.Send(notification, InMemoryNetwork.EndPoint("10.0.0.1"));
    }

    private CoapServer StartServer()
    {
        CoapServer server = new(new CoapServerOptions { Endpoint = new CoapEndpointOptions { TimeProvider = _time } }.Listen(_network.CreateTransport(ServerAddress)));
        server.MapGet("/counter", _ => CoapResponse.Content(Volatile.Read(ref _counter).ToString(System.Globalization.CultureInfo.InvariantCulture))).Observable();
        server.MapGet("/big", _ =>
        {
            byte[] body = new byte[3000];
            body[0] = (byte)Volatile.Read(ref _counter);
            return CoapResponse.Content(body, CoapContentFormat.OctetStream);
        }).Observable();
        server.Start();
        return Own(server);
    }

    private T Own<T>(T disposable)
        where T : IDisposable
    {
        _owned.Add(disposable);
        return disposable;
    }
}
