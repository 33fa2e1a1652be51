using CoapNet.Dtls.Records;

namespace CoapNet.Tests.Dtls;

/// <summary>
/// Our DTLS 1.2 record protection between two ends made from the same keys, for every AEAD kind it implements (the
/// interop tests meet BouncyCastle and libcoap with CCM_8; GCM is checked here): records round-trip, with and without
/// a Connection ID, and a replayed, tampered or foreign record is refused.
/// </summary>
public sealed class RecordProtectionTests
{
    public static TheoryData<bool, int, int, bool> Kinds() => new()
    {
        { false, 16, 8, false },
        { false, 16, 16, true },
        { true, 16, 16, false },
        { true, 32, 16, true },
    };

    [Theory]
    [MemberData(nameof(Kinds))]
    public void RecordsRoundTripAndReplaysTamperingAndOtherEpochsAreRefused(bool gcm, int keyLength, int tagLength, bool connectionId)
    {
        (RecordProtection client, RecordProtection server) = Pair(gcm, keyLength, tagLength, connectionId);
        byte[] record = new byte[1500];
        byte[] plaintext = new byte[1500];

        int length = client.Protect(RecordProtection.ApplicationData, "GET /hello"u8, record);
        bool read = server.TryUnprotect(record.AsSpan(0, length), plaintext, out int received, out byte type, out bool moved);

        read.Should().BeTrue();
        plaintext.AsSpan(0, received).ToArray().Should().Equal("GET /hello"u8.ToArray());
        type.Should().Be(RecordProtection.ApplicationData);
        moved.Should().Be(connectionId, "only a newest record with our Connection ID may move the peer");
        server.RecordLength(record.AsSpan(0, length)).Should().Be(length);
        record[0].Should().Be(connectionId ? (byte)25 : RecordProtection.ApplicationData);
        server.TryUnprotect(record.AsSpan(0, length), plaintext, out _, out _, out _).Should().BeFalse("a replay is refused");

        int second = client.Protect(RecordProtection.Alert, [1, 0], record);
        byte[] tampered = record.AsSpan(0, second).ToArray();
        tampered[^3] ^= 1;
        byte[] otherEpoch = record.AsSpan(0, second).ToArray();
        otherEpoch[4] = 2;
        server.TryUnprotect(tampered, plaintext, out _, out _, out _).Should().BeFalse("a record that does not authenticate is dropped");
        server.TryUnprotect(otherEpoch, plaintext, out _, out _, out _).Should().BeFalse();
        server.TryUnprotect(record.AsSpan(0, second), plaintext, out received, out type, out _).Should().BeTrue("the untouched record still reads");
        type.Should().Be(RecordProtection.Alert);
        plaintext.AsSpan(0, received).ToArray().Should().Equal(1, 0);
    }

    [Theory]
    [MemberData(nameof(Kinds))]
    public void AfterRestingBothEndsGoOnWithTheSameKeysAndSequenceAndAfterDisposeNothingIsWritten(bool gcm, int keyLength, int tagLength, bool connectionId)
    {
        (RecordProtection client, RecordProtection server) = Pair(gcm, keyLength, tagLength, connectionId);
        byte[] record = new byte[1500];
        byte[] plaintext = new byte[1500];
        int first = client.Protect(RecordProtection.ApplicationData, "one"u8, record);
        server.TryUnprotect(record.AsSpan(0, first), plaintext, out _, out _, out _).Should().BeTrue();
        byte[] replay = record.AsSpan(0, first).ToArray();

        client.Rest();
        server.Rest();
        int second = client.Protect(RecordProtection.ApplicationData, "two"u8, record);
        bool read = server.TryUnprotect(record.AsSpan(0, second), plaintext, out int received, out _, out _);

        read.Should().BeTrue("the ciphers are made again from the same keys");
        plaintext.AsSpan(0, received).ToArray().Should().Equal("two"u8.ToArray());
        RecordProtection.ReadSequence(record).Should().Be(6, "the sequence goes on after 5, never starting over (RFC 5288 section 3: a nonce is used once)");
        server.TryUnprotect(replay, plaintext, out _, out _, out _).Should().BeFalse("the replay window survives too");
        client.Dispose();
        client.Protect(RecordProtection.ApplicationData, "three"u8, record).Should().Be(-1, "a disposed protection writes nothing, with a key it has zeroed least of all");
    }

    [Fact]
    public void AnOlderRecordInsideTheWindowReadsOnceAndDoesNotMoveThePeer()
    {
        (RecordProtection client, RecordProtection server) = Pair(gcm: false, 16, 8, connectionId: true);
        byte[][] records = new byte[3][];
        for (int i = 0; i < records.Length; i++)
        {
            byte[] buffer = new byte[200];
            records[i] = buffer.AsSpan(0, client.Protect(RecordProtection.ApplicationData, [(byte)i], buffer)).ToArray();
        }

        byte[] plaintext = new byte[200];

        server.TryUnprotect(records[2], plaintext, out _, out _, out bool newest).Should().BeTrue();
        newest.Should().BeTrue();
        server.TryUnprotect(records[0], plaintext, out _, out _, out newest).Should().BeTrue("reordered within the window");
        newest.Should().BeFalse("RFC 9146 section 6: an older record never moves the peer");
        server.TryUnprotect(records[0], plaintext, out _, out _, out _).Should().BeFalse();
    }

    private static (RecordProtection Client, RecordProtection Server) Pair(bool gcm, int keyLength, int tagLength, bool connectionId)
    {
        Random random = new(keyLength + tagLength);
        byte[] clientKey = new byte[keyLength];
        byte[] serverKey = new byte[keyLength];
        byte[] clientSalt = new byte[4];
        byte[] serverSalt = new byte[4];
        random.NextBytes(clientKey);
        random.NextBytes(serverKey);
        random.NextBytes(clientSalt);
        random.NextBytes(serverSalt);
        byte[]? serverId = connectionId ? [1, 2, 3, 4, 5, 6] : null;
        RecordProtection client = new(gcm, clientKey, serverKey, tagLength, clientSalt, serverSalt, serverId, null, epoch: 1);
        RecordProtection server = new(gcm, serverKey, clientKey, tagLength, serverSalt, clientSalt, null, serverId, epoch: 1);
        client.Activate(nextWrite: 5, highestRead: -1);
        server.Activate(nextWrite: 5, highestRead: 4);
        return (client, server);
    }
}
