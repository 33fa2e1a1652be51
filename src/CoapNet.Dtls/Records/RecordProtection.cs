using System.Buffers.Binary;
using System.Security.Cryptography;
using CoapNet.Channels;
using Org.BouncyCastle.Tls;
using Org.BouncyCastle.Tls.Crypto;
using Org.BouncyCastle.Tls.Crypto.Impl;

namespace CoapNet.Dtls.Records;

/// <summary>
/// The record protection of an established DTLS 1.2 session with an AEAD suite (AES-CCM and AES-CCM_8 on our
/// <see cref="CcmCipher"/>, AES-GCM on .NET's <see cref="AesGcm"/>): what a session keeps once BouncyCastle's handshake and
/// record layer are no longer needed. It holds two keys, two implicit nonces, the Connection IDs, the next sequence
/// number to write and the replay window, a few hundred bytes where BouncyCastle's layer holds several kilobytes.
/// </summary>
/// <remarks>
/// The formats follow RFC 6347 section 4.1 (the record), RFC 5288 section 3 and RFC 6655 section 3 (the nonce: a
/// 4-byte salt from the key block and the 8-byte explicit nonce, which is the epoch and sequence number, sent before
/// the ciphertext), RFC 5246 section 6.2.3.3 (the additional data) and RFC 9146 sections 4 and 5 (a record with a
/// Connection ID: type tls12_cid, the ID in the header, the real type inside the plaintext, the additional data with
/// the placeholder and the ID). Encryption is serialized by a lock of its own (this object); decryption runs under the
/// session's receive lock.
/// <para>
/// What it holds while the session sleeps is the two keys and the state of the sequence numbers: the expanded ciphers
/// (AES round keys, about 600 bytes a session) are kept for a record that follows another the same way within 10 s (a
/// lone record's are made for it alone) and dropped by <see cref="Rest"/>, which the engine calls for a session idle past
/// a few seconds, so a fleet of devices that wake once a minute keeps ciphers only for those busy.
/// </para>
/// </remarks>
internal sealed class RecordProtection : IDisposable
{
    public const byte ApplicationData = 23;
    public const byte Alert = 21;
    public const byte Handshake = 22;
    public const byte ChangeCipherSpec = 20;
    private const byte ConnectionIdRecord = 25;
    private const int HeaderLength = 13;
    private const int ExplicitNonceLength = 8;
    private const int SaltLength = 4;
    private const long MaxSequence = (1L << 48) - 1;
    private const int ReplayWindowSize = 64;
    /// <summary>DTLS 1.2 in a record header (RFC 6347 section 4.1).</summary>
    public static ReadOnlySpan<byte> Version => [0xFE, 0xFD];

    private readonly bool _gcm;
    private readonly int _tagLength;
    private readonly int _epoch;
    // RFC 5288 section 3: the implicit part of each nonce, 4 bytes from the key block, as numbers (no array each).
    private readonly uint _encryptSalt;
    private readonly uint _decryptSalt;
    private readonly byte[]? _writeConnectionId;
    private readonly byte[]? _readConnectionId;

    // The encryption key, then the decryption key: one array for both, zeroed at Dispose.
    private readonly byte[] _keys;
    private readonly int _keyLength;
    private bool _active;
    private bool _disposed;
    private CcmCipher? _encryptCcm;
    private CcmCipher? _decryptCcm;
    // When the last record was written (read), in Environment.TickCount64 milliseconds; 0 for none since the last rest.
    private long _encryptUsed;
    private long _decryptUsed;
    private AesGcm? _encryptGcm;
    private AesGcm? _decryptGcm;
    private long _nextWrite;
    // RFC 6347 section 4.1.2.6: a window of 64 records, set when the epoch's keys are activated.
    private CoapReplayWindow _window = new(ReplayWindowSize);

    // The keys stay bytes until a record needs them: a device asleep since its handshake holds no expanded cipher.
    internal RecordProtection(bool gcm, ReadOnlySpan<byte> encryptKey, ReadOnlySpan<byte> decryptKey, int tagLength, byte[] encryptSalt, byte[] decryptSalt, byte[]? writeConnectionId, byte[]? readConnectionId, int epoch)
    {
        _gcm = gcm;
        _keyLength = encryptKey.Length;
        _keys = new byte[2 * _keyLength];
        encryptKey.CopyTo(_keys);
        decryptKey.CopyTo(_keys.AsSpan(_keyLength));
        _tagLength = tagLength;
        _encryptSalt = BinaryPrimitives.ReadUInt32BigEndian(encryptSalt);
        _decryptSalt = BinaryPrimitives.ReadUInt32BigEndian(decryptSalt);
        _writeConnectionId = writeConnectionId is { Length: > 0 } ? writeConnectionId : null;
        _readConnectionId = readConnectionId is { Length: > 0 } ? readConnectionId : null;
        _epoch = epoch;
    }

    /// <summary>The bytes a record adds to its plaintext when written.</summary>
    public int WriteOverhead => HeaderLength + (_writeConnectionId?.Length ?? 0) + ExplicitNonceLength + _tagLength + (_writeConnectionId is null ? 0 : 1);

    /// <summary>
    /// The protection of the session <paramref name="context"/> just established, from its key block (RFC 5246
    /// section 6.3), or null when its suite is not an AEAD suite this class implements (the session then stays on
    /// BouncyCastle's record layer) or this platform lacks the cipher.
    /// </summary>
    public static RecordProtection? TryCreate(TlsContext context)
    {
        SecurityParameters parameters = context.SecurityParameters;
        if (!ProtocolVersion.DTLSv12.Equals(parameters.NegotiatedVersion))
        {
            return null;
        }

        (bool gcm, int keyLength, int tagLength) = parameters.CipherSuite switch
        {
            CipherSuite.TLS_PSK_WITH_AES_128_CCM_8 or CipherSuite.TLS_ECDHE_ECDSA_WITH_AES_128_CCM_8 => (false, 16, 8),
            CipherSuite.TLS_PSK_WITH_AES_128_CCM or CipherSuite.TLS_ECDHE_ECDSA_WITH_AES_128_CCM => (false, 16, 16),
            CipherSuite.TLS_PSK_WITH_AES_128_GCM_SHA256 or CipherSuite.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 => (true, 16, 16),
            CipherSuite.TLS_PSK_WITH_AES_256_GCM_SHA384 or CipherSuite.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384 => (true, 32, 16),
            _ => (false, 0, 0),
        };
        if (keyLength == 0 || (gcm && !AesGcm.IsSupported))
        {
            return null;
        }

        // RFC 5246 section 6.3: client_write_key, server_write_key, client_write_IV, server_write_IV.
        byte[] block = TlsImplUtilities.CalculateKeyBlock(new TlsCryptoParameters(context), (2 * keyLength) + (2 * SaltLength));
        try
        {
            Span<byte> keys = block;
            ReadOnlySpan<byte> clientKey = keys[..keyLength];
            ReadOnlySpan<byte> serverKey = keys.Slice(keyLength, keyLength);
            byte[] clientSalt = keys.Slice(2 * keyLength, SaltLength).ToArray();
            byte[] serverSalt = keys.Slice((2 * keyLength) + SaltLength, SaltLength).ToArray();
            bool server = context.IsServer;

            // BouncyCastle's names: the local Connection ID goes into what we write, the peer's is what we read.
            return new RecordProtection(
                gcm,
                server ? serverKey : clientKey,
                server ? clientKey : serverKey,
                tagLength,
                server ? serverSalt : clientSalt,
                server ? clientSalt : serverSalt,
                parameters.ConnectionIDLocal,
                parameters.ConnectionIDPeer,
                epoch: 1);
        }
        finally
        {
            CryptographicOperations.ZeroMemory(block);
        }
    }

    /// <summary>
    /// Takes over from BouncyCastle's record layer: the next record written has sequence number
    /// <paramref name="nextWrite"/>, and every record read up to <paramref name="highestRead"/> counts as seen.
    /// </summary>
    public void Activate(long nextWrite, long highestRead)
    {
        lock (this)
        {
            if (_active)
            {
                throw new InvalidOperationException("Activated twice.");
            }

            _active = true;
            _nextWrite = nextWrite;
            _window = new CoapReplayWindow(ReplayWindowSize, highestRead);
        }
    }

    /// <summary>
    /// True when <see cref="Rest"/> has something to do: a record went either way, or a cipher is kept, since the last
    /// rest. Read without the locks: a stale answer only moves the rest to the next sweep.
    /// </summary>
    public bool IsAwake => Volatile.Read(ref _decryptUsed) != 0 || Volatile.Read(ref _encryptUsed) != 0 || _decryptGcm is not null || _encryptGcm is not null;

    /// <summary>
    /// Drops the expanded ciphers of a session that has gone quiet; the next record makes them again from the keys. Call
    /// holding the session's receive lock (decryption's); encryption's is taken here.
    /// </summary>
    public void Rest()
    {
        lock (this)
        {
            _encryptGcm?.Dispose();
            _encryptGcm = null;
            _encryptCcm = null;
            _encryptUsed = 0;
        }

        _decryptGcm?.Dispose();
        _decryptGcm = null;
        _decryptCcm = null;
        _decryptUsed = 0;
    }

    /// <summary>
    /// The CCM cipher of one direction: a record that comes within <see cref="BurstMilliseconds"/> of the one before it
    /// that way keeps one on the session; any other gets one made for it alone. A fleet device reporting once a minute
    /// sends one record each way per wake-up: a cipher kept for it would live until the next rest, long enough for the
    /// garbage collector to promote it, and then die, an object each way per report that a young collection pays for by
    /// the card it dirties in the old session (issue 41's p99), and that fills the old generation until a full
    /// collection. Made and dropped within the record, it costs one key expansion and dies young. Told by time, not by
    /// whether a sweep's rest came between two reports: the sweep runs once a minute, as the devices report, so which
    /// came first was chance. AES-GCM's ciphers hold native state and are kept from the first record.
    /// </summary>
    private CcmCipher CcmFor(ref CcmCipher? kept, ref long used, ReadOnlySpan<byte> key)
    {
        long now = Environment.TickCount64;
        long last = used;
        used = now;
        if (kept is not null)
        {
            return kept;
        }

        CcmCipher cipher = new(key, _tagLength);
        if (last != 0 && now - last < BurstMilliseconds)
        {
            kept = cipher;
        }

        return cipher;
    }

    /// <summary>How close two records one way must come for the second to keep its cipher: a burst (a block-wise transfer, an observer's notifications), not a device's next report.</summary>
    private const long BurstMilliseconds = 10_000;

    /// <summary>
    /// The length of the record at the start of <paramref name="datagram"/> as its header says, or -1 when the header
    /// is cut short or says more than the datagram holds (RFC 6347 section 4.1.1: a datagram may hold several records).
    /// </summary>
    public int RecordLength(ReadOnlySpan<byte> datagram)
    {
        int header = HeaderLength + (datagram.Length > 0 && datagram[0] == ConnectionIdRecord ? _readConnectionId?.Length ?? 0 : 0);
        if (datagram.Length < header)
        {
            return -1;
        }

        int total = header + BinaryPrimitives.ReadUInt16BigEndian(datagram[(header - 2)..]);
        return total <= datagram.Length ? total : -1;
    }

    /// <summary>
    /// Authenticates and decrypts one record of this session into <paramref name="plaintext"/>. False for anything
    /// else: another epoch, a replay, a record without our Connection ID (or with one we did not issue), one that
    /// does not authenticate (RFC 6347 section 4.1.2.7: dropped, not answered).
    /// </summary>
    /// <param name="record">One whole record, as <see cref="RecordLength"/> delimits it.</param>
    /// <param name="plaintext">Room for its plaintext.</param>
    /// <param name="length">The plaintext's length.</param>
    /// <param name="contentType">Its content type (application data, alert, ...).</param>
    /// <param name="newestWithConnectionId">True when it carried our Connection ID and is the newest record yet: only then may the peer's address move (RFC 9146 section 6).</param>
    public bool TryUnprotect(ReadOnlySpan<byte> record, Span<byte> plaintext, out int length, out byte contentType, out bool newestWithConnectionId)
    {
        length = 0;
        contentType = 0;
        newestWithConnectionId = false;
        if (Volatile.Read(ref _disposed))
        {
            return false;
        }

        int cidLength = _readConnectionId?.Length ?? 0;
        int header = HeaderLength + cidLength;
        byte type = record[0];
        if (record.Length < header + ExplicitNonceLength + _tagLength
            || (_readConnectionId is null ? type != ApplicationData && type != Alert && type != Handshake : type != ConnectionIdRecord)
            || !record.Slice(1, 2).SequenceEqual(Version)
            || BinaryPrimitives.ReadUInt16BigEndian(record[3..]) != _epoch
            || (_readConnectionId is not null && !CryptographicOperations.FixedTimeEquals(record.Slice(11, cidLength), _readConnectionId)))
        {
            return false;
        }

        long sequence = ReadSequence(record);
        if (!_window.IsFresh(sequence))
        {
            return false;
        }

        ReadOnlySpan<byte> fragment = record[header..];
        ReadOnlySpan<byte> ciphertext = fragment[ExplicitNonceLength..^_tagLength];
        if (ciphertext.Length > plaintext.Length)
        {
            return false;
        }

        Span<byte> nonce = stackalloc byte[SaltLength + ExplicitNonceLength];
        BinaryPrimitives.WriteUInt32BigEndian(nonce, _decryptSalt);
        fragment[..ExplicitNonceLength].CopyTo(nonce[SaltLength..]);
        Span<byte> additional = stackalloc byte[32 + 255];
        int additionalLength = AdditionalData(additional, record[..HeaderLength], _readConnectionId, ciphertext.Length);
        try
        {
            if (_gcm)
            {
                (_decryptGcm ??= new AesGcm(DecryptKey, _tagLength)).Decrypt(nonce, ciphertext, fragment[^_tagLength..], plaintext[..ciphertext.Length], additional[..additionalLength]);
            }
            else if (!CcmFor(ref _decryptCcm, ref _decryptUsed, DecryptKey).Decrypt(nonce, ciphertext, fragment[^_tagLength..], plaintext[..ciphertext.Length], additional[..additionalLength]))
            {
                return false;
            }
        }
        catch (CryptographicException)
        {
            return false;
        }

        length = ciphertext.Length;
        contentType = type;
        if (_readConnectionId is not null)
        {
            // RFC 9146 section 4: the real type is the last non-zero byte of DTLSInnerPlaintext, zeros being padding.
            do
            {
                if (--length < 0)
                {
                    return false;
                }
            }
            while (plaintext[length] == 0);
            contentType = plaintext[length];
        }

        newestWithConnectionId = _window.Accept(sequence) && _readConnectionId is not null;
        return true;
    }

    /// <summary>Encrypts one record of <paramref name="contentType"/> into <paramref name="record"/>; returns its length, or -1 when the sequence numbers are spent.</summary>
    /// <param name="contentType">Application data or alert.</param>
    /// <param name="plaintext">At most <c>record.Length - WriteOverhead</c> bytes.</param>
    /// <param name="record">Where the record goes.</param>
    public int Protect(byte contentType, ReadOnlySpan<byte> plaintext, Span<byte> record)
    {
        int cidLength = _writeConnectionId?.Length ?? 0;
        int header = HeaderLength + cidLength;
        int inner = plaintext.Length + (_writeConnectionId is null ? 0 : 1);
        int total = header + ExplicitNonceLength + inner + _tagLength;
        Span<byte> nonce = stackalloc byte[SaltLength + ExplicitNonceLength];
        Span<byte> additional = stackalloc byte[32 + 255];
        lock (this)
        {
            long sequence = _nextWrite;
            if (sequence > MaxSequence || _disposed)
            {
                return -1;
            }

            _nextWrite = sequence + 1;
            record[0] = _writeConnectionId is null ? contentType : ConnectionIdRecord;
            Version.CopyTo(record[1..]);
            BinaryPrimitives.WriteUInt64BigEndian(record[3..], ((ulong)_epoch << 48) | (ulong)sequence);
            _writeConnectionId?.CopyTo(record[11..]);
            BinaryPrimitives.WriteUInt16BigEndian(record[(header - 2)..], (ushort)(ExplicitNonceLength + inner + _tagLength));

            // RFC 5288 section 3: the explicit nonce is the record's epoch and sequence number, unique per key.
            Span<byte> fragment = record[header..total];
            record.Slice(3, ExplicitNonceLength).CopyTo(fragment);
            BinaryPrimitives.WriteUInt32BigEndian(nonce, _encryptSalt);
            fragment[..ExplicitNonceLength].CopyTo(nonce[SaltLength..]);
            Span<byte> body = fragment.Slice(ExplicitNonceLength, inner);
            plaintext.CopyTo(body);
            if (_writeConnectionId is not null)
            {
                body[^1] = contentType;
            }

            int additionalLength = AdditionalData(additional, record[..HeaderLength], _writeConnectionId, inner);
            if (_gcm)
            {
                (_encryptGcm ??= new AesGcm(EncryptKey, _tagLength)).Encrypt(nonce, body, body, fragment[^_tagLength..], additional[..additionalLength]);
            }
            else
            {
                CcmFor(ref _encryptCcm, ref _encryptUsed, EncryptKey).Encrypt(nonce, body, body, fragment[^_tagLength..], additional[..additionalLength]);
            }
        }

        return total;
    }

    /// <inheritdoc/>
    public void Dispose()
    {
        // Under encryption's lock, so no record is written with a key being zeroed; a record being decrypted meanwhile fails
        // to authenticate and is dropped, as any record of a closed session is.
        lock (this)
        {
            Volatile.Write(ref _disposed, true);
            CryptographicOperations.ZeroMemory(_keys);
            _encryptGcm?.Dispose();
            _decryptGcm?.Dispose();
        }
    }

    private ReadOnlySpan<byte> EncryptKey => _keys.AsSpan(0, _keyLength);

    private ReadOnlySpan<byte> DecryptKey => _keys.AsSpan(_keyLength, _keyLength);

    /// <summary>The epoch and sequence number of the record at the start of <paramref name="record"/>; -1 when it is cut short.</summary>
    public static long ReadSequence(ReadOnlySpan<byte> record)
        => record.Length < HeaderLength ? -1 : (long)(BinaryPrimitives.ReadUInt64BigEndian(record[3..]) & (ulong)MaxSequence);

    /// <summary>The epoch of the record at the start of <paramref name="record"/>; -1 when it is cut short.</summary>
    public static int ReadEpoch(ReadOnlySpan<byte> record)
        => record.Length < HeaderLength ? -1 : BinaryPrimitives.ReadUInt16BigEndian(record[3..]);

    // RFC 5246 section 6.2.3.3: seq_num + type + version + length; RFC 9146 section 5 with a Connection ID: the
    // placeholder, tls12_cid, the ID's length, tls12_cid, version, epoch and sequence number, the ID, the length.
    private static int AdditionalData(Span<byte> additional, ReadOnlySpan<byte> header, byte[]? connectionId, int plaintextLength)
    {
        if (connectionId is null)
        {
            header.Slice(3, 8).CopyTo(additional);
            additional[8] = header[0];
            header.Slice(1, 2).CopyTo(additional[9..]);
            BinaryPrimitives.WriteUInt16BigEndian(additional[11..], (ushort)plaintextLength);
            return 13;
        }

        additional[..8].Fill(0xFF);
        additional[8] = ConnectionIdRecord;
        additional[9] = (byte)connectionId.Length;
        additional[10] = ConnectionIdRecord;
        header.Slice(1, 2).CopyTo(additional[11..]);
        header.Slice(3, 8).CopyTo(additional[13..]);
        connectionId.CopyTo(additional[21..]);
        BinaryPrimitives.WriteUInt16BigEndian(additional[(21 + connectionId.Length)..], (ushort)plaintextLength);
        return 23 + connectionId.Length;
    }
}
