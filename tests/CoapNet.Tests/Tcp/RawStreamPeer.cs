using CoapNet.Messages;
using CoapNet.Messaging.Connections;
using CoapNet.Serialization;

namespace CoapNet.Tests.Tcp;

/// <summary>
/// The test's side of a connection: writes and reads RFC 8323 frames by hand, so each test decides
/// exactly what the endpoint under test sees (or fails to see).
/// </summary>
internal sealed class RawStreamPeer(InMemoryConnection end)
{
    // Reads of the test side only guard against a hung test; no assertion depends on them.
    private static readonly TimeSpan FailSafe = TimeSpan.FromSeconds(30);

    public InMemoryConnection End { get; } = end;

    public async Task SendAsync(CoapMessage message) => await CoapMessageSerializer.Tcp.SerializeAsync(message, End.Output);

    public async Task SendBytesAsync(params byte[] bytes) => await End.Output.WriteAsync(bytes);

    /// <summary>Sends a CSM, with Max-Message-Size when given.</summary>
    public Task SendCsmAsync(uint? maxMessageSize = null, bool bert = false)
    {
        CoapMessage csm = new() { Code = CoapCode.Csm };
        if (maxMessageSize is uint size)
        {
            csm.Options.Add(Signaling.MaxMessageSize, size);
        }

        if (bert)
        {
            // RFC 8323 section 5.3.2: Block-Wise-Transfer offers BERT.
            csm.Options.AddEmpty(Signaling.BlockWiseTransfer);
        }

        return SendAsync(csm);
    }

    /// <summary>Reads the endpoint's CSM and answers with ours: the handshake of RFC 8323 section 5.3.</summary>
    public async Task<CoapMessage> HandshakeAsync(uint? maxMessageSize = null, bool bert = false)
    {
        CoapMessage csm = await ReceiveAsync();
        csm.Code.Should().Be(CoapCode.Csm, "the endpoint's first message is its CSM");
        await SendCsmAsync(maxMessageSize, bert);
        return csm;
    }

    /// <summary>The next message; fails when the connection ends first.</summary>
    public async Task<CoapMessage> ReceiveAsync()
    {
        using CancellationTokenSource failSafe = new(FailSafe);
        CoapMessage? message = await CoapMessageSerializer.Tcp.DeserializeAsync(End.Input, failSafe.Token);
        message.Should().NotBeNull("the connection should still be open");
        return message!;
    }

    /// <summary>Reads until the endpoint closes the connection; returns what came before the end.</summary>
    public async Task<List<CoapMessage>> ReceiveUntilClosedAsync()
    {
        List<CoapMessage> messages = [];
        using CancellationTokenSource failSafe = new(FailSafe);
        while (await CoapMessageSerializer.Tcp.DeserializeAsync(End.Input, failSafe.Token) is CoapMessage message)
        {
            messages.Add(message);
        }

        return messages;
    }

    /// <summary>Closes the test's side, as a peer that goes away does.</summary>
    public ValueTask CloseAsync() => End.DisposeAsync();
}
