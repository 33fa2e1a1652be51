using System.Buffers.Binary;
using System.Text;

namespace CoapNet.Dtls;

/// <summary>
/// A table of pre-shared keys by identity, kept compact for a fleet (one array per identity holding it and its key)
/// and changed at run time: <see cref="Set(ReadOnlySpan{byte}, ReadOnlySpan{byte})"/> provisions a device or gives it
/// a new key, <see cref="Remove(ReadOnlySpan{byte})"/> retires it, both while handshakes look keys up.
/// </summary>
/// <remarks>
/// A lookup hashes the identity's bytes (with the process's random seed, so no client can choose identities that
/// collide) and allocates nothing. Changes take a lock that lookups take too, for the time of a hash and a compare.
/// A change affects the next handshake only: an established session keeps the key it was made with until it ends.
/// </remarks>
public sealed class DtlsPskTable : DtlsPskStore
{
    /// <summary>The longest identity (RFC 4279 section 5.3: a PSK identity is at most 2^16-1 bytes).</summary>
    private const int MaxIdentityLength = ushort.MaxValue;

    private readonly object _gate = new();
    private int[] _buckets;
    private Entry[] _entries;
    private int _used;
    private int _count;
    private int _free = -1;

    /// <summary>An empty table.</summary>
    public DtlsPskTable()
        : this(0)
    {
    }

    /// <summary>An empty table with room for <paramref name="capacity"/> identities before it grows.</summary>
    /// <param name="capacity">How many identities to make room for.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="capacity"/> is negative.</exception>
    public DtlsPskTable(int capacity)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(capacity);
        _buckets = new int[BucketCount(capacity)];
        _entries = new Entry[Math.Max(capacity, 4)];
    }

    /// <summary>How many identities the table holds.</summary>
    public int Count => Volatile.Read(ref _count);

    /// <inheritdoc/>
    public override bool TryGetKey(ReadOnlySpan<byte> identity, out ReadOnlyMemory<byte> key)
    {
        int hash = Hash(identity);
        lock (_gate)
        {
            int found = Find(identity, hash);
            if (found >= 0)
            {
                byte[] data = _entries[found].Data!;
                key = data.AsMemory(KeyOffset(data));
                return true;
            }
        }

        key = default;
        return false;
    }

    /// <summary>Adds <paramref name="identity"/> with <paramref name="key"/>, or gives it that key when it is already known.</summary>
    /// <param name="identity">The PSK identity, 1 to 65,535 bytes.</param>
    /// <param name="key">The key, at least one byte; copied.</param>
    /// <exception cref="ArgumentException">The identity or the key is empty, or the identity is too long.</exception>
    public void Set(ReadOnlySpan<byte> identity, ReadOnlySpan<byte> key)
    {
        if (identity.IsEmpty || identity.Length > MaxIdentityLength)
        {
            throw new ArgumentException("A PSK identity must be 1 to 65,535 bytes (RFC 4279 section 5.3).", nameof(identity));
        }

        if (key.IsEmpty)
        {
            throw new ArgumentException("A pre-shared key must not be empty.", nameof(key));
        }

        // The identity's length, the identity and the key in one array: one object per device.
        byte[] data = new byte[2 + identity.Length + key.Length];
        BinaryPrimitives.WriteUInt16BigEndian(data, (ushort)identity.Length);
        identity.CopyTo(data.AsSpan(2));
        key.CopyTo(data.AsSpan(2 + identity.Length));
        int hash = Hash(identity);
        lock (_gate)
        {
            int found = Find(identity, hash);
            if (found >= 0)
            {
                // A new array, not the old one overwritten: a handshake may be copying the old key now.
                _entries[found].Data = data;
                return;
            }

            Add(data, hash);
        }
    }

    /// <summary>Adds <paramref name="identity"/>, as UTF-8, with <paramref name="key"/>, or gives it that key when it is already known.</summary>
    /// <param name="identity">The PSK identity as text.</param>
    /// <param name="key">The key, at least one byte; copied.</param>
    /// <exception cref="ArgumentException">The identity or the key is empty, or the identity is too long.</exception>
    public void Set(string identity, ReadOnlySpan<byte> key)
    {
        ArgumentNullException.ThrowIfNull(identity);
        Set(Encoding.UTF8.GetBytes(identity), key);
    }

    /// <summary>Forgets <paramref name="identity"/>: its next handshake fails with unknown_psk_identity (a session it has goes on until it ends).</summary>
    /// <param name="identity">The PSK identity.</param>
    /// <returns>True when it was known.</returns>
    public bool Remove(ReadOnlySpan<byte> identity)
    {
        int hash = Hash(identity);
        lock (_gate)
        {
            int bucket = hash & (_buckets.Length - 1);
            int previous = -1;
            for (int i = _buckets[bucket] - 1; i >= 0; previous = i, i = _entries[i].Next)
            {
                ref Entry entry = ref _entries[i];
                if (entry.Hash == hash && Identity(entry.Data!).SequenceEqual(identity))
                {
                    if (previous < 0)
                    {
                        _buckets[bucket] = entry.Next + 1;
                    }
                    else
                    {
                        _entries[previous].Next = entry.Next;
                    }

                    entry = new Entry { Next = _free };
                    _free = i;
                    Volatile.Write(ref _count, _count - 1);
                    return true;
                }
            }

            return false;
        }
    }

    /// <summary>Forgets <paramref name="identity"/>, as UTF-8 (see <see cref="Remove(ReadOnlySpan{byte})"/>).</summary>
    /// <param name="identity">The PSK identity as text.</param>
    /// <returns>True when it was known.</returns>
    public bool Remove(string identity)
    {
        ArgumentNullException.ThrowIfNull(identity);
        return Remove(Encoding.UTF8.GetBytes(identity));
    }

    private static int Hash(ReadOnlySpan<byte> identity)
    {
        HashCode hash = default;
        hash.AddBytes(identity);
        return hash.ToHashCode();
    }

    private static int BucketCount(int capacity)
        => (int)Math.Max(4u, System.Numerics.BitOperations.RoundUpToPowerOf2((uint)Math.Max(capacity, 1)));

    private static ReadOnlySpan<byte> Identity(byte[] data) => data.AsSpan(2, BinaryPrimitives.ReadUInt16BigEndian(data));

    private static int KeyOffset(byte[] data) => 2 + BinaryPrimitives.ReadUInt16BigEndian(data);

    // Called holding _gate.
    private int Find(ReadOnlySpan<byte> identity, int hash)
    {
        for (int i = _buckets[hash & (_buckets.Length - 1)] - 1; i >= 0; i = _entries[i].Next)
        {
            if (_entries[i].Hash == hash && Identity(_entries[i].Data!).SequenceEqual(identity))
            {
                return i;
            }
        }

        return -1;
    }

    // Called holding _gate.
    private void Add(byte[] data, int hash)
    {
        int index;
        if (_free >= 0)
        {
            index = _free;
            _free = _entries[index].Next;
        }
        else
        {
            if (_used == _entries.Length)
            {
                Grow();
            }

            index = _used++;
        }

        int bucket = hash & (_buckets.Length - 1);
        _entries[index] = new Entry { Data = data, Hash = hash, Next = _buckets[bucket] - 1 };
        _buckets[bucket] = index + 1;
        Volatile.Write(ref _count, _count + 1);
    }

    // Called holding _gate, with every entry in use (none free).
    private void Grow()
    {
        Array.Resize(ref _entries, _entries.Length * 2);
        _buckets = new int[BucketCount(_entries.Length)];
        for (int i = 0; i < _used; i++)
        {
            int bucket = _entries[i].Hash & (_buckets.Length - 1);
            _entries[i].Next = _buckets[bucket] - 1;
            _buckets[bucket] = i + 1;
        }
    }

    private struct Entry
    {
        /// <summary>The identity's length (2 bytes, big-endian), the identity, the key; null when the entry is free.</summary>
        public byte[]? Data;

        public int Hash;

        /// <summary>The next entry of the bucket's chain, or of the free list; -1 at the end.</summary>
        public int Next;
    }
}
