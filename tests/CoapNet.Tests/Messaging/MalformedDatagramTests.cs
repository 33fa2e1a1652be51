using System.Net;
using System.Net.Sockets;
using CoapNet.Messages;
using CoapNet.Messaging;
using CoapNet.Serialization;
using CoapNet.Tests.Infrastructure;
using CoapNet.Transports;

namespace CoapNet.Tests.Messaging;

/// <summary>
/// Malformed datagrams sent over a real loopback socket to an endpoint on a <see cref="UdpTransport"/>.
/// RFC 7252 sections 4.2 and 4.3: a malformed confirmable message is rejected with RST (when its
/// header can be read as version 1 CON), anything else malformed is silently dropped, and a wrong
/// version is always ignored (section 3). The endpoint keeps serving afterwards.
/// </summary>
/// <remarks>
/// Silence is proven without waiting: after the datagrams under test the socket sends a CoAP ping
/// (a "fence"). The endpoint handles datagrams in order and answers each before reading the next,
/// so whatever the malformed datagrams provoke arrives before the fence's RST.
/// </remarks>
public sealed class MalformedDatagramTests : IDisposable
{
    private const ushort FirstFenceId = 0xFF00;

    private readonly CoapEndpoint _server;
    private readonly Socket _socket;
    private readonly byte[] _buffer = new byte[2048];
    private int _fences;

    public MalformedDatagramTests()
    {
        _server = new CoapEndpoint(
            new UdpTransport(new IPEndPoint(IPAddress.Loopback, 0)),
            new CoapEndpointOptions { Random = new Random(1) })
        {
            RequestHandler = MessagingHarness.Echo(),
        };
        _server.Start();

        // The bound is reached only when the fence's answer never comes (a failing test).
        _socket = new Socket(AddressFamily.InterNetwork, SocketType.Dgram, ProtocolType.Udp) { ReceiveTimeout = 5000 };
        _socket.Bind(new IPEndPoint(IPAddress.Loopback, 0));
    }

    public static TheoryData<string, byte[], bool> Cases
    {
        get
        {
            TheoryData<string, byte[], bool> cases = new()
            {
                { "an empty datagram", [], false },
                { "1 byte", [0x40], false },
                { "2 bytes", [0x40, 0x01], false },
                { "3 bytes", [0x40, 0x01, 0x10], false },
                { "version 0 CON GET", [0x00, 0x01, 0x10, 0x01], false },
                { "version 2 CON GET", [0x80, 0x01, 0x10, 0x02], false },
                { "version 3 CON GET with a token", [0xC1, 0x01, 0x10, 0x03, 0xAA], false },
                { "TKL 9 NON", [0x59, 0x01, 0x20, 0x10, 1, 2, 3, 4, 5, 6, 7, 8, 9], false },
                { "option delta nibble 15 in a CON", [0x40, 0x01, 0x30, 0x01, 0xF1, 0x61], true },
                { "option length nibble 15 in a CON", [0x40, 0x01, 0x30, 0x02, 0x1F, 0x61], true },
                { "option delta nibble 15 in a NON", [0x50, 0x01, 0x30, 0x03, 0xF1, 0x61], false },
                { "an Empty CON with a token", [0x41, 0x00, 0x40, 0x01, 0xAA], true },
                { "an Empty CON with a payload", [0x40, 0x00, 0x40, 0x02, 0xFF, 0x01], true },
                { "an Empty CON with an option", [0x40, 0x00, 0x40, 0x03, 0xB1, 0x61], true },
                { "an Empty ACK with a token", [0x61, 0x00, 0x40, 0x04, 0xAA], false },
                { "an Empty RST with a token", [0x71, 0x00, 0x40, 0x05, 0xAA], false },
                { "an Empty NON with a token", [0x51, 0x00, 0x40, 0x06, 0xAA], false },
                { "a payload marker without payload in a CON", [0x40, 0x01, 0x50, 0x01, 0xFF], true },
                { "a truncated token in a CON", [0x44, 0x01, 0x50, 0x02, 0xAA, 0xBB], true },
                { "a truncated option value in a CON", [0x40, 0x01, 0x50, 0x03, 0xB5, 0x61], true },
                { "a truncated extended option delta in a CON", [0x40, 0x01, 0x50, 0x04, 0xD0], true },
                { "a truncated token in a NON", [0x54, 0x01, 0x50, 0x05, 0xAA], false },
                { "a truncated option value in an ACK", [0x60, 0x45, 0x50, 0x06, 0xB5, 0x61], false },
            };
            // One option past CoapSerializerOptions.DefaultMaxOptionCount: 1,025 empty options numbered 0.
            cases.Add("1,025 options in a CON", [0x40, 0x01, 0x60, 0x01, .. new byte[1025]], true);
            cases.Add("1,025 options in a NON", [0x50, 0x01, 0x60, 0x02, .. new byte[1025]], false);
            for (int tkl = 9; tkl <= 15; tkl++)
            {
                byte[] datagram = new byte[4 + tkl];
                datagram[0] = (byte)(0x40 | tkl);
                datagram[1] = 0x01;
                datagram[2] = 0x20;
                datagram[3] = (byte)tkl;
                cases.Add($"TKL {tkl} CON", datagram, true);
            }

            return cases;
        }
    }

    [Theory]
    [MemberData(nameof(Cases))]
    public void AMalformedDatagramIsResetOnlyWhenItIsAConfirmableOfVersionOne(string name, byte[] datagram, bool reset)
    {
        IReadOnlyList<byte[]> replies = Exchange([datagram]);

        if (reset)
        {
            replies.Should().ContainSingle(name).Which.Should().Equal(EmptyMessageBytes.Reset(MessageIdOf(datagram)));
        }
        else
        {
            replies.Should().BeEmpty(name);
        }

        AssertStillServes();
    }

    [Fact]
    public void AfterEveryMalformedDatagramInARowAValidRequestIsStillAnswered()
    {
        List<byte[]> datagrams = [];
        List<byte[]> expected = [];
        foreach (object[] row in Cases)
        {
            byte[] datagram = (byte[])row[1];
            datagrams.Add(datagram);
            if ((bool)row[2])
            {
                expected.Add(EmptyMessageBytes.Reset(MessageIdOf(datagram)));
            }
        }

        Exchange(datagrams).Should().BeEquivalentTo(expected, o => o.WithStrictOrdering());
        AssertStillServes();

        // And nothing trails behind.
        _socket.Poll(TimeSpan.FromMilliseconds(300), SelectMode.SelectRead).Should().BeFalse();
    }

    [Fact]
    public void RandomBytesAreResetOnlyWhenTheyReadAsAConfirmableOfVersionOne()
    {
        Random random = new(20260101);
        List<byte[]> datagrams = [];
        List<byte[]> expected = [];
        while (datagrams.Count < 300)
        {
            byte[] datagram = RandomDatagram(random);
            if (CoapMessageSerializer.Udp.TryDeserialize(datagram.AsSpan(), out _, out _))
            {
                // Well-formed by chance: that is a request or response, not the subject here.
                continue;
            }

            if (ReadsAsConfirmableOfVersionOne(datagram) && MessageIdOf(datagram) >= FirstFenceId)
            {
                // Keep its RST from looking like a fence's.
                datagram[2] = 0;
            }

            datagrams.Add(datagram);
            if (ReadsAsConfirmableOfVersionOne(datagram))
            {
                expected.Add(EmptyMessageBytes.Reset(MessageIdOf(datagram)));
            }
        }

        expected.Should().NotBeEmpty().And.HaveCountLessThan(datagrams.Count, "the sample holds both kinds");
        Exchange(datagrams).Should().BeEquivalentTo(expected, o => o.WithStrictOrdering());
        AssertStillServes();
    }

    [Fact]
    public void TenThousandRandomDatagramsInMemoryGetExactlyTheRfcReaction()
    {
        using MessagingHarness h = new();
        CoapEndpoint server = h.Endpoint(MessagingHarness.ServerAddress, handler: MessagingHarness.Echo());
        TestPeer fuzzer = h.Peer(MessagingHarness.ClientAddress);
        Random random = new(7252);
        int malformed = 0;

        for (int i = 0; i < 10_000; i++)
        {
            byte[] datagram = RandomDatagram(random);
            int before = fuzzer.Received.Count;
            fuzzer.SendBytes(datagram, server.LocalEndPoint);
            h.Network.DeliverAll();
            if (CoapMessageSerializer.Udp.TryDeserialize(datagram.AsSpan(), out _, out _))
            {
                continue;
            }

            malformed++;
            IEnumerable<byte[]> replies = fuzzer.Received.Skip(before).Select(r => r.Bytes);
            if (ReadsAsConfirmableOfVersionOne(datagram))
            {
                replies.Should().ContainSingle().Which.Should().Equal(EmptyMessageBytes.Reset(MessageIdOf(datagram)), Convert.ToHexString(datagram));
            }
            else
            {
                replies.Should().BeEmpty(Convert.ToHexString(datagram));
            }
        }

        malformed.Should().BeGreaterThan(5000);
        fuzzer.Send(MessagingHarness.RawRequest(0x1234, [1, 2, 3, 4], path: "alive"), server.LocalEndPoint);
        h.Network.DeliverAll();
        fuzzer.Last.Parsed.GetPayloadString().Should().Be("/alive");
    }

    public void Dispose()
    {
        _socket.Dispose();
        _server.Dispose();
    }

    private static ushort MessageIdOf(byte[] datagram) => (ushort)((datagram[2] << 8) | datagram[3]);

    // The RFC's rule, stated independently of the endpoint's code: a header of version 1 and type CON.
    private static bool ReadsAsConfirmableOfVersionOne(byte[] datagram) => datagram.Length >= 4 && datagram[0] >> 6 == 1 && ((datagram[0] >> 4) & 3) == 0;

    private static byte[] RandomDatagram(Random random)
    {
        byte[] datagram = new byte[random.Next(0, 24)];
        random.NextBytes(datagram);
        if (datagram.Length > 0 && random.Next(2) == 0)
        {
            // Half of them get a version 1 header, so the interesting paths are hit often.
            datagram[0] = (byte)(0x40 | (datagram[0] & 0x3F));
        }

        return datagram;
    }

    /// <summary>Sends the datagrams in batches, each followed by a fence; returns every reply that came before the fences.</summary>
    private List<byte[]> Exchange(IEnumerable<byte[]> datagrams)
    {
        List<byte[]> replies = [];

        // Small batches: a burst must not overflow the server socket's receive buffer.
        foreach (byte[][] batch in datagrams.Chunk(16))
        {
            foreach (byte[] datagram in batch)
            {
                _socket.SendTo(datagram, _server.LocalEndPoint);
            }

            ushort fence = (ushort)(FirstFenceId + _fences++);
            _socket.SendTo(EmptyMessageBytes.EmptyConfirmable(fence), _server.LocalEndPoint);
            byte[] fenceReply = EmptyMessageBytes.Reset(fence);
            for (byte[] reply = Receive(); !reply.AsSpan().SequenceEqual(fenceReply); reply = Receive())
            {
                replies.Add(reply);
            }
        }

        return replies;
    }

    private byte[] Receive()
    {
        EndPoint from = new IPEndPoint(IPAddress.Any, 0);
        int length = _socket.ReceiveFrom(_buffer, ref from);
        ((IPEndPoint)from).Should().Be(_server.LocalEndPoint);
        return _buffer.AsSpan(0, length).ToArray();
    }

    private void AssertStillServes()
    {
        CoapMessage request = MessagingHarness.RawRequest(0x1234, [1, 2, 3, 4], path: "alive");
        _socket.SendTo(CoapMessageSerializer.Udp.Serialize(request), _server.LocalEndPoint);

        CoapMessage response = CoapMessageSerializer.Udp.Deserialize(Receive().AsSpan());
        response.Type.Should().Be(CoapMessageType.Acknowledgement);
        response.MessageId.Should().Be(0x1234);
        response.Token.ToArray().Should().Equal(1, 2, 3, 4);
        response.Code.Should().Be(CoapCode.Content);
        response.GetPayloadString().Should().Be("/alive");
    }
}
