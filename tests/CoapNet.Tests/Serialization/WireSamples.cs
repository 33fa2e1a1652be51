using System.Text;
using CoapNet.Messages;
using CoapNet.Serialization;
using static CoapNet.Tests.Serialization.Wire;

namespace CoapNet.Tests.Serialization;

/// <summary>A message on the wire and the fields it must decode to.</summary>
internal sealed record WireSample(string Name, CoapFraming Framing, byte[] Bytes, CoapMessage Expected)
{
    public override string ToString() => Name;
}

/// <summary>
/// Wire samples from the RFC figures: RFC 7252 Appendix A (datagrams) and RFC 8323 section 3.2 and 5
/// (stream frames with every Len form, and the signaling messages).
/// </summary>
internal static class WireSamples
{
    private static readonly byte[] Temperature = "temperature"u8.ToArray();

    public static IReadOnlyList<WireSample> All { get; } =
    [
        // RFC 7252 Appendix A, Figure 16: CON [0x7d34] GET /temperature and its piggybacked 2.05 ACK.
        new("Rfc7252Figure16Request", CoapFraming.Datagram,
            Hex("40 01 7d 34 bb 74 65 6d 70 65 72 61 74 75 72 65"),
            TestMessages.Create(CoapMessageType.Confirmable, CoapCode.Get, 0x7d34, options: [(CoapOptionNumber.UriPath, Temperature)])),
        new("Rfc7252Figure16Response", CoapFraming.Datagram,
            Hex("60 45 7d 34 ff 32 32 2e 33 20 43"),
            TestMessages.Create(CoapMessageType.Acknowledgement, CoapCode.Content, 0x7d34, payload: "22.3 C"u8.ToArray())),

        // Figure 17: the same exchange with token 0x20.
        new("Rfc7252Figure17Request", CoapFraming.Datagram,
            Hex("41 01 7d 35 20 bb 74 65 6d 70 65 72 61 74 75 72 65"),
            TestMessages.Create(CoapMessageType.Confirmable, CoapCode.Get, 0x7d35, [0x20], [(CoapOptionNumber.UriPath, Temperature)])),
        new("Rfc7252Figure17Response", CoapFraming.Datagram,
            Hex("61 45 7d 35 20 ff 32 32 2e 33 20 43"),
            TestMessages.Create(CoapMessageType.Acknowledgement, CoapCode.Content, 0x7d35, [0x20], payload: "22.3 C"u8.ToArray())),

        // Figure 20: a separate response: the empty ACK, the CON 2.05 with token 0x53, and its empty ACK.
        new("Rfc7252Figure20Request", CoapFraming.Datagram,
            Hex("41 01 7d 38 53 bb 74 65 6d 70 65 72 61 74 75 72 65"),
            TestMessages.Create(CoapMessageType.Confirmable, CoapCode.Get, 0x7d38, [0x53], [(CoapOptionNumber.UriPath, Temperature)])),
        new("Rfc7252Figure20EmptyAck", CoapFraming.Datagram,
            Hex("60 00 7d 38"),
            TestMessages.Create(CoapMessageType.Acknowledgement, CoapCode.Empty, 0x7d38)),
        new("Rfc7252Figure20SeparateResponse", CoapFraming.Datagram,
            Hex("41 45 ad 7b 53 ff 32 32 2e 33 20 43"),
            TestMessages.Create(CoapMessageType.Confirmable, CoapCode.Content, 0xad7b, [0x53], payload: "22.3 C"u8.ToArray())),

        // Figure 22: a non-confirmable request and response with token 0x75.
        new("Rfc7252Figure22Request", CoapFraming.Datagram,
            Hex("51 01 7d 40 75 bb 74 65 6d 70 65 72 61 74 75 72 65"),
            TestMessages.Create(CoapMessageType.NonConfirmable, CoapCode.Get, 0x7d40, [0x75], [(CoapOptionNumber.UriPath, Temperature)])),
        new("Rfc7252Figure22Response", CoapFraming.Datagram,
            Hex("51 45 ad 7d 75 ff 32 32 2e 33 20 43"),
            TestMessages.Create(CoapMessageType.NonConfirmable, CoapCode.Content, 0xad7d, [0x75], payload: "22.3 C"u8.ToArray())),

        // RFC 7252 section 4.2: a RST (answering the separate response of Figure 20's error case, MID 0xad7c).
        new("Rfc7252Reset", CoapFraming.Datagram,
            Hex("70 00 ad 7c"),
            TestMessages.Create(CoapMessageType.Reset, CoapCode.Empty, 0xad7c)),

        // RFC 7252 section 4.3: a CoAP ping is an Empty CON.
        new("Rfc7252Ping", CoapFraming.Datagram,
            Hex("40 00 12 34"),
            TestMessages.Create(CoapMessageType.Confirmable, CoapCode.Empty, 0x1234)),

        // Every option encoding of RFC 7252 section 3.1 in one request: a 4-byte token, Uri-Host (string),
        // Uri-Port (2-byte uint), two Uri-Path (the second with delta 0), Content-Format (1-byte uint),
        // Uri-Query, Block1 (delta 12, the last 4-bit delta), Size1 (delta 33: 1 extended byte) and a payload.
        new("Rfc7252PostWithEveryOptionForm", CoapFraming.Datagram,
            Hex("44 02 00 01 aa bb cc dd"
                + " 3b 65 78 61 6d 70 6c 65 2e 63 6f 6d"
                + " 42 16 33"
                + " 47 73 65 6e 73 6f 72 73"
                + " 04 74 65 6d 70"
                + " 11 32"
                + " 33 61 3d 31"
                + " c1 2e"
                + " d2 14 04 00"
                + " ff 7b 7d"),
            TestMessages.Create(CoapMessageType.Confirmable, CoapCode.Post, 0x0001, [0xaa, 0xbb, 0xcc, 0xdd],
            [
                (CoapOptionNumber.UriHost, "example.com"u8.ToArray()),
                (CoapOptionNumber.UriPort, [0x16, 0x33]),
                (CoapOptionNumber.UriPath, "sensors"u8.ToArray()),
                (CoapOptionNumber.UriPath, "temp"u8.ToArray()),
                (CoapOptionNumber.ContentFormat, [50]),
                (CoapOptionNumber.UriQuery, "a=1"u8.ToArray()),
                (CoapOptionNumber.Block1, [0x2e]),
                (CoapOptionNumber.Size1, [0x04, 0x00]),
            ],
            "{}"u8.ToArray())),

        // RFC 8323 section 3.2, Len 0..12 in the nibble: GET /temperature with token 0x20 (Len 12).
        new("Rfc8323GetLen12", CoapFraming.Stream,
            Hex("c1 01 20 bb 74 65 6d 70 65 72 61 74 75 72 65"),
            TestMessages.Signal(CoapCode.Get, [0x20], [(CoapOptionNumber.UriPath, Temperature)])),

        // Len 13: one extended length byte holding Len - 13 (here 19 - 13 = 6).
        new("Rfc8323ContentLen13", CoapFraming.Stream,
            Concat(Hex("d1 06 45 20 ff"), "temperature=22.3 C"u8.ToArray()),
            TestMessages.Signal(CoapCode.Content, [0x20], payload: "temperature=22.3 C"u8.ToArray())),

        // Len 14: two extended length bytes holding Len - 269 (here 300 - 269 = 31).
        new("Rfc8323ContentLen14", CoapFraming.Stream,
            Concat(Hex("e0 00 1f 45 ff"), Filler(299)),
            TestMessages.Signal(CoapCode.Content, payload: Filler(299))),

        // Len 15: four extended length bytes holding Len - 65805 (here 65808 - 65805 = 3).
        new("Rfc8323ContentLen15", CoapFraming.Stream,
            Concat(Hex("f2 00 00 00 03 45 ab cd ff"), Filler(65807)),
            TestMessages.Signal(CoapCode.Content, [0xab, 0xcd], payload: Filler(65807))),

        // RFC 8323 section 5.3: 7.01 CSM with Max-Message-Size (2) = 1152 and Block-Wise-Transfer (4, empty).
        new("Rfc8323Csm", CoapFraming.Stream,
            Hex("40 e1 22 04 80 20"),
            TestMessages.Signal(new CoapCode(7, 1), options: [((CoapOptionNumber)2, [0x04, 0x80]), ((CoapOptionNumber)4, [])])),

        // RFC 8323 section 5.4: 7.02 Ping without token, 7.02 Ping with Custody (2), 7.03 Pong echoing a token.
        new("Rfc8323Ping", CoapFraming.Stream,
            Hex("00 e2"),
            TestMessages.Signal(new CoapCode(7, 2))),
        new("Rfc8323PingWithCustody", CoapFraming.Stream,
            Hex("11 e2 42 20"),
            TestMessages.Signal(new CoapCode(7, 2), [0x42], [((CoapOptionNumber)2, [])])),
        new("Rfc8323Pong", CoapFraming.Stream,
            Hex("01 e3 42"),
            TestMessages.Signal(new CoapCode(7, 3), [0x42])),

        // RFC 8323 section 5.5 and 5.6: 7.04 Release with Hold-Off (4) = 0 (an empty uint), and 7.05 Abort
        // with Bad-CSM-Option (2) = 4 and a diagnostic payload (Len 13 + 0).
        new("Rfc8323ReleaseWithHoldOff", CoapFraming.Stream,
            Hex("10 e4 40"),
            TestMessages.Signal(new CoapCode(7, 4), options: [((CoapOptionNumber)4, [])])),
        new("Rfc8323Abort", CoapFraming.Stream,
            Concat(Hex("d0 00 e5 21 04 ff"), Encoding.ASCII.GetBytes("bad option")),
            TestMessages.Signal(new CoapCode(7, 5), options: [((CoapOptionNumber)2, [0x04])], payload: Encoding.ASCII.GetBytes("bad option"))),

        // RFC 8323 section 3.2 with RFC 7252 section 4.1: an Empty message is Len 0, TKL 0, code 0.00.
        new("Rfc8323Empty", CoapFraming.Stream,
            Hex("00 00"),
            TestMessages.Signal(CoapCode.Empty)),
    ];

    /// <summary>The names of every sample, for [MemberData].</summary>
    public static TheoryData<string> Names { get; } = [.. All.Select(s => s.Name)];

    /// <summary>The names of the datagram samples.</summary>
    public static TheoryData<string> DatagramNames { get; } = [.. All.Where(s => s.Framing == CoapFraming.Datagram).Select(s => s.Name)];

    /// <summary>The names of the stream samples small enough to cut at every byte (all but the 64 KiB one).</summary>
    public static TheoryData<string> SmallStreamNames { get; } = [.. All.Where(s => s.Framing == CoapFraming.Stream && s.Bytes.Length < 1024).Select(s => s.Name)];

    /// <summary>Small samples of both framings, for mutation tests.</summary>
    public static IEnumerable<WireSample> Small(CoapFraming framing) => All.Where(s => s.Framing == framing && s.Bytes.Length <= 48);

    public static WireSample Get(string name) => All.Single(s => s.Name == name);
}
