using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Messaging.Connections;
using CoapNet.Serialization;

namespace CoapNet.Tests.Tcp;

/// <summary>Frames arriving in pieces, too large, malformed or cut off: each affects only its own connection.</summary>
public sealed class FramingTests
{
    [Fact]
    public async Task ReadsFramesThatArriveOneByteAtATime()
    {
        await using TcpHarness server = TcpHarness.Server();
        RawStreamPeer peer = server.Connect();
        (await peer.ReceiveAsync()).Code.Should().Be(CoapCode.Csm);
        CoapMessage csm = new() { Code = CoapCode.Csm };
        csm.Options.Add(Signaling.MaxMessageSize, 70000u);
        byte[] bytes = [.. CoapMessageSerializer.Tcp.Serialize(csm), .. CoapMessageSerializer.Tcp.Serialize(TcpHarness.Get("one/byte/at/a/time", 5))];

        foreach (byte b in bytes)
        {
            await peer.SendBytesAsync(b);
        }

        CoapMessage response = await peer.ReceiveAsync();
        response.Token.ToArray().Should().Equal(5);
        response.GetPayloadString().Should().Be("/one/byte/at/a/time");
    }

    [Fact]
    public async Task AFrameHeaderAnnouncingFourGigabytesAbortsOnlyThatConnection()
    {
        await using TcpHarness server = TcpHarness.Server();
        RawStreamPeer other = await server.ConnectAndHandshakeAsync(clientPort: 40001);
        RawStreamPeer peer = await server.ConnectAndHandshakeAsync(clientPort: 40002);

        // Len 15: four extended length bytes, 65805 + 0xFFFFFFFF bytes announced; nothing more is sent.
        await peer.SendBytesAsync(0xF0, 0xFF, 0xFF, 0xFF, 0xFF);

        CoapMessage abort = (await peer.ReceiveUntilClosedAsync()).Should().ContainSingle().Subject;
        abort.Code.Should().Be(CoapCode.Abort);
        abort.GetPayloadString().Should().Contain(nameof(CoapFormatErrorReason.MessageTooLarge));
        await other.SendAsync(TcpHarness.Get("unaffected", 1));
        (await other.ReceiveAsync()).GetPayloadString().Should().Be("/unaffected");
    }

    [Fact]
    public async Task AFrameWithMoreOptionsThanTheLimitAbortsOnlyThatConnection()
    {
        await using TcpHarness server = TcpHarness.Server();
        RawStreamPeer other = await server.ConnectAndHandshakeAsync(clientPort: 40001);
        RawStreamPeer peer = await server.ConnectAndHandshakeAsync(clientPort: 40002);
        CoapMessage request = TcpHarness.Get("x", 1);
        for (int i = 0; i < CoapSerializerOptions.DefaultMaxOptionCount; i++)
        {
            request.Options.Add(CoapOptionNumber.UriPath, "y");
        }

        await peer.SendAsync(request);

        CoapMessage abort = (await peer.ReceiveUntilClosedAsync()).Should().ContainSingle().Subject;
        abort.Code.Should().Be(CoapCode.Abort);
        abort.GetPayloadString().Should().Contain(nameof(CoapFormatErrorReason.TooManyOptions));
        server.Log.Warnings.Should().ContainSingle().Which.Should().Contain(nameof(CoapFormatErrorReason.TooManyOptions));
        await other.SendAsync(TcpHarness.Get("unaffected", 2));
        (await other.ReceiveAsync()).GetPayloadString().Should().Be("/unaffected");
    }

    [Fact]
    public async Task AFrameAboveOurMaxMessageSizeIsRejectedFromItsHeader()
    {
        await using TcpHarness server = TcpHarness.Server(new CoapConnectionOptions { MaxMessageSize = 2000 });
        RawStreamPeer peer = await server.ConnectAndHandshakeAsync();

        CoapMessage large = TcpHarness.Get("big", 1);
        large.Payload = new byte[2000];
        byte[] frame = CoapMessageSerializer.Tcp.Serialize(large);
        await peer.SendBytesAsync(frame[..4]); // the header alone is enough to refuse it

        CoapMessage abort = (await peer.ReceiveUntilClosedAsync()).Should().ContainSingle().Subject;
        abort.GetPayloadString().Should().Contain(nameof(CoapFormatErrorReason.MessageTooLarge));
    }

    [Fact]
    public async Task APeerThatDisconnectsMidFrameLosesOnlyItsConnection()
    {
        await using TcpHarness server = TcpHarness.Server();
        RawStreamPeer other = await server.ConnectAndHandshakeAsync(clientPort: 40001);
        RawStreamPeer peer = await server.ConnectAndHandshakeAsync(clientPort: 40002);

        byte[] frame = CoapMessageSerializer.Tcp.Serialize(TcpHarness.Get("cut/off", 1));
        await peer.SendBytesAsync(frame[..(frame.Length / 2)]);
        await peer.End.Output.CompleteAsync();

        (await peer.ReceiveUntilClosedAsync()).Should().ContainSingle().Which.Code.Should().Be(CoapCode.Abort);
        server.Log.Warnings.Should().ContainSingle().Which.Should().Contain(nameof(CoapFormatErrorReason.UnexpectedEndOfStream));
        await other.SendAsync(TcpHarness.Get("still/here", 2));
        (await other.ReceiveAsync()).GetPayloadString().Should().Be("/still/here");
    }
}
