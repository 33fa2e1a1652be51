using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Messaging.Connections;

namespace CoapNet.Tests.Tcp;

/// <summary>RFC 8323 section 5.3: each side's first message is its CSM, and a connection without a valid one is aborted.</summary>
public sealed class CsmTests
{
    [Fact]
    public async Task SendsItsCsmFirstWithMaxMessageSizeAndTheBertOffer()
    {
        await using TcpHarness server = TcpHarness.Server(new CoapConnectionOptions { MaxMessageSize = 4096 });
        RawStreamPeer peer = server.Connect();

        CoapMessage csm = await peer.ReceiveAsync();

        csm.Code.Should().Be(CoapCode.Csm);
        csm.Options.TryGet(Signaling.MaxMessageSize, out CoapOptionEntry size).Should().BeTrue();
        size.GetUInt().Should().Be(4096u);
        csm.Options.TryGet(Signaling.BlockWiseTransfer, out _).Should().BeTrue("Block-Wise-Transfer offers BERT (RFC 8323 sections 5.3.2 and 6)");
    }

    [Fact]
    public async Task AnswersRequestsOnceThePeersCsmArrived()
    {
        await using TcpHarness server = TcpHarness.Server();
        RawStreamPeer peer = await server.ConnectAndHandshakeAsync();

        await peer.SendAsync(TcpHarness.Get("a/b", 7));
        CoapMessage response = await peer.ReceiveAsync();

        response.Code.Should().Be(CoapCode.Content);
        response.Token.ToArray().Should().Equal(7);
        response.GetPayloadString().Should().Be("/a/b");
    }

    [Fact]
    public async Task AbortsWhenTheFirstMessageIsNotACsm()
    {
        int handled = 0;
        await using TcpHarness server = TcpHarness.Server(handler: exchange => { Interlocked.Increment(ref handled); TcpHarness.Echo(exchange); });
        RawStreamPeer peer = await server.ConnectBeforeOwnCsmAsync();

        await peer.SendAsync(TcpHarness.Get("a", 1));
        List<CoapMessage> rest = await peer.ReceiveUntilClosedAsync();

        CoapMessage abort = rest.Should().ContainSingle().Subject;
        abort.Code.Should().Be(CoapCode.Abort);
        abort.GetPayloadString().Should().Contain("first message must be a CSM");
        handled.Should().Be(0);
        server.Log.Warnings.Should().ContainSingle().Which.Should().Contain("first message must be a CSM");
    }

    [Fact]
    public async Task AbortsWhenNoCsmArrivesWithinTheCsmTimeout()
    {
        await using TcpHarness server = TcpHarness.Server(new CoapConnectionOptions { CsmTimeout = TimeSpan.FromSeconds(3) });
        RawStreamPeer peer = await server.ConnectBeforeOwnCsmAsync();

        server.Time.Advance(TimeSpan.FromSeconds(3));
        List<CoapMessage> rest = await peer.ReceiveUntilClosedAsync();

        CoapMessage abort = rest.Should().ContainSingle().Subject;
        abort.Code.Should().Be(CoapCode.Abort);
        abort.GetPayloadString().Should().Contain("No CSM within 3 s");
    }

    [Fact]
    public async Task AcceptsACsmThatArrivesJustBeforeTheTimeout()
    {
        await using TcpHarness server = TcpHarness.Server(new CoapConnectionOptions { CsmTimeout = TimeSpan.FromSeconds(3) });
        RawStreamPeer peer = await server.ConnectBeforeOwnCsmAsync();

        server.Time.Advance(TimeSpan.FromSeconds(3) - TimeSpan.FromTicks(1));
        await peer.SendCsmAsync();
        await peer.SendAsync(TcpHarness.Get("late", 2));

        (await peer.ReceiveAsync()).GetPayloadString().Should().Be("/late");
        server.Time.Advance(TimeSpan.FromSeconds(10));
        await peer.SendAsync(TcpHarness.Get("still", 3));
        (await peer.ReceiveAsync()).GetPayloadString().Should().Be("/still");
    }

    [Fact]
    public async Task AbortsACsmThatArrivesAfterTheTimeout()
    {
        await using TcpHarness server = TcpHarness.Server(new CoapConnectionOptions { CsmTimeout = TimeSpan.FromSeconds(3) });
        RawStreamPeer peer = await server.ConnectBeforeOwnCsmAsync();

        server.Time.Advance(TimeSpan.FromSeconds(3));
        await peer.SendCsmAsync();
        await peer.SendAsync(TcpHarness.Get("too-late", 2));

        List<CoapMessage> rest = await peer.ReceiveUntilClosedAsync();
        rest.Should().ContainSingle().Which.Code.Should().Be(CoapCode.Abort);
    }

    [Theory]
    [InlineData(new byte[] { 0x25, 0x01, 0x02, 0x03, 0x04, 0x05 }, 2, "Max-Message-Size has 5 bytes")] // option 2 with 5 bytes
    [InlineData(new byte[] { 0x70 }, 7, "unknown critical option 7")] // option 7, odd: critical and unknown
    public async Task AbortsAnInvalidCsmNamingTheBadOption(byte[] options, int badOption, string diagnostic)
    {
        await using TcpHarness server = TcpHarness.Server();
        RawStreamPeer peer = await server.ConnectBeforeOwnCsmAsync();

        // A CSM frame by hand: Len = options length, TKL 0, code 7.01, then the options.
        byte[] frame = new byte[2 + options.Length];
        frame[0] = (byte)(options.Length << 4);
        frame[1] = 0xE1;
        options.CopyTo(frame, 2);
        await peer.SendBytesAsync(frame);

        List<CoapMessage> rest = await peer.ReceiveUntilClosedAsync();
        CoapMessage abort = rest.Should().ContainSingle().Subject;
        abort.Code.Should().Be(CoapCode.Abort);
        abort.GetPayloadString().Should().Contain(diagnostic);
        abort.Options.TryGet(Signaling.BadCsmOption, out CoapOptionEntry bad).Should().BeTrue();
        bad.GetUInt().Should().Be((uint)badOption);
    }

    [Fact]
    public async Task IgnoresUnknownElectiveCsmOptions()
    {
        await using TcpHarness server = TcpHarness.Server();
        RawStreamPeer peer = await server.ConnectBeforeOwnCsmAsync();

        await peer.SendBytesAsync(0x20, 0xE1, 0x61, 0xAA); // CSM with option 6 (even: elective) of one byte
        await peer.SendAsync(TcpHarness.Get("x", 1));

        (await peer.ReceiveAsync()).GetPayloadString().Should().Be("/x");
    }

    [Fact]
    public async Task ClientHoldsRequestsUntilTheServersCsmArrives()
    {
        await using TcpHarness client = TcpHarness.Client();
        Task<CoapMessage> response = client.Endpoint.SendRequestAsync(TcpHarness.Get("held", 9), TcpHarness.ServerPeer);
        RawStreamPeer server = new(await client.Connector!.NextAsync());

        // Our CSM comes first; the request only after the server's CSM.
        (await server.ReceiveAsync()).Code.Should().Be(CoapCode.Csm);
        response.IsCompleted.Should().BeFalse();
        await server.SendCsmAsync();
        CoapMessage request = await server.ReceiveAsync();
        request.Code.Should().Be(CoapCode.Get);

        CoapMessage answer = new() { Code = CoapCode.Content, Token = request.Token };
        answer.SetPayload("ok");
        await server.SendAsync(answer);
        (await response).GetPayloadString().Should().Be("ok");
    }
}
