using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Configs;
using CoapNet.Messages;
using CoapNet.Serialization;
using PeerDecoder = CoAPnet.Protocol.Encoding.CoapMessageDecoder;
using PeerEncoder = CoAPnet.Protocol.Encoding.CoapMessageEncoder;
using PeerFormat = CoAPnet.Protocol.Options.CoapMessageContentFormat;
using PeerLogger = CoAPnet.Logging.CoapNetLogger;
using PeerMessage = CoAPnet.Protocol.CoapMessage;
using PeerMessageType = CoAPnet.Protocol.CoapMessageType;
using PeerCodes = CoAPnet.Protocol.CoapMessageCodes;
using PeerOption = CoAPnet.Protocol.Options.CoapMessageOption;
using PeerOptionFactory = CoAPnet.Protocol.Options.CoapMessageOptionFactory;

namespace CoapNet.Benchmarks;

/// <summary>The everyday messages of <see cref="PeerBenchmarks"/>, all RFC 7252 datagrams (CoAPnet speaks UDP only).</summary>
public enum PeerMessageKind
{
    /// <summary>CON GET /sensors/temperature/latest: 4-byte token, 3 Uri-Path options.</summary>
    GetRequest,

    /// <summary>ACK 2.05 Content with Content-Format application/json and a 100-byte payload.</summary>
    Content100,

    /// <summary>ACK 2.05 Content with Content-Format application/json and a 1 KiB payload.</summary>
    Content1024,

    /// <summary>NON 2.05 Observe notification (RFC 7641): Observe, Content-Format, Max-Age and a 32-byte payload.</summary>
    ObserveNotification,
}

/// <summary>
/// CoapNet beside CoAPnet (chkr1011/CoAPnet, built from source in ../shared/peers) on the same messages, in one
/// run: decode the datagram, encode a ready message, and build a message from its parts and encode it. Each
/// category's baseline is CoAPnet, so the Ratio column is CoapNet's time over CoAPnet's (below 1 is faster).
/// </summary>
/// <remarks>
/// This file compiles only when the peer's source is present (see CoapNet.Benchmarks.csproj). The peer's decoder
/// turns every option value into a typed object (strings decoded) as it parses; CoapNet keeps value slices and
/// decodes on access, which is part of what is compared.
/// </remarks>
[GroupBenchmarksBy(BenchmarkLogicalGroupRule.ByCategory, BenchmarkLogicalGroupRule.ByParams)]
[CategoriesColumn]
public class PeerBenchmarks
{
    private static readonly CoapMessageSerializer Serializer = CoapMessageSerializer.Udp;
    private static readonly byte[] Token = [0x5A, 0x17, 0xC3, 0x02];

    private readonly PeerDecoder _peerDecoder = new(new PeerLogger());
    private readonly PeerEncoder _peerEncoder = new();
    private readonly PeerOptionFactory _peerOptions = new();

    private byte[] _datagram = null!;
    private byte[] _payload = null!;
    private CoapMessage _message = null!;
    private PeerMessage _peerMessage = null!;

    [Params(PeerMessageKind.GetRequest, PeerMessageKind.Content100, PeerMessageKind.Content1024, PeerMessageKind.ObserveNotification)]
    public PeerMessageKind Message { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        int payloadLength = Message switch
        {
            PeerMessageKind.Content100 => 100,
            PeerMessageKind.Content1024 => 1024,
            PeerMessageKind.ObserveNotification => 32,
            _ => 0,
        };
        _payload = new byte[payloadLength];
        new Random(7).NextBytes(_payload);
        _message = BuildCoapNet();
        _peerMessage = BuildPeer();
        _datagram = Serializer.Serialize(_message);

        // Both libraries must write the same bytes, or the comparison is not of the same work. The one known
        // difference is the code byte of a response: CoAPnet (at eac22f2) writes Detail | Class << 3 instead of
        // Class << 5 | Detail (RFC 7252 section 3), so 2.05 goes out as 0x15 rather than 0x45. Same length, same work.
        byte[] peerBytes = [.. _peerEncoder.Encode(_peerMessage)];
        byte[] expected = (byte[])_datagram.Clone();
        expected[1] = (byte)(((expected[1] >> 5) << 3) | (expected[1] & 0x1F));
        if (!peerBytes.AsSpan().SequenceEqual(expected))
        {
            throw new InvalidOperationException($"CoAPnet encodes {Message} as {Convert.ToHexString(peerBytes)}, CoapNet as {Convert.ToHexString(_datagram)}.");
        }
    }

    /// <summary>CoAPnet: CoapMessageDecoder.Decode of the datagram.</summary>
    [Benchmark(Baseline = true)]
    [BenchmarkCategory("Decode")]
    public PeerMessage DecodeCoAPnet() => _peerDecoder.Decode(new ArraySegment<byte>(_datagram));

    /// <summary>CoapNet: Deserialize(ReadOnlySpan), which copies the bytes it keeps once.</summary>
    [Benchmark]
    [BenchmarkCategory("Decode")]
    public CoapMessage DecodeCoapNet() => Serializer.Deserialize((ReadOnlySpan<byte>)_datagram);

    /// <summary>CoAPnet: CoapMessageEncoder.Encode of a ready message.</summary>
    [Benchmark(Baseline = true)]
    [BenchmarkCategory("Encode")]
    public ArraySegment<byte> EncodeCoAPnet() => _peerEncoder.Encode(_peerMessage);

    /// <summary>CoapNet: Serialize of a ready message into a new array.</summary>
    [Benchmark]
    [BenchmarkCategory("Encode")]
    public byte[] EncodeCoapNet() => Serializer.Serialize(_message);

    /// <summary>CoAPnet: the message and its options built from strings and numbers, then encoded.</summary>
    [Benchmark(Baseline = true)]
    [BenchmarkCategory("BuildAndEncode")]
    public ArraySegment<byte> BuildAndEncodeCoAPnet() => _peerEncoder.Encode(BuildPeer());

    /// <summary>CoapNet: the message and its options built from the same strings and numbers, then serialized.</summary>
    [Benchmark]
    [BenchmarkCategory("BuildAndEncode")]
    public byte[] BuildAndEncodeCoapNet() => Serializer.Serialize(BuildCoapNet());

    private CoapMessage BuildCoapNet()
    {
        switch (Message)
        {
            case PeerMessageKind.GetRequest:
            {
                CoapMessage request = new() { Type = CoapMessageType.Confirmable, Code = CoapCode.Get, MessageId = 0x7D34, Token = Token };
                request.Options.Add(CoapOptionNumber.UriPath, "sensors");
                request.Options.Add(CoapOptionNumber.UriPath, "temperature");
                request.Options.Add(CoapOptionNumber.UriPath, "latest");
                return request;
            }

            case PeerMessageKind.ObserveNotification:
                return new CoapMessage
                {
                    Type = CoapMessageType.NonConfirmable, Code = CoapCode.Content, MessageId = 0x7D35, Token = Token,
                    Observe = 0x01A2B3, ContentFormat = CoapContentFormat.Json, MaxAge = 30, Payload = _payload,
                };

            default:
                return new CoapMessage
                {
                    Type = CoapMessageType.Acknowledgement, Code = CoapCode.Content, MessageId = 0x7D34, Token = Token,
                    ContentFormat = CoapContentFormat.Json, Payload = _payload,
                };
        }
    }

    private PeerMessage BuildPeer()
    {
        switch (Message)
        {
            case PeerMessageKind.GetRequest:
                return new PeerMessage
                {
                    Type = PeerMessageType.Confirmable, Code = PeerCodes.Get, Id = 0x7D34, Token = Token,
                    Options = [_peerOptions.CreateUriPath("sensors"), _peerOptions.CreateUriPath("temperature"), _peerOptions.CreateUriPath("latest")],
                };

            case PeerMessageKind.ObserveNotification:
                return new PeerMessage
                {
                    Type = PeerMessageType.NonConfirmable, Code = PeerCodes.Content, Id = 0x7D35, Token = Token,
                    Options = [_peerOptions.CreateObserve(0x01A2B3), _peerOptions.CreateContentFormat(PeerFormat.ApplicationJson), _peerOptions.CreateMaxAge(30)],
                    Payload = new ArraySegment<byte>(_payload),
                };

            default:
                return new PeerMessage
                {
                    Type = PeerMessageType.Acknowledgement, Code = PeerCodes.Content, Id = 0x7D34, Token = Token,
                    Options = new List<PeerOption> { _peerOptions.CreateContentFormat(PeerFormat.ApplicationJson) },
                    Payload = new ArraySegment<byte>(_payload),
                };
        }
    }
}
