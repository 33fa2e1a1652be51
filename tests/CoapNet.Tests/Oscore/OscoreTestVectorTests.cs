using CoapNet.Messages;
using CoapNet.Oscore;
using CoapNet.Oscore.Cose;
using CoapNet.Oscore.Protection;
using CoapNet.Serialization;

namespace CoapNet.Tests.Oscore;

/// <summary>Every test vector of RFC 8613 Appendix C, byte for byte.</summary>
public sealed class OscoreTestVectorTests
{
    private static readonly byte[] Secret = Convert.FromHexString("0102030405060708090a0b0c0d0e0f10");
    private static readonly byte[] Salt = Convert.FromHexString("9e7ca92223786340");
    private static readonly byte[] IdContext = Convert.FromHexString("37cbf3210017a2d3");

    [Theory]
    // C.1.1 and C.1.2: with Master Salt.
    [InlineData("9e7ca92223786340", "", "01", null, "8540f60a634b657910", "854101f60a634b657910", "8540f60a6249560d", "f0910ed7295e6ad4b54fc793154302ff", "ffb14e093c94c9cac9471648b4f98710", "4622d4dd6d944168eefb54987c", "4622d4dd6d944168eefb54987c", "4722d4dd6d944169eefb54987c")]
    [InlineData("9e7ca92223786340", "01", "", null, "854101f60a634b657910", "8540f60a634b657910", "8540f60a6249560d", "ffb14e093c94c9cac9471648b4f98710", "f0910ed7295e6ad4b54fc793154302ff", "4622d4dd6d944168eefb54987c", "4722d4dd6d944169eefb54987c", "4622d4dd6d944168eefb54987c")]
    // C.2.1 and C.2.2: without Master Salt.
    [InlineData("", "00", "01", null, "854100f60a634b657910", "854101f60a634b657910", "8540f60a6249560d", "321b26943253c7ffb6003b0b64d74041", "e57b5635815177cd679ab4bcec9d7dda", "be35ae297d2dace910c52e99f9", "bf35ae297d2dace910c52e99f9", "bf35ae297d2dace810c52e99f9")]
    [InlineData("", "01", "00", null, "854101f60a634b657910", "854100f60a634b657910", "8540f60a6249560d", "e57b5635815177cd679ab4bcec9d7dda", "321b26943253c7ffb6003b0b64d74041", "be35ae297d2dace910c52e99f9", "bf35ae297d2dace810c52e99f9", "bf35ae297d2dace910c52e99f9")]
    // C.3.1 and C.3.2: with ID Context.
    [InlineData("9e7ca92223786340", "", "01", "37cbf3210017a2d3", "85404837cbf3210017a2d30a634b657910", "8541014837cbf3210017a2d30a634b657910", "85404837cbf3210017a2d30a6249560d", "af2a1300a5e95788b356336eeecd2b92", "e39a0c7c77b43f03b4b39ab9a268699f", "2ca58fb85ff1b81c0b7181b85e", "2ca58fb85ff1b81c0b7181b85e", "2da58fb85ff1b81d0b7181b85e")]
    [InlineData("9e7ca92223786340", "01", "", "37cbf3210017a2d3", "8541014837cbf3210017a2d30a634b657910", "85404837cbf3210017a2d30a634b657910", "85404837cbf3210017a2d30a6249560d", "e39a0c7c77b43f03b4b39ab9a268699f", "af2a1300a5e95788b356336eeecd2b92", "2ca58fb85ff1b81c0b7181b85e", "2da58fb85ff1b81d0b7181b85e", "2ca58fb85ff1b81c0b7181b85e")]
    public void Key_derivation_matches_appendix_C_1_to_C_3(
        string salt, string senderId, string recipientId, string? idContext,
        string senderInfo, string recipientInfo, string ivInfo,
        string senderKey, string recipientKey, string commonIv, string senderNonce, string recipientNonce)
    {
        byte[]? context = idContext is null ? null : Convert.FromHexString(idContext);
        OscoreContext oscore = new(new OscoreContextOptions
        {
            MasterSecret = Secret,
            MasterSalt = Convert.FromHexString(salt),
            SenderId = Convert.FromHexString(senderId),
            RecipientId = Convert.FromHexString(recipientId),
            IdContext = context,
        });

        Hex(Info(Convert.FromHexString(senderId), context, "Key", 16)).Should().Be(senderInfo);
        Hex(Info(Convert.FromHexString(recipientId), context, "Key", 16)).Should().Be(recipientInfo);
        Hex(Info([], context, "IV", 13)).Should().Be(ivInfo);
        Hex(oscore.SenderKey).Should().Be(senderKey);
        Hex(oscore.RecipientKey).Should().Be(recipientKey);
        Hex(oscore.CommonIv).Should().Be(commonIv);
        Hex(Nonce(oscore.CommonIv, Convert.FromHexString(senderId))).Should().Be(senderNonce);
        Hex(Nonce(oscore.CommonIv, Convert.FromHexString(recipientId))).Should().Be(recipientNonce);
    }

    [Theory]
    // C.4: the context of C.1, Sender ID empty.
    [InlineData("9e7ca92223786340", "", "01", null, "44015d1f00003974396c6f63616c686f737483747631", "44025d1f00003974396c6f63616c686f7374620914ff612f1092f1776f1c1668b3825e")]
    // C.5: the context of C.2, Sender ID 0x00.
    [InlineData("", "00", "01", null, "440171c30000b932396c6f63616c686f737483747631", "440271c30000b932396c6f63616c686f737463091400ff4ed339a5a379b0b8bc731fffb0")]
    // C.6: the context of C.3, with 'kid context' sent.
    [InlineData("9e7ca92223786340", "", "01", "37cbf3210017a2d3", "44012f8eef9bbf7a396c6f63616c686f737483747631", "44022f8eef9bbf7a396c6f63616c686f73746b19140837cbf3210017a2d3ff72cd7273fd331ac45cffbe55c3")]
    public void Request_protection_matches_appendix_C_4_to_C_6(string salt, string senderId, string recipientId, string? idContext, string unprotected, string protectedRequest)
    {
        OscoreContext client = Context(salt, senderId, recipientId, idContext, sequenceNumber: 20);
        CoapMessage request = CoapMessageSerializer.Udp.Deserialize(Convert.FromHexString(unprotected));

        CoapMessage outer = OscoreProtection.ProtectRequest(client, request, out RequestBinding binding);

        Hex(CoapMessageSerializer.Udp.Serialize(outer)).Should().Be(protectedRequest);
        Hex(binding.RequestPiv).Should().Be("14");
        client.SenderSequenceNumber.Should().Be(21);

        // The server of the same vector decrypts it back to the unprotected request.
        OscoreContext server = Context(salt, recipientId, senderId, idContext, sequenceNumber: 0);
        CoapMessage received = CoapMessageSerializer.Udp.Deserialize(Convert.FromHexString(protectedRequest));
        CoapMessage inner = OscoreProtection.OpenRequest(server, received, Convert.FromHexString(senderId), [0x14])!;
        inner.Type = received.Type;
        inner.MessageId = received.MessageId;
        inner.Token = received.Token;
        Hex(CoapMessageSerializer.Udp.Serialize(inner)).Should().Be(unprotected);
    }

    [Theory]
    // C.7: without a Partial IV, the request's nonce.
    [InlineData(false, "64445d1f0000397490ffdbaad1e9a7e7b2a813d3c31524378303cdafae119106")]
    // C.8: with a Partial IV of the server's sequence number 0.
    [InlineData(true, "64445d1f00003974920100ff4d4c13669384b67354b2b6175ff4b8658c666a6cf88e")]
    public void Response_protection_matches_appendix_C_7_and_C_8(bool withPartialIv, string protectedResponse)
    {
        OscoreContext server = Context("9e7ca92223786340", "01", "", null, sequenceNumber: 0);
        CoapMessage response = CoapMessageSerializer.Udp.Deserialize(Convert.FromHexString("64455d1f00003974ff48656c6c6f20576f726c6421"));
        RequestBinding request = new(server, Array.Empty<byte>(), [0x14], observe: false);

        CoapMessage outer = OscoreProtection.ProtectResponse(request, response, withPartialIv);

        Hex(CoapMessageSerializer.Udp.Serialize(outer)).Should().Be(protectedResponse);

        // The client of C.1 verifies it as the response to its request of C.4.
        OscoreContext client = Context("9e7ca92223786340", "", "01", null, sequenceNumber: 20);
        RequestBinding sent = new(client, Array.Empty<byte>(), [0x14], observe: false);
        CoapMessage received = CoapMessageSerializer.Udp.Deserialize(Convert.FromHexString(protectedResponse));
        received.Options.TryGet(CoapOptionNumber.Oscore, out CoapOptionEntry option).Should().BeTrue();
        OscoreOptionValue.TryRead(option.Value, out OscoreOptionValue value).Should().BeTrue();
        CoapMessage inner = OscoreProtection.OpenResponse(sent, received, value)!;
        inner.Code.Should().Be(CoapCode.Content);
        inner.GetPayloadString().Should().Be("Hello World!");
    }

    [Fact]
    public void A_tampered_ciphertext_does_not_verify()
    {
        OscoreContext server = Context("9e7ca92223786340", "01", "", null, sequenceNumber: 0);
        byte[] bytes = Convert.FromHexString("44025d1f00003974396c6f63616c686f7374620914ff612f1092f1776f1c1668b3825e");
        bytes[^1] ^= 1;

        OscoreProtection.OpenRequest(server, CoapMessageSerializer.Udp.Deserialize(bytes), [], [0x14]).Should().BeNull();
    }

    [Theory]
    [InlineData("", true, "", null, null)]
    [InlineData("0914", true, "14", null, "")]
    [InlineData("091400", true, "14", null, "00")]
    [InlineData("19140837cbf3210017a2d3", true, "14", "37cbf3210017a2d3", "")]
    [InlineData("0100", true, "00", null, null)]
    [InlineData("00", false, null, null, null)]
    [InlineData("06000000000000", false, null, null, null)]
    [InlineData("2100", false, null, null, null)]
    [InlineData("0214", false, null, null, null)]
    [InlineData("1014", false, null, null, null)]
    [InlineData("0100ff", false, null, null, null)]
    public void The_OSCORE_option_value_reads_as_section_6_1_says(string value, bool valid, string? piv, string? kidContext, string? kid)
    {
        OscoreOptionValue.TryRead(Convert.FromHexString(value), out OscoreOptionValue read).Should().Be(valid);
        if (!valid)
        {
            return;
        }

        Hex(read.PartialIv.ToArray()).Should().Be(piv);
        (read.KidContext is { } c ? Hex(c.ToArray()) : null).Should().Be(kidContext);
        (read.Kid is { } k ? Hex(k.ToArray()) : null).Should().Be(kid);
        Span<byte> written = stackalloc byte[32];
        byte[] context = read.KidContext is { } sentContext ? sentContext.ToArray() : [];
        byte[] id = read.Kid is { } sentKid ? sentKid.ToArray() : [];
        int length = OscoreOptionValue.Write(written, read.PartialIv.Span, context, read.KidContext is not null, id, read.Kid is not null);
        Hex(written[..length].ToArray()).Should().Be(value);
    }

    internal static OscoreContext Context(string salt, string senderId, string recipientId, string? idContext, long sequenceNumber) => new(new OscoreContextOptions
    {
        MasterSecret = Secret,
        MasterSalt = Convert.FromHexString(salt),
        SenderId = Convert.FromHexString(senderId),
        RecipientId = Convert.FromHexString(recipientId),
        IdContext = idContext is null ? null : Convert.FromHexString(idContext),
        SendIdContext = idContext is not null,
        SequenceStore = new StartAt(sequenceNumber),
    });

    private static string Hex(ReadOnlySpan<byte> bytes) => Convert.ToHexString(bytes).ToLowerInvariant();

    private static byte[] Info(byte[] id, byte[]? idContext, string type, int length)
    {
        byte[] buffer = new byte[64];
        return buffer[..OscoreAlgorithm.Info(buffer, id, idContext, type, length)];
    }

    private static byte[] Nonce(byte[] commonIv, byte[] id)
    {
        byte[] nonce = new byte[13];
        OscoreAlgorithm.Nonce(commonIv, id, [0], nonce);
        return nonce;
    }

    /// <summary>A store that starts the sender at a given number, as the vectors do (Sender Sequence Number 20).</summary>
    private sealed class StartAt(long start) : IOscoreSequenceStore
    {
        public long Load() => start;

        public void Reserve(long limit)
        {
        }
    }
}
