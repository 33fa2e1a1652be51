using System.Net;
using System.Security.Authentication;
using CoapNet.Channels;
using CoapNet.Client;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Serialization;
using CoapNet.Tests.Infrastructure;

namespace CoapNet.Tests.Dtls;

/// <summary>
/// What a coaps observation does when its DTLS session is lost, over a stand-in secure transport that ends sessions and
/// hands out new ones (or fails the handshake) when the test says, in virtual time: it registers again with its token
/// in the new session (RFC 7641 section 3.3.1), whose sequence starts afresh (section 3.4); a failed re-handshake ends
/// it with the handshake's error; and leaving after the loss sends no deregistration and makes no session for one.
/// </summary>
public sealed class CoapsObservationLossTests : IAsyncLifetime
{
    private static readonly IPEndPoint Server = new(IPAddress.Loopback, 5684);
    private static readonly Uri Counter = new("coaps://127.0.0.1/counter");
    private static readonly CoapConnectionException CloseNotify = new("The DTLS session with 127.0.0.1:5684 was lost: the server sent close_notify.", Server);
    private readonly StandInSecureTransport _transport = new();
    private CoapClient? _client;
    private IAsyncEnumerator<CoapResponse>? _observation;

    // The registration the server accepted in the first session, with Observe 40.
    private CoapMessage? _registration;

    private IAsyncEnumerator<CoapResponse> Observation => _observation!;

    /// <summary>Every test starts from an observation of /counter whose registration the server accepted in the first session.</summary>
    public async Task InitializeAsync()
    {
        _client = new(_transport, new CoapClientOptions { Endpoint = new CoapEndpointOptions { TimeProvider = new ManualTimeProvider() } });
        _observation = _client.ObserveAsync(Counter).GetAsyncEnumerator();
        ValueTask<bool> next = _observation.MoveNextAsync();
        (_registration, CoapSecurityContext? session) = await SentAsync(1);
        _registration.Observe.Should().Be(0);
        Answer(_registration, observe: 40, "forty", session!);
        (await next.AsTask().WaitAsync(Wait.DefaultBound)).Should().BeTrue();
        _observation.Current.GetPayloadString().Should().Be("forty");
    }

    public async Task DisposeAsync()
    {
        await _observation!.DisposeAsync();
        await _client!.DisposeAsync();
    }

    [Fact]
    public async Task ALostSessionsObservationRegistersAgainWithItsTokenInANewSessionWhoseSequenceStartsAfresh()
    {
        CoapSecurityContext first = _transport.Session;

        _transport.EndSession(Server, CloseNotify);

        (CoapMessage again, CoapSecurityContext? session) = await SentAsync(2);
        session.Should().BeSameAs(_transport.Session).And.NotBeSameAs(first, "the registration goes again in the new session");
        again.Observe.Should().Be(0);
        again.Token.ToArray().Should().Equal(_registration!.Token.ToArray(), "a re-registration keeps the observation's token (RFC 7641 section 3.3.1)");
        Answer(again, observe: 3, "three", _transport.Session);
        (await Observation.NextAsync()).GetPayloadString().Should().Be("three", "the new registration's first notification is fresh though its value is below the old session's 40");

        await Observation.DisposeAsync();

        (CoapMessage deregistration, CoapSecurityContext? where) = await SentAsync(3);
        deregistration.Observe.Should().Be(1);
        deregistration.Token.ToArray().Should().Equal(_registration.Token.ToArray());
        where.Should().BeSameAs(_transport.Session, "the server holds the registration made in the new session");
    }

    [Fact]
    public async Task AReHandshakeThatFailsEndsTheObservationWithTheHandshakesError()
    {
        _transport.EndSession(Server, CloseNotify, Task.FromException<CoapSecurityContext>(new AuthenticationException("The server at 127.0.0.1:5684 refused the DTLS handshake: handshake_failure(40).")));

        (await RestAsync<AuthenticationException>()).Message.Should().Contain("handshake_failure");
        _transport.Connects.Should().Be(2, "one handshake to register, one after the loss");
        _transport.SentSoFar().Should().HaveCount(1, "nothing can go without a session");
    }

    [Fact]
    public async Task ASessionLostAgainBeforeTheNewRegistrationIsAnsweredEndsTheObservationWithThatLoss()
    {
        _transport.EndSession(Server, CloseNotify);
        await SentAsync(2);
        CoapConnectionException again = new("The DTLS session with 127.0.0.1:5684 was lost: the server sent a fatal alert, internal_error(80).", Server);

        _transport.EndSession(Server, again);

        (await RestAsync<CoapConnectionException>()).Should().BeSameAs(again, "one registration goes again after a loss, not one after another");
        _transport.Connects.Should().Be(2);
        _transport.SentSoFar().Should().HaveCount(2);
    }

    [Fact]
    public async Task LeavingWhileTheNewSessionIsHandshakingSendsNoDeregistrationThenOrAfter()
    {
        TaskCompletionSource<CoapSecurityContext> handshake = new();
        _transport.EndSession(Server, CloseNotify, handshake.Task);
        await Wait.UntilAsync(() => _transport.Connects == 2, "the re-registration asked for a new session");

        await Observation.DisposeAsync();
        handshake.SetResult(_transport.Session);

        _transport.SentSoFar().Should().HaveCount(1, "the old session is gone with the server's registration, and a handshake finished after leaving registers nothing");
        _transport.Connects.Should().Be(2, "no session is made just to deregister");
    }

    /// <summary>The error the rest of the observation ends with.</summary>
    private async Task<TException> RestAsync<TException>()
        where TException : Exception
    {
        Func<Task> rest = async () => await Observation.MoveNextAsync().AsTask().WaitAsync(Wait.DefaultBound);
        return (await rest.Should().ThrowAsync<TException>()).Which;
    }

    /// <summary>The <paramref name="count"/>th datagram sent, parsed, with its session.</summary>
    private async Task<(CoapMessage Message, CoapSecurityContext? Session)> SentAsync(int count)
    {
        await Wait.UntilAsync(() => _transport.SentSoFar().Length >= count, $"datagram {count} to be sent");
        (byte[] bytes, CoapSecurityContext? session) = _transport.SentSoFar()[count - 1];
        return (CoapMessageSerializer.Udp.Deserialize(bytes), session);
    }

    /// <summary>A piggybacked 2.05 with Observe for <paramref name="request"/>, delivered in <paramref name="session"/>.</summary>
    private void Answer(CoapMessage request, uint observe, string payload, CoapSecurityContext session)
    {
        CoapMessage response = request.CreateResponse(CoapCode.Content);
        response.Type = CoapMessageType.Acknowledgement;
        response.MessageId = request.MessageId;
        response.Observe = observe;
        response.Payload = System.Text.Encoding.UTF8.GetBytes(payload);
        _transport.Deliver(CoapMessageSerializer.Udp.Serialize(response), Server, session);
    }
}
