using CoapNet.Messages;
using CoapNet.Messaging;

namespace CoapNet.Tests.Tcp;

/// <summary>
/// BERT (RFC 8323 section 6): block-wise transfer with SZX 7 over a connection whose CSMs both offer
/// Block-Wise-Transfer. A block carries as many whole KiB as the peer's Max-Message-Size allows beside
/// 256 bytes of header room, and block numbers count KiB.
/// </summary>
public sealed class BertTests
{
    [Fact]
    public async Task AServerSendsBertBlocksSizedToThePeersMaxMessageSize()
    {
        byte[] body = Body(20_000);
        await using TcpHarness server = TcpHarness.Server(handler: exchange => exchange.Respond(new CoapMessage { Code = CoapCode.Content, Payload = body }));
        RawStreamPeer peer = await server.ConnectAndHandshakeAsync(maxMessageSize: 8192, bert: true);

        List<CoapMessage> blocks = [];
        int number = 0;
        for (byte token = 1; ; token++)
        {
            CoapMessage request = TcpHarness.Get("body", token);
            if (number > 0)
            {
                request.Block2 = new CoapBlock(number, false, 7);
            }

            await peer.SendAsync(request);
            CoapMessage block = await peer.ReceiveAsync();
            blocks.Add(block);
            if (!block.Block2!.Value.More)
            {
                break;
            }

            number += block.Payload.Length / 1024;
        }

        blocks.Select(b => b.Block2!.Value).Should().Equal(new CoapBlock(0, true, 7), new CoapBlock(7, true, 7), new CoapBlock(14, false, 7));
        blocks.Select(b => b.Payload.Length).Should().Equal(7168, 7168, 20_000 - 14_336);
        blocks.SelectMany(b => b.Payload.ToArray()).Should().Equal(body);
    }

    [Fact]
    public async Task AServerJoinsBertBlock1BlocksAndEchoesSzx7()
    {
        byte[]? received = null;
        await using TcpHarness server = TcpHarness.Server(handler: exchange =>
        {
            received = exchange.Request.Payload.ToArray();
            exchange.Respond(new CoapMessage { Code = CoapCode.Changed });
        });
        RawStreamPeer peer = await server.ConnectAndHandshakeAsync(maxMessageSize: 8192, bert: true);
        byte[] body = Body(2148);

        await peer.SendAsync(Put(1, new CoapBlock(0, true, 7), body.AsMemory(0, 2048)));
        CoapMessage continued = await peer.ReceiveAsync();
        await peer.SendAsync(Put(2, new CoapBlock(2, false, 7), body.AsMemory(2048)));
        CoapMessage final = await peer.ReceiveAsync();

        continued.Code.Should().Be(CoapCode.Continue);
        continued.Block1.Should().Be(new CoapBlock(0, true, 7), "a BERT block is acknowledged as BERT, not renegotiated down");
        final.Code.Should().Be(CoapCode.Changed);
        final.Block1.Should().Be(new CoapBlock(2, false, 7));
        received.Should().Equal(body);
    }

    [Fact]
    public async Task WithoutThePeersOfferASzx7BlockIsRefused()
    {
        await using TcpHarness server = TcpHarness.Server(handler: TcpHarness.Echo);
        RawStreamPeer peer = await server.ConnectAndHandshakeAsync(maxMessageSize: 8192, bert: false);

        await peer.SendAsync(Put(1, new CoapBlock(0, true, 7), Body(2048)));
        CoapMessage answer = await peer.ReceiveAsync();

        answer.Code.Should().Be(CoapCode.BadRequest);
        answer.GetPayloadString().Should().Contain("BERT");
    }

    [Fact]
    public async Task AClientUploadsInBertBlocksOnceTheServersCsmOffersThem()
    {
        await using TcpHarness client = TcpHarness.Client();

        // The connection opens with a first request: the server's CSM (BERT, 4096 bytes) is known from then on.
        Task<CoapMessage> hello = client.Endpoint.SendRequestAsync(TcpHarness.Get("hello", 0), TcpHarness.ServerPeer);
        RawStreamPeer server = await client.AcceptAndHandshakeAsync(maxMessageSize: 4096, bert: true);
        CoapMessage get = await server.ReceiveAsync();
        await server.SendAsync(new CoapMessage { Code = CoapCode.Content, Token = get.Token });
        await hello.WaitAsync(TimeSpan.FromSeconds(30));

        byte[] body = Body(8000);
        CoapMessage put = Upload(body);
        Task<CoapMessage> response = client.Endpoint.SendRequestAsync(put, TcpHarness.ServerPeer);
        List<CoapMessage> blocks = [await server.ReceiveAsync()];
        while (blocks[^1].Block1!.Value.More)
        {
            CoapMessage block = blocks[^1];
            CoapMessage next = new() { Code = CoapCode.Continue, Token = block.Token };
            next.Block1 = block.Block1!.Value;
            await server.SendAsync(next);
            blocks.Add(await server.ReceiveAsync());
        }

        CoapMessage done = new() { Code = CoapCode.Changed, Token = blocks[^1].Token };
        done.Block1 = blocks[^1].Block1!.Value;
        await server.SendAsync(done);

        (await response.WaitAsync(TimeSpan.FromSeconds(30))).Code.Should().Be(CoapCode.Changed);
        blocks.Select(b => b.Block1!.Value).Should().Equal(new CoapBlock(0, true, 7), new CoapBlock(3, true, 7), new CoapBlock(6, false, 7));
        blocks.Select(b => b.Payload.Length).Should().Equal(3072, 3072, 8000 - 6144);
        blocks[0].Size1.Should().Be(8000u);
        blocks.SelectMany(b => b.Payload.ToArray()).Should().Equal(body);
    }

    [Fact]
    public async Task AClientsFirstUploadOnANewConnectionWaitsForTheServersCsmAndUsesBert()
    {
        // The server answers the client's CSM only after the client has started its upload: the upload is sized by the
        // server's CSM (BERT, 4096 bytes), not by the 1152 bytes a peer may assume before it (RFC 8323 section 5.3.1).
        await using TcpHarness client = TcpHarness.Client();
        byte[] body = Body(8000);
        CoapMessage put = Upload(body);

        Task<CoapMessage> response = client.Endpoint.SendRequestAsync(put, TcpHarness.ServerPeer);
        RawStreamPeer server = await client.AcceptAndHandshakeAsync(maxMessageSize: 4096, bert: true);
        CoapMessage first = await server.ReceiveAsync();

        first.Block1.Should().Be(new CoapBlock(0, true, 7), "BERT from the first block, not 1 KiB blocks sized before the CSM");
        first.Payload.Length.Should().Be(3072);
        first.Size1.Should().Be(8000u);
        CoapMessage refused = new() { Code = CoapCode.RequestEntityTooLarge, Token = first.Token };
        await server.SendAsync(refused);
        (await response.WaitAsync(TimeSpan.FromSeconds(30))).Code.Should().Be(CoapCode.RequestEntityTooLarge);
    }

    [Fact]
    public async Task AClientsFirstRequestGoesWholeWhenTheServersCsmTakesIt()
    {
        await using TcpHarness client = TcpHarness.Client();
        byte[] body = Body(60_000);
        CoapMessage put = Upload(body);

        Task<CoapMessage> response = client.Endpoint.SendRequestAsync(put, TcpHarness.ServerPeer);
        RawStreamPeer server = await client.AcceptAndHandshakeAsync(maxMessageSize: 65536, bert: true);
        CoapMessage whole = await server.ReceiveAsync();

        whole.Block1.Should().BeNull("the body fits the Max-Message-Size the server's CSM announced");
        whole.Payload.ToArray().Should().Equal(body);
        await server.SendAsync(new CoapMessage { Code = CoapCode.Changed, Token = whole.Token });
        (await response.WaitAsync(TimeSpan.FromSeconds(30))).Code.Should().Be(CoapCode.Changed);
    }

    [Fact]
    public async Task AnUploadWaitingForTheServersCsmIsCanceledAtOnceAndFailsWithTheConnection()
    {
        await using TcpHarness client = TcpHarness.Client();
        CoapMessage put = Upload(Body(8000));
        using CancellationTokenSource cancel = new();

        Task<CoapMessage> canceled = client.Endpoint.SendRequestAsync(put, TcpHarness.ServerPeer, cancel.Token);
        RawStreamPeer server = new(await client.Connector!.NextAsync());
        (await server.ReceiveAsync()).Code.Should().Be(CoapCode.Csm, "the client's CSM; the server's is not sent");
        canceled.IsCompleted.Should().BeFalse("the upload waits for the server's CSM");
        await cancel.CancelAsync();
        await canceled.Awaiting(t => t.WaitAsync(TimeSpan.FromSeconds(30))).Should().ThrowAsync<OperationCanceledException>();

        CoapMessage another = Upload(Body(8000));
        Task<CoapMessage> lost = client.Endpoint.SendRequestAsync(another, TcpHarness.ServerPeer);
        await server.CloseAsync();
        await lost.Awaiting(t => t.WaitAsync(TimeSpan.FromSeconds(30))).Should().ThrowAsync<CoapConnectionException>("the connection closed before the server's CSM");
    }

    [Fact]
    public async Task AClientDownloadsBertBlocksAndNumbersItsRequestsInKib()
    {
        await using TcpHarness client = TcpHarness.Client();
        byte[] body = Body(5000);

        Task<CoapMessage> response = client.Endpoint.SendRequestAsync(TcpHarness.Get("large", 0), TcpHarness.ServerPeer);
        RawStreamPeer server = await client.AcceptAndHandshakeAsync(maxMessageSize: 4096, bert: true);
        List<CoapBlock?> asked = [];
        for (int offset = 0; offset < body.Length; offset += 2048)
        {
            CoapMessage request = await server.ReceiveAsync();
            asked.Add(request.Block2);
            int length = Math.Min(2048, body.Length - offset);
            CoapMessage block = new() { Code = CoapCode.Content, Token = request.Token, Payload = body.AsMemory(offset, length) };
            block.Block2 = new CoapBlock(offset / 1024, offset + length < body.Length, 7);
            await server.SendAsync(block);
        }

        (await response.WaitAsync(TimeSpan.FromSeconds(30))).Payload.ToArray().Should().Equal(body);
        asked.Should().Equal(null, new CoapBlock(2, false, 7), new CoapBlock(4, false, 7));
    }

    private static CoapMessage Put(byte token, CoapBlock block, ReadOnlyMemory<byte> payload)
    {
        CoapMessage put = new() { Code = CoapCode.Put, Token = new[] { token }, Payload = payload };
        put.UriPath = "/upload";
        put.Block1 = block;
        return put;
    }

    /// <summary>A PUT of <paramref name="body"/> to /upload.</summary>
    private static CoapMessage Upload(byte[] body)
    {
        CoapMessage put = new() { Code = CoapCode.Put, Payload = body };
        put.UriPath = "/upload";
        return put;
    }

    private static byte[] Body(int size)
    {
        byte[] body = new byte[size];
        for (int i = 0; i < size; i++)
        {
            body[i] = (byte)(i % 251);
        }

        return body;
    }
}
