using CoapNet.Messages;

namespace CoapNet.Tests.Server;

/// <summary>
/// RFC 7252 section 5.4.1 with 4.3: a non-confirmable request carrying a critical option that nothing processes is
/// rejected, which for a NON means silence (at most an RST), never a 4.02 response; a confirmable one gets 4.02. Seen
/// byte for byte from a raw UDP peer, once the server has settled every request it took.
/// </summary>
public sealed class NonConfirmableRejectionTests
{
    private int _calls;

    // An unrecognized critical option; and If-Match, recognized, but a route without state cannot process it.
    public static TheoryData<ushort, byte[]> UnprocessableCriticalOptions => new() { { 2049, "?"u8.ToArray() }, { (ushort)CoapOptionNumber.IfMatch, [] } };

    [Theory]
    [MemberData(nameof(UnprocessableCriticalOptions))]
    public async Task ANonRequestWithACriticalOptionNothingProcessesGetsNoResponse(ushort number, byte[] value)
    {
        await using LoopbackServer server = Start();
        using RawPeer peer = new(server.EndPoint);
        CoapMessage request = peer.Request(CoapMessageType.NonConfirmable, CoapCode.Get, "/x", token: 1);
        request.Options.Add((CoapOptionNumber)number, value);

        await peer.SendAsync(request);
        await peer.SendAsync(request);
        IReadOnlyList<CoapMessage> sent = await peer.SettledAsync(server.Server);

        sent.Should().BeEmpty("a rejected NON is silently ignored, and so is its duplicate");
        _calls.Should().Be(0);
    }

    [Fact]
    public async Task AConfirmableRequestWithAnUnrecognizedCriticalOptionGetsBadOptionAndANonWithAnElectiveOneIsServed()
    {
        await using LoopbackServer server = Start();
        using RawPeer peer = new(server.EndPoint);
        CoapMessage confirmable = peer.Request(CoapMessageType.Confirmable, CoapCode.Get, "/x", token: 3);
        confirmable.Options.Add((CoapOptionNumber)2049, "?");
        CoapMessage elective = peer.Request(CoapMessageType.NonConfirmable, CoapCode.Get, "/x", token: 4);
        elective.Options.Add((CoapOptionNumber)2048, "?");

        await peer.SendAsync(confirmable);
        CoapMessage badOption = (await peer.ReceiveAsync()).Message;
        await peer.SendAsync(elective);
        CoapMessage served = (await peer.ReceiveAsync()).Message;

        badOption.Type.Should().Be(CoapMessageType.Acknowledgement);
        badOption.Code.Should().Be(CoapCode.BadOption);
        badOption.GetPayloadString().Should().Contain("2049");
        served.Type.Should().Be(CoapMessageType.NonConfirmable);
        served.Code.Should().Be(CoapCode.Content, "an unrecognized elective option is ignored");
        _calls.Should().Be(1);
    }

    private LoopbackServer Start() => LoopbackServer.Start(s => s.MapGet("/x", _ =>
    {
        Interlocked.Increment(ref _calls);
        return CoapResponse.Content("x");
    }));
}
